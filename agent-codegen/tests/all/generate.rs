//! What `generate_types` returns for schemas it accepts.

use agent_contracts_codegen::{
    ContractKind, Property, TypeOptions, generate_types, generate_types_with,
};
use serde_json::json;

fn kitchen_sink() -> String {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/golden/kitchen_sink.schema.json"
    );
    std::fs::read_to_string(path).unwrap()
}

fn code(schema: &str, options: &TypeOptions) -> String {
    let generated = generate_types_with(schema, "test.schema.json", "Root", options)
        .unwrap_or_else(|errors| panic!("{errors:#?}"));
    generated.pretty().to_owned()
}

#[test]
fn output_is_deterministic() {
    let schema = kitchen_sink();
    let first = generate_types(&schema, "a.json", "KitchenSink").unwrap();
    for _ in 0..3 {
        let again = generate_types(&schema, "a.json", "KitchenSink").unwrap();
        assert_eq!(first.pretty(), again.pretty());
        assert_eq!(first.properties, again.properties);
    }
}

#[test]
fn properties_come_with_typify_field_names() {
    let generated = generate_types(&kitchen_sink(), "a.json", "KitchenSink").unwrap();
    assert_eq!(generated.root_name, "KitchenSink");
    let names: Vec<(&str, &str, bool)> = generated
        .properties
        .iter()
        .map(|p| (p.json_name.as_str(), p.rust_name.as_str(), p.required))
        .collect();
    assert_eq!(
        names,
        // In the order of the schema as a `serde_json::Value` holds it: sorted.
        [
            ("created_at", "created_at", false),
            ("labels", "labels", false),
            ("metadata", "metadata", false),
            ("mode", "mode", true),
            ("note", "note", false),
            // Not required even though the default makes it a plain `u64`.
            ("retries", "retries", false),
            ("run-id", "run_id", false),
            ("steps", "steps", true),
            ("type", "type_", true),
        ]
    );
    assert_eq!(
        generated.properties[8].description.as_deref(),
        Some("A Rust keyword as a property name.")
    );
    assert_eq!(generated.properties[3].description, None);
}

#[test]
fn required_properties_without_schema_are_listed_last() {
    let schema = json!({
        "type": "object",
        "required": ["b", "free"],
        "properties": { "b": { "type": "string" }, "a": { "type": "integer" }, "gone": false },
        // `free` is meant to be any value, not a typo of a declared property.
        "x-undeclared-required": true
    });
    let generated = generate_types(&schema.to_string(), "a.json", "Root").unwrap();
    // Properties in the order the schema's `Value` holds them (sorted), then the rest.
    let expected = [("a", false), ("b", true), ("free", true)].map(|(name, required)| Property {
        json_name: name.into(),
        rust_name: name.into(),
        required,
        description: None,
    });
    assert_eq!(generated.properties, expected);
}

#[test]
fn a_root_map_has_no_properties() {
    let schema = json!({ "type": "object", "additionalProperties": { "type": "string" } });
    let generated = generate_types(&schema.to_string(), "a.json", "Root").unwrap();
    assert!(generated.properties.is_empty());
}

/// Counts of `<crate>::` against `__private::<crate>::`, which must match.
fn assert_all_rerouted(code: &str) {
    for krate in ["serde", "serde_json", "regress"] {
        let all = code.matches(&format!(" {krate}::")).count()
            + code.matches(&format!(":{krate}::")).count();
        let rerouted = code.matches(&format!("__private::{krate}::")).count();
        // Untyped parts are the runtime's `RawJson`/`RawObject`: no `serde_json` path is left.
        assert!(
            rerouted > 0 || krate == "serde_json",
            "no `{krate}` path in:\n{code}"
        );
        assert_eq!(all, rerouted, "direct `{krate}` path in:\n{code}");
    }
    assert!(
        !code.contains("::chrono") && !code.contains("::uuid"),
        "{code}"
    );
}

