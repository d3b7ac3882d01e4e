// A step needs the output of a step that runs after it.
#[derive(agent_contracts::Workflow)]
#[workflow(schemas = "schemas/flow", agents = "crate::agents", steps = ["consumer", "producer"])]
struct Flow;

fn main() {
    let _ = Flow::workflow(["a", "b"]);
}
