///A contract touching most constructs typify types: definitions, enums, tagged unions, patterns, defaults, maps and renamed properties.
#[derive(
    ::agent_contracts::__private::serde::Deserialize,
    ::agent_contracts::__private::serde::Serialize,
    Clone,
    Debug,
    PartialEq
)]
#[serde(crate = "::agent_contracts::__private::serde")]
#[serde(deny_unknown_fields)]
pub struct KitchenSink {
    ///Stays a string: no chrono in the user's crate.
    #[serde(skip_serializing_if = "::std::option::Option::is_none")]
    #[serde(deserialize_with = "::agent_contracts::__private::checks::present")]
    #[serde(default)]
    pub created_at: ::std::option::Option<::std::string::String>,
    ///Free-form labels.
    #[serde(
        default,
        skip_serializing_if = ":: std :: collections :: BTreeMap::is_empty"
    )]
    pub labels: ::std::collections::BTreeMap<
        ::std::string::String,
        ::std::string::String,
    >,
    #[serde(
        default,
        skip_serializing_if = "::agent_contracts::__private::RawObject::is_empty"
    )]
    pub metadata: ::agent_contracts::__private::RawObject,
    pub mode: Mode,
    #[serde(skip_serializing_if = "::std::option::Option::is_none")]
    pub note: ::std::option::Option<::std::string::String>,
    #[serde(default = "defaults::default_u64::<u64, 3>")]
    #[serde(deserialize_with = "::agent_contracts::__private::integer::deserialize")]
    pub retries: u64,
    ///A property name that is not a Rust identifier.
    #[serde(rename = "run-id", skip_serializing_if = "::std::option::Option::is_none")]
    #[serde(deserialize_with = "::agent_contracts::__private::checks::present")]
    #[serde(default)]
    pub run_id: ::std::option::Option<KitchenSinkRunId>,
    ///What to do, in order.
    pub steps: ::std::vec::Vec<Step>,
    ///A Rust keyword as a property name.
    #[serde(rename = "type")]
    pub type_: KitchenSinkType,
}
///A property name that is not a Rust identifier.
#[derive(
    ::agent_contracts::__private::serde::Serialize,
    Clone,
    Debug,
    Eq,
    Hash,
    Ord,
    PartialEq,
    PartialOrd
)]
#[serde(crate = "::agent_contracts::__private::serde")]
#[serde(transparent)]
pub struct KitchenSinkRunId(::std::string::String);
impl ::std::ops::Deref for KitchenSinkRunId {
    type Target = ::std::string::String;
    fn deref(&self) -> &::std::string::String {
        &self.0
    }
}
impl ::std::convert::From<KitchenSinkRunId> for ::std::string::String {
    fn from(value: KitchenSinkRunId) -> Self {
        value.0
    }
}
impl ::std::str::FromStr for KitchenSinkRunId {
    type Err = self::error::ConversionError;
    fn from_str(
        value: &str,
    ) -> ::std::result::Result<Self, self::error::ConversionError> {
        static PATTERN: ::std::sync::LazyLock<
            ::agent_contracts::__private::regress::Regex,
        > = ::std::sync::LazyLock::new(|| {
            ::agent_contracts::__private::regress::Regex::new("^[a-z0-9-]+$").unwrap()
        });
        if PATTERN.find(value).is_none() {
            return Err("doesn't match pattern \"^[a-z0-9-]+$\"".into());
        }
        Ok(Self(value.to_string()))
    }
}
impl ::std::convert::TryFrom<&str> for KitchenSinkRunId {
    type Error = self::error::ConversionError;
    fn try_from(
        value: &str,
    ) -> ::std::result::Result<Self, self::error::ConversionError> {
        value.parse()
    }
}
impl ::std::convert::TryFrom<::std::string::String> for KitchenSinkRunId {
    type Error = self::error::ConversionError;
    fn try_from(
        value: ::std::string::String,
    ) -> ::std::result::Result<Self, self::error::ConversionError> {
        value.parse()
    }
}
impl<'de> ::agent_contracts::__private::serde::Deserialize<'de> for KitchenSinkRunId {
    fn deserialize<D>(deserializer: D) -> ::std::result::Result<Self, D::Error>
    where
        D: ::agent_contracts::__private::serde::Deserializer<'de>,
    {
        ::std::string::String::deserialize(deserializer)?
            .parse()
            .map_err(|e: self::error::ConversionError| {
                <D::Error as ::agent_contracts::__private::serde::de::Error>::custom(
                    e.to_string(),
                )
            })
    }
}
///A Rust keyword as a property name.
#[derive(
    ::agent_contracts::__private::serde::Deserialize,
    ::agent_contracts::__private::serde::Serialize,
    Clone,
    Copy,
    Debug,
    Eq,
    Hash,
    Ord,
    PartialEq,
    PartialOrd
)]
#[serde(crate = "::agent_contracts::__private::serde")]
pub enum KitchenSinkType {
    #[serde(rename = "full")]
    Full,
    #[serde(rename = "quick")]
    Quick,
}
impl ::std::fmt::Display for KitchenSinkType {
    fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
        match *self {
            Self::Full => f.write_str("full"),
            Self::Quick => f.write_str("quick"),
        }
    }
}
impl ::std::str::FromStr for KitchenSinkType {
    type Err = self::error::ConversionError;
    fn from_str(
        value: &str,
    ) -> ::std::result::Result<Self, self::error::ConversionError> {
        match value {
            "full" => Ok(Self::Full),
            "quick" => Ok(Self::Quick),
            _ => Err("invalid value".into()),
        }
    }
}
impl ::std::convert::TryFrom<&str> for KitchenSinkType {
    type Error = self::error::ConversionError;
    fn try_from(
        value: &str,
    ) -> ::std::result::Result<Self, self::error::ConversionError> {
        value.parse()
    }
}
impl ::std::convert::TryFrom<::std::string::String> for KitchenSinkType {
    type Error = self::error::ConversionError;
    fn try_from(
        value: ::std::string::String,
    ) -> ::std::result::Result<Self, self::error::ConversionError> {
        value.parse()
    }
}
///How careful to be.
#[derive(
    ::agent_contracts::__private::serde::Deserialize,
    ::agent_contracts::__private::serde::Serialize,
    Clone,
    Copy,
    Debug,
    Eq,
    Hash,
    Ord,
    PartialEq,
    PartialOrd
)]
#[serde(crate = "::agent_contracts::__private::serde")]
pub enum Mode {
    #[serde(rename = "careful")]
    Careful,
    #[serde(rename = "fast")]
    Fast,
}
impl ::std::fmt::Display for Mode {
    fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
        match *self {
            Self::Careful => f.write_str("careful"),
            Self::Fast => f.write_str("fast"),
        }
    }
}
impl ::std::str::FromStr for Mode {
    type Err = self::error::ConversionError;
    fn from_str(
        value: &str,
    ) -> ::std::result::Result<Self, self::error::ConversionError> {
        match value {
            "careful" => Ok(Self::Careful),
            "fast" => Ok(Self::Fast),
            _ => Err("invalid value".into()),
        }
    }
}
impl ::std::convert::TryFrom<&str> for Mode {
    type Error = self::error::ConversionError;
    fn try_from(
        value: &str,
    ) -> ::std::result::Result<Self, self::error::ConversionError> {
        value.parse()
    }
}
impl ::std::convert::TryFrom<::std::string::String> for Mode {
    type Error = self::error::ConversionError;
    fn try_from(
        value: ::std::string::String,
    ) -> ::std::result::Result<Self, self::error::ConversionError> {
        value.parse()
    }
}
///One step, told apart by `kind`.
#[derive(
    ::agent_contracts::__private::serde::Deserialize,
    ::agent_contracts::__private::serde::Serialize,
    Clone,
    Debug,
    PartialEq
)]
#[serde(crate = "::agent_contracts::__private::serde")]
#[serde(tag = "kind", deny_unknown_fields)]
pub enum Step {
    #[serde(rename = "visit")]
    Visit { url: ::std::string::String },
    #[serde(rename = "click")]
    Click { selector: StepSelector },
}
///`StepSelector`
#[derive(
    ::agent_contracts::__private::serde::Serialize,
    Clone,
    Debug,
    Eq,
    Hash,
    Ord,
    PartialEq,
    PartialOrd
)]
#[serde(crate = "::agent_contracts::__private::serde")]
#[serde(transparent)]
pub struct StepSelector(::std::string::String);
impl ::std::ops::Deref for StepSelector {
    type Target = ::std::string::String;
    fn deref(&self) -> &::std::string::String {
        &self.0
    }
}
impl ::std::convert::From<StepSelector> for ::std::string::String {
    fn from(value: StepSelector) -> Self {
        value.0
    }
}
impl ::std::str::FromStr for StepSelector {
    type Err = self::error::ConversionError;
    fn from_str(
        value: &str,
    ) -> ::std::result::Result<Self, self::error::ConversionError> {
        if value.chars().count() < 1usize {
            return Err("shorter than 1 characters".into());
        }
        Ok(Self(value.to_string()))
    }
}
impl ::std::convert::TryFrom<&str> for StepSelector {
    type Error = self::error::ConversionError;
    fn try_from(
        value: &str,
    ) -> ::std::result::Result<Self, self::error::ConversionError> {
        value.parse()
    }
}
impl ::std::convert::TryFrom<::std::string::String> for StepSelector {
    type Error = self::error::ConversionError;
    fn try_from(
        value: ::std::string::String,
    ) -> ::std::result::Result<Self, self::error::ConversionError> {
        value.parse()
    }
}
impl<'de> ::agent_contracts::__private::serde::Deserialize<'de> for StepSelector {
    fn deserialize<D>(deserializer: D) -> ::std::result::Result<Self, D::Error>
    where
        D: ::agent_contracts::__private::serde::Deserializer<'de>,
    {
        ::std::string::String::deserialize(deserializer)?
            .parse()
            .map_err(|e: self::error::ConversionError| {
                <D::Error as ::agent_contracts::__private::serde::de::Error>::custom(
                    e.to_string(),
                )
            })
    }
}
/// Generation of default values for serde.
pub mod defaults {
    pub(super) fn default_u64<T, const V: u64>() -> T
    where
        T: ::std::convert::TryFrom<u64>,
        <T as ::std::convert::TryFrom<u64>>::Error: ::std::fmt::Debug,
    {
        T::try_from(V).unwrap()
    }
}
/// Error types.
pub mod error {
    /// Error from a `TryFrom` or `FromStr` implementation.
    pub struct ConversionError(::std::borrow::Cow<'static, str>);
    impl ::std::error::Error for ConversionError {}
    impl ::std::fmt::Display for ConversionError {
        fn fmt(
            &self,
            f: &mut ::std::fmt::Formatter<'_>,
        ) -> Result<(), ::std::fmt::Error> {
            ::std::fmt::Display::fmt(&self.0, f)
        }
    }
    impl ::std::fmt::Debug for ConversionError {
        fn fmt(
            &self,
            f: &mut ::std::fmt::Formatter<'_>,
        ) -> Result<(), ::std::fmt::Error> {
            ::std::fmt::Debug::fmt(&self.0, f)
        }
    }
    impl ::core::convert::From<&'static str> for ConversionError {
        fn from(value: &'static str) -> Self {
            Self(value.into())
        }
    }
    impl ::core::convert::From<String> for ConversionError {
        fn from(value: String) -> Self {
            Self(value.into())
        }
    }
}
impl ::std::fmt::Display for KitchenSinkRunId {
    fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
        ::std::fmt::Display::fmt(&self.0, f)
    }
}
impl ::std::fmt::Display for StepSelector {
    fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
        ::std::fmt::Display::fmt(&self.0, f)
    }
}
impl ::agent_contracts::__private::ToMarkdown for KitchenSink {}
impl ::agent_contracts::__private::ToMarkdown for KitchenSinkRunId {}
impl ::agent_contracts::__private::ToMarkdown for KitchenSinkType {}
impl ::agent_contracts::__private::ToMarkdown for Mode {}
impl ::agent_contracts::__private::ToMarkdown for Step {}
impl ::agent_contracts::__private::ToMarkdown for StepSelector {}
#[automatically_derived]
impl ::agent_contracts::__private::ContractChecks for KitchenSink {
    #[allow(unused_variables, unused_comparisons, clippy::all)]
    fn satisfies_contract(&self) -> bool {
        (::agent_contracts::__private::ContractChecks::satisfies_contract(&self.mode))
            && (::agent_contracts::__private::checks::bound(
                ::agent_contracts::__private::checks::AsNumber::number(&self.retries),
                ::agent_contracts::__private::checks::Number::Int(0i128),
                &[::core::cmp::Ordering::Greater, ::core::cmp::Ordering::Equal],
            ))
            && (match &self.run_id {
                ::core::option::Option::None => true,
                ::core::option::Option::Some(v4) => {
                    ::agent_contracts::__private::ContractChecks::satisfies_contract(v4)
                }
            })
            && (((&self.steps)
                .iter()
                .all(|v5| ::agent_contracts::__private::ContractChecks::satisfies_contract(
                    v5,
                ))) && ((&self.steps).len() >= 1usize))
            && (::agent_contracts::__private::ContractChecks::satisfies_contract(
                &self.type_,
            ))
    }
}
#[automatically_derived]
impl ::agent_contracts::__private::ContractChecks for Mode {
    #[allow(unused_variables, unused_comparisons, clippy::all)]
    fn satisfies_contract(&self) -> bool {
        true
    }
}
#[automatically_derived]
impl ::agent_contracts::__private::ContractChecks for KitchenSinkRunId {
    #[allow(unused_variables, unused_comparisons, clippy::all)]
    fn satisfies_contract(&self) -> bool {
        {
            static PATTERN: ::agent_contracts::__private::checks::Pattern = ::agent_contracts::__private::checks::LazyLock::new(||
            ::agent_contracts::__private::checks::pattern("^[a-z0-9-]+$"));
            ::agent_contracts::__private::checks::matches(&PATTERN, (&self.0).as_str())
        }
    }
}
#[automatically_derived]
impl ::agent_contracts::__private::ContractChecks for Step {
    #[allow(unused_variables, unused_comparisons, clippy::all)]
    fn satisfies_contract(&self) -> bool {
        false
    }
}
#[automatically_derived]
impl ::agent_contracts::__private::ContractChecks for KitchenSinkType {
    #[allow(unused_variables, unused_comparisons, clippy::all)]
    fn satisfies_contract(&self) -> bool {
        true
    }
}
#[automatically_derived]
impl ::agent_contracts::__private::ContractChecks for StepSelector {
    #[allow(unused_variables, unused_comparisons, clippy::all)]
    fn satisfies_contract(&self) -> bool {
        false
    }
}
