//! An unknown key is reported at the key, and the fallback impl keeps code that uses the
//! contributor free of errors of its own.

use agent_contracts::PromptContributor;

#[derive(PromptContributor)]
#[contributor(template = "contributors/style.md", priorty = 3)]
struct Style {
    tone: &'static str,
}

fn main() {
    let style = Style { tone: "plain" };
    let _: &dyn PromptContributor = &style;
    let _ = style.tone;
}
