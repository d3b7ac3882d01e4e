///Complete output from a sub-agent execution
#[derive(
    ::agent_contracts::__private::serde::Deserialize,
    ::agent_contracts::__private::serde::Serialize,
    Clone,
    Debug,
    PartialEq
)]
#[serde(crate = "::agent_contracts::__private::serde")]
pub struct AgentOutput {
    ///Identifier of the source agent
    pub agent_name: AgentOutputAgentName,
    ///Brief explanation of what this agent discovered and how it helps plan generation. Example: 'Selector Agent found 5 listing selectors and 8 detail page selectors with 95%+ success rate'
    pub description: ::std::string::String,
    ///The COMPLETE response object from the agent, including all fields like selectors, URLs, pagination info, etc. Do not filter or summarize - include everything.
    pub output: ::agent_contracts::__private::RawObject,
}
///Identifier of the source agent
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
pub enum AgentOutputAgentName {
    #[serde(rename = "discovery_agent")]
    DiscoveryAgent,
    #[serde(rename = "selector_agent")]
    SelectorAgent,
    #[serde(rename = "accessibility_agent")]
    AccessibilityAgent,
    #[serde(rename = "data_prep_agent")]
    DataPrepAgent,
}
impl ::std::fmt::Display for AgentOutputAgentName {
    fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
        match *self {
            Self::DiscoveryAgent => f.write_str("discovery_agent"),
            Self::SelectorAgent => f.write_str("selector_agent"),
            Self::AccessibilityAgent => f.write_str("accessibility_agent"),
            Self::DataPrepAgent => f.write_str("data_prep_agent"),
        }
    }
}
impl ::std::str::FromStr for AgentOutputAgentName {
    type Err = self::error::ConversionError;
    fn from_str(
        value: &str,
    ) -> ::std::result::Result<Self, self::error::ConversionError> {
        match value {
            "discovery_agent" => Ok(Self::DiscoveryAgent),
            "selector_agent" => Ok(Self::SelectorAgent),
            "accessibility_agent" => Ok(Self::AccessibilityAgent),
            "data_prep_agent" => Ok(Self::DataPrepAgent),
            _ => Err("invalid value".into()),
        }
    }
}
impl ::std::convert::TryFrom<&str> for AgentOutputAgentName {
    type Error = self::error::ConversionError;
    fn try_from(
        value: &str,
    ) -> ::std::result::Result<Self, self::error::ConversionError> {
        value.parse()
    }
}
impl ::std::convert::TryFrom<::std::string::String> for AgentOutputAgentName {
    type Error = self::error::ConversionError;
    fn try_from(
        value: ::std::string::String,
    ) -> ::std::result::Result<Self, self::error::ConversionError> {
        value.parse()
    }
}
///Input contract of the plan generator: everything the sub-agents collected about one target page.
#[derive(
    ::agent_contracts::__private::serde::Deserialize,
    ::agent_contracts::__private::serde::Serialize,
    Clone,
    Debug,
    PartialEq
)]
#[serde(crate = "::agent_contracts::__private::serde")]
pub struct PlanGeneratorAgentInput {
    ///CRITICAL: Array of outputs from sub-agents that ran before plan generation. Each item contains the complete response from one sub-agent. This is the PRIMARY data source for generating the crawl plan - selectors, pagination info, accessibility requirements, and sample articles all come from here. Must include at least discovery_agent and selector_agent outputs.
    pub collected_information: ::std::vec::Vec<AgentOutput>,
    ///The URL of the page the crawl plan is for, exactly as the sub-agents visited it. Example: 'https://myapp.com/login'
    pub target_url: PlanGeneratorAgentInputTargetUrl,
    ///Short snake_case identifier of the crawl task, used to name the plan file. Example: 'login_form_automation'
    pub task_name: PlanGeneratorAgentInputTaskName,
}
///The URL of the page the crawl plan is for, exactly as the sub-agents visited it. Example: 'https://myapp.com/login'
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
pub struct PlanGeneratorAgentInputTargetUrl(::std::string::String);
impl ::std::ops::Deref for PlanGeneratorAgentInputTargetUrl {
    type Target = ::std::string::String;
    fn deref(&self) -> &::std::string::String {
        &self.0
    }
}
impl ::std::convert::From<PlanGeneratorAgentInputTargetUrl> for ::std::string::String {
    fn from(value: PlanGeneratorAgentInputTargetUrl) -> Self {
        value.0
    }
}
impl ::std::str::FromStr for PlanGeneratorAgentInputTargetUrl {
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
impl ::std::convert::TryFrom<&str> for PlanGeneratorAgentInputTargetUrl {
    type Error = self::error::ConversionError;
    fn try_from(
        value: &str,
    ) -> ::std::result::Result<Self, self::error::ConversionError> {
        value.parse()
    }
}
impl ::std::convert::TryFrom<::std::string::String>
for PlanGeneratorAgentInputTargetUrl {
    type Error = self::error::ConversionError;
    fn try_from(
        value: ::std::string::String,
    ) -> ::std::result::Result<Self, self::error::ConversionError> {
        value.parse()
    }
}
impl<'de> ::agent_contracts::__private::serde::Deserialize<'de>
for PlanGeneratorAgentInputTargetUrl {
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
///Short snake_case identifier of the crawl task, used to name the plan file. Example: 'login_form_automation'
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
pub struct PlanGeneratorAgentInputTaskName(::std::string::String);
impl ::std::ops::Deref for PlanGeneratorAgentInputTaskName {
    type Target = ::std::string::String;
    fn deref(&self) -> &::std::string::String {
        &self.0
    }
}
impl ::std::convert::From<PlanGeneratorAgentInputTaskName> for ::std::string::String {
    fn from(value: PlanGeneratorAgentInputTaskName) -> Self {
        value.0
    }
}
impl ::std::str::FromStr for PlanGeneratorAgentInputTaskName {
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
impl ::std::convert::TryFrom<&str> for PlanGeneratorAgentInputTaskName {
    type Error = self::error::ConversionError;
    fn try_from(
        value: &str,
    ) -> ::std::result::Result<Self, self::error::ConversionError> {
        value.parse()
    }
}
impl ::std::convert::TryFrom<::std::string::String> for PlanGeneratorAgentInputTaskName {
    type Error = self::error::ConversionError;
    fn try_from(
        value: ::std::string::String,
    ) -> ::std::result::Result<Self, self::error::ConversionError> {
        value.parse()
    }
}
impl<'de> ::agent_contracts::__private::serde::Deserialize<'de>
for PlanGeneratorAgentInputTaskName {
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
impl ::std::fmt::Display for PlanGeneratorAgentInputTargetUrl {
    fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
        ::std::fmt::Display::fmt(&self.0, f)
    }
}
impl ::std::fmt::Display for PlanGeneratorAgentInputTaskName {
    fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
        ::std::fmt::Display::fmt(&self.0, f)
    }
}
impl ::agent_contracts::__private::ToMarkdown for AgentOutput {}
impl ::agent_contracts::__private::ToMarkdown for AgentOutputAgentName {}
impl ::agent_contracts::__private::ToMarkdown for PlanGeneratorAgentInput {}
impl ::agent_contracts::__private::ToMarkdown for PlanGeneratorAgentInputTargetUrl {}
impl ::agent_contracts::__private::ToMarkdown for PlanGeneratorAgentInputTaskName {}
#[automatically_derived]
impl ::agent_contracts::__private::ContractChecks for PlanGeneratorAgentInput {
    #[allow(unused_variables, unused_comparisons, clippy::all)]
    fn satisfies_contract(&self) -> bool {
        (((&self.collected_information)
            .iter()
            .all(|v1| ::agent_contracts::__private::ContractChecks::satisfies_contract(
                v1,
            ))) && ((&self.collected_information).len() >= 1usize))
            && (::agent_contracts::__private::ContractChecks::satisfies_contract(
                &self.target_url,
            ))
            && (::agent_contracts::__private::ContractChecks::satisfies_contract(
                &self.task_name,
            ))
    }
}
#[automatically_derived]
impl ::agent_contracts::__private::ContractChecks for AgentOutput {
    #[allow(unused_variables, unused_comparisons, clippy::all)]
    fn satisfies_contract(&self) -> bool {
        ::agent_contracts::__private::ContractChecks::satisfies_contract(
            &self.agent_name,
        )
    }
}
#[automatically_derived]
impl ::agent_contracts::__private::ContractChecks for PlanGeneratorAgentInputTargetUrl {
    #[allow(unused_variables, unused_comparisons, clippy::all)]
    fn satisfies_contract(&self) -> bool {
        ::agent_contracts::__private::checks::chars((&self.0).as_str()) >= 1usize
    }
}
#[automatically_derived]
impl ::agent_contracts::__private::ContractChecks for PlanGeneratorAgentInputTaskName {
    #[allow(unused_variables, unused_comparisons, clippy::all)]
    fn satisfies_contract(&self) -> bool {
        ::agent_contracts::__private::checks::chars((&self.0).as_str()) >= 1usize
    }
}
#[automatically_derived]
impl ::agent_contracts::__private::ContractChecks for AgentOutputAgentName {
    #[allow(unused_variables, unused_comparisons, clippy::all)]
    fn satisfies_contract(&self) -> bool {
        true
    }
}
