//! Real-world contracts: one minimal schema per construct that real tool specs use and the
//! codegen once refused or mistyped (`fixtures/realworld/`), and one per construct it still
//! refuses (`fixtures/realworld/refused/`).
//!
//! Each typed schema is derived here under `#![deny(warnings)]`, so its generated code is
//! warning-free; valid instances round-trip through the typed input; and a differential
//! check over generated instances holds the validator and the typed deserialization to one
//! verdict. Each refused schema's errors are compared with its `.errors` file (regenerate
//! with `UPDATE_GOLDEN=1`): every error names the file, `line:col` and what to change.
#![deny(warnings)]

use agent_contracts::{Agent, AgentInput, contract::PathSegment, contract::ToolCall};
use serde::Deserialize as _;
use serde::Serialize;
use serde_json::{Map, Value, json};
use std::path::{Path, PathBuf};

#[derive(Agent)]
#[agent(input = "fixtures/realworld/integer_float.schema.json")]
struct IntegerFloat;

/// The schemas that warn by design (dropped defaults, a node typed as any value): the derive
/// reports each warning at the schema's literal as a `deprecated` one, allowed here alone.
#[allow(deprecated)]
mod warned {
    use agent_contracts::Agent;

    #[derive(Agent)]
    #[agent(input = "fixtures/realworld/default_mismatch.schema.json")]
    pub(crate) struct DefaultMismatch;

    #[derive(Agent)]
    #[agent(input = "fixtures/realworld/typify_not.schema.json")]
    pub(crate) struct TypifyNot;
}
use warned::{DefaultMismatch, TypifyNot};

#[derive(Agent)]
#[agent(input = "fixtures/realworld/property_names.schema.json")]
struct PropertyNames;

#[derive(Agent)]
#[agent(input = "fixtures/realworld/enum_collisions.schema.json")]
struct EnumCollisions;

#[derive(Agent)]
#[agent(input = "fixtures/realworld/union_by_type.schema.json")]
struct UnionByType;

#[derive(Agent)]
#[agent(input = "fixtures/realworld/known_or_any_string.schema.json")]
struct KnownOrAnyString;

#[derive(Agent)]
#[agent(input = "fixtures/realworld/mixed_enum.schema.json")]
struct MixedEnum;

#[derive(Agent)]
#[agent(input = "fixtures/realworld/ref_with_type.schema.json")]
struct RefWithType;

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/realworld")
}

/// The `*.schema.json` files of a folder, sorted.
fn schemas(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("corpus folder")
        .map(|e| e.expect("folder entry").path())
        .filter(|p| p.to_string_lossy().ends_with(".schema.json"))
        .collect();
    files.sort();
    files
}

fn display(path: &Path) -> String {
    let relative = path
        .strip_prefix(env!("CARGO_MANIFEST_DIR"))
        .expect("under the crate");
    relative.display().to_string()
}

fn generate(
    path: &Path,
) -> Result<agent_contracts_codegen::GeneratedTypes, Vec<agent_contracts_codegen::SchemaError>> {
    let text = std::fs::read_to_string(path).expect("schema file");
    agent_contracts_codegen::generate_types(&text, &display(path), "Root")
}

#[test]
fn every_corpus_schema_is_typed() {
    for path in schemas(&corpus()) {
        if let Err(errors) = generate(&path) {
            panic!("{} refused: {errors:#?}", path.display());
        }
    }
}

/// Defaults that their own schema refuses are dropped with a warning each, located (in the
/// order of their property names).
#[test]
fn nonconforming_defaults_are_dropped_with_a_warning() {
    let generated = generate(&corpus().join("default_mismatch.schema.json")).unwrap();
    let warnings: Vec<String> = generated.warnings.iter().map(ToString::to_string).collect();
    let file = "fixtures/realworld/default_mismatch.schema.json";
    assert_eq!(
        warnings,
        [
            format!(
                "{file}:5:33: `default` null at `/properties/name` does not match its own schema: it is ignored (fix or remove it)"
            ),
            format!(
                "{file}:6:41: `default` \"N/A\" at `/properties/unit` does not match its own schema: it is ignored (fix or remove it)"
            ),
            format!(
                "{file}:4:37: `default` \"false\" at `/properties/verbose` does not match its own schema: it is ignored (fix or remove it)"
            ),
        ]
    );
}

