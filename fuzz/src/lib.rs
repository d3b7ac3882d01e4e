//! The fuzz targets of agent-contracts as plain functions of bytes, with the invariants they
//! check.
//!
//! cargo-fuzz drives them through `fuzz_targets/*.rs`; `tests/tests/all/fuzz_smoke.rs` includes this
//! file and drives the same functions with a bounded, deterministic mutation loop on stable, so
//! every invariant here is checked in `cargo test` too. A broken invariant panics.

use agent_contracts::__private::value_depth_exceeds;
use agent_contracts::{
    __private::default_call_prompt, Agent, Contract, DynAgent as _, Limits, RetryError,
    contract::ContractKind, contract::ToolCall, contract::check_call,
};
use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
use serde_json::Value;

/// The plan generator, through the derive, exactly as `tests/tests/all/derive_agent.rs` has it.
#[derive(Agent)]
#[agent(
    name = "plan_generator_agent",
    description = "Generates a crawl plan from the sub-agents' collected information",
    input = "../schemas/plan_generator_agent/input.schema.json",
    output = "../schemas/plan_generator_agent/output.schema.json",
    user_prompt = "agents/plan_generator_user.md"
)]
pub struct PlanGeneratorAgent;

/// A contract that exercises many keywords, with caller-named keys in its error paths
/// (`additionalProperties` and `propertyNames` schemas at the root).
pub const STRESS_SCHEMA: &str = r#"{
  "type": "object",
  "required": ["name"],
  "properties": {
    "name": {"type": "string", "minLength": 1, "maxLength": 50, "pattern": "^[a-z_]+$"},
    "count": {"type": "integer", "minimum": 0, "maximum": 10, "multipleOf": 2},
    "kind": {"enum": ["a", "b", 1, null]},
    "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": true, "maxItems": 5},
    "nested": {
      "type": "object", "required": ["x"], "additionalProperties": false,
      "properties": {"x": {"const": "y"}}
    },
    "scores": {
      "type": "object", "additionalProperties": {"type": "number"},
      "propertyNames": {"maxLength": 8}
    },
    "choice": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
    "not_null": {"not": {"type": "null"}}
  },
  "dependentRequired": {"count": ["kind"]},
  "propertyNames": {"maxLength": 64},
  "additionalProperties": {"type": ["string", "number", "object", "array"]}
}"#;

fn stress_contract() -> &'static Contract {
    static CONTRACT: std::sync::OnceLock<Contract> = std::sync::OnceLock::new();
    CONTRACT.get_or_init(|| {
        Contract::from_json_str("stress", ContractKind::Input, STRESS_SCHEMA)
            .expect("the stress schema compiles")
    })
}

/// Target `kwargs_prompt`: kwargs text through the plan generator (merge, validate, type,
/// render), the default prompt, and a keyword-rich contract. Every outcome is a rendered
/// prompt whose structure is the template's own, or a bounded retry error.
pub fn kwargs_prompt(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let limits = Limits::default();
    match check_call::<PlanGeneratorAgent>(text, &limits) {
        Ok(checked) => {
            let prompt = PlanGeneratorAgent::render_user_prompt(&checked.call, &checked.input)
                .unwrap_or_else(|e| panic!("a checked call failed to render: {e}"));
            let outputs: Vec<usize> = checked
                .input
                .collected_information
                .iter()
                .map(|item| item.output.entries().map_or(0, |e| e.len()))
                .collect();
            check_plan_prompt(&checked.call.task, &prompt, &outputs);
            assert_linear(&prompt, text.len());
        }
        Err(error) => check_retry(&error, &limits),
    }
    match ToolCall::from_json_str(text, &limits) {
        Ok(call) => {
            let prompt = default_call_prompt(&call);
            check_default_prompt(&call, &prompt);
            assert_linear(&prompt, text.len());
            if let Err(error) =
                stress_contract().check(call.context(), &agent_contracts::Limits::default())
            {
                check_retry(&error, &limits);
            }
        }
        Err(error) => check_retry(&error, &limits),
    }
}

