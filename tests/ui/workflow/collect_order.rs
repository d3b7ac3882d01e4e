// A collect names a step that runs after the consumer, and collects fewer items than `minItems`.
#[derive(agent_contracts::Workflow)]
#[workflow(
    schemas = "schemas/collect",
    agents = "crate::agents",
    steps = ["gatherer", "finder"],
    collect = { gathered = ["finder"] }
)]
struct Flow;

fn main() {
    let _ = Flow::workflow(["a", "b"], ["x"]);
}
