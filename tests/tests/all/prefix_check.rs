//! The output contract checked while an answer streams (`Contract::prefix_check`).
//!
//! Soundness, as properties: for valid instances of every contract of `schemas/` (generated
//! from the schema, kept when the full check passes), written compact or pretty, alone, in a
//! ```json fence or after prose, no prefix is called broken, fed character by character or
//! in random chunks. Then each keyword a prefix decides, refused at the byte where it becomes
//! decidable (and not one byte before), and the plan generator's broken first answer closed
//! in its first 16-byte chunks.

use agent_contracts::{Contract, Limits, contract::ContractKind, contract::PathSegment};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

const SCHEMAS: [&str; 10] = [
    "accessibility_agent",
    "budget_agent",
    "catering_agent",
    "consolidation",
    "delegation",
    "discovery_agent",
    "logistics_agent",
    "plan_generator_agent",
    "selector_agent",
    "venue_agent",
];

fn contract_of(name: &str) -> (Contract, Value) {
    let path = format!(
        "{}/../schemas/{name}/output.schema.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(path).unwrap();
    let schema: Value = serde_json::from_str(&text).unwrap();
    let contract = Contract::new(name, ContractKind::Output, schema.clone()).unwrap();
    (contract, schema)
}

/// Values of `schema` (within `root`, for `$ref`s): mostly valid, which the test checks.
fn instance(root: &Value, schema: &Value, depth: u32) -> BoxedStrategy<Value> {
    if let Some(Value::String(r)) = schema.get("$ref") {
        let target = root.pointer(r.trim_start_matches('#')).unwrap().clone();
        return instance(root, &target, depth);
    }
    if let Some(value) = schema.get("const") {
        return Just(value.clone()).boxed();
    }
    if let Some(Value::Array(members)) = schema.get("enum") {
        return proptest::sample::select(members.clone()).boxed();
    }
    let ty = match schema.get("type") {
        Some(Value::Array(list)) => list[0].as_str().unwrap_or("null"),
        Some(Value::String(t)) => t.as_str(),
        _ => "any",
    };
    match ty {
        "object" => object(root, schema, depth),
        "array" => {
            let items = schema.get("items").cloned().unwrap_or(json!({}));
            let min = schema.get("minItems").and_then(Value::as_u64).unwrap_or(0) as usize;
            let max = schema
                .get("maxItems")
                .and_then(Value::as_u64)
                .map_or(min + 3, |m| m as usize);
            proptest::collection::vec(instance(root, &items, depth + 1), min..=max)
                .prop_map(Value::Array)
                .boxed()
        }
        "string" => string(schema),
        "integer" => {
            let min = schema.get("minimum").and_then(Value::as_i64).unwrap_or(-50);
            let max = schema
                .get("maximum")
                .and_then(Value::as_i64)
                .unwrap_or(min + 10_000);
            (min..=max).prop_map(Value::from).boxed()
        }
        "number" => {
            let min = schema
                .get("minimum")
                .and_then(Value::as_f64)
                .unwrap_or(-50.0);
            let max = schema
                .get("maximum")
                .and_then(Value::as_f64)
                .unwrap_or(min + 1e6);
            prop_oneof![
                (min..=max).prop_map(Value::from),
                ((min.ceil() as i64)..=(max.floor() as i64)).prop_map(Value::from),
            ]
            .boxed()
        }
        "boolean" => any::<bool>().prop_map(Value::Bool).boxed(),
        "null" => Just(Value::Null).boxed(),
        _ => prop_oneof![
            Just(json!({"k": [1, "x", null]})),
            Just(json!("text")),
            Just(json!(2.5))
        ]
        .boxed(),
    }
}

fn object(root: &Value, schema: &Value, depth: u32) -> BoxedStrategy<Value> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut fields: Vec<BoxedStrategy<Option<(String, Value)>>> = Vec::new();
    if let Some(Value::Object(props)) = schema.get("properties") {
        for (key, sub) in props {
            let key = key.clone();
            let value = instance(root, sub, depth + 1);
            let field = if required.contains(&key.as_str()) {
                value.prop_map(move |v| Some((key.clone(), v))).boxed()
            } else {
                proptest::option::of(value.prop_map(move |v| (key.clone(), v))).boxed()
            };
            fields.push(field);
        }
    }
    if let Some(extra @ Value::Object(_)) = schema.get("additionalProperties") {
        let value = instance(root, extra, depth + 1);
        fields.push(proptest::option::of(value.prop_map(|v| ("extra key".to_owned(), v))).boxed());
    }
    fields
        .prop_map(|fields| Value::Object(fields.into_iter().flatten().collect::<Map<_, _>>()))
        .boxed()
}

