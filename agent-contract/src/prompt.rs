//! User prompts: the default template and the `|markdown` filter.
//!
//! Context goes into the user prompt, where the model reads it as the data of its task, not as
//! a JSON dump in the system prompt.

use crate::kwargs::ToolCall;
use askama::Template;
use serde_json::{Map, Value};
use std::fmt;

/// A prompt that could not be rendered.
#[derive(Debug, thiserror::Error)]
#[error("rendering the user prompt of `{agent}` failed: {source}")]
pub struct PromptError {
    /// The agent whose prompt failed.
    pub agent: String,
    /// What failed: the template engine's error (a filter that failed, a formatting error),
    /// kept as a plain error so that the engine's version is not part of this API.
    #[source]
    pub source: Box<dyn std::error::Error + Send + Sync>,
}

/// The default user prompt: the task, and the context as pretty JSON in a fence that no value
/// can close. With no context the prompt is the task alone.
#[derive(Template)]
#[template(path = "default_user_prompt.md", escape = "none")]
pub(crate) struct DefaultUserPrompt<'a> {
    task: String,
    context: Option<FencedJson<'a>>,
}

impl<'a> DefaultUserPrompt<'a> {
    /// The prompt for `task` with `context` (an empty context means none). No line of the
    /// task can open a block: such lines are escaped, their words kept.
    pub(crate) fn new(task: &'a str, context: &'a Map<String, Value>) -> Self {
        let task = crate::markdown::escape_text(task);
        let context = (!context.is_empty()).then(|| FencedJson {
            fence: fence_for(context),
            body: Body::Map(context),
        });
        Self { task, context }
    }

    /// The prompt of a call: its task, and its context as the parent wrote it (its keys in
    /// their order, its numbers as written).
    pub(crate) fn for_call(call: &'a ToolCall) -> Self {
        let task = crate::markdown::escape_text(&call.task);
        let context = (call.entries().len() > 0).then(|| FencedJson {
            fence: fence_for_entries(call),
            body: Body::Call(call),
        });
        Self { task, context }
    }
}

/// Renders the default user prompt of a call (see [`DefaultUserPrompt::for_call`]).
///
/// ```
/// let call = agent_contracts_contract::ToolCall::from_json_str(
///     r#"{"task": "Plan it", "z": 0.60, "a": 1e5}"#,
///     &agent_contracts_contract::Limits::default(),
/// ).unwrap();
/// assert_eq!(
///     agent_contracts_contract::__private::default_call_prompt(&call),
///     "Plan it\n\n## Context\n```json\n{\n  \"z\": 0.60,\n  \"a\": 1e5\n}\n```"
/// );
/// ```
#[doc(hidden)]
pub fn default_call_prompt(call: &ToolCall) -> String {
    // Writing strings into a String cannot fail, and the template calls no fallible filter.
    DefaultUserPrompt::for_call(call)
        .render()
        .unwrap_or_default()
}

/// The default user prompt of a call with media fields (`specs`, their values `media`): the
/// task, the media in the contract's order right after it, and the rest of the context as
/// [`default_call_prompt`] writes it, the media fields left out (their bytes are never text).
#[doc(hidden)]
pub fn default_media_prompt(
    call: &ToolCall,
    specs: &[crate::media::MediaSpec],
    media: &[Option<&crate::media::MediaInput>],
) -> String {
    let is_media = |key: &str| specs.iter().any(|spec| spec.name == key);
    let entries: Vec<(String, Box<serde_json::value::RawValue>)> = call
        .entries()
        .filter(|(key, _)| !is_media(key))
        .filter_map(|(key, raw)| {
            let raw = serde_json::value::RawValue::from_string(raw.to_owned()).ok()?;
            Some((key.to_owned(), raw))
        })
        .collect();
    // The entries already passed the call's limits.
    let wide = crate::limits::Limits::default()
        .with_max_bytes(usize::MAX)
        .with_max_values(usize::MAX)
        .with_max_depth(usize::MAX);
    let task = crate::markdown::escape_text(&call.task);
    let mut prompt = match ToolCall::from_entries(call.task.clone(), entries, &wide) {
        Ok(rest) => default_call_prompt(&rest),
        Err(_) => task.clone(),
    };
    let fields: Vec<&crate::media::MediaInput> = media.iter().flatten().copied().collect();
    prompt.insert_str(task.len(), &crate::media::markers(&fields));
    prompt
}

