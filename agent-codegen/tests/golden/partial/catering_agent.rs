///[`CateringAgentOutput`] as received so far, while the answer streams.
#[derive(
    ::agent_contracts::__private::serde::Deserialize,
    ::core::clone::Clone,
    ::core::fmt::Debug,
    ::core::default::Default
)]
#[serde(crate = "::agent_contracts::__private::serde")]
pub struct CateringAgentOutputPartial {
    ///`cost_usd`, once known.
    #[serde(
        rename = "cost_usd",
        default,
        deserialize_with = "::agent_contracts::__private::partial::lenient"
    )]
    pub cost_usd: ::core::option::Option<f64>,
    ///`dietary_accommodations`, once known.
    #[serde(
        rename = "dietary_accommodations",
        default,
        deserialize_with = "::agent_contracts::__private::partial::lenient_items"
    )]
    pub dietary_accommodations: ::core::option::Option<
        ::std::vec::Vec<::std::string::String>,
    >,
    ///`menu`, once known.
    #[serde(
        rename = "menu",
        default,
        deserialize_with = "::agent_contracts::__private::partial::lenient_items"
    )]
    pub menu: ::core::option::Option<::std::vec::Vec<::std::string::String>>,
    ///`next_agent`, once known.
    #[serde(
        rename = "next_agent",
        default,
        deserialize_with = "::agent_contracts::__private::partial::lenient"
    )]
    pub next_agent: ::core::option::Option<::std::string::String>,
}
#[automatically_derived]
impl ::agent_contracts::__private::PartialOutput for CateringAgentOutput {
    type Partial = CateringAgentOutputPartial;
}
