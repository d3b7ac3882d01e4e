use agent_contracts::PromptContributor;

#[derive(PromptContributor)]
#[contributor(name = "style", name = "again")]
struct Style;

fn main() {
    let _: &dyn PromptContributor = &Style;
}