/// Target `kwargs_large`: calls near and past the default limits, grown from a small input so
/// the fuzzer reaches sizes it would never write byte by byte. `data[0]` sets how many times
/// the fragment repeats (up to about 250,000), `data[1]` how deep it is wrapped in arrays, and
/// the rest is the fragment (any text: broken JSON too). Every outcome is a prompt within
/// `max_prompt_bytes` or a bounded retry error; never a panic, a template failure, or a prompt
/// past its limit.
pub fn kwargs_large(data: &[u8]) {
    let [count, depth, fragment @ ..] = data else {
        return;
    };
    let Ok(fragment) = std::str::from_utf8(fragment) else {
        return;
    };
    let text = large_kwargs(
        fragment,
        1 + usize::from(*count) * 997,
        usize::from(*depth % 80),
    );
    let limits = Limits::default();
    match PlanGeneratorAgent.prepare(&text, &limits) {
        Ok(prepared) => assert!(
            prepared.user_prompt.len() <= limits.max_prompt_bytes,
            "a prompt of {} bytes",
            prepared.user_prompt.len()
        ),
        Err(agent_contracts::contract::PrepareError::Retry(error)) => check_retry(&error, &limits),
        Err(agent_contracts::contract::PrepareError::Prompt(e)) => {
            panic!("a checked call failed: {e}")
        }
    }
}

/// The plan generator's kwargs with `fragment`, wrapped in `depth` arrays, repeated `count`
/// times as one output's items; written as text, so the harness builds no tree of its own.
/// Stops growing a little past the default byte limit.
pub fn large_kwargs(fragment: &str, count: usize, depth: usize) -> String {
    let item = format!("{}{fragment}{}", "[".repeat(depth), "]".repeat(depth));
    let cap = Limits::default().max_bytes + 1024;
    let mut text = String::from(
        r#"{"task": "t", "target_url": "https://a.example", "task_name": "n", "collected_information": [{"agent_name": "discovery_agent", "description": "d", "output": {"items": ["#,
    );
    for i in 0..count {
        if text.len() + item.len() > cap {
            break;
        }
        if i > 0 {
            text.push(',');
        }
        text.push_str(&item);
    }
    text.push_str("]}}]}");
    text
}

/// Target `markdown`: the renderer alone. JSON input renders as is; other bytes render as a
/// string at the root, as a value, as a key and as an array item.
pub fn markdown(data: &[u8]) {
    let value = match serde_json::from_slice::<Value>(data) {
        Ok(value) => value,
        Err(_) => {
            let s = String::from_utf8_lossy(data).into_owned();
            let mut object = serde_json::Map::new();
            object.insert("k".into(), Value::String(s.clone()));
            object.insert(s.clone(), Value::Array(vec![Value::String(s.clone())]));
            Value::Array(vec![Value::String(s), Value::Object(object)])
        }
    };
    check_framed_markdown(&value);
}

/// Renders `value` between a heading and a rule and checks that the parsed document has
/// exactly the frame's heading and rule, no fence, quote, HTML block or table, and one
/// top-level list item per entry of the value; and that the size bound holds.
pub fn check_framed_markdown(value: &Value) {
    let rendered = agent_contracts::prompt::to_markdown(value).expect("JSON always renders");
    let document = format!("# Frame\n\n{rendered}\n\n---\n\nend\n");
    let expected = Structure {
        headings: 1,
        rules: 1,
        top_level_items: top_level_entries(value),
        ..Structure::default()
    };
    let found = structure(&document);
    assert_eq!(
        found, expected,
        "a value forged structure:\nvalue: {value}\nrendered:\n{rendered}"
    );
    let json_len = serde_json::to_string(value).expect("JSON serializes").len();
    let k = depth(value) + 16;
    assert!(
        rendered.len() <= k * json_len + 64,
        "rendered {} bytes from {json_len} bytes of JSON (k = {k})",
        rendered.len()
    );
    // On one line, inside a heading: the heading and the rule after it stay the only blocks.
    let line = agent_contracts::__private::to_markdown_line(value).expect("JSON always renders");
    assert!(!line.contains(['\n', '\r']), "a line break in {line:?}");
    let document = format!("# Frame {line} - end\n\n---\n");
    let expected = Structure {
        headings: 1,
        rules: 1,
        ..Structure::default()
    };
    assert_eq!(
        structure(&document),
        expected,
        "a value forged structure on one line:\nvalue: {value}\nrendered:\n{line}"
    );
    assert!(line.len() <= rendered.len());
}

