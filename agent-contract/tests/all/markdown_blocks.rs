//! The markdown escaping pinned against a CommonMark parser (pulldown-cmark, with the GitHub
//! extensions): rendered data never opens a block the parser sees as a heading, list item,
//! fence, rule, quote, table, HTML block or footnote. Lines are generated from prefixes that
//! move columns (blanks, tabs at every column, vertical tabs and form feeds), list and quote
//! markers nested up to three deep, and the openings of every block; each value is put in
//! every slot (the root, an entry, an array item) at up to three levels of nesting.
//!
//! The unit tests below pin each tab-stop case with its exact output: a tab advances to the
//! next tab stop of the *output* line, so whether `" \t # z"` is indented code or a heading
//! depends on the column its line stands at.

use agent_contracts_contract::__private::{escape_text, to_markdown_line};
use agent_contracts_contract::to_markdown;
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::select;
use pulldown_cmark::{CodeBlockKind, Event, Options, Parser, Tag, TagEnd};
use serde_json::{Value, json};

/// What a value must never add to the frame around it.
#[derive(Debug, Default, PartialEq, Eq)]
struct Blocks {
    headings: usize,
    rules: usize,
    fences: usize,
    quotes: usize,
    tables: usize,
    html: usize,
    footnotes: usize,
    /// List items at every depth.
    items: usize,
}

fn blocks(markdown: &str) -> Blocks {
    let options = Options::ENABLE_TABLES
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_GFM;
    let mut found = Blocks::default();
    for event in Parser::new_ext(markdown, options) {
        match event {
            Event::Start(Tag::Heading { .. }) => found.headings += 1,
            Event::Rule => found.rules += 1,
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(_))) => found.fences += 1,
            Event::Start(Tag::BlockQuote(_)) => found.quotes += 1,
            Event::Start(Tag::Table(_)) => found.tables += 1,
            Event::Start(Tag::HtmlBlock) => found.html += 1,
            Event::Start(Tag::FootnoteDefinition(_)) => found.footnotes += 1,
            Event::Start(Tag::Item) => found.items += 1,
            Event::End(TagEnd::Item) => {}
            _ => {}
        }
    }
    found
}

/// The list items the renderer writes for `value`: one per entry and per array item, at
/// every depth.
fn items(value: &Value) -> usize {
    match value {
        Value::Object(o) => o.len() + o.values().map(items).sum::<usize>(),
        Value::Array(a) => a.len() + a.iter().map(items).sum::<usize>(),
        _ => 0,
    }
}

/// `value` rendered in a frame (a heading before it, a rule after it) parses as that frame and
/// the value's own list items, nothing more.
fn assert_framed(value: &Value) {
    let rendered = to_markdown(value).unwrap();
    let document = format!("# Frame\n\n{rendered}\n\n---\n\nend\n");
    let expected = Blocks {
        headings: 1,
        rules: 1,
        items: items(value),
        ..Blocks::default()
    };
    assert_eq!(
        blocks(&document),
        expected,
        "value {value}\nrendered:\n{rendered}"
    );
}

/// Escaped free text in a frame adds nothing; on one line in a heading, nothing either.
fn assert_text_and_line(text: &str) {
    let escaped = escape_text(text);
    let document = format!("# Frame\n\n{escaped}\n\n---\n\nend\n");
    let expected = Blocks {
        headings: 1,
        rules: 1,
        ..Blocks::default()
    };
    assert_eq!(blocks(&document), expected, "text {text:?}\n{escaped}");
    let line = to_markdown_line(&json!({ "k": [text] })).unwrap();
    let document = format!("## Title {line} - end\n\n---\n");
    let expected = Blocks {
        headings: 1,
        rules: 1,
        ..Blocks::default()
    };
    assert_eq!(blocks(&document), expected, "line of {text:?}: {line}");
}

/// Blanks that move the column: spaces and tabs (a tab's width depends on its column, so every
/// mix of them puts a tab at every column mod 4), and the vertical tab and form feed.
fn blanks() -> impl Strategy<Value = String> {
    vec(select(&[" ", " ", "\t", "\t", "\u{b}", "\u{c}"][..]), 0..7).prop_map(|b| b.concat())
}

