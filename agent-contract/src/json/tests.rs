use super::*;
use crate::retry::PathSegment;
use serde::de::{self, Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::Value;
use std::fmt;
use std::sync::Arc;

#[test]
fn a_calls_tape_buffer_is_kept_for_the_next_call() {
    // On a thread of its own, so no other test's tapes come and go in between.
    std::thread::spawn(|| {
        let text = r#"{"a": [1, 2, {"b": "c"}], "d": "e"}"#;
        let (_, tape) = crate::json::object_entries(text).unwrap();
        let (at, room) = (tape.toks.as_ptr(), tape.toks.capacity());
        drop(tape);
        // A smaller tape dropped after it (a captured value's) does not take its place.
        drop(Tape {
            toks: Vec::with_capacity(2),
            keys: Vec::new(),
        });
        let kept = Tape::buffer(1);
        assert_eq!((kept.as_ptr(), kept.capacity(), kept.len()), (at, room, 0));
        // Taken, it is gone: the next buffer is new.
        assert_eq!(Tape::buffer(0).capacity(), 0);
        // A buffer past the bound is let go, one at the bound kept.
        drop(Tape {
            toks: Vec::with_capacity(KEPT_TAPE_PARTS + 1),
            keys: Vec::new(),
        });
        assert_eq!(Tape::buffer(0).capacity(), 0);
        drop(Tape {
            toks: Vec::with_capacity(KEPT_TAPE_PARTS),
            keys: Vec::new(),
        });
        assert_eq!(Tape::buffer(0).capacity(), KEPT_TAPE_PARTS);
    })
    .join()
    .unwrap();
}

/// A value as written from its tape and from its text alone.
fn both_ways(text: &str) -> (String, String, Option<(String, String)>) {
    let raw: RawJson = serde_json::from_str(text).unwrap();
    let from_tape = (serde_json::to_string(&raw).unwrap(), {
        let mut out = String::new();
        crate::ToMarkdown::markdown_into(&raw, &mut out).unwrap();
        out
    });
    assert_eq!(from_tape.1, crate::to_markdown(&raw).unwrap(), "{text}");
    let from_text = (
        serde_json::to_string(&Walk(text)).unwrap(),
        crate::to_markdown(&Walk(text)).unwrap(),
    );
    assert_eq!(from_tape, from_text, "{text}");
    (from_tape.0, from_tape.1, raw.value().map(|_| from_text))
}

#[test]
fn a_tape_builds_the_value_serde_json_builds() {
    for text in [
        r#"{"b": 0.60, "a": [1e5, -0, "x\"\\\n", {"c": null, "d": true, "e": false}], "f": {}, "g": []}"#,
        "[0, 7, -5, 1.5, -1.5, 10, 1E2, 1e-2, -9223372036854775808, -9223372036854775809]",
        "[9999999999999999999, 18446744073709551615, 18446744073709551616, 123456789012345678901]",
        " [ \"é\\u00e9\" , \"plain\" ] ",
        r#"{"z": {"y": [[], {}, [{"x": "w"}]]}, "a": 1}"#,
        "\"only a string\"",
        "12.50",
    ] {
        let tape = Tape::read(text).expect("a tape");
        let built = TapeValue::on(text, &tape, 0).to_value().unwrap();
        let read: Value = serde_json::from_str(text).unwrap();
        assert_eq!(built, read, "{text}");
        // Each number of the same kind (u64, i64, f64) as serde_json's, not only equal.
        assert_eq!(built.to_string(), read.to_string(), "{text}");
    }
}

#[test]
fn a_value_reads_the_same_from_its_tape_and_its_text() {
    for text in [
        r#"{"b": 0.60, "a": [1e5, -0, "x\"\\\n", {"c": null, "d": true, "e": false}], "f": {}, "g": []}"#,
        " [ \"é\\u00e9\" , 1 ] ",
        "\"only a string\"",
        "12.50",
    ] {
        assert!(both_ways(text).2.is_some(), "{text} has a tape");
    }
    // Repeated or escaped keys have a tape too: each key once, at its first place with its
    // last value, as serde_json's map keeps it.
    for (text, expected) in [
        (r#"{"a": 1, "b": 2, "a": 3}"#, r#"{"a":3,"b":2}"#),
        (r#"{"\u0061": 1}"#, r#"{"a":1}"#),
        (
            r#"{"a": 1, "\u0061": [2], "b\n": {"c": 1, "c": 4}}"#,
            r#"{"a":[2],"b\n":{"c":4}}"#,
        ),
    ] {
        let (json, _, tape) = both_ways(text);
        assert!(tape.is_some(), "{text}");
        assert_eq!(json, expected);
    }
    let many: String = (0..=TAPE_KEYS)
        .map(|i| format!("\"k{i}\": {i}, "))
        .collect();
    let (json, _, tape) = both_ways(&format!("{{{many}\"k0\": 0}}"));
    assert!(tape.is_some());
    assert!(json.starts_with("{\"k0\":0,\"k1\":1,"), "{json}");
    assert_eq!(json.matches("k0").count(), 1, "{json}");
    // An untyped object has its tape too, and so has either through a reference.
    let text = r#"{"k": [1, {"x": "y"}], "n": null}"#;
    let object: RawObject = serde_json::from_str(text).unwrap();
    let json: RawJson = serde_json::from_str(text).unwrap();
    let by_ref = (&object, &json);
    for value in [
        object.value(),
        Captured::value(&by_ref.0),
        Captured::value(&by_ref.1),
    ] {
        assert_eq!(
            written(value.unwrap()).unwrap(),
            r#"{"k":[1,{"x":"y"}],"n":null}"#
        );
    }
}

#[test]
fn text_handed_over_by_serde_json_is_taken_as_read() {
    let text = r#"{"z": [1, {"b": 0.60}], "a": "x\ny"}"#;
    let raw: RawObject = serde_json::from_str(text).unwrap();
    assert_eq!(raw.get(), text);
    let from_value: RawJson = serde_json::from_value(serde_json::json!({"k": [1]})).unwrap();
    assert_eq!(from_value.get(), r#"{"k":[1]}"#);
}

#[test]
fn the_raw_value_key_in_somebodys_data_is_checked() {
    // A map that knows its size is data (serde's own map deserializer here, as a format
    // might hand one over): its text is read as JSON before it is kept.
    let map = |text: &'static str| {
        de::value::MapDeserializer::<_, serde_json::Error>::new(std::iter::once((RAW_TOKEN, text)))
    };
    assert!(RawJson::deserialize(map("not json")).is_err());
    assert!(RawJson::deserialize(map("[1, 2")).is_err());
    assert_eq!(RawJson::deserialize(map("[1, 2]")).unwrap().get(), "[1, 2]");
}

#[test]
fn a_repeated_key_keeps_its_first_place_and_last_value() {
    for n in [3, 20] {
        let mut text = String::from("{\"a\": 1, \"b\": 2");
        for i in 0..n {
            text.push_str(&format!(", \"k{i}\": {i}"));
        }
        text.push_str(", \"a\": 3, \"a\": 4}");
        let got: Vec<(String, String)> = entries(&text)
            .unwrap()
            .into_iter()
            .map(|(k, v)| (k.into_owned(), v.get().to_owned()))
            .collect();
        assert_eq!(got.len(), n + 2);
        assert_eq!(got[0], ("a".to_owned(), "4".to_owned()));
        assert_eq!(got[1], ("b".to_owned(), "2".to_owned()));
    }
}

#[test]
fn numbers_and_order_survive_a_round_trip() {
    let text = r#"{"z": [0.60, 1e5, 0.000001, -0.0, 123456789012345678901234567890], "a": {"y": "\u00e9\n", "x": null, "w": true}}"#;
    let raw: RawJson = serde_json::from_str(text).unwrap();
    assert_eq!(
        serde_json::to_string(&raw).unwrap(),
        r#"{"z":[0.60,1e5,0.000001,-0.0,123456789012345678901234567890],"a":{"y":"é\n","x":null,"w":true}}"#
    );
}

#[test]
fn the_walk_reads_the_text_once_as_serde_json_would() {
    let text = " {\"k\\\"ey\": {\"d\": 1, \"e\": [ 2 , \"a\\u00e9\\\\\" ], \"d\": {\"x\": -2.50E+3}},\n\t\"b\": [], \"c\": {}, \"k\\\"ey\": {\"z\": false, \"z\": true}, \"n\": null } ";
    let walked = serde_json::to_string(&Walk(text)).unwrap();
    assert_eq!(walked, r#"{"k\"ey":{"z":true},"b":[],"c":{},"n":null}"#);
    let nested = r#"{"d": 1, "e": [2, "é\\"], "d": {"x": -2.50E+3}}"#;
    assert_eq!(
        serde_json::to_string(&Walk(nested)).unwrap(),
        r#"{"d":{"x":-2.50E+3},"e":[2,"é\\"]}"#
    );
    // serde_json's map agrees on the values (it sorts keys and reads numbers as `f64`).
    let ours: Value = serde_json::from_str(&serde_json::to_string(&Walk(text)).unwrap()).unwrap();
    let theirs: Value = serde_json::from_str(text).unwrap();
    assert_eq!(ours, theirs);
    // Text that is not one JSON value is an error, never a panic.
    for bad in [
        "",
        "{",
        "[1,",
        "[1 2]",
        r#"{"a" 1}"#,
        r#"{"a": 1,}"#,
        r#""abc"#,
        r#""a\"#,
        "nul",
        "[1] [2]",
        r#"{1: 2}"#,
        r#""\é""#,
    ] {
        assert!(serde_json::to_string(&Walk(bad)).is_err(), "{bad:?}");
    }
    let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
    assert!(serde_json::to_string(&Walk(&deep)).is_err());
}

#[test]
fn the_first_number_beyond_f64_is_found() {
    assert_eq!(
        out_of_range(r#"{"a": [1, {"b": 1e400}], "c": -1e999} trailing"#),
        Some(vec![
            PathSegment::Key("a".into()),
            PathSegment::Index(1),
            PathSegment::Key("b".into())
        ])
    );
    assert_eq!(out_of_range(r#"{"a": 1e300}"#), None);
}

#[test]
fn raw_json_deserializes_inside_untagged_enums_and_flatten() {
    #[derive(serde::Deserialize, Debug)]
    #[serde(untagged)]
    enum Scope {
        Flag(bool),
        Object(RawObject),
    }
    #[derive(serde::Deserialize, Debug)]
    struct Outer {
        #[serde(flatten)]
        rest: std::collections::BTreeMap<String, RawJson>,
    }
    let scope: Scope = serde_json::from_str(r#"{"b": [1, 0.5], "a": true}"#).unwrap();
    let Scope::Object(object) = scope else {
        panic!("{scope:?}")
    };
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(object.get()).unwrap()["b"],
        serde_json::json!([1, 0.5])
    );
    assert!(matches!(
        serde_json::from_str(" true").unwrap(),
        Scope::Flag(true)
    ));
    let outer: Outer = serde_json::from_str(r#"{"x": {"y": [null, "s"]}, "n": 2}"#).unwrap();
    assert_eq!(outer.rest["x"].get(), r#"{"y":[null,"s"]}"#);
    assert_eq!(outer.rest["n"].get(), "2");
    // From a `Value`, as the output side deserializes.
    let value = serde_json::json!({"k": [1, {"z": 1.5}]});
    let raw = RawJson::deserialize(&value).unwrap();
    assert_eq!(serde_json::from_str::<Value>(raw.get()).unwrap(), value);
}

/// A value handed over with its place stands on the call only while a read of that call is
/// under way ([`Reading`]), only for that very slice (the same place, not only the same
/// bytes), and only from a map of unknown size, as a tape hands it over; a guard puts back the
/// read it interrupted.
#[test]
fn a_shared_part_stands_on_the_call_only_while_its_read_lives() {
    let read = |raw: RawJson| (raw.get().to_owned(), matches!(raw.0, Captive::Call(..)));
    let text = r#"{"a": [1,"a"]}"#;
    let (call, other) = (call_of(text), call_of(text));
    let part = |call: &Arc<Shared>| RawJson::deserialize(TapeValue::shared(call, 2)).unwrap();
    let (taken, own) = (
        ("[1,\"a\"]".to_owned(), true),
        ("[1,\"a\"]".to_owned(), false),
    );
    // No read under way: a copy.
    assert_eq!(read(part(&call)), own);
    {
        let _reading = Reading::of(&call);
        assert_eq!(read(part(&call)), taken);
        // The same bytes elsewhere (another call's text): a copy.
        assert_eq!(read(part(&other)), own);
        {
            let _inner = Reading::of(&other);
            assert_eq!(read(part(&other)), taken);
            assert_eq!(read(part(&call)), own);
        }
        // The interrupted read is back.
        assert_eq!(read(part(&call)), taken);
        // A place that is not the text's: a copy.
        let wrong = de::value::MapDeserializer::<_, serde_json::Error>::new(
            [(SHARED_TOKEN, "2"), (RAW_TOKEN, "[1,\"a\"]")].into_iter(),
        );
        assert!(
            !read(RawJson::deserialize(wrong).unwrap()).1,
            "a map that knows its size is data"
        );
        // serde_json's own raw value, read while the guard lives: a copy of its own.
        assert_eq!(read(serde_json::from_str("[1,\"a\"]").unwrap()), own);
    }
    assert_eq!(read(part(&call)), own);
    // A shared value handed over without its text is an error, never a panic.
    struct NoText(u8);
    impl<'de> MapAccess<'de> for NoText {
        type Error = serde_json::Error;
        fn next_key_seed<K: de::DeserializeSeed<'de>>(
            &mut self,
            seed: K,
        ) -> Result<Option<K::Value>, serde_json::Error> {
            self.0 += 1;
            match self.0 {
                1 => seed
                    .deserialize(de::value::BorrowedStrDeserializer::new(SHARED_TOKEN))
                    .map(Some),
                _ => Ok(None),
            }
        }
        fn next_value_seed<V: de::DeserializeSeed<'de>>(
            &mut self,
            seed: V,
        ) -> Result<V::Value, serde_json::Error> {
            seed.deserialize(de::value::U32Deserializer::new(1))
        }
    }
    assert!(RawJson::deserialize(de::value::MapAccessDeserializer::new(NoText(0))).is_err());
}

/// The call of `text`, whose untyped parts share its text and tape.
pub(crate) fn call_of(text: &str) -> Arc<Shared> {
    Arc::new(Shared {
        text: Arc::from(text),
        tape: Tape::read(text).unwrap(),
    })
}

/// The tape's bounds: an object of any number of keys has one (past `TAPE_KEYS`, its keys are
/// compared at its end, not one by one), and the deepest value serde_json reads still has one.
#[test]
fn the_tape_bounds_are_exact() {
    let keys = |n: usize| {
        (0..n)
            .map(|i| format!("\"k{i}\": {i}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let has_tape = |text: &str| Tape::read(text).is_some();
    assert!(has_tape(&format!("{{{}}}", keys(TAPE_KEYS))));
    assert!(has_tape(&format!("{{{}}}", keys(TAPE_KEYS + 1))));
    assert!(has_tape(&format!("{{{}}}", keys(10 * TAPE_KEYS))));
    assert!(has_tape(&format!(
        "{{{}, \"in\": {{\"a\": 1, \"b\": {{\"c\": 2}}}}}}",
        keys(TAPE_KEYS - 1)
    )));
    assert!(has_tape(&format!(
        "[{{{}}}, {{{}}}]",
        keys(TAPE_KEYS),
        keys(TAPE_KEYS)
    )));
    let deepest = (1..200)
        .map(|n| format!("{}1{}", "[".repeat(n), "]".repeat(n)))
        .take_while(|text| serde_json::from_str::<Value>(text).is_ok())
        .last()
        .unwrap();
    assert!(has_tape(&deepest), "{}", deepest.len());
    let tape = Tape::read(&deepest).unwrap();
    assert_eq!(written(TapeValue::on(&deepest, &tape, 0)).unwrap(), deepest);
    // Its own guard: a scalar at `SCAN_DEPTH` levels is read, one level more is not.
    let nested = |n: usize| format!("{}1{}", "[".repeat(n), "]".repeat(n));
    assert!(has_tape(&nested(SCAN_DEPTH)));
    assert!(!has_tape(&nested(SCAN_DEPTH + 1)));
    // In objects alike.
    let in_objects = |n: usize| format!("{}1{}", "{\"a\": ".repeat(n), "}".repeat(n));
    assert!(has_tape(&in_objects(SCAN_DEPTH)));
    assert!(!has_tape(&in_objects(SCAN_DEPTH + 1)));
}

/// Untyped parts keep their part of the tape whichever way the walk reaches them: a map
/// type's values, and a visitor that asks for anything (an object or an array).
#[test]
fn untyped_parts_keep_their_tape_through_maps_and_any() {
    /// What a visitor of anything reads: an object's or an array's untyped parts.
    struct Parts(Vec<RawObject>);
    impl<'de> Deserialize<'de> for Parts {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            struct V;
            impl<'de> Visitor<'de> for V {
                type Value = Parts;
                fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    f.write_str("an object or an array of objects")
                }
                fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Parts, A::Error> {
                    let mut parts = Vec::new();
                    while let Some((_, part)) = map.next_entry::<&str, RawObject>()? {
                        parts.push(part);
                    }
                    Ok(Parts(parts))
                }
                fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Parts, A::Error> {
                    let mut parts = Vec::new();
                    while let Some(part) = seq.next_element::<RawObject>()? {
                        parts.push(part);
                    }
                    Ok(Parts(parts))
                }
            }
            deserializer.deserialize_any(V)
        }
    }
    let kept = |parts: &[RawObject]| {
        assert_eq!(parts.len(), 2);
        for part in parts {
            assert!(part.tape_read(), "{}", part.get());
            assert_eq!(
                written(part.value().unwrap()).unwrap(),
                serde_json::to_string(&Walk(part.get())).unwrap()
            );
        }
    };
    for text in [
        r#"{"a": {"x": 1}, "b": {"y": [2, {}]}}"#,
        r#"[{"x": 1}, {"y": [2, {}]}]"#,
    ] {
        let call = call_of(text);
        let _reading = Reading::of(&call);
        let Parts(parts) = Parts::deserialize(TapeValue::shared(&call, 0)).unwrap();
        kept(&parts);
    }
    let text = r#"{"a": {"x": 1}, "b": {"y": [2, {}]}}"#;
    let call = call_of(text);
    let _reading = Reading::of(&call);
    let map: std::collections::BTreeMap<&str, RawObject> =
        Deserialize::deserialize(TapeValue::shared(&call, 0)).unwrap();
    kept(&map.into_values().collect::<Vec<_>>());
}

/// A tape value counts what serde_json's `Value` holds (each container and scalar once,
/// keys not), the count that decides whether a retry error lists every fault.
#[test]
fn a_tape_value_counts_what_a_value_holds() {
    fn parsed(v: &Value) -> usize {
        1 + match v {
            Value::Array(a) => a.iter().map(parsed).sum(),
            Value::Object(o) => o.values().map(parsed).sum(),
            _ => 0,
        }
    }
    for text in [
        "1",
        "[]",
        "{}",
        r#"{"a": 1}"#,
        r#"[1, [2, 3], {"b": {"c": [null, true]}}]"#,
        r#"{"a": {"b": 1, "c": [1, 2, {"d": "x"}]}, "e": false, "f": {}}"#,
    ] {
        let tape = Tape::read(text).unwrap();
        let root = TapeValue::on(text, &tape, 0);
        let value: Value = serde_json::from_str(text).unwrap();
        assert_eq!(root.count(), parsed(&value), "{text}");
    }
}

/// A tape's objects and arrays tell serde how many parts are left, exactly, at each step:
/// the hint serde's collections take their capacity from.
#[test]
fn a_tape_container_says_how_many_parts_are_left() {
    struct Hints;
    impl<'de> Visitor<'de> for Hints {
        type Value = Vec<Option<usize>>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("an object or an array")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut hints = vec![map.size_hint()];
            while map
                .next_entry::<de::IgnoredAny, de::IgnoredAny>()?
                .is_some()
            {
                hints.push(map.size_hint());
            }
            Ok(hints)
        }
        fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            let mut hints = vec![seq.size_hint()];
            while seq.next_element::<de::IgnoredAny>()?.is_some() {
                hints.push(seq.size_hint());
            }
            Ok(hints)
        }
    }
    for (text, hints) in [
        (
            r#"{"a": 1, "b": [2], "c": {}}"#,
            vec![Some(3), Some(2), Some(1), Some(0)],
        ),
        ("[1, [2, 3]]", vec![Some(2), Some(1), Some(0)]),
        ("{}", vec![Some(0)]),
        ("[]", vec![Some(0)]),
    ] {
        let tape = Tape::read(text).unwrap();
        let got = TapeValue::on(text, &tape, 0)
            .deserialize_any(Hints)
            .unwrap();
        assert_eq!(got, hints, "{text}");
    }
}