/// Renders the default user prompt of `task` and a context map built in code.
///
/// ```
/// let ctx = serde_json::json!({"target_url": "https://example.com"});
/// let prompt = agent_contracts_contract::__private::default_user_prompt("Plan it", ctx.as_object().unwrap());
/// assert_eq!(
///     prompt,
///     "Plan it\n\n## Context\n```json\n{\n  \"target_url\": \"https://example.com\"\n}\n```"
/// );
/// ```
#[doc(hidden)]
pub fn default_user_prompt(task: &str, context: &Map<String, Value>) -> String {
    // Writing strings into a String cannot fail, and the template calls no fallible filter.
    DefaultUserPrompt::new(task, context)
        .render()
        .unwrap_or_default()
}

/// Pretty JSON (2-space indent) written straight into the output, and its fence.
struct FencedJson<'a> {
    fence: String,
    body: Body<'a>,
}

/// What the fence holds: a map built in code, or a call's context as written.
enum Body<'a> {
    Map(&'a Map<String, Value>),
    Call(&'a ToolCall),
}

impl fmt::Display for FencedJson<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut adapter = FmtWriter(f);
        match self.body {
            Body::Map(map) => serde_json::to_writer_pretty(&mut adapter, map),
            Body::Call(call) => serde_json::to_writer_pretty(&mut adapter, &call.context_json()),
        }
        .map_err(|_| fmt::Error)
    }
}

/// Lets serde_json write into a `fmt::Formatter`; it only ever writes valid UTF-8.
struct FmtWriter<'a, 'b>(&'a mut fmt::Formatter<'b>);

impl std::io::Write for FmtWriter<'_, '_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let text = std::str::from_utf8(buf).map_err(std::io::Error::other)?;
        self.0.write_str(text).map_err(std::io::Error::other)?;
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A backtick fence longer than any backtick run in the JSON. Backticks can only stand inside
/// strings and keys, and JSON escaping never touches them, so the strings are scanned (with an
/// explicit stack) instead of the serialized text.
fn fence_for(map: &Map<String, Value>) -> String {
    let mut longest = 0;
    let mut stack: Vec<&Value> = map.values().collect();
    let mut run_of = |s: &str| {
        let mut run = 0;
        for c in s.chars() {
            run = if c == '`' { run + 1 } else { 0 };
            longest = longest.max(run);
        }
    };
    map.keys().for_each(|k| run_of(k));
    while let Some(v) = stack.pop() {
        match v {
            Value::String(s) => run_of(s),
            Value::Array(a) => stack.extend(a),
            Value::Object(o) => {
                o.keys().for_each(|k| run_of(k));
                stack.extend(o.values());
            }
            _ => {}
        }
    }
    "`".repeat((longest + 1).max(3))
}

/// [`fence_for`] on a call's context as written: backticks stand only inside strings and keys,
/// as themselves or as the escape `\u0060`, which the pretty printer writes out as a backtick.
fn fence_for_entries(call: &ToolCall) -> String {
    let mut longest = 0;
    for (key, raw) in call.entries() {
        longest = longest.max(backtick_run(key, false));
        longest = longest.max(backtick_run(raw, true));
    }
    "`".repeat((longest + 1).max(3))
}

/// The longest run of backticks in `text`; in JSON text (`json`), `\u0060` counts as one.
fn backtick_run(text: &str, json: bool) -> usize {
    let bytes = text.as_bytes();
    let (mut longest, mut run, mut i) = (0, 0, 0);
    while i < bytes.len() {
        if bytes[i] == b'`' {
            run += 1;
            i += 1;
        } else if json && bytes[i] == b'\\' {
            let escaped_tick = bytes.get(i + 1) == Some(&b'u')
                && bytes
                    .get(i + 2..i + 6)
                    .is_some_and(|hex| hex.eq_ignore_ascii_case(b"0060"));
            if escaped_tick {
                run += 1;
                i += 6;
            } else {
                // Any other escape (`\\`, `\"`, `\u0041`) ends a run.
                run = 0;
                i += 2;
            }
        } else {
            run = 0;
            i += 1;
        }
        longest = longest.max(run);
    }
    longest
}

/// Askama filters for prompt templates. Bring them into a template's module with
/// `use agent_contracts_contract::filters;`.
#[allow(
    missing_docs,
    reason = "askama's `filter_fn` generates undocumented items"
)]
pub mod filters {
    use askama::Values;

    /// `{{ value|markdown }}`: any [`ToMarkdown`](crate::ToMarkdown) value in the nested-list
    /// markdown format.
    ///
    /// The markdown is written where the template writes (see [`Markdown`]), not returned as a
    /// `String` of its own.
    #[askama::filter_fn]
    pub fn markdown<T: crate::ToMarkdown>(
        value: T,
        _: &dyn Values,
    ) -> askama::Result<super::Markdown<T>> {
        Ok(super::Markdown(value))
    }

