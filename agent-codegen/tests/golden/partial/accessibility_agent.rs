///[`AccessibilityAgentOutput`] as received so far, while the answer streams.
#[derive(
    ::agent_contracts::__private::serde::Deserialize,
    ::core::clone::Clone,
    ::core::fmt::Debug,
    ::core::default::Default
)]
#[serde(crate = "::agent_contracts::__private::serde")]
pub struct AccessibilityAgentOutputPartial {
    ///`audit_metadata`, once known.
    #[serde(
        rename = "audit_metadata",
        default,
        deserialize_with = "::agent_contracts::__private::partial::lenient"
    )]
    pub audit_metadata: ::core::option::Option<::agent_contracts::__private::RawObject>,
    ///`compliance_level`, once known.
    #[serde(
        rename = "compliance_level",
        default,
        deserialize_with = "::agent_contracts::__private::partial::lenient"
    )]
    pub compliance_level: ::core::option::Option<
        AccessibilityAgentOutputComplianceLevel,
    >,
    ///`issues`, once known.
    #[serde(
        rename = "issues",
        default,
        deserialize_with = "::agent_contracts::__private::partial::lenient_items"
    )]
    pub issues: ::core::option::Option<
        ::std::vec::Vec<::agent_contracts::__private::RawObject>,
    >,
    ///`overall_score`, once known.
    #[serde(
        rename = "overall_score",
        default,
        deserialize_with = "::agent_contracts::__private::partial::lenient_integer"
    )]
    pub overall_score: ::core::option::Option<i64>,
    ///`passed_checks`, once known.
    #[serde(
        rename = "passed_checks",
        default,
        deserialize_with = "::agent_contracts::__private::partial::lenient"
    )]
    pub passed_checks: ::core::option::Option<
        ::std::collections::BTreeMap<::std::string::String, bool>,
    >,
}
#[automatically_derived]
impl ::agent_contracts::__private::PartialOutput for AccessibilityAgentOutput {
    type Partial = AccessibilityAgentOutputPartial;
}
