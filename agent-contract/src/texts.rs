//! The sentences this crate says to a model, as askama templates under `templates/`: text a
//! model reads is data, kept apart from the code that decides when to send it.
//!
//! Writing into a `String` cannot fail, and these templates call no fallible filter, so a
//! render error is impossible and maps to `""`.

use askama::Template;

/// `contract/tool_description.md`: an agent's tool description for a parent model.
#[derive(Template)]
#[template(path = "contract/tool_description.md", escape = "none")]
struct ToolDescription<'a> {
    description: &'a str,
    required: &'a [String],
    user: &'a [String],
}

/// The agent's description, then the required inputs a parent must pass flat.
pub(crate) fn tool_description(description: &str, required: &[String], user: &[String]) -> String {
    ToolDescription {
        description,
        required,
        user,
    }
    .render()
    .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_description_text() {
        let required = ["target_url".to_owned(), "task_name".to_owned()];
        assert_eq!(
            tool_description("Plans crawls.", &required, &[]),
            "Plans crawls.\n\nRequired inputs (pass them as top-level arguments): target_url, task_name"
        );
        assert_eq!(tool_description("Plans crawls.", &[], &[]), "Plans crawls.");
        let user = ["target_url".to_owned()];
        assert_eq!(
            tool_description("Plans crawls.", &required[1..], &user),
            "Plans crawls.\n\nRequired inputs (pass them as top-level arguments): task_name\n\n\
             Only a person can give (pass them only as your user wrote them; left out, the user is asked): target_url"
        );
        assert_eq!(
            tool_description("Plans crawls.", &[], &user),
            "Plans crawls.\n\n\
             Only a person can give (pass them only as your user wrote them; left out, the user is asked): target_url"
        );
    }
}
