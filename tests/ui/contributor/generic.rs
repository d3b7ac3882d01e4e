use agent_contracts::PromptContributor;

#[derive(PromptContributor)]
#[contributor(template = "contributors/style.md")]
struct Style<T> {
    tone: T,
}

fn main() {}