/// Openers of the blocks a value must not open, and plain text.
const OPENERS: &[&str] = &[
    "# z",
    "#",
    "## z",
    "###### z",
    "####### z",
    "#\tz",
    "---",
    "- - -",
    "***",
    "* * *",
    "___",
    "===",
    "- z",
    "-\tz",
    "-",
    "+ z",
    "* z",
    "*\tz",
    "1. z",
    "1) z",
    "1.",
    "123456789. z",
    "0)",
    "> z",
    ">",
    ">\tz",
    "```",
    "``` rust",
    "~~~",
    "````",
    "| a | b |",
    "|---|---|",
    "|-",
    ":-:",
    "-|-",
    "- |",
    "<div>",
    "<!-- c",
    "<?x",
    "</p>",
    "<![CDATA[",
    "[x]: y",
    "[^1]: n",
    "[x",
    "- [ ] z",
    "z",
    "**z**",
    "\\",
    "`z`",
];

/// Markers a line may repeat before its opener: nesting of lists and quotes, up to three
/// levels, each followed by blanks.
fn nest() -> impl Strategy<Value = String> {
    let marker = select(
        &[
            "- ", "* ", "+ ", "1. ", "2) ", "> ", ">", "-\t", "1.\t", ">\t",
        ][..],
    );
    vec((marker, blanks()), 0..4).prop_map(|levels| {
        levels
            .into_iter()
            .map(|(marker, blanks)| format!("{marker}{blanks}"))
            .collect()
    })
}

/// A line that tries to open a block: blanks, nested markers, more blanks, an opener.
fn hostile_line() -> impl Strategy<Value = String> {
    (blanks(), nest(), blanks(), select(OPENERS))
        .prop_map(|(lead, nest, gap, opener)| format!("{lead}{nest}{gap}{opener}"))
}

/// Text of hostile lines after a first line (plain, empty or hostile itself), with every line
/// ending CommonMark knows.
fn hostile_text() -> impl Strategy<Value = String> {
    let first = prop_oneof![Just(String::from("x")), Just(String::new()), hostile_line()];
    let end = select(&["\n", "\r\n", "\r", "\n\n"][..]);
    (first, vec((end, hostile_line()), 0..3)).prop_map(|(first, rest)| {
        let mut text = first;
        for (end, line) in rest {
            text.push_str(end);
            text.push_str(&line);
        }
        text
    })
}

/// `text` in a slot at a depth: a root string, an entry's value or key, an array item, inside
/// up to three levels of arrays and objects.
fn placed(text: String, slot: usize, nesting: Vec<bool>) -> Value {
    let mut value = match slot {
        0 => Value::String(text),
        1 => json!({ "k": text }),
        2 => json!({ text: "v" }),
        3 => json!([text]),
        4 => json!(["first", text, { "k": 1 }]),
        _ => json!({ text.clone(): [text] }),
    };
    for in_array in nesting {
        value = if in_array {
            json!([value])
        } else {
            json!({ "outer": value })
        };
    }
    value
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    /// The property: whatever the prefix, the slot and the depth, only the frame's heading and
    /// rule and the value's own items are there.
    #[test]
    fn rendered_data_opens_no_block(
        text in hostile_text(),
        slot in 0usize..6,
        nesting in vec(any::<bool>(), 0..4),
    ) {
        assert_framed(&placed(text, slot, nesting));
    }

    /// Free text (a task) escaped on its own, and a value on one line inside a heading.
    #[test]
    fn escaped_text_opens_no_block(text in hostile_text()) {
        assert_text_and_line(&text);
    }
}

/// Renders `value`; also checks it in the frame.
fn md(value: &Value) -> String {
    assert_framed(value);
    to_markdown(value).unwrap()
}

