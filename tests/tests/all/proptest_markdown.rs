//! Property tests on rendering: for any JSON value (nested objects and arrays, strings and keys
//! full of markdown metacharacters, line endings, tabs and blanks), the rendered prompt parsed
//! with pulldown-cmark has exactly the headings, rules, fences and top-level list items that
//! the template itself made: no value forges structure. And the output stays linear in the
//! input.
//!
//! (a) `agent_contracts::prompt::to_markdown` inside a fixed frame (a heading, the value, a rule),
//! and `to_markdown_line` inside a heading; (b) the plan generator's prompt, rendered from
//! arbitrary `output` objects and arbitrary strings wherever its contract allows them
//! (`target_url`, `task_name`, `description`; `agent_name` is an enum); (c) the default
//! prompt, whose fence no value can close.

use crate::agent_fuzz;

use agent_contracts::__private::to_markdown_line;
use agent_contracts::prompt::to_markdown;
use agent_contracts::{Limits, contract::ToolCall};
use agent_fuzz::{Structure, depth, structure, top_level_entries};
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::select;
use serde_json::{Map, Value, json};

/// Pieces of text that open blocks, end lines, shift columns or look like markup.
const PIECES: &[&str] = &[
    "\n",
    "\r",
    "\r\n",
    "\n\n",
    "\t",
    "\u{b}",
    "\u{c}",
    " ",
    "  ",
    "   ",
    "    ",
    "`",
    "``",
    "```",
    "~~~",
    "#",
    "# ",
    "## ",
    "###### ",
    "####### ",
    "-",
    "- ",
    "--",
    "---",
    "* ",
    "*",
    "**",
    "***",
    "+ ",
    "_",
    "___",
    "=",
    "===",
    ">",
    "> ",
    "[x]: y",
    "[x]:",
    "[^1]: n",
    "[",
    "]",
    "1. ",
    "1) ",
    "12.",
    "0)",
    "123456789. ",
    "1234567890. ",
    "|",
    "|---|",
    "| a |",
    ":-",
    ":",
    "-|-",
    "<div>",
    "</div>",
    "<!--",
    "-->",
    "<?",
    "<![CDATA[",
    "<script>",
    "\\",
    "&amp;",
    "é",
    "😀",
    "0",
    "x",
    "word",
    "two words",
    "https://x.y/_a_",
    "- [ ] ",
    "- [x] ",
];

/// A string of zero to eight pieces.
fn text() -> impl Strategy<Value = String> {
    vec(select(PIECES), 0..8).prop_map(|pieces| pieces.concat())
}

/// Number literals whose exact text must survive (`arbitrary_precision`).
const NUMBERS: &[&str] = &[
    "0",
    "-1",
    "1.50",
    "0.60",
    "-0.0",
    "12345678901234567890",
    "1e5",
];

/// Any JSON value, at most 5 levels deep, with metacharacters in its strings and keys.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        select(NUMBERS).prop_map(|n| serde_json::from_str(n).unwrap()),
        text().prop_map(Value::String),
    ];
    leaf.prop_recursive(5, 96, 6, |inner| {
        prop_oneof![
            vec(inner.clone(), 0..6).prop_map(Value::Array),
            object(inner),
        ]
    })
}

fn object(values: impl Strategy<Value = Value>) -> impl Strategy<Value = Value> {
    vec((text(), values), 0..6).prop_map(|entries| Value::Object(entries.into_iter().collect()))
}

