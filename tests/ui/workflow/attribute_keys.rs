// A misspelled key, and the keys a declaration cannot do without; code using the workflow
// still compiles.
#[derive(agent_contracts::Workflow)]
#[workflow(steps = ["producer"], agnets = "crate::agents")]
struct Flow;

fn main() {
    let _ = Flow::workflow(["a"]);
}