/// A line after a first line `x` of an entry stands at column 2: `" \t # z"` is three columns
/// of blanks there (the tab is one column wide, from 3 to 4), so `#` opens a heading inside
/// the item and is escaped.
#[test]
fn a_tab_after_blanks_is_measured_from_its_column() {
    assert_eq!(md(&json!({"k": "x\n \t # z"})), "- **k**: x\n   \t \\# z");
    // One blank more and it is four columns: the line continues the paragraph as it is.
    assert_eq!(md(&json!({"k": "x\n  \t # z"})), "- **k**: x\n    \t # z");
    // A tab first, at column 2: two columns wide, then one blank: three columns.
    assert_eq!(md(&json!({"k": "x\n\t # z"})), "- **k**: x\n  \t \\# z");
    // Two tabs: 2 + 4 columns, past the limit.
    assert_eq!(md(&json!({"k": "x\n\t\t# z"})), "- **k**: x\n  \t\t# z");
}

/// The same lines one level deeper (column 4), where a tab after a blank is three columns wide.
#[test]
fn the_tab_stop_moves_with_the_nesting() {
    assert_eq!(
        md(&json!({"a": {"k": "x\n \t # z"}})),
        "- **a**:\n  - **k**: x\n     \t # z"
    );
    assert_eq!(
        md(&json!({"a": {"k": "x\n \t# z"}})),
        "- **a**:\n  - **k**: x\n     \t# z"
    );
    assert_eq!(
        md(&json!({"a": {"k": "x\n\t# z"}})),
        "- **a**:\n  - **k**: x\n    \t# z"
    );
    assert_eq!(
        md(&json!({"a": {"k": "x\n   # z"}})),
        "- **a**:\n  - **k**: x\n       \\# z"
    );
    // Column 6: a tab there is two columns wide.
    assert_eq!(
        md(&json!({"a": {"b": {"k": "x\n\t # z"}}})),
        "- **a**:\n  - **b**:\n    - **k**: x\n      \t \\# z"
    );
}

/// At the root (column 0) a tab is four columns: never an opening.
#[test]
fn a_tab_at_the_margin_is_indented_code() {
    assert_eq!(md(&json!("\t# z")), "\t# z");
    assert_eq!(md(&json!("x\n\t- z")), "x\n\t- z");
    assert_eq!(md(&json!("x\n   - z")), "x\n   \\- z");
    assert_eq!(escape_text(" \t# z"), " \t# z");
    assert_eq!(escape_text("   > z"), "   \\> z");
}

/// After an item's `- ` the content column is where its text starts: one to three blanks move
/// it, a tab is measured from column 2 (two columns wide), and four or more blanks leave it.
#[test]
fn blanks_after_a_dash_move_the_content_column() {
    assert_eq!(md(&json!([" # z"])), "-  \\# z");
    assert_eq!(md(&json!(["\t# z"])), "- \t\\# z");
    assert_eq!(md(&json!(["\t # z"])), "- \t \\# z");
    assert_eq!(md(&json!(["\t\t# z"])), "- \t\t# z");
    // The first line's blanks moved the column to 4: the next line is measured from there.
    assert_eq!(md(&json!(["  a\n # z"])), "-   a\n     \\# z");
    assert_eq!(md(&json!(["  a\n\t# z"])), "-   a\n    \t# z");
    assert_eq!(md(&json!(["a\n \t# z"])), "- a\n   \t\\# z");
}

/// Each block opening, after blanks and a tab that keep it within three columns.
#[test]
fn every_opening_after_a_tab_is_escaped() {
    for (line, escaped) in [
        (" \t- z", " \t\\- z"),
        (" \t* z", " \t\\* z"),
        (" \t+ z", " \t\\+ z"),
        (" \t> z", " \t\\> z"),
        (" \t```", " \t\\```"),
        (" \t~~~", " \t\\~~~"),
        (" \t---", " \t\\---"),
        (" \t***", " \t\\***"),
        (" \t1. z", " \t1\\. z"),
        (" \t1) z", " \t1\\) z"),
        (" \t|-|-|", " \t\\|-|-|"),
        (" \t<div>", " \t\\<div>"),
        (" \t[x]: y", " \t\\[x]: y"),
        (" \t===", " \t\\==="),
    ] {
        assert_eq!(
            md(&json!({ "k": format!("x\n{line}") })),
            format!("- **k**: x\n  {escaped}"),
            "{line:?}"
        );
    }
}

