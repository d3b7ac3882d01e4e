// Two contracts refer to each other through sibling `$ref`s.
#[derive(agent_contracts::Workflow)]
#[workflow(schemas = "schemas/flow", agents = "crate::agents", steps = ["loop_a"])]
struct Flow;

fn main() {
    let _ = Flow::workflow(["a"]);
}
