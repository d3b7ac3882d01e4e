///[`DiscoveryAgentOutput`] as received so far, while the answer streams.
#[derive(
    ::agent_contracts::__private::serde::Deserialize,
    ::core::clone::Clone,
    ::core::fmt::Debug,
    ::core::default::Default
)]
#[serde(crate = "::agent_contracts::__private::serde")]
pub struct DiscoveryAgentOutputPartial {
    ///`discovered_elements`, once known.
    #[serde(
        rename = "discovered_elements",
        default,
        deserialize_with = "::agent_contracts::__private::partial::lenient_items"
    )]
    pub discovered_elements: ::core::option::Option<
        ::std::vec::Vec<::agent_contracts::__private::RawObject>,
    >,
    ///`forms_detected`, once known.
    #[serde(
        rename = "forms_detected",
        default,
        deserialize_with = "::agent_contracts::__private::partial::lenient_integer"
    )]
    pub forms_detected: ::core::option::Option<u64>,
    ///`metadata`, once known.
    #[serde(
        rename = "metadata",
        default,
        deserialize_with = "::agent_contracts::__private::partial::lenient"
    )]
    pub metadata: ::core::option::Option<::agent_contracts::__private::RawObject>,
    ///`page_title`, once known.
    #[serde(
        rename = "page_title",
        default,
        deserialize_with = "::agent_contracts::__private::partial::lenient"
    )]
    pub page_title: ::core::option::Option<::std::string::String>,
}
#[automatically_derived]
impl ::agent_contracts::__private::PartialOutput for DiscoveryAgentOutput {
    type Partial = DiscoveryAgentOutputPartial;
}
