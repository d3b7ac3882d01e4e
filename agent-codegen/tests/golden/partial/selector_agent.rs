///[`SelectorAgentOutput`] as received so far, while the answer streams.
#[derive(
    ::agent_contracts::__private::serde::Deserialize,
    ::core::clone::Clone,
    ::core::fmt::Debug,
    ::core::default::Default
)]
#[serde(crate = "::agent_contracts::__private::serde")]
pub struct SelectorAgentOutputPartial {
    ///`selectors`, once known.
    #[serde(
        rename = "selectors",
        default,
        deserialize_with = "::agent_contracts::__private::partial::lenient"
    )]
    pub selectors: ::core::option::Option<::agent_contracts::__private::RawObject>,
    ///`strategy`, once known.
    #[serde(
        rename = "strategy",
        default,
        deserialize_with = "::agent_contracts::__private::partial::lenient"
    )]
    pub strategy: ::core::option::Option<::std::string::String>,
    ///`warnings`, once known.
    #[serde(
        rename = "warnings",
        default,
        deserialize_with = "::agent_contracts::__private::partial::lenient_items"
    )]
    pub warnings: ::core::option::Option<::std::vec::Vec<::std::string::String>>,
}
#[automatically_derived]
impl ::agent_contracts::__private::PartialOutput for SelectorAgentOutput {
    type Partial = SelectorAgentOutputPartial;
}