/// What typify cannot type is typed as any value, with a located warning.
#[test]
fn what_typify_cannot_type_is_any_value_with_a_warning() {
    let generated = generate(&corpus().join("typify_not.schema.json")).unwrap();
    let warnings: Vec<String> = generated.warnings.iter().map(ToString::to_string).collect();
    assert_eq!(
        warnings,
        [
            "fixtures/realworld/typify_not.schema.json:5:5: typify cannot type the schema at `/properties/exclude`: it is typed as any JSON value (`RawJson`) and checked by the validator only (simplify it, or give it a plain `type`, to type it)"
        ]
    );
}

#[test]
fn refused_schemas_name_file_line_col_and_what_to_change() {
    for path in schemas(&corpus().join("refused")) {
        let errors = match generate(&path) {
            Ok(_) => panic!("{} was typed", path.display()),
            Err(errors) => errors,
        };
        for e in &errors {
            assert!(e.line_col.is_some(), "{e} has no line:col");
        }
        let actual: String = errors.iter().map(|e| format!("{e}\n")).collect();
        let expected_path = path.with_extension("").with_extension("errors");
        if std::env::var_os("UPDATE_GOLDEN").is_some() {
            std::fs::write(&expected_path, &actual).expect("write the expected errors");
            continue;
        }
        let expected = std::fs::read_to_string(&expected_path).unwrap_or_else(|e| {
            panic!(
                "{}: {e} (run with UPDATE_GOLDEN=1)",
                expected_path.display()
            )
        });
        assert_eq!(actual, expected, "{}", path.display());
    }
}

/// Checks and types `context` as a call of `A`, and returns the typed input serialized back.
fn typed<A: Agent>(context: &Value) -> Result<Value, agent_contracts::RetryError>
where
    A::Input: Serialize,
{
    let mut kwargs = Map::new();
    kwargs.insert("task".into(), json!("t"));
    kwargs.extend(context.as_object().expect("an object").clone());
    let call = ToolCall::from_json_str(
        &Value::Object(kwargs).to_string(),
        &agent_contracts::Limits::default(),
    )?;
    let input = A::Input::from_call(&call, &agent_contracts::Limits::default())?;
    Ok(serde_json::to_value(&input).expect("typed input serializes"))
}

/// Valid instances type and serialize back to themselves (integral floats as integers).
fn round_trips<A: Agent>(cases: &[(Value, Value)])
where
    A::Input: Serialize,
{
    for (context, expected) in cases {
        match typed::<A>(context) {
            Ok(back) => assert_eq!(&back, expected, "{}: {context}", A::NAME),
            Err(e) => panic!("{}: {context} refused: {}", A::NAME, e.to_json()),
        }
    }
}

#[test]
fn integral_floats_fill_integer_fields() {
    round_trips::<IntegerFloat>(&[
        (json!({"n": 5}), json!({"n": 5, "retries": 3})),
        (json!({"n": 5.0}), json!({"n": 5, "retries": 3})),
        (
            json!({"n": -2.0, "small": 7.0, "count": 1.0, "ids": [0, 1.0], "scores": {"a": 2.0},
                   "either": 4.0, "retries": 1.0}),
            json!({"n": -2, "small": 7, "count": 1, "ids": [0, 1], "scores": {"a": 2},
                   "either": 4, "retries": 1}),
        ),
        (
            json!({"n": 1, "either": "x"}),
            json!({"n": 1, "either": "x", "retries": 3}),
        ),
        // An integer `enum` is a newtype with its own `Deserialize`: it reads leniently too.
        (
            json!({"n": 1, "level": 2.0}),
            json!({"n": 1, "level": 2, "retries": 3}),
        ),
    ]);
    let refused = typed::<IntegerFloat>(&json!({"n": 1, "level": 3.0})).unwrap_err();
    assert_eq!(refused.path, [PathSegment::Key("level".into())]);
}