/// How many top-level list items the renderer writes for `value`: one per entry of a
/// non-empty object or array, none for a scalar or an empty one (`*(empty)*`).
pub fn top_level_entries(value: &Value) -> usize {
    match value {
        Value::Object(o) => o.len(),
        Value::Array(a) => a.len(),
        _ => 0,
    }
}

/// Nesting depth of arrays and objects (a scalar is 0), without recursion.
pub fn depth(value: &Value) -> usize {
    let mut max = 0;
    let mut stack = vec![(value, 0usize)];
    while let Some((v, d)) = stack.pop() {
        let children: Vec<&Value> = match v {
            Value::Array(a) => a.iter().collect(),
            Value::Object(o) => o.values().collect(),
            _ => continue,
        };
        max = max.max(d + 1);
        stack.extend(children.into_iter().map(|c| (c, d + 1)));
    }
    max
}

/// Prompt size stays linear in the kwargs size: values are at most 64 deep (the default
/// [`Limits`]), so `k` = 64 + 16.
fn assert_linear(prompt: &str, kwargs_len: usize) {
    assert!(
        prompt.len() <= 80 * kwargs_len + 4096,
        "prompt of {} bytes from {kwargs_len} bytes of kwargs",
        prompt.len()
    );
}

/// The plan generator's template makes, after the task: one `#` heading, three headings per
/// collected item, a rule between items, and the output's entries as top-level list items.
pub fn check_plan_prompt(task: &str, prompt: &str, outputs: &[usize]) {
    // The task renders with its block-opening lines escaped, its words kept.
    let task = agent_contracts::__private::escape_text(task);
    let rest = prompt
        .strip_prefix(task.as_str())
        .unwrap_or_else(|| panic!("the prompt does not start with the task:\n{prompt}"));
    let expected = Structure {
        headings: 1 + 3 * outputs.len(),
        rules: outputs.len().saturating_sub(1),
        top_level_items: outputs.iter().sum(),
        ..Structure::default()
    };
    assert_eq!(
        structure(rest),
        expected,
        "a value forged structure in the plan prompt:\n{prompt}"
    );
}

/// The default prompt: the task, then `## Context` and one fence holding the pretty JSON.
pub fn check_default_prompt(call: &ToolCall, prompt: &str) {
    let task = agent_contracts::__private::escape_text(&call.task);
    let rest = prompt
        .strip_prefix(task.as_str())
        .unwrap_or_else(|| panic!("the prompt does not start with the task:\n{prompt}"));
    if call.context().as_object().unwrap().is_empty() {
        assert_eq!(rest, "");
        return;
    }
    let expected = Structure {
        headings: 1,
        fences: 1,
        ..Structure::default()
    };
    assert_eq!(structure(rest), expected, "default prompt:\n{prompt}");
    let json = serde_json::to_string_pretty(&call.context_json()).expect("JSON serializes");
    let code: String = Parser::new_ext(rest, options())
        .skip_while(|e| !matches!(e, Event::Start(Tag::CodeBlock(_))))
        .take_while(|e| !matches!(e, Event::End(TagEnd::CodeBlock)))
        .filter_map(|e| match e {
            Event::Text(t) => Some(t.into_string()),
            _ => None,
        })
        .collect();
    assert_eq!(
        code,
        format!("{json}\n"),
        "the fence does not hold the context"
    );
}

