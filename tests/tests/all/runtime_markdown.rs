//! JSON to markdown in the nested-list format, and values that try to forge the prompt's
//! structure, checked with a CommonMark parser (spec item 5).

use agent_contracts::prompt::to_markdown;
use pulldown_cmark::{CodeBlockKind, Event, Options, Parser, Tag, TagEnd};
use serde::Serialize;
use serde_json::{Value, json};

fn md(value: &Value) -> String {
    to_markdown(value).unwrap()
}

/// Keeps JSON text as written (its key order, its numbers' text) and renders it.
fn md_text(json: &str) -> String {
    let raw: agent_contracts::RawJson = serde_json::from_str(json).unwrap();
    let mut out = String::new();
    agent_contracts::prompt::ToMarkdown::markdown_into(&raw, &mut out).unwrap();
    assert_eq!(out, to_markdown(&raw).unwrap(), "serde's route");
    out
}

fn options() -> Options {
    Options::ENABLE_TABLES
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_GFM
}

/// The block structure a CommonMark (GFM) parser sees, as compact text: `ul[...]`, `li[...]`,
/// `p[...]`, `h2[...]`, ...; inline text as written, `**` around strong text and `⏎` for a
/// soft line break.
fn outline(markdown: &str) -> String {
    let mut out = String::new();
    for event in Parser::new_ext(markdown, options()) {
        match event {
            Event::Start(tag) => out.push_str(&match tag {
                Tag::List(None) => "ul[".to_owned(),
                Tag::List(Some(_)) => "ol[".to_owned(),
                Tag::Item => "li[".to_owned(),
                Tag::Paragraph => "p[".to_owned(),
                Tag::Heading { level, .. } => format!("{level}["),
                Tag::BlockQuote(_) => "quote[".to_owned(),
                Tag::CodeBlock(CodeBlockKind::Indented) => "indented[".to_owned(),
                Tag::CodeBlock(CodeBlockKind::Fenced(_)) => "fenced[".to_owned(),
                Tag::HtmlBlock => "html[".to_owned(),
                Tag::Table(_) => "table[".to_owned(),
                Tag::FootnoteDefinition(_) => "footnote[".to_owned(),
                Tag::Strong => "**".to_owned(),
                Tag::Emphasis => "*".to_owned(),
                other => format!("{other:?}["),
            }),
            Event::End(TagEnd::Strong) => out.push_str("**"),
            Event::End(TagEnd::Emphasis) => out.push('*'),
            Event::End(_) => out.push(']'),
            Event::Text(text) => out.push_str(&text),
            Event::Code(code) => out.push_str(&format!("`{code}`")),
            Event::SoftBreak => out.push('⏎'),
            Event::HardBreak => out.push_str("⏎⏎"),
            Event::Rule => out.push_str("hr"),
            Event::InlineHtml(html) | Event::Html(html) => out.push_str(&html),
            other => out.push_str(&format!("{other:?}")),
        }
    }
    out
}

// ---- the format ---------------------------------------------------------------------------

#[test]
fn null_renders_null() {
    assert_eq!(md(&Value::Null), "null");
    assert_eq!(md(&json!({"a": null})), "- **a**: null");
    assert_eq!(md(&json!([null])), "- null");
}

#[test]
fn empty_object_and_array_render_empty() {
    assert_eq!(md(&json!({})), "*(empty)*");
    assert_eq!(md(&json!([])), "*(empty)*");
    assert_eq!(
        md(&json!({"a": {}, "b": [], "c": {"d": []}})),
        "- **a**: *(empty)*\n- **b**: *(empty)*\n- **c**:\n  - **d**: *(empty)*"
    );
}

#[test]
fn scalars_at_the_root() {
    assert_eq!(md(&json!("plain text")), "plain text");
    assert_eq!(md(&json!(true)), "true");
    assert_eq!(md(&json!(false)), "false");
    assert_eq!(md_text("0.60"), "0.60");
    assert_eq!(md(&json!("")), "\"\"");
    assert_eq!(md(&json!([1, "a", true])), "- 1\n- a\n- true");
}

