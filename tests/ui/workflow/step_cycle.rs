// Two steps need each other's output: no order runs them.
#[derive(agent_contracts::Workflow)]
#[workflow(schemas = "schemas/flow", agents = "crate::agents", steps = ["ping", "pong"])]
struct Flow;

fn main() {
    let _ = Flow::workflow(["a", "b"]);
}
