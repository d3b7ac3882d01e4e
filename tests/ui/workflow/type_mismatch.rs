// The producer's output has a string where the step expects an integer, and any string where it allows an enum.
#[derive(agent_contracts::Workflow)]
#[workflow(schemas = "schemas/flow", agents = "crate::agents", steps = ["producer", "counter"])]
struct Flow;

fn main() {
    let _ = Flow::workflow(["a", "b"]);
}
