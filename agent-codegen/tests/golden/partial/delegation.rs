///[`AgentAssignment`] as received so far, while the answer streams.
#[derive(
    ::agent_contracts::__private::serde::Deserialize,
    ::core::clone::Clone,
    ::core::fmt::Debug,
    ::core::default::Default
)]
#[serde(crate = "::agent_contracts::__private::serde")]
pub struct AgentAssignmentPartial {
    ///`agentId`, once known.
    #[serde(
        rename = "agentId",
        default,
        deserialize_with = "::agent_contracts::__private::partial::lenient"
    )]
    pub agent_id: ::core::option::Option<::std::string::String>,
    ///`agentType`, once known.
    #[serde(
        rename = "agentType",
        default,
        deserialize_with = "::agent_contracts::__private::partial::lenient"
    )]
    pub agent_type: ::core::option::Option<::std::string::String>,
    ///`assignedGoal`, once known.
    #[serde(
        rename = "assignedGoal",
        default,
        deserialize_with = "::agent_contracts::__private::partial::lenient"
    )]
    pub assigned_goal: ::core::option::Option<::std::string::String>,
    ///`contextToPass`, once known.
    #[serde(
        rename = "contextToPass",
        default,
        deserialize_with = "::agent_contracts::__private::partial::lenient"
    )]
    pub context_to_pass: ::core::option::Option<
        ::std::collections::BTreeMap<::std::string::String, ::std::string::String>,
    >,
    ///`subdomainFocus`, once known.
    #[serde(
        rename = "subdomainFocus",
        default,
        deserialize_with = "::agent_contracts::__private::partial::lenient"
    )]
    pub subdomain_focus: ::core::option::Option<::std::string::String>,
}
///[`ContextSelection`] as received so far, while the answer streams.
#[derive(
    ::agent_contracts::__private::serde::Deserialize,
    ::core::clone::Clone,
    ::core::fmt::Debug,
    ::core::default::Default
)]
#[serde(crate = "::agent_contracts::__private::serde")]
pub struct ContextSelectionPartial {
    ///`selectedContent`, once known.
    #[serde(
        rename = "selectedContent",
        default,
        deserialize_with = "::agent_contracts::__private::partial::lenient"
    )]
    pub selected_content: ::core::option::Option<::std::string::String>,
    ///`selectionId`, once known.
    #[serde(
        rename = "selectionId",
        default,
        deserialize_with = "::agent_contracts::__private::partial::lenient"
    )]
    pub selection_id: ::core::option::Option<::std::string::String>,
    ///`selectionRationale`, once known.
    #[serde(
        rename = "selectionRationale",
        default,
        deserialize_with = "::agent_contracts::__private::partial::lenient"
    )]
    pub selection_rationale: ::core::option::Option<::std::string::String>,
    ///`sourceContextId`, once known.
    #[serde(
        rename = "sourceContextId",
        default,
        deserialize_with = "::agent_contracts::__private::partial::lenient"
    )]
    pub source_context_id: ::core::option::Option<::std::string::String>,
}
///[`DelegationOutput`] as received so far, while the answer streams.
#[derive(
    ::agent_contracts::__private::serde::Deserialize,
    ::core::clone::Clone,
    ::core::fmt::Debug,
    ::core::default::Default
)]
#[serde(crate = "::agent_contracts::__private::serde")]
pub struct DelegationOutputPartial {
    ///`assignments`, once known.
    #[serde(
        rename = "assignments",
        default,
        deserialize_with = "::agent_contracts::__private::partial::lenient_items"
    )]
    pub assignments: ::core::option::Option<::std::vec::Vec<AgentAssignment>>,
    ///`contextSelections`, once known.
    #[serde(
        rename = "contextSelections",
        default,
        deserialize_with = "::agent_contracts::__private::partial::lenient_items"
    )]
    pub context_selections: ::core::option::Option<::std::vec::Vec<ContextSelection>>,
    ///`delegationRationale`, once known.
    #[serde(
        rename = "delegationRationale",
        default,
        deserialize_with = "::agent_contracts::__private::partial::lenient"
    )]
    pub delegation_rationale: ::core::option::Option<::std::string::String>,
    ///`goal`, once known.
    #[serde(
        rename = "goal",
        default,
        deserialize_with = "::agent_contracts::__private::partial::lenient"
    )]
    pub goal: ::core::option::Option<::std::string::String>,
    ///`metadata`, once known.
    #[serde(
        rename = "metadata",
        default,
        deserialize_with = "::agent_contracts::__private::partial::lenient"
    )]
    pub metadata: ::core::option::Option<
        ::std::collections::BTreeMap<::std::string::String, ::std::string::String>,
    >,
    ///`resultId`, once known.
    #[serde(
        rename = "resultId",
        default,
        deserialize_with = "::agent_contracts::__private::partial::lenient"
    )]
    pub result_id: ::core::option::Option<::std::string::String>,
    ///`schemaVersion`, once known.
    #[serde(
        rename = "schemaVersion",
        default,
        deserialize_with = "::agent_contracts::__private::partial::lenient"
    )]
    pub schema_version: ::core::option::Option<::std::string::String>,
    ///`upstreamContextId`, once known.
    #[serde(
        rename = "upstreamContextId",
        default,
        deserialize_with = "::agent_contracts::__private::partial::lenient"
    )]
    pub upstream_context_id: ::core::option::Option<::std::string::String>,
}
#[automatically_derived]
impl ::agent_contracts::__private::PartialOutput for DelegationOutput {
    type Partial = DelegationOutputPartial;
}
