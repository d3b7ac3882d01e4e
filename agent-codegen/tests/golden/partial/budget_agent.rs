///[`BudgetAgentOutput`] as received so far, while the answer streams.
#[derive(
    ::agent_contracts::__private::serde::Deserialize,
    ::core::clone::Clone,
    ::core::fmt::Debug,
    ::core::default::Default
)]
#[serde(crate = "::agent_contracts::__private::serde")]
pub struct BudgetAgentOutputPartial {
    ///`allocations`, once known.
    #[serde(
        rename = "allocations",
        default,
        deserialize_with = "::agent_contracts::__private::partial::lenient"
    )]
    pub allocations: ::core::option::Option<
        ::std::collections::BTreeMap<::std::string::String, f64>,
    >,
    ///`next_agent`, once known.
    #[serde(
        rename = "next_agent",
        default,
        deserialize_with = "::agent_contracts::__private::partial::lenient"
    )]
    pub next_agent: ::core::option::Option<::std::string::String>,
    ///`total_budget_usd`, once known.
    #[serde(
        rename = "total_budget_usd",
        default,
        deserialize_with = "::agent_contracts::__private::partial::lenient"
    )]
    pub total_budget_usd: ::core::option::Option<f64>,
}
#[automatically_derived]
impl ::agent_contracts::__private::PartialOutput for BudgetAgentOutput {
    type Partial = BudgetAgentOutputPartial;
}