fn string(schema: &Value) -> BoxedStrategy<Value> {
    if let Some(Value::String(pattern)) = schema.get("pattern") {
        let pattern = pattern.trim_start_matches('^').trim_end_matches('$');
        return proptest::string::string_regex(pattern)
            .unwrap()
            .prop_map(Value::String)
            .boxed();
    }
    let min = schema.get("minLength").and_then(Value::as_u64).unwrap_or(0) as usize;
    let max = schema
        .get("maxLength")
        .and_then(Value::as_u64)
        .map_or(min + 12, |m| m as usize);
    let chars = proptest::sample::select(vec!['a', 'Z', ' ', '"', '\\', '\n', 'é', '😀', '`', '{']);
    proptest::collection::vec(chars, min..=max)
        .prop_map(|c| Value::String(c.into_iter().collect()))
        .boxed()
}

/// How an answer wraps its JSON.
fn wrap(json: &str, how: u8) -> String {
    match how % 4 {
        0 => json.to_owned(),
        1 => format!("  \n{json}\nThat is my answer."),
        2 => format!("Here is the plan:\n```json\n{json}\n```\n"),
        _ => format!("I think {{x}} is fine: {json} Done."),
    }
}

/// Feeds `answer` in the chunks `cuts` makes (byte positions, moved to char boundaries).
fn feed_in_chunks(
    contract: &Contract,
    answer: &str,
    cuts: &[usize],
) -> Result<(), agent_contracts::stream::Broken> {
    let mut check = contract.prefix_check(&Limits::default());
    let mut from = 0;
    let mut cuts: Vec<usize> = cuts
        .iter()
        .map(|&c| {
            let mut c = c % (answer.len() + 1);
            while !answer.is_char_boundary(c) {
                c += 1;
            }
            c
        })
        .collect();
    cuts.sort_unstable();
    for cut in cuts.into_iter().chain([answer.len()]) {
        check.feed(&answer[from..cut.max(from)])?;
        from = cut.max(from);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn no_prefix_of_a_valid_answer_is_called_broken(
        (name, value) in proptest::sample::select(SCHEMAS.to_vec()).prop_flat_map(|name| {
            let (_, schema) = contract_of(name);
            (Just(name), instance(&schema, &schema, 0))
        }),
        pretty in any::<bool>(),
        how in any::<u8>(),
        cuts in proptest::collection::vec(any::<usize>(), 0..12),
    ) {
        let (contract, _) = contract_of(name);
        let limits = Limits::default();
        prop_assume!(contract.check(&value, &limits).is_ok());
        let json = if pretty {
            serde_json::to_string_pretty(&value).unwrap()
        } else {
            serde_json::to_string(&value).unwrap()
        };
        let answer = wrap(&json, how);
        // The runtime takes this answer: the prefix check must agree at every prefix.
        let found = agent_contracts::contract::extract_json(&answer, &limits).unwrap();
        prop_assert!(contract.check(&found, &limits).is_ok());
        let mut check = contract.prefix_check(&limits);
        for (i, c) in answer.char_indices() {
            let piece = &answer[i..i + c.len_utf8()];
            prop_assert!(check.feed(piece).is_ok(), "{name}: broken at byte {i} of {answer}");
        }
        prop_assert!(feed_in_chunks(&contract, &answer, &cuts).is_ok());
    }
}

/// The byte at which `answer` is first called broken, fed one character at a time; checks
/// that the same prefix fed as one delta is broken too, and one byte less is not.
fn broken_at(schema: Value, answer: &str) -> agent_contracts::stream::Broken {
    let contract = Contract::new("t", ContractKind::Output, schema).unwrap();
    let limits = Limits::default();
    let mut check = contract.prefix_check(&limits);
    let broken = answer
        .char_indices()
        .find_map(|(i, c)| check.feed(&answer[i..i + c.len_utf8()]).err())
        .unwrap_or_else(|| panic!("never broken: {answer}"));
    let mut whole = contract.prefix_check(&limits);
    assert!(whole.feed(&answer[..broken.at]).is_ok());
    assert_eq!(whole.feed(&answer[broken.at..]).unwrap_err(), broken);
    // The full check agrees: the answer as a whole fails.
    let failed = agent_contracts::contract::extract_json(answer, &limits)
        .and_then(|value| contract.check(&value, &limits));
    assert!(failed.is_err(), "the full check passes {answer}");
    broken
}

/// The offset of the `n`th (0-based) occurrence of `needle` in `text`.
fn nth(text: &str, needle: &str, n: usize) -> usize {
    text.match_indices(needle).nth(n).unwrap().0
}

fn key(k: &str) -> PathSegment {
    PathSegment::Key(k.to_owned())
}

#[test]
fn a_value_of_the_wrong_type_is_refused_at_its_first_character() {
    let schema = json!({"type": "object", "properties": {"a": {"type": "string"}}});
    let answer = r#"{"a": [1, 2], "b": 1}"#;
    let broken = broken_at(schema, answer);
    assert_eq!(broken.at, nth(answer, "[", 0));
    assert_eq!(broken.error.path, [key("a")]);
    assert_eq!(
        broken.error.validation_message,
        r#"an array is not of type "string""#
    );
    assert_eq!(broken.error.error, "Output contract validation failed");
}

#[test]
fn an_enum_string_is_refused_at_the_first_character_no_member_starts_with() {
    let schema = json!({"type": "object", "properties": {
        "status": {"enum": ["success", "partial", "failed"], "description": "Outcome"}}});
    let answer = r#"{"status": "partly"}"#;
    let broken = broken_at(schema, answer);
    assert_eq!(broken.at, nth(answer, "l", 0));
    assert_eq!(
        broken.error.validation_message,
        r#""partl…" is not one of "success", "partial" or "failed""#
    );
    assert_eq!(
        broken.error.errors[0].description.as_deref(),
        Some("Outcome")
    );
    assert_eq!(broken.error.hint, "Please fix the invalid fields: status");
    // A member that is a prefix of another is not complete: only the closing quote decides.
    let schema = json!({"properties": {"s": {"enum": ["ab", "abc"]}}});
    let answer = r#"{"s": "a"}"#;
    assert_eq!(broken_at(schema, answer).at, nth(answer, "\"", 3));
}

#[test]
fn numbers_booleans_and_null_are_decided_when_complete() {
    let schema = json!({"properties": {"n": {"enum": [1, 2]}}});
    let answer = r#"{"n": 12}"#;
    assert_eq!(broken_at(schema.clone(), answer).at, nth(answer, "}", 0));
    // `1.0` is `1`, as JSON Schema compares numbers.
    let contract = Contract::new("t", ContractKind::Output, schema).unwrap();
    assert!(
        contract
            .prefix_check(&Limits::default())
            .feed(r#"{"n": 1.0}"#)
            .is_ok()
    );
    let schema = json!({"properties": {"b": {"const": true}}});
    let answer = r#"{"b": false}"#;
    let broken = broken_at(schema, answer);
    assert_eq!(broken.at, nth(answer, "e", 0));
    assert_eq!(
        broken.error.validation_message,
        "true was expected, not false"
    );
    let schema = json!({"properties": {"i": {"type": "integer", "minimum": 0}}});
    let answer = r#"{"i": 2.5, "j": 1}"#;
    let broken = broken_at(schema.clone(), answer);
    assert_eq!(broken.at, nth(answer, ",", 0));
    assert_eq!(
        broken.error.validation_message,
        r#"2.5 is not of type "integer""#
    );
    let answer = r#"{"i": -3}"#;
    assert_eq!(
        broken_at(schema, answer).error.validation_message,
        "-3 is less than the minimum of 0"
    );
    let schema = json!({"properties": {"z": {"type": "string"}}});
    let answer = r#"{"z": null}"#;
    assert_eq!(broken_at(schema, answer).at, nth(answer, "n", 0));
}

#[test]
fn a_string_past_its_max_length_is_refused_at_the_character_past_it() {
    // Characters, not bytes: `é` and an escaped pair count one each.
    let schema = json!({"properties": {"s": {"type": "string", "maxLength": 3}}});
    let answer = r#"{"s": "é\ud83d\ude00xy"}"#;
    let broken = broken_at(schema, answer);
    assert_eq!(broken.at, nth(answer, "y", 0));
    assert_eq!(
        broken.error.validation_message,
        "\"é😀xy…\" is longer than 3 characters"
    );
    let schema = json!({"properties": {"s": {"type": "string", "minLength": 2}}});
    let answer = r#"{"s": "a"}"#;
    let broken = broken_at(schema, answer);
    assert_eq!(broken.at, nth(answer, "\"", 3));
    assert_eq!(
        broken.error.validation_message,
        r#""a" is shorter than 2 characters"#
    );
}

#[test]
fn an_array_past_max_items_is_refused_at_the_extra_item() {
    let schema = json!({"properties": {"a": {"type": "array", "maxItems": 2, "minItems": 1}}});
    let answer = r#"{"a": [10, 20, 30]}"#;
    let broken = broken_at(schema.clone(), answer);
    assert_eq!(broken.at, nth(answer, "3", 0));
    assert_eq!(broken.error.path, [key("a")]);
    assert_eq!(broken.error.validation_message, "[…] has more than 2 items");
    let answer = r#"{"a": []}"#;
    assert_eq!(broken_at(schema, answer).at, nth(answer, "]", 0));
}

#[test]
fn a_forbidden_property_is_refused_when_its_key_closes() {
    let schema = json!({"type": "object", "properties": {"a": {}}, "additionalProperties": false});
    let answer = r#"{"a": 1, "extra": 2}"#;
    let broken = broken_at(schema, answer);
    assert_eq!(broken.at, nth(answer, "\"", 3));
    assert_eq!(broken.error.path, Vec::<PathSegment>::new());
    assert_eq!(
        broken.error.validation_message,
        "Additional properties are not allowed ('extra' was unexpected)"
    );
    assert_eq!(broken.error.provided_fields, ["a", "extra"]);
}

#[test]
fn a_required_field_skipped_is_refused_when_its_object_closes() {
    let schema = json!({"type": "object", "required": ["a", "b"],
        "properties": {"b": {"description": "The b"}}});
    let answer = r#"{"a": 1} and more"#;
    let broken = broken_at(schema, answer);
    assert_eq!(broken.at, nth(answer, "}", 0));
    assert_eq!(
        broken.error.validation_message,
        r#""b" is a required property"#
    );
    assert_eq!(broken.error.missing_fields, ["b"]);
    assert_eq!(broken.error.errors[0].description.as_deref(), Some("The b"));
    assert_eq!(broken.error.hint, "Please provide all required fields: b");
}

#[test]
fn const_nested_refs_and_any_of() {
    let schema = json!({
        "type": "object",
        "properties": {"items": {"type": "array", "items": {"$ref": "#/$defs/Item"}}},
        "$defs": {"Item": {"type": "object", "properties": {
            "v": {"const": "1.0.0"},
            "u": {"anyOf": [{"type": "string", "maxLength": 2}, {"type": "integer"}]}
        }}}
    });
    let answer = r#"{"items": [{"v": "1.0.0"}, {"v": "1.1.0"}]}"#;
    let broken = broken_at(schema.clone(), answer);
    assert_eq!(broken.at, nth(answer, "1.1", 0) + 2);
    assert_eq!(
        broken.error.path,
        [key("items"), PathSegment::Index(1), key("v")]
    );
    assert_eq!(
        broken.error.validation_message,
        r#""1.0.0" was expected, not "1.1…""#
    );
    // Either branch of `anyOf` keeps a value alive; none left is the verdict.
    let contract = Contract::new("t", ContractKind::Output, schema.clone()).unwrap();
    let mut check = contract.prefix_check(&Limits::default());
    assert!(
        check
            .feed(r#"{"items": [{"u": "ab"}, {"u": 12}, {"u": "#)
            .is_ok()
    );
    let answer = r#"{"items": [{"u": "ab"}, {"u": 1.5}]}"#;
    assert_eq!(broken_at(schema.clone(), answer).at, nth(answer, "}", 1));
    let answer = r#"{"items": [{"u": "abc"}]}"#;
    assert_eq!(broken_at(schema.clone(), answer).at, nth(answer, "c", 0));
    let answer = r#"{"items": [{"u": true}]}"#;
    assert_eq!(broken_at(schema, answer).at, nth(answer, "true", 0));
    // `oneOf` of closed objects: a key neither allows.
    let schema = json!({"oneOf": [
        {"type": "object", "properties": {"a": {}}, "additionalProperties": false},
        {"type": "object", "properties": {"b": {}}, "additionalProperties": false}
    ]});
    let answer = r#"{"a": 1, "b": 2}"#;
    assert_eq!(broken_at(schema, answer).at, nth(answer, "\"", 3));
}

#[test]
fn the_answer_is_found_as_extract_finds_it() {
    let schema = json!({"properties": {"s": {"enum": ["yes"]}}});
    // In a fence: checked as it streams.
    let answer = "Sure.\n```json\n{\"s\": \"no\"}\n```";
    assert_eq!(broken_at(schema.clone(), answer).at, nth(answer, "no", 0));
    // After a fence that holds no object: the next fence.
    let answer = "```sh\nls {x}\n```\n```json\n{\"s\": \"no\"}\n```";
    assert_eq!(broken_at(schema.clone(), answer).at, nth(answer, "no", 0));
    // In prose: a later fence could still hold the answer, so nothing is decided on the way.
    let contract = Contract::new("t", ContractKind::Output, schema).unwrap();
    let mut check = contract.prefix_check(&Limits::default());
    assert!(check.feed("I say {\"s\": \"no\"} and then ").is_ok());
    assert!(check.feed("```json\n{\"s\": \"yes\"}\n```").is_ok());
    let limits = Limits::default();
    let found = agent_contracts::contract::extract_json(
        "I say {\"s\": \"no\"} and then ```json\n{\"s\": \"yes\"}\n```",
        &limits,
    )
    .unwrap();
    assert_eq!(found, json!({"s": "yes"}));
    // Text after the object is not read.
    let mut check = contract.prefix_check(&Limits::default());
    assert!(
        check
            .feed("{\"s\": \"yes\"} {{{ \"s\": 5 ```json\n{\"s\": 1}")
            .is_ok()
    );
}

#[test]
fn the_answer_itself_broken_ends_the_stream() {
    let schema = json!({"type": "object"});
    // Not JSON.
    let answer = r#"{"a": 1, "b": tru }"#;
    let broken = broken_at(schema.clone(), answer);
    assert_eq!(broken.at, nth(answer, " }", 0));
    assert_eq!(broken.error.error, "Output contains no JSON object");
    // A key written twice: the full check would see the last value only.
    let answer = r#"{"a": 1, "a": 2}"#;
    let broken = broken_at(schema.clone(), answer);
    assert_eq!(broken.at, nth(answer, "\"", 3));
    assert_eq!(
        broken.error.validation_message,
        "the answer's JSON object has the key `a` more than once"
    );
    // Too deep, as `Limits::max_depth` counts.
    let answer = format!("{}1{}", "{\"a\":".repeat(65), "}".repeat(65));
    let broken = broken_at(schema.clone(), &answer);
    assert_eq!(broken.at, nth(&answer, "{", 64));
    assert_eq!(
        broken.error.error,
        "Input nesting exceeds the depth limit of 64"
    );
    // A number no `f64` holds.
    let answer = r#"{"n": 1e400}"#;
    let broken = broken_at(schema.clone(), answer);
    assert_eq!(broken.at, nth(answer, "}", 0));
    assert_eq!(broken.error.path, [key("n")]);
    // Past the size limit.
    let contract = Contract::new("t", ContractKind::Output, schema).unwrap();
    let limits = Limits::default().with_max_bytes(10);
    let mut check = contract.prefix_check(&limits);
    assert!(check.feed("{\"a\": ").is_ok());
    let broken = check.feed("\"long\"}").unwrap_err();
    assert_eq!(broken.at, 10);
    assert_eq!(
        broken.error.error,
        "Input of 13 bytes exceeds the size limit of 10 bytes"
    );
    // Every call after the verdict repeats it.
    assert_eq!(check.feed("").unwrap_err(), broken);
    assert_eq!(check.received(), 13);
}

/// The plan generator's answer in the main job, as the model writes it.
pub const PLAN_ANSWER: &str = r##"{
  "plan_file_path": "plans/login_form_automation.md",
  "status": "success",
  "agent_response_content": "Plan: open the login page, fill #email-input and #password-input (fallbacks: input[name='email'], form input:first-child), submit. Risk: the submit button label is vague (WCAG 2.4.6)."
}"##;

/// The story's first answer: the same plan with a status the contract does not know.
pub fn broken_plan_answer() -> String {
    PLAN_ANSWER.replace("\"success\"", "\"done\"")
}

fn plan_contract() -> &'static Contract {
    <agent_tests::PlanGeneratorAgent as agent_contracts::Agent>::output_contract().unwrap()
}

/// How many 16-byte chunks are fed before the verdict (`None`: never broken).
fn chunks_until_broken(answer: &str) -> (usize, Option<agent_contracts::stream::Broken>) {
    let mut check = plan_contract().prefix_check(&Limits::default());
    let chunks: Vec<&str> = answer
        .as_bytes()
        .chunks(16)
        .map(|c| std::str::from_utf8(c).unwrap())
        .collect();
    for (n, chunk) in chunks.iter().enumerate() {
        if let Err(broken) = check.feed(chunk) {
            return (n + 1, Some(broken));
        }
    }
    (chunks.len(), None)
}

#[test]
fn the_plan_generators_broken_first_answer_ends_in_its_first_chunks() {
    let (sent, verdict) = chunks_until_broken(PLAN_ANSWER);
    assert_eq!((sent, verdict), (PLAN_ANSWER.len().div_ceil(16), None));
    let answer = broken_plan_answer();
    let total = answer.len().div_ceil(16);
    let (sent, broken) = chunks_until_broken(&answer);
    let broken = broken.unwrap();
    assert_eq!(broken.at, nth(&answer, "\"done", 0) + 1);
    assert_eq!((sent, total), (5, 19));
    // The byte that decides comes before a quarter of the answer; the chunk it is in ends
    // just past it.
    assert!(broken.at * 4 < answer.len());
    assert_eq!(
        serde_json::to_value(&broken.error).unwrap(),
        json!({
            "success": false,
            "error": "Output contract validation failed",
            "validation_message": "\"d…\" is not one of \"success\", \"partial\" or \"failed\"",
            "path": ["status"],
            "required_fields": ["plan_file_path", "status", "agent_response_content"],
            "missing_fields": [],
            "provided_fields": ["plan_file_path", "status"],
            "hint": "Please fix the invalid fields: status",
            "errors": [{
                "path": ["status"],
                "message": "\"d…\" is not one of \"success\", \"partial\" or \"failed\"",
                "description": "Outcome of plan generation: 'success' when a complete plan was written, 'partial' when some steps lack selectors, 'failed' when no plan could be made"
            }]
        })
    );
    // The short broken answer of the scripted story: the empty path, at its closing quote.
    let answer = r#"{"plan_file_path": "", "status": "done"}"#;
    let (sent, broken) = chunks_until_broken(answer);
    assert_eq!((sent, broken.unwrap().at), (2, nth(answer, "\"\"", 0) + 1));
}