#[test]
fn objects_nest_by_two_spaces() {
    assert_eq!(
        md_text(r#"{"a": {"b": {"c": "d", "e": [1, 2]}}, "f": "g"}"#),
        "- **a**:\n  - **b**:\n    - **c**: d\n    - **e**:\n      - 1\n      - 2\n- **f**: g"
    );
}

#[test]
fn arrays_inside_arrays_render_indexed_items() {
    assert_eq!(
        md(&json!([[1, 2], [], [[]], {"k": "v"}, {}, "s"])),
        "- [0]:\n  - 1\n  - 2\n- [1]: *(empty)*\n- [2]:\n  - [0]: *(empty)*\n\
         - [3]:\n  - **k**: v\n- [4]: *(empty)*\n- s"
    );
    assert_eq!(
        md(&json!({"m": [["a", ["b"]], "c"]})),
        "- **m**:\n  - [0]:\n    - a\n    - [1]:\n      - b\n  - c"
    );
}

#[test]
fn strings_are_written_raw() {
    let s = r#"**bold** _it_ <b>x</b> `code` "q" \back & [l](u) #email-input 1. x"#;
    assert_eq!(md(&json!({ "s": s })), format!("- **s**: {s}"));
    assert_eq!(
        md(&json!(["a*b", "https://x.y/_a_"])),
        "- a*b\n- https://x.y/_a_"
    );
    // Unicode and control-free text is untouched, empty strings are visible.
    assert_eq!(
        md_text(r#"{"é": "ünï 😀", "e": ""}"#),
        "- **é**: ünï 😀\n- **e**: \"\""
    );
}

#[test]
fn numbers_keep_their_exact_text() {
    assert_eq!(
        md_text(
            r#"{"a": 0.60, "b": 12345678901234567890, "c": -0.0, "d": 1.50,
                "e": 3.14159265358979323846264338327950288, "f": [0.10, 7]}"#
        ),
        "- **a**: 0.60\n- **b**: 12345678901234567890\n- **c**: -0.0\n- **d**: 1.50\n\
         - **e**: 3.14159265358979323846264338327950288\n- **f**:\n  - 0.10\n  - 7"
    );
}

#[test]
fn multi_line_strings_are_indented_to_their_item() {
    assert_eq!(
        md_text(
            r#"{"a": "l1\nl2\n\nl4", "o": {"b": "x\ny"}, "arr": ["p\nq"],
                "nested": [{"c": "m\nn"}]}"#
        ),
        "- **a**: l1\n  l2\n\n  l4\n- **o**:\n  - **b**: x\n    y\n- **arr**:\n  - p\n    q\n\
         - **nested**:\n  - [0]:\n    - **c**: m\n      n"
    );
    assert_eq!(md(&json!("a\nb")), "a\nb");
}

#[test]
fn every_line_ending_is_a_line_break() {
    assert_eq!(
        md(&json!({"a": "x\ry\r\nz\n\rw"})),
        "- **a**: x\n  y\n  z\n\n  w"
    );
    assert_eq!(md(&json!(["x\ry"])), "- x\n  y");
    assert_eq!(md(&json!({"a": "x\r\n## h"})), "- **a**: x\n  \\## h");
    assert_eq!(md(&json!({"a": "x\r## h"})), "- **a**: x\n  \\## h");
}

#[test]
fn multi_line_keys_are_indented_too() {
    assert_eq!(
        md(&json!({"k1\nk2": 1, "o": {"p\rq": [1]}, "x\n# y": 2})),
        "- **k1\n  k2**: 1\n- **o**:\n  - **p\n    q**:\n    - 1\n- **x\n  \\# y**: 2"
    );
}