#[test]
fn crate_paths_go_through_the_runtime() {
    let code = code(&kitchen_sink(), &TypeOptions::default());
    assert_all_rerouted(&code);
    assert!(code.contains("<D::Error as ::agent_contracts::__private::serde::de::Error>::custom"));
    assert!(
        code.contains(
            r#"skip_serializing_if = "::agent_contracts::__private::RawObject::is_empty""#
        )
    );
    // Every serde-derived item says where serde is.
    let derives = code.matches("__private::serde::Serialize,").count();
    let crate_attrs = code
        .matches(r#"#[serde(crate = "::agent_contracts::__private::serde")]"#)
        .count();
    assert_eq!(derives, crate_attrs);
}

#[test]
fn the_runtime_path_is_a_parameter() {
    let options = TypeOptions {
        kind: ContractKind::Output,
        runtime: syn::parse_quote!(crate::rt),
    };
    let code = code(&kitchen_sink(), &options);
    assert!(!code.contains("agent_contracts"), "{code}");
    assert!(
        code.contains(r#"#[serde(crate = "crate::rt::__private::serde")]"#),
        "{code}"
    );
    assert!(
        code.contains("crate::rt::__private::regress::Regex::new"),
        "{code}"
    );
}

#[test]
fn date_formats_stay_strings() {
    let schema = json!({
        "type": "object",
        "required": ["a", "b", "c"],
        "properties": {
            "a": { "type": "string", "format": "date-time" },
            "b": { "type": "string", "format": "date" },
            "c": { "type": "string", "format": "uuid" }
        }
    });
    let code = code(&schema.to_string(), &TypeOptions::default());
    assert!(code.contains("pub a: ::std::string::String,"), "{code}");
    assert!(code.contains("pub c: ::std::string::String,"), "{code}");
}

#[test]
fn maps_are_sorted() {
    let schema = json!({
        "type": "object",
        "properties": { "m": { "type": "object", "additionalProperties": { "type": "integer" } } }
    });
    let code = code(&schema.to_string(), &TypeOptions::default());
    assert!(
        code.contains("::std::collections::BTreeMap<::std::string::String, i64>"),
        "{code}"
    );
}

#[test]
fn what_typify_cannot_type_is_any_value_with_a_warning() {
    // No rule covers `not` (typify handles some forms); this one panics it.
    let schema =
        json!({ "type": "object", "properties": { "v": { "not": { "type": "string" } } } });
    let generated = generate_types(&schema.to_string(), "a.json", "Root").unwrap();
    let code = generated.pretty();
    assert!(
        code.contains("pub v: ::std::option::Option<::agent_contracts::__private::RawJson>"),
        "{code}"
    );
    // Located at the smallest schema typify fails on.
    assert_eq!(generated.warnings.len(), 1);
    let warning = &generated.warnings[0];
    assert_eq!(warning.pointer, "/properties/v");
    assert_eq!(warning.line_col, Some((1, 16)));
    assert_eq!(
        warning.message,
        "typify cannot type the schema at `/properties/v`: it is typed as any JSON value (`RawJson`) and checked by the validator only (simplify it, or give it a plain `type`, to type it)"
    );
}

#[test]
fn a_root_typify_cannot_type_is_refused_at_the_root() {
    let schema = json!({ "type": "object", "not": { "required": ["a"] } });
    let errors = generate_types(&schema.to_string(), "a.json", "Root").unwrap_err();
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].pointer, "");
    assert_eq!(errors[0].line_col, Some((1, 1)));
    assert!(
        errors[0]
            .message
            .starts_with("typify cannot type the schema at `#`"),
        "{errors:#?}"
    );
}

#[test]
fn media_fields_of_an_input_are_media_values() {
    let schema =
        include_str!("../../../tests/fixtures/media/invoice_reader_agent/input.schema.json");
    let input = code(schema, &TypeOptions::default());
    // Required inline media, an optional URL, and a plain string left alone.
    assert!(
        input.contains("pub screenshot: ::agent_contracts::__private::MediaInput,"),
        "{input}"
    );
    assert!(input.contains("pub invoice: ::agent_contracts::__private::MediaInput,"));
    assert!(
        input.contains(
            "pub receipt: ::std::option::Option<::agent_contracts::__private::MediaInput>,"
        ),
        "{input}"
    );
    assert!(input.contains("pub customer: ::std::option::Option<::std::string::String>,"));
    // An output contract's strings stay strings.
    let output = TypeOptions {
        kind: ContractKind::Output,
        ..TypeOptions::default()
    };
    assert!(!code(schema, &output).contains("MediaInput"));
    // In the order the contract writes them, whatever the parsed schema's order.
    let fields: Vec<String> = agent_contracts_codegen::media_properties(schema)
        .into_iter()
        .map(|(name, accepts, inline)| format!("{name} {accepts} {inline}"))
        .collect();
    assert_eq!(
        fields,
        [
            "screenshot image/png true",
            "invoice application/pdf true",
            "receipt image/* false"
        ]
    );
}

#[test]
fn a_media_field_with_string_constraints_is_refused() {
    let schema = r#"{
  "type": "object",
  "properties": {
    "shot": {"type": "string", "contentEncoding": "base64", "contentMediaType": "image/png", "maxLength": 100}
  }
}"#;
    let errors = generate_types_with(schema, "test.schema.json", "Root", &TypeOptions::default())
        .expect_err("refused");
    let text = errors[0].to_string();
    assert!(
        text.contains("media field `shot` must be a plain string"),
        "{text}"
    );
    assert!(text.starts_with("test.schema.json:4:5: "), "{text}");
}