/// Vertical tabs and form feeds are blanks to the parser inside a line, but no indentation:
/// a line starting with one opens nothing, and they are kept as written.
#[test]
fn vertical_tabs_and_form_feeds_open_nothing() {
    for text in ["x\n\u{b}# z", "x\n\u{c}- z", "x\n \u{c}> z", "x\n\u{b}```"] {
        let rendered = md(&json!({ "k": text }));
        assert!(rendered.contains(&text[2..]), "{rendered:?}");
    }
    // After a marker they are the blank a marker needs.
    assert_eq!(md(&json!({"k": "x\n-\u{b}z"})), "- **k**: x\n  \\-\u{b}z");
    assert_eq!(md(&json!({"k": "x\n#\u{c}z"})), "- **k**: x\n  \\#\u{c}z");
}

/// A key goes on the line of `- **`: a first line of only `*`s and blanks would make it a rule
/// (`- ***`), so its first `*` is escaped; any other first line is kept as written.
#[test]
fn a_key_of_stars_makes_no_rule() {
    assert_eq!(md(&json!({"*\nx": 1})), "- **\\*\n  x**: 1");
    assert_eq!(md(&json!({"***\nx": 1})), "- **\\***\n  x**: 1");
    assert_eq!(md(&json!({" * *\nx": 1})), "- ** \\* *\n  x**: 1");
    assert_eq!(md(&json!({"*a\nx": 1})), "- ***a\n  x**: 1");
    // On one line the key is inside the item's text already.
    assert_eq!(md(&json!({"***": 1})), "- *******: 1");
}

/// What opens no block is written as it is: no backslash where none is needed.
#[test]
fn lines_that_open_nothing_are_kept() {
    for line in [
        "#x",
        "####### z",
        "-x",
        "+x",
        "*x",
        "1x",
        "1.x",
        "1)x",
        "2024 was",
        "1234567890. z",
        "[x] y",
        "<1",
        "``x",
        "~x",
        "|x",
        ":x",
        "=x",
        "_x",
    ] {
        assert_eq!(
            md(&json!({ "k": format!("x\n{line}") })),
            format!("- **k**: x\n  {line}"),
            "{line:?}"
        );
    }
}

/// An ordered marker is escaped at its `.` or `)`, after up to nine digits.
#[test]
fn ordered_markers_are_escaped_at_their_delimiter() {
    for (line, escaped) in [
        ("1. z", "1\\. z"),
        ("12. z", "12\\. z"),
        ("123456789) z", "123456789\\) z"),
        ("0.", "0\\."),
        ("7)\tz", "7\\)\tz"),
    ] {
        assert_eq!(
            md(&json!({ "k": format!("x\n{line}") })),
            format!("- **k**: x\n  {escaped}"),
            "{line:?}"
        );
    }
}

/// A link reference definition's label may go on to the next line: an open `[` is escaped,
/// as is `[x]:`.
#[test]
fn link_reference_labels_are_escaped() {
    assert_eq!(
        md(&json!({"k": "x\n[x\n]: y"})),
        "- **k**: x\n  \\[x\n  ]: y"
    );
    assert_eq!(md(&json!({"k": "x\n[x]: y"})), "- **k**: x\n  \\[x]: y");
}

/// After an item's `- ` under a header line with a `|`, a line of `|`, `:` and `-` would make
/// the item's line a table's delimiter row: escaped at its first character.
#[test]
fn an_item_cannot_be_a_delimiter_row() {
    for (item, escaped) in [
        ("|", "\\|"),
        (":", "\\:"),
        ("|:", "\\|:"),
        ("| |", "\\| |"),
        ("|-|-", "\\|-|-"),
    ] {
        assert_eq!(
            md(&json!({ "a|b": [item, "z"] })),
            format!("- **a|b**:\n  - {escaped}\n  - z"),
            "{item:?}"
        );
    }
}
