// A consumer maps a contract it never `$ref`s: the mapping would do nothing, so it is refused
// at the file name.

mod agents {
    /// Produces a count and a kind.
    #[derive(agent_contracts::Agent)]
    #[agent(
        input = "schemas/flow/producer/input.schema.json",
        output = "schemas/flow/producer/output.schema.json"
    )]
    pub struct Producer;
}

/// Refers to the maker's output only, and maps the producer's.
#[derive(agent_contracts::Agent)]
#[agent(
    input = "schemas/mapped/user/input.schema.json",
    types = { "../../flow/producer/output.schema.json" = crate::agents::producer::ProducerOutput }
)]
struct User;

fn main() {}