/// An integer the schema accepts but no 64-bit field holds is a retry error at its path.
#[test]
fn integers_beyond_64_bits_are_retry_errors_naming_the_path() {
    let context: Value = serde_json::from_str(r#"{"n": 123456789012345678901234567890}"#).unwrap();
    let error = typed::<IntegerFloat>(&context).unwrap_err();
    assert_eq!(error.path, [PathSegment::Key("n".into())]);
    assert_eq!(error.hint, "Please fix the invalid fields: n");
    let context: Value = serde_json::from_str(r#"{"n": 1, "ids": [1, 1e30]}"#).unwrap();
    let error = typed::<IntegerFloat>(&context).unwrap_err();
    assert_eq!(
        error.path,
        [PathSegment::Key("ids".into()), PathSegment::Index(1)]
    );
}

#[test]
fn other_corpus_schemas_round_trip() {
    round_trips::<DefaultMismatch>(&[
        (json!({}), json!({"tools": ["search"], "limit": 10})),
        (
            json!({"verbose": true, "name": "n", "unit": "milliseconds", "tools": [1], "limit": 2.0}),
            json!({"verbose": true, "name": "n", "unit": "milliseconds", "tools": [1], "limit": 2}),
        ),
    ]);
    let names = json!({"uuid": "u", "serde": "s", "chrono": "c", "regress": "r",
                       "serde_json": 1, "std": "x", "Option": "o", "self": "me"});
    round_trips::<PropertyNames>(&[(names.clone(), names)]);
    let enums = json!({"case": "aa", "op": "<", "reaction": "reactions--1", "vote": "+1"});
    round_trips::<EnumCollisions>(&[(enums.clone(), enums)]);
    round_trips::<UnionByType>(&[
        (json!({"scope": "all"}), json!({"scope": "all"})),
        (
            json!({"scope": {"workspace": true}}),
            json!({"scope": {"workspace": true}}),
        ),
    ]);
    round_trips::<KnownOrAnyString>(&[
        (json!({"model": "a"}), json!({"model": "a"})),
        (
            json!({"model": "other", "size": 2.5}),
            json!({"model": "other", "size": 2.5}),
        ),
    ]);
    round_trips::<MixedEnum>(&[
        (json!({"mode": "auto"}), json!({"mode": "auto"})),
        (
            json!({"mode": false, "level": 1}),
            json!({"mode": false, "level": 1}),
        ),
        (
            json!({"mode": true, "level": "max"}),
            json!({"mode": true, "level": "max"}),
        ),
    ]);
    round_trips::<TypifyNot>(&[(
        json!({"query": "q", "exclude": 5}),
        json!({"query": "q", "exclude": 5}),
    )]);
    round_trips::<RefWithType>(&[(
        json!({"filter": {"field": "f"}, "kind": "a"}),
        json!({"filter": {"field": "f"}, "kind": "a"}),
    )]);
}

/// Values the differential check puts in every property.
fn probes() -> Vec<Value> {
    let mut probes = vec![
        json!(5),
        json!(5.0),
        json!(-1),
        json!(0),
        json!(2.5),
        json!(1e30),
        json!(""),
        json!("x"),
        json!("auto"),
        json!("a"),
        json!("<"),
        json!("+1"),
        json!("aa"),
        json!("milliseconds"),
        json!(true),
        json!(false),
        json!(null),
        json!([]),
        json!([1, 2.0, "s"]),
        json!({}),
        json!({"a": 1.0, "field": "f", "workspace": true}),
    ];
    probes.push(serde_json::from_str("123456789012345678901234567890").unwrap());
    probes
}

/// The verdicts of the two stages agree: every instance the validator accepts deserializes,
/// except integers beyond 64 bits, which must be a retry error naming a path.
fn one_verdict<A: Agent>(base: &Value) {
    let contract = A::Input::input_contract();
    let properties: Vec<String> = contract.schema()["properties"]
        .as_object()
        .expect("properties")
        .keys()
        .cloned()
        .collect();
    let mut checked = 0;
    for name in &properties {
        for probe in probes() {
            let mut instance = base.clone();
            instance[name.as_str()] = probe;
            if contract
                .check(&instance, &agent_contracts::Limits::default())
                .is_err()
            {
                continue;
            }
            checked += 1;
            if let Err(e) = A::Input::deserialize(&instance) {
                let error =
                    contract.deserialize_error(&instance, &e, &agent_contracts::Limits::default());
                assert!(
                    !error.path.is_empty(),
                    "{}: the schema accepts {instance} but the type refuses it: {e}",
                    A::NAME
                );
            }
        }
    }
    assert!(checked > 0, "{}: no valid probe", A::NAME);
}

#[test]
fn validator_and_types_give_one_verdict() {
    one_verdict::<IntegerFloat>(&json!({"n": 1}));
    one_verdict::<DefaultMismatch>(&json!({}));
    one_verdict::<PropertyNames>(&json!({"uuid": "u"}));
    one_verdict::<EnumCollisions>(&json!({"op": "<"}));
    one_verdict::<UnionByType>(&json!({"scope": "s"}));
    one_verdict::<KnownOrAnyString>(&json!({"model": "m"}));
    one_verdict::<MixedEnum>(&json!({"mode": "auto"}));
    one_verdict::<RefWithType>(&json!({"filter": {}}));
    one_verdict::<TypifyNot>(&json!({}));
}
