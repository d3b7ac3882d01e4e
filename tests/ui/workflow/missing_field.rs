// A step needs a field that neither the workflow's input nor an earlier step provides.
#[derive(agent_contracts::Workflow)]
#[workflow(schemas = "schemas/flow", agents = "crate::agents", steps = ["producer", "reader"])]
struct Flow;

fn main() {
    let _ = Flow::workflow(["a", "b"]);
}
