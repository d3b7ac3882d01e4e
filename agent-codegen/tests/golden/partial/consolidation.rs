///[`CollectorDecision`] as received so far, while the answer streams.
#[derive(
    ::agent_contracts::__private::serde::Deserialize,
    ::core::clone::Clone,
    ::core::fmt::Debug,
    ::core::default::Default
)]
#[serde(crate = "::agent_contracts::__private::serde")]
pub struct CollectorDecisionPartial {
    ///`decisionType`, once known.
    #[serde(
        rename = "decisionType",
        default,
        deserialize_with = "::agent_contracts::__private::partial::lenient"
    )]
    pub decision_type: ::core::option::Option<CollectorDecisionDecisionType>,
    ///`rationale`, once known.
    #[serde(
        rename = "rationale",
        default,
        deserialize_with = "::agent_contracts::__private::partial::lenient"
    )]
    pub rationale: ::core::option::Option<::std::string::String>,
    ///`requestedPhase`, once known.
    #[serde(
        rename = "requestedPhase",
        default,
        deserialize_with = "::agent_contracts::__private::partial::lenient"
    )]
    pub requested_phase: ::core::option::Option<::std::string::String>,
}
///[`ConflictResolution`] as received so far, while the answer streams.
#[derive(
    ::agent_contracts::__private::serde::Deserialize,
    ::core::clone::Clone,
    ::core::fmt::Debug,
    ::core::default::Default
)]
#[serde(crate = "::agent_contracts::__private::serde")]
pub struct ConflictResolutionPartial {
    ///`conflictDescription`, once known.
    #[serde(
        rename = "conflictDescription",
        default,
        deserialize_with = "::agent_contracts::__private::partial::lenient"
    )]
    pub conflict_description: ::core::option::Option<::std::string::String>,
    ///`conflictingInputs`, once known.
    #[serde(
        rename = "conflictingInputs",
        default,
        deserialize_with = "::agent_contracts::__private::partial::lenient_items"
    )]
    pub conflicting_inputs: ::core::option::Option<::std::vec::Vec<ContextId>>,
    ///`resolutionApproach`, once known.
    #[serde(
        rename = "resolutionApproach",
        default,
        deserialize_with = "::agent_contracts::__private::partial::lenient"
    )]
    pub resolution_approach: ::core::option::Option<::std::string::String>,
}
///[`ConsolidationOutput`] as received so far, while the answer streams.
#[derive(
    ::agent_contracts::__private::serde::Deserialize,
    ::core::clone::Clone,
    ::core::fmt::Debug,
    ::core::default::Default
)]
#[serde(crate = "::agent_contracts::__private::serde")]
pub struct ConsolidationOutputPartial {
    ///`aggregatedMetrics`, once known.
    #[serde(
        rename = "aggregatedMetrics",
        default,
        deserialize_with = "::agent_contracts::__private::partial::lenient"
    )]
    pub aggregated_metrics: ::core::option::Option<
        ::std::collections::BTreeMap<::std::string::String, f64>,
    >,
    ///`conflictResolutions`, once known.
    #[serde(
        rename = "conflictResolutions",
        default,
        deserialize_with = "::agent_contracts::__private::partial::lenient_items"
    )]
    pub conflict_resolutions: ::core::option::Option<
        ::std::vec::Vec<ConflictResolution>,
    >,
    ///`consolidatedOutput`, once known.
    #[serde(
        rename = "consolidatedOutput",
        default,
        deserialize_with = "::agent_contracts::__private::partial::lenient"
    )]
    pub consolidated_output: ::core::option::Option<::std::string::String>,
    ///`curations`, once known.
    #[serde(
        rename = "curations",
        default,
        deserialize_with = "::agent_contracts::__private::partial::lenient_items"
    )]
    pub curations: ::core::option::Option<::std::vec::Vec<Curation>>,
    ///`decision`, once known.
    #[serde(
        rename = "decision",
        default,
        deserialize_with = "::agent_contracts::__private::partial::lenient"
    )]
    pub decision: ::core::option::Option<CollectorDecisionPartial>,
    ///`inputs`, once known.
    #[serde(
        rename = "inputs",
        default,
        deserialize_with = "::agent_contracts::__private::partial::lenient_items"
    )]
    pub inputs: ::core::option::Option<::std::vec::Vec<InputReference>>,
    ///`mergeStrategy`, once known.
    #[serde(
        rename = "mergeStrategy",
        default,
        deserialize_with = "::agent_contracts::__private::partial::lenient"
    )]
    pub merge_strategy: ::core::option::Option<::std::string::String>,
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
    ///`upstreamContextChain`, once known.
    #[serde(
        rename = "upstreamContextChain",
        default,
        deserialize_with = "::agent_contracts::__private::partial::lenient_items"
    )]
    pub upstream_context_chain: ::core::option::Option<::std::vec::Vec<ContextId>>,
}
///[`Curation`] as received so far, while the answer streams.
#[derive(
    ::agent_contracts::__private::serde::Deserialize,
    ::core::clone::Clone,
    ::core::fmt::Debug,
    ::core::default::Default
)]
#[serde(crate = "::agent_contracts::__private::serde")]
pub struct CurationPartial {
    ///`curationId`, once known.
    #[serde(
        rename = "curationId",
        default,
        deserialize_with = "::agent_contracts::__private::partial::lenient"
    )]
    pub curation_id: ::core::option::Option<::std::string::String>,
    ///`sourceContextIds`, once known.
    #[serde(
        rename = "sourceContextIds",
        default,
        deserialize_with = "::agent_contracts::__private::partial::lenient_items"
    )]
    pub source_context_ids: ::core::option::Option<::std::vec::Vec<ContextId>>,
    ///`summary`, once known.
    #[serde(
        rename = "summary",
        default,
        deserialize_with = "::agent_contracts::__private::partial::lenient"
    )]
    pub summary: ::core::option::Option<::std::string::String>,
    ///`targetAgentType`, once known.
    #[serde(
        rename = "targetAgentType",
        default,
        deserialize_with = "::agent_contracts::__private::partial::lenient"
    )]
    pub target_agent_type: ::core::option::Option<::std::string::String>,
}
///[`InputReference`] as received so far, while the answer streams.
#[derive(
    ::agent_contracts::__private::serde::Deserialize,
    ::core::clone::Clone,
    ::core::fmt::Debug,
    ::core::default::Default
)]
#[serde(crate = "::agent_contracts::__private::serde")]
pub struct InputReferencePartial {
    ///`inputContextId`, once known.
    #[serde(
        rename = "inputContextId",
        default,
        deserialize_with = "::agent_contracts::__private::partial::lenient"
    )]
    pub input_context_id: ::core::option::Option<::std::string::String>,
    ///`inputSummary`, once known.
    #[serde(
        rename = "inputSummary",
        default,
        deserialize_with = "::agent_contracts::__private::partial::lenient"
    )]
    pub input_summary: ::core::option::Option<::std::string::String>,
    ///`inputType`, once known.
    #[serde(
        rename = "inputType",
        default,
        deserialize_with = "::agent_contracts::__private::partial::lenient"
    )]
    pub input_type: ::core::option::Option<::std::string::String>,
}
#[automatically_derived]
impl ::agent_contracts::__private::PartialOutput for ConsolidationOutput {
    type Partial = ConsolidationOutputPartial;
}