/// The linear bound: rendered bytes <= k * JSON bytes + 64, with k = depth + 16 (depth at most
/// 5 here, so k <= 21; at most 80 within the default limits, see `limits.rs`).
fn assert_linear(rendered: &str, value: &Value) {
    let json_len = value.to_string().len();
    let k = depth(value) + 16;
    assert!(
        rendered.len() <= k * json_len + 64,
        "{} bytes rendered from {json_len} bytes of JSON (k = {k})",
        rendered.len()
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// (a) A heading, the value, a rule: the parser finds that heading and that rule, one
    /// top-level item per entry of the value, and nothing else.
    #[test]
    fn a_value_in_a_frame_forges_no_structure(value in json_value()) {
        let rendered = to_markdown(&value).unwrap();
        let document = format!("# Frame\n\n{rendered}\n\n---\n\nend\n");
        let expected = Structure {
            headings: 1,
            rules: 1,
            top_level_items: top_level_entries(&value),
            ..Structure::default()
        };
        prop_assert_eq!(structure(&document), expected, "rendered:\n{}", rendered);
        assert_linear(&rendered, &value);
    }

    /// (a) On one line inside a heading, the value adds no block at all.
    #[test]
    fn a_value_on_one_line_stays_in_its_heading(value in json_value()) {
        let line = to_markdown_line(&value).unwrap();
        prop_assert!(!line.contains(['\n', '\r']));
        let document = format!("## Title {line} - end\n\n---\n");
        let expected = Structure { headings: 1, rules: 1, ..Structure::default() };
        prop_assert_eq!(structure(&document), expected, "line: {}", line);
    }

    /// The same value keyed and nested in every slot (root, key, value, array item).
    #[test]
    fn every_slot_is_safe(key in text(), value in json_value()) {
        let nested = json!([value.clone(), {key.clone(): value.clone()}, [[value]]]);
        agent_fuzz::check_framed_markdown(&nested);
        agent_fuzz::check_framed_markdown(&json!({key: "x"}));
    }
}

/// A plan generator call: plain task, arbitrary strings where the contract allows them,
/// arbitrary `output` objects. The contract requires a discovery and a selector output, each
/// valid for its agent's output contract: those two come first, with what their contracts
/// require added to arbitrary entries; then up to two items of an agent without an output
/// contract, whose outputs are anything.
fn plan_call() -> impl Strategy<Value = (Value, Vec<usize>)> {
    let nonempty = || text().prop_filter("minLength 1", |s| !s.is_empty());
    let required = |agent: &'static str, fields: Value| {
        (text(), object(json_value()), text()).prop_map(move |(description, extra, text)| {
            let mut output = extra;
            if let (Value::Object(o), Value::Object(f)) = (&mut output, fields.clone()) {
                for (key, value) in f {
                    // A text field takes the generated text; the others their fixed value.
                    let value = if value == json!("") {
                        json!(text.clone())
                    } else {
                        value
                    };
                    o.insert(key, value);
                }
            }
            (agent, description, output)
        })
    };
    let discovery = required(
        "discovery_agent",
        json!({"page_title": "", "discovered_elements": []}),
    );
    let selector = required(
        "selector_agent",
        json!({"selectors": {}, "strategy": "", "warnings": []}),
    );
    let other = (Just("data_prep_agent"), text(), object(json_value()));
    (
        select(&["Generate plan", "Plan it", "Make the crawl plan"][..]),
        nonempty(),
        nonempty(),
        (discovery, selector, vec(other, 0..3)),
    )
        .prop_map(
            |(task, target_url, task_name, (discovery, selector, others))| {
                let items: Vec<(&str, String, Value)> =
                    [discovery, selector].into_iter().chain(others).collect();
                let outputs: Vec<usize> =
                    items.iter().map(|(_, _, o)| top_level_entries(o)).collect();
                let collected: Vec<Value> = items
                .into_iter()
                .map(|(agent_name, description, output)| {
                    json!({"agent_name": agent_name, "description": description, "output": output})
                })
                .collect();
                let kwargs = json!({
                    "task": task,
                    "target_url": target_url,
                    "task_name": task_name,
                    "collected_information": collected,
                });
                (kwargs, outputs)
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// (b) The plan generator's prompt (the build-script agent of `schemas/`, and the derive
    /// in `fuzz/src/lib.rs`): one `#` heading, three headings per collected item, a rule
    /// between items, the outputs' entries as the only top-level items, and nothing else.
    #[test]
    fn the_plan_prompt_has_only_its_template_structure((kwargs, outputs) in plan_call()) {
        let text = kwargs.to_string();
        let agent = agent_examples::agents::find("plan_generator_agent").unwrap();
        let prepared = agent.prepare(&text, &Limits::default()).unwrap();
        agent_fuzz::check_plan_prompt(
            kwargs["task"].as_str().unwrap(),
            &prepared.user_prompt,
            &outputs,
        );
        // The derive renders the same prompt.
        let checked = agent_contracts::contract::check_call::<agent_fuzz::PlanGeneratorAgent>(
            &text,
            &Limits::default(),
        )
        .unwrap();
        let derived = <agent_fuzz::PlanGeneratorAgent as agent_contracts::Agent>::render_user_prompt(
            &checked.call,
            &checked.input,
        )
        .unwrap();
        prop_assert_eq!(&derived, &prepared.user_prompt);
        // Linear: k = 16 + 5 levels of output + 3 levels of the call around it.
        prop_assert!(prepared.user_prompt.len() <= 24 * text.len() + 512);
    }

    /// (c) The default prompt: one heading and one fence that holds the whole context as
    /// pretty JSON, whatever backticks the values hold.
    #[test]
    fn the_default_prompt_fence_holds_the_context(context in object(json_value())) {
        let mut kwargs = Map::new();
        kwargs.insert("task".into(), json!("Do it"));
        kwargs.insert("context".into(), context);
        let call = ToolCall::from_value(Value::Object(kwargs), &Limits::default()).unwrap();
        let prompt = agent_contracts::__private::default_user_prompt(&call.task, call.context().as_object().unwrap());
        agent_fuzz::check_default_prompt(&call, &prompt);
    }
}

/// `value` as `|markdown` writes it (`ToMarkdown`), and through serde at the root, as an array
/// item, under a key and two arrays deep.
fn in_every_slot<T: agent_contracts::prompt::ToMarkdown>(value: &T, key: &str) -> String {
    let keyed: std::collections::BTreeMap<&str, &T> = [(key, value)].into();
    let mut own = String::new();
    let rendered = [
        value.markdown_into(&mut own).map(|()| own),
        to_markdown(value),
        to_markdown(&[value]),
        to_markdown(&keyed),
        to_markdown(&[[value]]),
        to_markdown(&(1, value, "x")),
    ];
    rendered.map(Result::unwrap).join("\n====\n")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// A captured value writes itself from its tape (`RawJson` hands the tape to `|markdown`)
    /// exactly as serde_json's `RawValue` of the same text is written, through `Walk`, in
    /// every slot, from compact and pretty text alike.
    #[test]
    fn a_captured_value_renders_from_its_tape_as_from_its_text(
        value in json_value(),
        key in text(),
    ) {
        for text in [value.to_string(), serde_json::to_string_pretty(&value).unwrap()] {
            let raw: agent_contracts::RawJson = serde_json::from_str(&text).unwrap();
            let walked: Box<serde_json::value::RawValue> = serde_json::from_str(&text).unwrap();
            prop_assert_eq!(
                in_every_slot(&raw, &key),
                in_every_slot(&walked, &key),
                "text: {}",
                text
            );
        }
    }
}
