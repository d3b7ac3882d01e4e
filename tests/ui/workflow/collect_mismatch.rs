// A collect names a step whose output is not an object, and one the item's `agent_name` does not allow.
#[derive(agent_contracts::Workflow)]
#[workflow(
    schemas = "schemas/collect",
    agents = "crate::agents",
    steps = ["finder", "lister", "stray", "gatherer"],
    collect = { gathered = ["finder", "lister", "stray"] }
)]
struct Flow;

fn main() {
    let _ = Flow::workflow(["a", "b", "c", "d"], ["x", "y", "z"]);
}
