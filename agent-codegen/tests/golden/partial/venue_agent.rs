///[`VenueAgentOutput`] as received so far, while the answer streams.
#[derive(
    ::agent_contracts::__private::serde::Deserialize,
    ::core::clone::Clone,
    ::core::fmt::Debug,
    ::core::default::Default
)]
#[serde(crate = "::agent_contracts::__private::serde")]
pub struct VenueAgentOutputPartial {
    ///`capacity`, once known.
    #[serde(
        rename = "capacity",
        default,
        deserialize_with = "::agent_contracts::__private::partial::lenient_integer"
    )]
    pub capacity: ::core::option::Option<::std::num::NonZeroU64>,
    ///`cost_usd`, once known.
    #[serde(
        rename = "cost_usd",
        default,
        deserialize_with = "::agent_contracts::__private::partial::lenient"
    )]
    pub cost_usd: ::core::option::Option<f64>,
    ///`next_agent`, once known.
    #[serde(
        rename = "next_agent",
        default,
        deserialize_with = "::agent_contracts::__private::partial::lenient"
    )]
    pub next_agent: ::core::option::Option<::std::string::String>,
    ///`notes`, once known.
    #[serde(
        rename = "notes",
        default,
        deserialize_with = "::agent_contracts::__private::partial::lenient"
    )]
    pub notes: ::core::option::Option<::std::string::String>,
    ///`venue_name`, once known.
    #[serde(
        rename = "venue_name",
        default,
        deserialize_with = "::agent_contracts::__private::partial::lenient"
    )]
    pub venue_name: ::core::option::Option<::std::string::String>,
}
#[automatically_derived]
impl ::agent_contracts::__private::PartialOutput for VenueAgentOutput {
    type Partial = VenueAgentOutputPartial;
}
