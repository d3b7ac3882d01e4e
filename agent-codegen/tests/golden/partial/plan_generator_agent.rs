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
