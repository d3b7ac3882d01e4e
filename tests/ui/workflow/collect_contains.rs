// The consumer's contract requires an item from `finder` (`contains`), and the collect leaves
// it out.
#[derive(agent_contracts::Workflow)]
#[workflow(
    schemas = "schemas/contains",
    agents = "crate::agents",
    steps = ["finder", "lister", "planner"],
    collect = { gathered = ["lister"] }
)]
struct Flow;

fn main() {
    let _ = Flow::workflow(["a", "b", "c"], ["x"]);
}
