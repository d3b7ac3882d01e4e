use super::*;
use crate::contract::ContractKind;
use serde_json::json;

fn contract(schema: Value) -> Contract {
    Contract::new("probe", ContractKind::Output, schema).expect("schema compiles")
}

fn limits() -> Limits {
    Limits::default()
}

/// A fix as (kind, path, before, after).
type Fix = (RepairKind, String, String, String);

/// The syntax fixes of `text`, and the strict text.
fn syntax(text: &str) -> Option<(String, Vec<Fix>)> {
    let fixed = syntax::strict(text, Repairs::all(), &limits())?;
    let fixes = fixed
        .fixes
        .into_iter()
        .map(|r| (r.kind, r.path, r.before, r.after))
        .collect();
    Some((fixed.text, fixes))
}

fn kinds(repairs: &[Repair]) -> Vec<RepairKind> {
    repairs.iter().map(|r| r.kind).collect()
}

#[test]
fn each_syntax_slip_is_fixed_and_named_with_its_container() {
    use RepairKind::*;
    let (text, fixes) = syntax(r#"{"a": [1, 2,], "b": {"c": 1,},}"#).unwrap();
    assert_eq!(text, r#"{"a": [1, 2], "b": {"c": 1}}"#);
    let at: Vec<(RepairKind, &str)> = fixes.iter().map(|f| (f.0, f.1.as_str())).collect();
    assert_eq!(
        at,
        [
            (TrailingComma, "/a"),
            (TrailingComma, "/b"),
            (TrailingComma, "")
        ]
    );
    let (text, fixes) = syntax("{\n  // why\n  a: 'it''s', /* x */ \"b\": ['q\"', 2]\n}")
        .unwrap_or_else(|| {
            // `'it''s'` is two strings in a row: broken, not a slip.
            (String::new(), Vec::new())
        });
    assert!(text.is_empty() && fixes.is_empty());
    let (text, fixes) = syntax("{\n  // why\n  a: 'it\\'s', /* x */ \"b\": ['q\"', 2]\n}").unwrap();
    assert_eq!(text, "{\n  \n  \"a\": \"it's\",  \"b\": [\"q\\\"\", 2]\n}");
    assert_eq!(
        fixes,
        [
            (Comment, "".into(), "// why".into(), "".into()),
            (UnquotedKey, "".into(), "a".into(), "\"a\"".into()),
            (
                SingleQuotes,
                "".into(),
                "'it\\'s'".into(),
                "\"it's\"".into()
            ),
            (Comment, "".into(), "/* x */".into(), "".into()),
            (
                SingleQuotes,
                "/b".into(),
                "'q\"'".into(),
                "\"q\\\"\"".into()
            ),
        ]
    );
    let value: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(value, json!({"a": "it's", "b": ["q\"", 2]}));
    // Paths escape `~` and `/`, and count array items.
    let (_, fixes) = syntax(r#"{"a/b~": [0, {"c": 1,}]}"#).unwrap();
    assert_eq!(fixes[0].1, "/a~1b~0/1");
}

#[test]
fn what_is_not_a_known_slip_is_copied_and_left_broken() {
    for text in [
        "{\"a\": True}",
        "{\"a\": NaN}",
        "{\"a\": undefined}",
        "{\"a\": \"open}",
        "{\"a\" 1}",
        "{\"a\": 1,, \"b\": 2}",
        "[1, 2,,]",
        "{\"a\": 1 /* open",
        "{'a\n': 1}",
    ] {
        let strict = syntax(text).map(|(text, _)| text);
        let parsed = strict
            .as_deref()
            .and_then(|t| serde_json::from_str::<Value>(t).ok());
        assert!(parsed.is_none(), "{text} became {strict:?}");
    }
    // Comment markers and quotes inside strings are text.
    let (text, fixes) = syntax(r#"{"a": "// not a comment, 'x',"}"#).unwrap();
    assert_eq!(text, r#"{"a": "// not a comment, 'x',"}"#);
    assert!(fixes.is_empty());
}

#[test]
fn a_switched_off_kind_or_too_many_fixes_repairs_nothing() {
    let text = "{a: 1, b: 2,}";
    let off = Repairs::all().without(RepairKind::UnquotedKey);
    assert!(syntax::strict(text, off, &limits()).is_none());
    assert!(syntax::strict(text, Repairs::all(), &limits().with_max_repairs(2)).is_none());
    assert_eq!(
        syntax::strict(text, Repairs::all(), &limits().with_max_repairs(3))
            .unwrap()
            .fixes
            .len(),
        3
    );
    let deep = format!("{}1{}", "[".repeat(70), "]".repeat(70));
    assert!(syntax::strict(&deep, Repairs::all(), &limits()).is_none());
    assert!(syntax::strict(&deep, Repairs::all(), &limits().with_max_depth(80)).is_some());
}

fn status_contract() -> Contract {
    contract(json!({
        "type": "object",
        "required": ["status", "count"],
        "additionalProperties": false,
        "properties": {
            "status": {"type": "string", "enum": ["success", "partial", "failed"]},
            "count": {"type": "integer", "minimum": 0},
            "ratio": {"type": "number"},
            "done": {"type": "boolean"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "ids": {"type": "array", "items": {"type": "integer"}},
            "level": {"enum": [1, 2, 3]},
            "note": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
            "either": {"anyOf": [{"type": "integer"}, {"type": "boolean"}]},
            "child": {"$ref": "#/$defs/child"}
        },
        "$defs": {"child": {"type": "object", "properties": {"on": {"type": "boolean"}}}}
    }))
}

fn repaired(answer: &str) -> Option<(Value, Vec<Repair>)> {
    repair_answer(answer, Some(&status_contract()), Repairs::all(), &limits())
        .map(|r| (r.value, r.repairs))
}

#[test]
fn values_the_schema_leaves_one_reading_of_are_fixed() {
    use RepairKind::*;
    let cases = [
        (
            json!({"status": "Success", "count": 1}),
            EnumCase,
            "/status",
        ),
        (json!({"status": "FAILED", "count": 1}), EnumCase, "/status"),
        (
            json!({"status": "success", "count": "3"}),
            NumberString,
            "/count",
        ),
        (
            json!({"status": "success", "count": "3.0"}),
            NumberString,
            "/count",
        ),
        (
            json!({"status": "success", "count": 1, "ratio": "-0.25e1"}),
            NumberString,
            "/ratio",
        ),
        (
            json!({"status": "success", "count": 1, "done": "false"}),
            BooleanString,
            "/done",
        ),
        (
            json!({"status": "success", "count": 1, "tags": "a"}),
            SingleToArray,
            "/tags",
        ),
        (
            json!({"status": "success", "count": 1, "level": "2"}),
            NumberString,
            "/level",
        ),
        (
            json!({"status": "success", "count": 1, "note": "4"}),
            NumberString,
            "/note",
        ),
        (
            json!({"status": "success", "count": 1, "child": {"on": "true"}}),
            BooleanString,
            "/child/on",
        ),
    ];
    for (answer, kind, path) in cases {
        let (value, repairs) = repaired(&answer.to_string()).unwrap_or_else(|| panic!("{answer}"));
        assert_eq!(kinds(&repairs), [kind], "{answer}");
        assert_eq!(repairs[0].path, path, "{answer}");
        status_contract().check(&value, &limits()).unwrap();
    }
    let (value, repairs) = repaired(r#"{"status": "success", "count": 1, "ids": "7"}"#).unwrap();
    assert_eq!(value["ids"], json!([7]));
    assert_eq!(kinds(&repairs), [SingleToArray, NumberString]);
    assert_eq!(
        (repairs[1].path.as_str(), repairs[1].before.as_str()),
        ("/ids/0", "\"7\"")
    );
    let (value, _) = repaired(r#"{"status": "success", "count": "2"}"#).unwrap();
    assert_eq!(value["count"], json!(2));
    assert_eq!(value["count"].as_u64(), Some(2));
}

#[test]
fn what_would_change_meaning_is_never_repaired() {
    for answer in [
        // A fraction for an integer.
        json!({"status": "success", "count": "2.5"}),
        json!({"status": "success", "count": 2.5}),
        // An integer no 64 bits hold would be rounded.
        json!({"status": "success", "count": "123456789012345678901234567890"}),
        // Not exactly a number or a boolean.
        json!({"status": "success", "count": " 3"}),
        json!({"status": "success", "count": "3 items"}),
        json!({"status": "success", "count": "0x10"}),
        json!({"status": "success", "count": 1, "done": "True"}),
        json!({"status": "success", "count": 1, "done": "yes"}),
        // No enum value, or not ignoring case only.
        json!({"status": "succes", "count": 1}),
        json!({"status": "success ", "count": 1}),
        // A missing required field, an unknown forbidden one.
        json!({"status": "Success"}),
        json!({"status": "Success", "count": 1, "extra": 1}),
        // Under alternatives a fix would choose one.
        json!({"status": "success", "count": 1, "either": "1"}),
        // `null` where an array is wanted.
        json!({"status": "success", "count": 1, "tags": null}),
        // A fix that does not make the value pass.
        json!({"status": "success", "count": "-1"}),
    ] {
        assert!(
            repaired(&answer.to_string()).is_none(),
            "{answer} was repaired"
        );
    }
    // Two enum values that fold to one: the value matches neither exactly.
    let two = contract(json!({"properties": {"s": {"enum": ["Yes", "yes", "no"]}}}));
    let answer = r#"{"s": "YES"}"#;
    assert!(repair_answer(answer, Some(&two), Repairs::all(), &limits()).is_none());
    let answer = r#"{"s": "NO"}"#;
    let fixed = repair_answer(answer, Some(&two), Repairs::all(), &limits()).unwrap();
    assert_eq!(fixed.value, json!({"s": "no"}));
}

#[test]
fn an_answer_is_found_where_extraction_looks_and_switched_off_kinds_stay_errors() {
    let answer = "Here it is:\n```json\n{status: 'success', count: 2,}\n```";
    let fixed = repair_answer(answer, Some(&status_contract()), Repairs::all(), &limits()).unwrap();
    assert_eq!(fixed.value, json!({"status": "success", "count": 2}));
    assert_eq!(fixed.text, "{\"status\": \"success\", \"count\": 2}");
    let answer = "I think {status: 'Success', count: 2} is right";
    let fixed = repair_answer(answer, Some(&status_contract()), Repairs::all(), &limits()).unwrap();
    assert_eq!(fixed.value, json!({"status": "success", "count": 2}));
    // The text is the fixed value's once a value changed.
    assert_eq!(fixed.text, r#"{"count":2,"status":"success"}"#);
    let off = Repairs::all().without(RepairKind::EnumCase);
    assert!(repair_answer(answer, Some(&status_contract()), off, &limits()).is_none());
    assert!(repair_answer(answer, Some(&status_contract()), Repairs::none(), &limits()).is_none());
    // An answer that needs nothing is not repaired; without a contract, syntax only.
    let clean = r#"{"status": "success", "count": 2}"#;
    assert!(repair_answer(clean, Some(&status_contract()), Repairs::all(), &limits()).is_none());
    let fixed = repair_answer("{a: 1}", None, Repairs::all(), &limits()).unwrap();
    assert_eq!(fixed.value, json!({"a": 1}));
    // A key twice after the fixes is refused as extraction refuses it.
    assert!(repair_answer("{a: 1, 'a': 2}", None, Repairs::all(), &limits()).is_none());
}

#[test]
fn a_call_is_repaired_in_its_order_with_its_reserved_keys() {
    let input = Contract::new(
        "probe",
        ContractKind::Input,
        json!({
            "type": "object",
            "required": ["url", "retries"],
            "properties": {
                "url": {"type": "string"},
                "retries": {"type": "integer"},
                "mode": {"enum": ["fast", "full"]},
                "extra": {}
            }
        }),
    )
    .unwrap();
    let kwargs = r#"{"task": "t", "run_identifier": "r", "url": "u", "extra": {"z": 1.50, "a": 2}, "context": {"retries": "2", "mode": "FAST"}}"#;
    let fixed = repair_kwargs(kwargs, &input, Repairs::all(), &limits()).unwrap();
    assert_eq!(
        fixed.text,
        r#"{"task":"t","run_identifier":"r","url":"u","extra":{"z": 1.50, "a": 2},"retries":2,"mode":"fast"}"#
    );
    // The context's values are walked in key order.
    assert_eq!(
        kinds(&fixed.repairs),
        [RepairKind::EnumCase, RepairKind::NumberString]
    );
    assert_eq!(fixed.repairs[1].path, "/retries");
    assert_eq!(fixed.value["mode"], "fast");
    // Syntax first: the call's whole text, nothing after it.
    let kwargs = "{task: 't', url: 'u', retries: 1,}";
    let fixed = repair_kwargs(kwargs, &input, Repairs::all(), &limits()).unwrap();
    assert_eq!(fixed.text, r#"{"task": "t", "url": "u", "retries": 1}"#);
    assert_eq!(fixed.repairs.len(), 6);
    assert!(
        repair_kwargs(
            "{task: 't', url: 'u', retries: 1} and more",
            &input,
            Repairs::all(),
            &limits()
        )
        .is_none()
    );
    // A missing required field stays missing.
    assert!(
        repair_kwargs(
            r#"{"task": "t", "url": "u"}"#,
            &input,
            Repairs::all(),
            &limits()
        )
        .is_none()
    );
}

#[test]
fn repairs_serialize_as_the_issue_names_them() {
    let repair = Repair::new(
        "/a".into(),
        RepairKind::EnumCase,
        "\"A\"",
        "\"a\"",
        &limits(),
    );
    assert_eq!(
        serde_json::to_value(&repair).unwrap(),
        json!({"path": "/a", "kind": "enum_case", "before": "\"A\"", "after": "\"a\""})
    );
    for kind in RepairKind::ALL {
        assert_eq!(serde_json::to_value(kind).unwrap(), json!(kind.as_str()));
        assert!(Repairs::all().allows(kind) && !Repairs::none().allows(kind));
        assert!(!Repairs::all().without(kind).allows(kind));
    }
    // Echoed text is cut to the echo bound.
    let long = "x".repeat(500);
    let repair = Repair::new(String::new(), RepairKind::Comment, &long, "", &limits());
    assert!(repair.before.len() <= limits().max_echo_bytes + 3);
}
