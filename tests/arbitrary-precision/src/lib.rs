//! A stand-in for a user's crate that turned on serde_json's `arbitrary_precision` feature
//! itself: numbers then travel through serde as a private map, and its tests show that the
//! generated types still read integral floats (`2.0`) into integer fields, as the validator
//! accepts them.
#![forbid(unsafe_code)]

use agent_contracts::Agent;

/// Integer fields in every position a contract puts them: plain, optional, bounded, in arrays,
/// maps, nested objects and unions.
#[derive(Agent)]
#[agent(input = "../fixtures/arbitrary_precision/integers.schema.json")]
pub struct Integers;
