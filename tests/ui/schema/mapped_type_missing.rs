// A consumer maps the contract it refers to onto a type path that names nothing: the error
// points at the path in the attribute, not into the generated code.

mod agents {
    /// Makes things.
    #[derive(agent_contracts::Agent)]
    #[agent(
        input = "schemas/mapped/maker/input.schema.json",
        output = "schemas/mapped/maker/output.schema.json"
    )]
    pub struct Maker;
}

/// Uses the maker's output, mapped onto a module that does not exist.
#[derive(agent_contracts::Agent)]
#[agent(
    input = "schemas/mapped/user/input.schema.json",
    types = { "../maker/output.schema.json" = crate::agents::mkaer::output::MakerOutput }
)]
struct User;

fn main() {}
