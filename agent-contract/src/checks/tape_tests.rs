//! The strict typed read ([`deserialize`](super::deserialize)) on a tape: a type reads the
//! same from a value's tape as from its text, and the untyped parts of a call's typed input
//! stand on the call's tape. Here, under `checks`, because the strict read is this module's
//! and the tape `json`'s, which `checks` imports.

use crate::json::tests::call_of;
use crate::json::*;
use serde_json::Value;
use std::sync::Arc;

#[derive(Debug, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Probe {
    name: String,
    count: Option<u8>,
    #[serde(default)]
    tags: Vec<Level>,
    #[serde(default)]
    extra: Option<RawObject>,
    #[serde(default)]
    any: Option<RawJson>,
    #[serde(default)]
    ratio: Option<f64>,
    #[serde(default)]
    flag: Option<bool>,
    #[serde(default)]
    misc: Option<Value>,
}

#[derive(Debug, PartialEq, serde::Deserialize)]
enum Level {
    A,
    #[serde(rename = "AA")]
    Aa,
}

/// `Probe` read from a value's tape and from its text: the same value or both an error.
fn same_read(text: &str) -> Option<Probe> {
    let raw: RawJson = serde_json::from_str(text).unwrap();
    let from_tape = raw
        .value()
        .map(|value| super::deserialize::<Probe, _>(value).ok());
    let mut reader = serde_json::Deserializer::from_str(text);
    let from_text = super::deserialize::<Probe, _>(&mut reader).ok();
    if let Some(from_tape) = from_tape {
        assert_eq!(from_tape, from_text, "{text}");
    }
    from_text
}

#[test]
fn a_type_reads_the_same_from_a_tape_and_from_text() {
    let read = same_read(
            r#"{"name": "n\u00e9", "count": 3, "tags": ["A", "AA"], "extra": {"x": [1, {"y": 2}]}, "any": [0.60], "ratio": 1e2}"#,
        )
        .unwrap();
    assert_eq!(read.extra.unwrap().get(), r#"{"x": [1, {"y": 2}]}"#);
    assert_eq!(read.any.unwrap().get(), "[0.60]");
    assert_eq!(
        same_read(r#"{"name": "n", "count": null}"#).unwrap().count,
        None
    );
    // Plain strings, booleans and null, which the tape visits itself.
    let read = same_read(
            r#"{"name": "plain", "flag": false, "tags": ["AA"], "misc": {"a": "b", "c": [true, false, null, "x\ny", 1, -0]}}"#,
        )
        .unwrap();
    assert_eq!(
        (read.name.as_str(), read.flag, &read.tags[..]),
        ("plain", Some(false), &[Level::Aa][..])
    );
    assert_eq!(
        read.misc.unwrap().to_string(),
        r#"{"a":"b","c":[true,false,null,"x\ny",1,-0.0]}"#
    );
    for wrong in [
        r#"{"name": "n", "count": 300}"#,
        r#"{"name": "n", "count": -1}"#,
        r#"{"name": "n", "count": 1.5}"#,
        r#"{"name": 1}"#,
        r#"{"name": "n", "tags": ["B"]}"#,
        r#"{"name": "n", "tags": "A"}"#,
        r#"{"name": "n", "tags": ["C"]}"#,
        r#"{"name": "n", "tags": [true]}"#,
        r#"{"name": "n", "tags": [{"A": 1}]}"#,
        r#"{"name": "n", "flag": "true"}"#,
        r#"{"name": "n", "flag": 1}"#,
        r#"{"name": true}"#,
        r#"{"name": null}"#,
        r#"{"name": "n", "extra": [1]}"#,
        r#"{"name": "n", "other": 1}"#,
        r#"{"count": 1}"#,
        r#"["n", 1]"#,
        r#""n""#,
    ] {
        assert_eq!(same_read(wrong), None, "{wrong}");
    }
}

/// An untyped part of a call's typed input stands on the call's text and tape, shared:
/// written from it as from its own text; a value read for a check (no call to share)
/// takes a copy.
#[test]
fn an_untyped_part_stands_on_the_calls_tape() {
    let text = r#" {"name": "n", "tags": ["A"], "extra": {"x": [1, {"y": "\u00e9"}], "z": {}}, "any": [true, [null, 0.60]], "ratio": 2}"#;
    let call = call_of(text);
    let reading = Reading::of(&call);
    let probe: Probe = super::deserialize(TapeValue::shared(&call, 0)).unwrap();
    drop(reading);
    let extra = probe.extra.unwrap();
    let any = probe.any.unwrap();
    assert!(matches!(
        (&extra.0, &any.0),
        (Captive::Call(..), Captive::Call(..))
    ));
    // Each part holds the call, which the probe's drop does not end.
    assert_eq!(Arc::strong_count(&call), 3);
    let read: Probe = super::deserialize(TapeValue::on(&call.text, &call.tape, 0)).unwrap();
    assert!(matches!(read.extra.as_ref().unwrap().0, Captive::Own(..)));
    assert_eq!(read.extra.unwrap().get(), extra.get());
    assert_eq!(extra.get(), r#"{"x": [1, {"y": "\u00e9"}], "z": {}}"#);
    assert_eq!(any.get(), "[true, [null, 0.60]]");
    assert_eq!(
        written(extra.value().unwrap()).unwrap(),
        serde_json::to_string(&Walk(extra.get())).unwrap()
    );
    assert_eq!(
        written(any.value().unwrap()).unwrap(),
        r#"[true,[null,0.60]]"#
    );
    assert_eq!(
        {
            let mut out = String::new();
            crate::ToMarkdown::markdown_into(&extra, &mut out).unwrap();
            out
        },
        crate::to_markdown(&Walk(extra.get())).unwrap()
    );
}
