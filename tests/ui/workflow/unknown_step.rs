// A step names no agent folder.
#[derive(agent_contracts::Workflow)]
#[workflow(schemas = "schemas/flow", agents = "crate::agents", steps = ["producer", "countr"])]
struct Flow;

fn main() {
    let _ = Flow::workflow(["a", "b"]);
}