#[test]
fn any_serialize_value_renders() {
    #[derive(Serialize)]
    enum Kind {
        Plain,
        Wrapped(u8),
    }
    #[derive(Serialize)]
    struct Input {
        name: String,
        tags: Vec<&'static str>,
        missing: Option<u8>,
        ratio: f64,
        kinds: Vec<Kind>,
        pair: (i32, &'static str),
    }
    let input = Input {
        name: "n".into(),
        tags: vec!["a", "b"],
        missing: None,
        ratio: 0.5,
        kinds: vec![Kind::Plain, Kind::Wrapped(3)],
        pair: (-1, "x"),
    };
    assert_eq!(
        to_markdown(&input).unwrap(),
        "- **name**: n\n- **tags**:\n  - a\n  - b\n- **missing**: null\n- **ratio**: 0.5\n\
         - **kinds**:\n  - Plain\n  - [1]:\n    - **Wrapped**: 3\n- **pair**:\n  - -1\n  - x"
    );
}

#[test]
fn the_golden_output_parses_as_nested_lists() {
    let kwargs = include_str!("../../fixtures/plan_generator/kwargs.json");
    let v: Value = serde_json::from_str(kwargs).unwrap();
    let output = serde_json::to_string(&v["collected_information"][1]["output"]).unwrap();
    // The output as written: `Value` sorts keys and drops the trailing zero of `0.60`.
    let start = kwargs.find(r#""selectors": {"#).unwrap();
    let end = kwargs[start..].find(r#""warnings": []"#).unwrap() + start + 14;
    let written = format!("{{{}}}", &kwargs[start..end]);
    assert_eq!(
        serde_json::from_str::<Value>(&written).unwrap().to_string(),
        output
    );
    let rendered = md_text(&written);
    assert_eq!(
        outline(&rendered),
        "ul[li[**selectors**:ul[li[**email-input**:ul[li[**primary**:ul[\
         li[**css**: #email-input]li[**xpath**: //input[@id='email-input']]\
         li[**confidence**: 0.95]]]li[**fallback**:ul[li[[0]:ul[\
         li[**css**: input[name='email']]li[**confidence**: 0.85]]]li[[1]:ul[\
         li[**css**: form input:first-child]li[**confidence**: 0.60]]]]]]]\
         li[**password-input**:ul[li[**primary**:ul[li[**css**: #password-input]\
         li[**xpath**: //input[@type='password']]li[**confidence**: 0.98]]]\
         li[**fallback**: *(empty)*]]]]]li[**strategy**: id-first-with-attribute-fallback]\
         li[**warnings**: *(empty)*]]"
    );
}

// ---- values that try to forge structure ---------------------------------------------------

#[test]
fn an_attacker_heading_stays_inside_its_item() {
    let value = json!({"a": "x\n## From attacker", "b": ["- y", "# z"]});
    let rendered = md(&value);
    assert_eq!(
        rendered,
        "- **a**: x\n  \\## From attacker\n- **b**:\n  - \\- y\n  - \\# z"
    );
    // Only the renderer's own items start at column 0.
    for line in rendered.lines() {
        assert!(
            line.starts_with(' ') || line.starts_with("- **"),
            "line at column 0: {line}"
        );
    }
    // No heading, two top-level items holding the value's text, two nested items.
    assert_eq!(
        outline(&rendered),
        "ul[li[**a**: x⏎## From attacker]li[**b**:ul[li[- y]li[# z]]]]"
    );
    let parsed: Vec<Event> = Parser::new_ext(&rendered, options()).collect();
    assert!(
        !parsed
            .iter()
            .any(|e| matches!(e, Event::Start(Tag::Heading { .. })))
    );
    let mut depth = 0;
    let mut top_level_items = 0;
    for event in &parsed {
        match event {
            Event::Start(Tag::List(_)) => depth += 1,
            Event::End(TagEnd::List(_)) => depth -= 1,
            Event::Start(Tag::Item) if depth == 1 => top_level_items += 1,
            _ => {}
        }
    }
    assert_eq!(top_level_items, value.as_object().unwrap().len());
}

/// Block openings a value may hold; each must stay text inside its item.
const PAYLOADS: [&str; 34] = [
    "x\n## From attacker",
    "# z",
    "###### z",
    "#",
    "- y",
    "* y",
    "+ y",
    "-",
    "1. y",
    "1) y",
    "123456789. y",
    "> quote",
    "> [!NOTE]\n> gfm",
    "```\ncode",
    "~~~rust",
    "---",
    "***",
    "___",
    "- - -",
    "x\n===",
    "x\n---",
    "x\n- y\n1. z",
    "<div>",
    "<!-- c -->",
    "<script>alert(1)</script>",
    "x\n<div>\ny",
    "| a | b |\n|---|---|\n| 1 | 2 |",
    "x\n:---|",
    "a\n\n# b",
    "[x]: /url",
    "[x\ny]: /url",
    "x\n\n[x]: /url",
    "[^1]: note",
    "- [ ] task",
];

/// The text a parser should find for `payload`: its lines, soft-broken; a blank line starts a
/// new paragraph.
fn expected_text(payload: &str) -> String {
    payload
        .split("\n\n")
        .map(|p| format!("p[{}]", p.replace('\n', "⏎")))
        .collect()
}

#[test]
fn block_openings_in_values_stay_text() {
    for payload in PAYLOADS {
        let rendered = md(&json!({"a": payload, "b": [payload], "c": {"d": payload}}));
        let text = expected_text(payload);
        // A blank line in a value makes its lists loose: every item's text is a paragraph.
        let loose = payload.contains("\n\n");
        let item = |prefix: &str| {
            if loose {
                format!("p[{prefix}{}", &text[2..])
            } else {
                format!("{prefix}{}", &text[2..text.len() - 1])
            }
        };
        let header = |key: &str| {
            if loose {
                format!("p[**{key}**:]")
            } else {
                format!("**{key}**:")
            }
        };
        let expected = format!(
            "ul[li[{}]li[{}ul[li[{}]]]li[{}ul[li[{}]]]]",
            item("**a**: "),
            header("b"),
            item(""),
            header("c"),
            item("**d**: "),
        );
        assert_eq!(
            outline(&rendered),
            expected,
            "payload {payload:?}:\n{rendered}"
        );
        let root = md(&json!(payload));
        assert_eq!(
            outline(&root),
            text,
            "payload {payload:?} at the root:\n{root}"
        );
    }
}

#[test]
fn block_openings_in_keys_stay_text() {
    for payload in PAYLOADS
        .iter()
        .filter(|p| p.contains('\n') && !p.contains("\n\n"))
    {
        let rendered = md(&json!({ *payload: 1 }));
        let (first, rest) = payload.split_once('\n').unwrap();
        let expected = format!("ul[li[**{first}⏎{}**: 1]]", rest.replace('\n', "⏎"));
        assert_eq!(outline(&rendered), expected, "key {payload:?}:\n{rendered}");
    }
}

#[test]
fn leading_blanks_are_measured_in_columns() {
    // A tab reaches the next tab stop of the output line: after two spaces of indentation it is
    // two columns wide, so `\t# z` there would be a heading and is escaped; four columns or
    // more can only continue a paragraph or be code inside the item, so the text stays raw.
    let value = json!({
        "a": "x\n\t# z",
        "b": "x\n\n\t# z",
        "c": ["\t# z", "\ty"],
        "d": "x\n   # z",
        "e": "x\n    # z",
        "f": ["   # z"],
    });
    let rendered = md(&value);
    assert_eq!(
        rendered,
        "- **a**: x\n  \t\\# z\n- **b**: x\n\n  \t\\# z\n- **c**:\n  - \t# z\n  - \ty\n\
         - **d**: x\n     \\# z\n- **e**: x\n      # z\n- **f**:\n  -    \\# z"
    );
    assert_eq!(
        outline(&rendered),
        "ul[li[p[**a**: x⏎# z]]li[p[**b**: x]p[# z]]\
         li[p[**c**:]ul[li[indented[# z\n]]li[indented[y\n]]]]\
         li[p[**d**: x⏎# z]]li[p[**e**: x⏎# z]]li[p[**f**:]ul[li[# z]]]]"
    );
    // No backslash is left visible before a blank.
    assert!(!rendered.contains("\\\t") && !rendered.contains("\\ "));
}