/// A retry error stays within the limits whatever the input: a bounded number of errors,
/// and no caller text echoed past `max_echo_bytes` (plus the `…` that marks a cut).
pub fn check_retry(error: &RetryError, limits: &Limits) {
    let echo = limits.max_echo_bytes + '…'.len_utf8();
    assert!(!error.success);
    assert!(
        !error.errors.is_empty() && error.errors.len() <= limits.max_errors,
        "{} errors",
        error.errors.len()
    );
    assert_eq!(error.validation_message, error.errors[0].message);
    assert_eq!(error.path, error.errors[0].path);
    for violation in &error.errors {
        assert!(
            violation.message.len() <= 2 * limits.max_echo_bytes + '…'.len_utf8(),
            "message of {} bytes: {}",
            violation.message.len(),
            violation.message
        );
        for segment in &violation.path {
            if let agent_contracts::contract::PathSegment::Key(key) = segment {
                assert!(key.len() <= echo, "path key of {} bytes", key.len());
            }
        }
    }
    assert!(error.provided_fields.len() <= limits.max_listed_fields);
    for field in &error.provided_fields {
        assert!(
            field.len() <= echo,
            "provided field of {} bytes",
            field.len()
        );
    }
    let required: usize = error.required_fields.iter().map(|f| f.len() + 2).sum();
    let hint_bound = 200 + required + limits.max_errors * (echo + 2);
    assert!(
        error.hint.len() <= hint_bound,
        "hint of {} bytes",
        error.hint.len()
    );
    // The keys as serialized (a `Value` would sort them).
    let text = serde_json::to_string(error).expect("a retry error serializes");
    let json: agent_contracts::RawObject =
        serde_json::from_str(&text).expect("a retry error is an object");
    let entries = json.entries().expect("a retry error is an object");
    let keys: Vec<&str> = entries.iter().map(|(k, _)| k.as_ref()).collect();
    assert_eq!(
        keys,
        [
            "success",
            "error",
            "validation_message",
            "path",
            "required_fields",
            "missing_fields",
            "provided_fields",
            "hint",
            "errors"
        ]
    );
    assert!(!value_depth_exceeds(&error.to_json(), 8));
}

/// The block structure a CommonMark (GFM) parser finds in a document.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Structure {
    /// ATX and setext headings.
    pub headings: usize,
    /// Thematic breaks.
    pub rules: usize,
    /// Fenced code blocks.
    pub fences: usize,
    /// Items of lists that are not inside another list.
    pub top_level_items: usize,
    /// Block quotes.
    pub quotes: usize,
    /// HTML blocks.
    pub html_blocks: usize,
    /// Tables.
    pub tables: usize,
    /// Footnote definitions.
    pub footnotes: usize,
}

/// The parser options the checks use: CommonMark with the GitHub extensions.
pub fn options() -> Options {
    Options::ENABLE_TABLES
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_GFM
}

/// Counts the blocks of `markdown` that a value must never create.
pub fn structure(markdown: &str) -> Structure {
    let mut found = Structure::default();
    let mut lists = 0usize;
    for event in Parser::new_ext(markdown, options()) {
        match event {
            Event::Start(Tag::Heading { .. }) => found.headings += 1,
            Event::Rule => found.rules += 1,
            Event::Start(Tag::CodeBlock(pulldown_cmark::CodeBlockKind::Fenced(_))) => {
                found.fences += 1;
            }
            Event::Start(Tag::List(_)) => lists += 1,
            Event::End(TagEnd::List(_)) => lists -= 1,
            Event::Start(Tag::Item) if lists == 1 => found.top_level_items += 1,
            Event::Start(Tag::BlockQuote(_)) => found.quotes += 1,
            Event::Start(Tag::HtmlBlock) => found.html_blocks += 1,
            Event::Start(Tag::Table(_)) => found.tables += 1,
            Event::Start(Tag::FootnoteDefinition(_)) => found.footnotes += 1,
            _ => {}
        }
    }
    found
}