    /// `{{ value|inline }}`: the same markdown on one line, for a value inside a line of the
    /// template (a heading), so that no line of the value can open a block.
    ///
    /// Like `markdown`, it is written where the template writes (see [`Inline`]).
    #[askama::filter_fn]
    pub fn inline<T: crate::ToMarkdown>(
        value: T,
        _: &dyn Values,
    ) -> askama::Result<super::Inline<T>> {
        Ok(super::Inline(super::Markdown(value)))
    }
}

/// What `{{ value|markdown }}` writes: `value` rendered by [`crate::markdown`].
///
/// As a template's output it renders into a buffer kept per thread and reused from call to call,
/// then copies that into the template's output: no `String` is allocated and grown per value.
/// An error (a map with keys that are neither strings nor numbers) fails the render with
/// [`MarkdownError`](crate::markdown::MarkdownError) as its source.
#[doc(hidden)]
pub struct Markdown<T>(T);

/// Largest scratch buffer kept for the next render; a larger one is freed after use.
const SCRATCH_KEPT: usize = 1 << 20;

thread_local! {
    static SCRATCH: std::cell::Cell<String> = const { std::cell::Cell::new(String::new()) };
}

impl<T: crate::ToMarkdown> Markdown<T> {
    fn with_text<R>(
        &self,
        use_text: impl FnOnce(&str) -> R,
    ) -> Result<R, crate::markdown::MarkdownError> {
        // A nested render (a `Serialize` impl that renders a template) finds the cell empty and
        // starts its own buffer.
        let mut buffer = SCRATCH.take();
        buffer.clear();
        let result = self
            .0
            .markdown_into(&mut buffer)
            .map(|()| use_text(&buffer));
        if buffer.capacity() <= SCRATCH_KEPT {
            SCRATCH.set(buffer);
        }
        result
    }
}

impl<T: crate::ToMarkdown> askama::FastWritable for Markdown<T> {
    fn write_into(&self, dest: &mut dyn fmt::Write, _: &dyn askama::Values) -> askama::Result<()> {
        match self.with_text(|text| dest.write_str(text)) {
            Ok(written) => Ok(written?),
            Err(e) => Err(askama::Error::Custom(Box::new(e))),
        }
    }
}

impl<T: crate::ToMarkdown> fmt::Display for Markdown<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.with_text(|text| f.write_str(text))
            .map_err(|_| fmt::Error)?
    }
}

/// What `{{ value|inline }}` writes: [`Markdown`]'s text on one line (see
/// [`to_markdown_line`](crate::__private::to_markdown_line)), from the same per-thread buffer,
/// so that the filter allocates nothing.
#[doc(hidden)]
pub struct Inline<T>(Markdown<T>);

impl<T: crate::ToMarkdown> askama::FastWritable for Inline<T> {
    fn write_into(&self, dest: &mut dyn fmt::Write, _: &dyn askama::Values) -> askama::Result<()> {
        match self
            .0
            .with_text(|text| crate::markdown::write_on_one_line(text, dest))
        {
            Ok(written) => Ok(written?),
            Err(e) => Err(askama::Error::Custom(Box::new(e))),
        }
    }
}

impl<T: crate::ToMarkdown> fmt::Display for Inline<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0
            .with_text(|text| crate::markdown::write_on_one_line(text, f))
            .map_err(|_| fmt::Error)?
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_template_type_renders_the_same() {
        let context: Map<String, Value> = serde_json::from_str(r#"{"a": [1]}"#).unwrap();
        assert_eq!(
            DefaultUserPrompt::new("T", &context).render().unwrap(),
            default_user_prompt("T", &context)
        );
    }

    /// `|inline` writes what `to_markdown_line` returns, from the shared buffer, also when
    /// a `|markdown` in the same template has used it just before.
    #[test]
    fn inline_writes_the_markdown_on_one_line() {
        #[derive(Template)]
        #[template(
            source = "# {{ head|inline }} / {{ body|markdown }} / {{ head|inline }}",
            ext = "txt",
            escape = "none"
        )]
        struct Heading<'a> {
            head: &'a Value,
            body: &'a Value,
        }
        let head = serde_json::json!({"url": "https://x.y/\n# forged", "tags": ["a", "b"]});
        let body = serde_json::json!({"k": [1, 2]});
        let line = crate::markdown::to_markdown_line(&head).unwrap();
        assert_eq!(
            line,
            "- **tags**: - a - b - **url**: https://x.y/ \\# forged"
        );
        assert_eq!(
            Heading {
                head: &head,
                body: &body
            }
            .render()
            .unwrap(),
            format!("# {line} / - **k**:\n  - 1\n  - 2 / {line}")
        );
        assert_eq!(
            format!("{}", Inline(Markdown(&head))),
            line,
            "as `Display`, the same"
        );
    }
}
