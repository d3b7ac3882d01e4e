///Output contract of the plan generator: where the plan was written and what the agent says about it.
#[derive(
    ::agent_contracts::__private::serde::Deserialize,
    ::agent_contracts::__private::serde::Serialize,
    Clone,
    Debug,
    PartialEq
)]
#[serde(crate = "::agent_contracts::__private::serde")]
#[serde(deny_unknown_fields)]
pub struct PlanGeneratorAgentOutput {
    ///The agent's summary of the plan for the parent agent: steps, selectors used and open risks
    pub agent_response_content: ::std::string::String,
    ///Path of the crawl plan file the agent wrote, relative to the run's output folder. Example: 'plans/login_form_automation.md'
    pub plan_file_path: PlanGeneratorAgentOutputPlanFilePath,
    ///Outcome of plan generation: 'success' when a complete plan was written, 'partial' when some steps lack selectors, 'failed' when no plan could be made
    pub status: PlanGeneratorAgentOutputStatus,
}
///Path of the crawl plan file the agent wrote, relative to the run's output folder. Example: 'plans/login_form_automation.md'
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
pub struct PlanGeneratorAgentOutputPlanFilePath(::std::string::String);
impl ::std::ops::Deref for PlanGeneratorAgentOutputPlanFilePath {
    type Target = ::std::string::String;
    fn deref(&self) -> &::std::string::String {
        &self.0
    }
}
impl ::std::convert::From<PlanGeneratorAgentOutputPlanFilePath>
for ::std::string::String {
    fn from(value: PlanGeneratorAgentOutputPlanFilePath) -> Self {
        value.0
    }
}
impl ::std::str::FromStr for PlanGeneratorAgentOutputPlanFilePath {
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
impl ::std::convert::TryFrom<&str> for PlanGeneratorAgentOutputPlanFilePath {
    type Error = self::error::ConversionError;
    fn try_from(
        value: &str,
    ) -> ::std::result::Result<Self, self::error::ConversionError> {
        value.parse()
    }
}
impl ::std::convert::TryFrom<::std::string::String>
for PlanGeneratorAgentOutputPlanFilePath {
    type Error = self::error::ConversionError;
    fn try_from(
        value: ::std::string::String,
    ) -> ::std::result::Result<Self, self::error::ConversionError> {
        value.parse()
    }
}
impl<'de> ::agent_contracts::__private::serde::Deserialize<'de>
for PlanGeneratorAgentOutputPlanFilePath {
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
///Outcome of plan generation: 'success' when a complete plan was written, 'partial' when some steps lack selectors, 'failed' when no plan could be made
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
pub enum PlanGeneratorAgentOutputStatus {
    #[serde(rename = "success")]
    Success,
    #[serde(rename = "partial")]
    Partial,
    #[serde(rename = "failed")]
    Failed,
}
impl ::std::fmt::Display for PlanGeneratorAgentOutputStatus {
    fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
        match *self {
            Self::Success => f.write_str("success"),
            Self::Partial => f.write_str("partial"),
            Self::Failed => f.write_str("failed"),
        }
    }
}
impl ::std::str::FromStr for PlanGeneratorAgentOutputStatus {
    type Err = self::error::ConversionError;
    fn from_str(
        value: &str,
    ) -> ::std::result::Result<Self, self::error::ConversionError> {
        match value {
            "success" => Ok(Self::Success),
            "partial" => Ok(Self::Partial),
            "failed" => Ok(Self::Failed),
            _ => Err("invalid value".into()),
        }
    }
}
impl ::std::convert::TryFrom<&str> for PlanGeneratorAgentOutputStatus {
    type Error = self::error::ConversionError;
    fn try_from(
        value: &str,
    ) -> ::std::result::Result<Self, self::error::ConversionError> {
        value.parse()
    }
}
impl ::std::convert::TryFrom<::std::string::String> for PlanGeneratorAgentOutputStatus {
    type Error = self::error::ConversionError;
    fn try_from(
        value: ::std::string::String,
    ) -> ::std::result::Result<Self, self::error::ConversionError> {
        value.parse()
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
impl ::std::fmt::Display for PlanGeneratorAgentOutputPlanFilePath {
    fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
        ::std::fmt::Display::fmt(&self.0, f)
    }
}
impl ::agent_contracts::__private::ToMarkdown for PlanGeneratorAgentOutput {}
impl ::agent_contracts::__private::ToMarkdown for PlanGeneratorAgentOutputPlanFilePath {}
impl ::agent_contracts::__private::ToMarkdown for PlanGeneratorAgentOutputStatus {}
#[automatically_derived]
impl ::agent_contracts::__private::ContractChecks for PlanGeneratorAgentOutput {
    #[allow(unused_variables, unused_comparisons, clippy::all)]
    fn satisfies_contract(&self) -> bool {
        (::agent_contracts::__private::ContractChecks::satisfies_contract(
            &self.plan_file_path,
        ))
            && (::agent_contracts::__private::ContractChecks::satisfies_contract(
                &self.status,
            ))
    }
}
#[automatically_derived]
impl ::agent_contracts::__private::ContractChecks
for PlanGeneratorAgentOutputPlanFilePath {
    #[allow(unused_variables, unused_comparisons, clippy::all)]
    fn satisfies_contract(&self) -> bool {
        ::agent_contracts::__private::checks::chars((&self.0).as_str()) >= 1usize
    }
}
#[automatically_derived]
impl ::agent_contracts::__private::ContractChecks for PlanGeneratorAgentOutputStatus {
    #[allow(unused_variables, unused_comparisons, clippy::all)]
    fn satisfies_contract(&self) -> bool {
        true
    }
}
///[`PlanGeneratorAgentOutput`] as received so far, while the answer streams.
#[derive(
    ::agent_contracts::__private::serde::Deserialize,
    ::core::clone::Clone,
    ::core::fmt::Debug,
    ::core::default::Default
)]
#[serde(crate = "::agent_contracts::__private::serde")]
pub struct PlanGeneratorAgentOutputPartial {
    ///`agent_response_content`, once known.
    #[serde(
        rename = "agent_response_content",
        default,
        deserialize_with = "::agent_contracts::__private::partial::lenient"
    )]
    pub agent_response_content: ::core::option::Option<::std::string::String>,
    ///`plan_file_path`, once known.
    #[serde(
        rename = "plan_file_path",
        default,
        deserialize_with = "::agent_contracts::__private::partial::lenient"
    )]
    pub plan_file_path: ::core::option::Option<::std::string::String>,
    ///`status`, once known.
    #[serde(
        rename = "status",
        default,
        deserialize_with = "::agent_contracts::__private::partial::lenient"
    )]
    pub status: ::core::option::Option<PlanGeneratorAgentOutputStatus>,
}
#[automatically_derived]
impl ::agent_contracts::__private::PartialOutput for PlanGeneratorAgentOutput {
    type Partial = PlanGeneratorAgentOutputPartial;
}
