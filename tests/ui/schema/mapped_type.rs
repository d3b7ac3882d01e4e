// A consumer maps the contract it refers to onto a type generated from another schema.

mod agents {
    /// Makes things.
    #[derive(agent_contracts::Agent)]
    #[agent(
        input = "schemas/mapped/maker/input.schema.json",
        output = "schemas/mapped/maker/output.schema.json"
    )]
    pub struct Maker;

    /// Produces a count and a kind: another output contract.
    #[derive(agent_contracts::Agent)]
    #[agent(
        input = "schemas/flow/producer/input.schema.json",
        output = "schemas/flow/producer/output.schema.json"
    )]
    pub struct Producer;
}

/// Uses the maker's output, mapped onto the producer's type.
#[derive(agent_contracts::Agent)]
#[agent(
    input = "schemas/mapped/user/input.schema.json",
    types = { "../maker/output.schema.json" = crate::agents::producer::ProducerOutput }
)]
struct User;

fn main() {}
