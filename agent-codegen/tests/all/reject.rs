//! Each rejection rule, on the smallest schema that triggers it, plus the
//! accepted look-alikes that must keep working.

use agent_contracts_codegen::{
    ContractKind, SchemaError, TypeOptions, generate_types, generate_types_with,
};
use serde_json::{Value, json};

/// Wraps `property` as the root's only (required) property `x`.
fn with_property(property: Value) -> Value {
    json!({ "type": "object", "required": ["x"], "properties": { "x": property } })
}

fn errors(schema: &Value) -> Vec<SchemaError> {
    let text = serde_json::to_string_pretty(schema).unwrap();
    match generate_types(&text, "test.schema.json", "Root") {
        Ok(_) => panic!("schema was accepted: {text}"),
        Err(errors) => errors,
    }
}

/// Asserts exactly one error, at `pointer`, whose message contains `needle`.
fn rejects(schema: Value, pointer: &str, needle: &str) {
    let errors = errors(&schema);
    assert_eq!(errors.len(), 1, "{errors:#?}");
    assert_eq!(errors[0].pointer, pointer, "{errors:#?}");
    assert!(errors[0].message.contains(needle), "{errors:#?}");
}

fn accepts(schema: Value) {
    let text = serde_json::to_string_pretty(&schema).unwrap();
    if let Err(errors) = generate_types(&text, "test.schema.json", "Root") {
        panic!("schema was rejected: {errors:#?}");
    }
}

#[test]
fn conditions_narrow_the_typed_node() {
    // `if`/`then`/`else` and `contains` narrow values the rest of the node shapes: the type is
    // built without them and the validator enforces them.
    let schema = with_property(json!({
        "type": "object",
        "properties": {
            "a": { "type": "string" },
            "b": { "type": "integer" },
            "tags": { "type": "array", "items": { "type": "string" }, "contains": { "const": "x" }, "maxContains": 2 }
        },
        "if": { "properties": { "a": { "const": "k" } } },
        "then": { "required": ["b"], "properties": { "b": { "minimum": 1 } } },
        "else": { "required": ["a"] },
        "allOf": [{ "if": { "required": ["b"] }, "then": { "properties": { "a": { "maxLength": 3 } } } }]
    }));
    accepts(schema);
    // A property only a branch declares would be dropped by the type: refused.
    let schema = with_property(json!({
        "type": "object",
        "properties": { "a": { "type": "string" } },
        "if": { "properties": { "a": { "const": "k" } } },
        "then": { "required": ["b"], "properties": { "b": { "type": "integer" } } }
    }));
    let errors = errors(&schema);
    let pointers: Vec<&str> = errors.iter().map(|e| e.pointer.as_str()).collect();
    assert_eq!(pointers, ["/properties/x/then/properties/b"]);
    assert_eq!(
        errors[0].message,
        "`b` is declared only by the `then` at `/properties/x`: declare it in the `properties` of `/properties/x` too, since the Rust type is built from those and a property only a condition names would be dropped"
    );
}

#[test]
fn unsupported_keywords() {
    let cases = [
        (
            "prefixItems",
            json!({ "type": "array", "prefixItems": [{ "type": "string" }] }),
        ),
        (
            "unevaluatedProperties",
            json!({ "type": "object", "unevaluatedProperties": false }),
        ),
        (
            "unevaluatedItems",
            json!({ "type": "array", "unevaluatedItems": false }),
        ),
        (
            "dependentSchemas",
            json!({ "type": "object", "dependentSchemas": { "a": {} } }),
        ),
        ("$dynamicRef", json!({ "$dynamicRef": "#node" })),
        (
            "$dynamicAnchor",
            json!({ "type": "string", "$dynamicAnchor": "node" }),
        ),
    ];
    for (keyword, property) in cases {
        rejects(
            with_property(property),
            &format!("/properties/x/{keyword}"),
            &format!("unsupported schema keyword `{keyword}` at `/properties/x`"),
        );
    }
}

#[test]
fn keyword_names_used_as_property_names_are_data() {
    // A property called `if` is not the `if` keyword.
    accepts(json!({
        "type": "object",
        "properties": { "if": { "type": "string" }, "contains": { "type": "integer" } },
        "default": { "if": 1 }
    }));
}

#[test]
fn schema_valued_dependencies() {
    rejects(
        with_property(json!({ "type": "object", "dependencies": { "a": { "required": ["b"] } } })),
        "/properties/x/dependencies",
        "`dependencies` with schema values",
    );
    // The array form only constrains presence: the Option fields stay right.
    accepts(with_property(json!({
        "type": "object",
        "properties": { "a": { "type": "string" }, "b": { "type": "string" } },
        "dependencies": { "a": ["b"] },
        "dependentRequired": { "b": ["a"] }
    })));
}

#[test]
fn external_ref() {
    rejects(
        with_property(json!({ "$ref": "https://example.com/thing.json" })),
        "/properties/x/$ref",
        "external `$ref` `https://example.com/thing.json` at `/properties/x` is not supported: contracts are self-contained; copy the schema into `$defs`",
    );
    rejects(
        with_property(json!({ "$ref": "other.json#/$defs/a" })),
        "/properties/x/$ref",
        "external `$ref`",
    );
}

#[test]
fn local_refs_must_name_a_definition() {
    let deep = json!({
        "type": "object",
        "properties": { "x": { "$ref": "#/$defs/a/properties/b" } },
        "$defs": { "a": { "type": "object", "properties": { "b": { "type": "string" } } } }
    });
    rejects(
        deep,
        "/properties/x/$ref",
        "must point directly at a definition",
    );
    rejects(
        with_property(json!({ "$ref": "#/$defs/missing" })),
        "/properties/x/$ref",
        "points at a missing definition",
    );
    rejects(
        with_property(json!({ "$ref": "#anchor" })),
        "/properties/x/$ref",
        "must point directly at a definition",
    );
}

#[test]
fn accepted_refs() {
    accepts(json!({
        "type": "object",
        "properties": {
            "a": { "$ref": "#/$defs/A", "description": "sibling keywords are fine" },
            "b": { "$ref": "#/definitions/B" },
            "c": { "$ref": "#/$defs/with~1slash" },
            "me": { "$ref": "#" }
        },
        "$defs": {
            "A": { "type": "string", "enum": ["p", "q"] },
            "with/slash": { "type": "integer" }
        },
        "definitions": { "B": { "type": "boolean" } }
    }));
}

#[test]
fn nested_id() {
    rejects(
        with_property(json!({ "$id": "https://example.com/x", "type": "string" })),
        "/properties/x/$id",
        "nested `$id` at `/properties/x`",
    );
}

#[test]
fn pattern_properties_next_to_properties() {
    rejects(
        json!({
            "type": "object",
            "properties": { "a": { "type": "string" } },
            "patternProperties": { "^x-": { "type": "integer" } }
        }),
        "/patternProperties",
        "`patternProperties` at `#` is only supported alone",
    );
    // Without `additionalProperties: false` typify's key check is stricter
    // than the schema.
    rejects(
        with_property(
            json!({ "type": "object", "patternProperties": { "^x-": { "type": "integer" } } }),
        ),
        "/properties/x/patternProperties",
        "is only supported alone",
    );
    accepts(with_property(json!({
        "type": "object",
        "patternProperties": { "^x-": { "type": "integer" } },
        "additionalProperties": false
    })));
}

#[test]
fn open_tuple_items() {
    let tuple = |extra: Value| {
        let mut schema =
            json!({ "type": "array", "items": [{ "type": "string" }, { "type": "integer" }] });
        schema
            .as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        with_property(schema)
    };
    rejects(
        tuple(json!({})),
        "/properties/x/items",
        "tuple-form `items`",
    );
    // Array-form `items` is a draft-07 keyword: legal where the schema says so...
    let mut closed = tuple(json!({ "minItems": 2, "maxItems": 2 }));
    closed["$schema"] = json!("http://json-schema.org/draft-07/schema#");
    accepts(closed);
    // ...and refused under draft 2020-12 by the runtime's own validator, which the codegen
    // runs too, so the contract cannot fail on its first use.
    let errors = errors(&tuple(json!({ "minItems": 2, "maxItems": 2 })));
    assert_eq!(errors.len(), 1, "{errors:#?}");
    // Located at the keyword the validator refused, and said as such.
    assert_eq!(errors[0].pointer, "/properties/x/items", "{errors:#?}");
    assert!(
        errors[0]
            .message
            .starts_with("`items` at `/properties/x` is not valid JSON Schema: "),
        "{errors:#?}"
    );
}

#[test]
fn mixed_type_enum() {
    // Typed by the JSON types of its values (an untagged enum); the validator keeps the values.
    accepts(with_property(json!({ "enum": ["a", 1] })));
    accepts(with_property(json!({ "enum": [true, false, "auto"] })));
    accepts(with_property(json!({ "enum": ["a", "b", null] })));
}

#[test]
fn colliding_field_names() {
    rejects(
        json!({ "type": "object", "properties": { "a-b": { "type": "string" }, "a_b": { "type": "integer" } } }),
        "/properties/a_b",
        "properties `a-b` and `a_b` at `#` both become the Rust field `a_b`",
    );
    rejects(
        json!({
            "type": "object",
            "properties": { "extra": { "type": "string" } },
            "additionalProperties": { "type": "integer" }
        }),
        "/properties/extra",
        "properties `additionalProperties` and `extra`",
    );
}

fn tagged(kind_a: Value, kind_b: Value, required: Value) -> Value {
    with_property(json!({ "oneOf": [
        { "type": "object", "required": required.clone(),
          "properties": { "kind": kind_a, "a": { "type": "string" } } },
        { "type": "object", "required": required,
          "properties": { "kind": kind_b, "b": { "type": "integer" } } }
    ]}))
}

#[test]
fn const_discriminated_one_of() {
    // Integer tags: typify falls back to an untagged enum.
    rejects(
        tagged(
            json!({ "const": 1 }),
            json!({ "const": 2 }),
            json!(["kind"]),
        ),
        "/properties/x/oneOf",
        "`oneOf` at `/properties/x` tells its branches apart by `const` values",
    );
    // Tag not required: same.
    rejects(
        tagged(json!({ "const": "A" }), json!({ "const": "B" }), json!([])),
        "/properties/x/oneOf",
        "tells its branches apart",
    );
    // Same tag value twice.
    rejects(
        tagged(
            json!({ "const": "A" }),
            json!({ "const": "A" }),
            json!(["kind"]),
        ),
        "/properties/x/oneOf",
        "tells its branches apart",
    );
    // Branches through `$ref`: typify makes an untagged enum of the structs.
    rejects(
        json!({
            "type": "object",
            "properties": { "x": { "oneOf": [{ "$ref": "#/$defs/A" }, { "$ref": "#/$defs/B" }] } },
            "$defs": {
                "A": { "type": "object", "required": ["kind"], "properties": { "kind": { "const": "A" } } },
                "B": { "type": "object", "required": ["kind"], "properties": { "kind": { "const": "B" } } }
            }
        }),
        "/properties/x/oneOf",
        "tells its branches apart",
    );
}

#[test]
fn string_tagged_one_of_becomes_a_tagged_enum() {
    for (a, b) in [
        (json!({ "const": "A" }), json!({ "const": "B" })),
        (
            json!({ "type": "string", "enum": ["A"] }),
            json!({ "type": "string", "enum": ["B"] }),
        ),
    ] {
        let text = tagged(a, b, json!(["kind"])).to_string();
        let generated = generate_types(&text, "test.schema.json", "Root").unwrap();
        let code = generated.pretty();
        assert!(code.contains(r#"#[serde(tag = "kind")]"#), "{code}");
    }
}

#[test]
fn overlapping_any_of() {
    rejects(
        with_property(json!({ "anyOf": [
            { "type": "array", "items": { "type": "string" } },
            { "type": "array", "items": { "type": "integer" } }
        ] })),
        "/properties/x/anyOf",
        "`anyOf` at `/properties/x` has several branches of type `array`",
    );
    // Overlapping scalar branches are typed by the union of their types.
    accepts(with_property(
        json!({ "anyOf": [{ "type": "string", "format": "uri" }, { "type": "string", "minLength": 3 }] }),
    ));
    accepts(with_property(
        json!({ "anyOf": [{ "type": "integer" }, { "type": "number" }] }),
    ));
    // Distinct types, nullable, objects: typify types these faithfully.
    accepts(with_property(
        json!({ "anyOf": [{ "type": "string" }, { "type": "integer" }] }),
    ));
    accepts(with_property(
        json!({ "anyOf": [{ "type": "string" }, { "type": "null" }] }),
    ));
    accepts(with_property(json!({ "anyOf": [
        { "type": "object", "properties": { "a": { "type": "string" } } },
        { "type": "object", "properties": { "b": { "type": "string" } } }
    ]})));
}

#[test]
fn conflicting_type_names() {
    let schema = json!({
        "type": "object",
        "properties": {
            "a": { "title": "Item", "type": "object", "properties": { "x": { "type": "string" } } },
            "b": { "title": "item", "type": "object", "properties": { "y": { "type": "integer" } } },
            "c": { "$ref": "#/$defs/Root" }
        },
        "$defs": { "Root": { "type": "object", "properties": { "z": { "type": "string" } } } }
    });
    let errors = errors(&schema);
    let messages: Vec<&str> = errors.iter().map(|e| e.message.as_str()).collect();
    assert_eq!(
        messages,
        [
            "definition `Root` at `/$defs/Root` and the root type both become the Rust type `Root`: typify would merge the two different schemas into one type; rename one of them",
            "title `item` at `/properties/b` and title `Item` at `/properties/a` both become the Rust type `Item`: typify would merge the two different schemas into one type; rename one of them",
        ]
    );
    // A title on a plain property schema names no type.
    accepts(json!({
        "type": "object",
        "properties": {
            "a": { "title": "Name", "type": "string" },
            "b": { "title": "Name", "type": "integer" }
        }
    }));
}

#[test]
fn root_must_be_an_object() {
    for schema in [
        json!({ "type": "array" }),
        json!(true),
        json!({ "properties": {} }),
    ] {
        rejects(schema, "", "schema root must be an object type");
    }
}

#[test]
fn reserved_keys_in_input_contracts() {
    let schema = json!({
        "type": "object",
        "required": ["task", "run_identifier"],
        "properties": { "task": { "type": "string" }, "context": { "type": "string" } },
        // `run_identifier` is meant to be any value (an output contract may hold it).
        "x-undeclared-required": true
    });
    let errors = errors(&schema);
    let pointers: Vec<&str> = errors.iter().map(|e| e.pointer.as_str()).collect();
    assert_eq!(
        pointers,
        ["/properties/context", "/properties/task", "/required/1"]
    );
    assert_eq!(
        errors[1].message,
        "property `task` at `/properties/task` is reserved in input contracts: the tool call itself uses that key; rename the property"
    );

    // Output contracts may use them.
    let options = TypeOptions {
        kind: ContractKind::Output,
        ..TypeOptions::default()
    };
    let generated = generate_types_with(&schema.to_string(), "out.json", "Root", &options).unwrap();
    assert_eq!(generated.properties.len(), 3);
}

#[test]
fn root_name_must_be_a_type_name() {
    let schema = json!({ "type": "object" }).to_string();
    for name in ["root", "My Root", "Self", ""] {
        let errors = generate_types(&schema, "x.json", name).unwrap_err();
        assert!(
            errors[0]
                .message
                .contains("is not a PascalCase Rust identifier"),
            "{errors:#?}"
        );
    }
}

#[test]
fn all_problems_are_reported_together() {
    let text = r#"{
  "type": "object",
  "properties": {
    "task": { "type": "string" },
    "x": { "type": "array", "unevaluatedItems": false },
    "y": { "$ref": "https://example.com/y.json" },
    "z": { "type": "array", "prefixItems": [] }
  }
}"#;
    let errors = generate_types(text, "input.schema.json", "Root").unwrap_err();
    let shown: Vec<String> = errors.iter().map(ToString::to_string).collect();
    assert_eq!(
        shown,
        [
            "input.schema.json:4:5: property `task` at `/properties/task` is reserved in input contracts: the tool call itself uses that key; rename the property",
            "input.schema.json:5:29: unsupported schema keyword `unevaluatedItems` at `/properties/x`: typify ignores it, so the Rust type would not match the schema; use `additionalProperties` or `items` instead",
            "input.schema.json:6:12: external `$ref` `https://example.com/y.json` at `/properties/y` is not supported: contracts are self-contained; copy the schema into `$defs`",
            "input.schema.json:7:29: unsupported schema keyword `prefixItems` at `/properties/z`: typify ignores it and types the array as `Vec<serde_json::Value>`; use `items` with one schema, or tuple-form `items` with equal `minItems` and `maxItems`",
        ]
    );
}

#[test]
fn invalid_json_points_at_the_text() {
    let text = "{\n  \"type\": \"object\"\n  \"properties\": {}\n}";
    let errors = generate_types(text, "bad.json", "Root").unwrap_err();
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].line_col, Some((3, 3)));
    assert_eq!(
        errors[0].to_string(),
        "bad.json:3:3: invalid JSON: expected `,` or `}` (near `\"properties\": {}`)"
    );
}

fn nested_arrays(levels: usize) -> Value {
    let mut schema = json!({ "type": "string" });
    for _ in 0..levels {
        schema = json!({ "type": "array", "items": schema });
    }
    with_property(schema)
}

#[test]
fn deep_schemas_do_not_overflow_the_stack() {
    // 60 levels need about 3.5 MiB of stack in typify: more than a test
    // thread has, so this also checks that typify runs on its own thread.
    accepts(nested_arrays(60));
    let errors = errors(&nested_arrays(70));
    assert_eq!(errors.len(), 1, "{errors:#?}");
    assert!(
        errors[0].message.ends_with("is deeper than 64 levels"),
        "{errors:#?}"
    );
    // serde_json refuses documents nested past 128 arrays or objects.
    let deep = format!("{}1{}", "[".repeat(1000), "]".repeat(1000));
    let errors = generate_types(&deep, "deep.json", "Root").unwrap_err();
    assert!(
        errors[0]
            .message
            .starts_with("invalid JSON: recursion limit exceeded"),
        "{errors:#?}"
    );
}

#[test]
fn display_without_position() {
    let error = SchemaError::new("a.json", "/properties/x", "boom");
    assert_eq!(error.to_string(), "a.json (at /properties/x): boom");
    assert_eq!(
        SchemaError::new("a.json", "", "boom").to_string(),
        "a.json: boom"
    );
}

#[test]
fn patterns_the_linear_engine_cannot_run() {
    rejects(
        with_property(json!({ "type": "string", "pattern": "^(a)\\1$" })),
        "/properties/x/pattern",
        "not supported by the linear-time regex engine",
    );
    rejects(
        with_property(json!({ "type": "string", "pattern": "^(?=a)a$" })),
        "/properties/x/pattern",
        "not supported by the linear-time regex engine",
    );
    accepts(with_property(
        json!({ "type": "string", "pattern": "^(a+)+$" }),
    ));
}

/// A contract lint: a `pattern` (or a `patternProperties` key) that is not a regular
/// expression at all is refused at its keyword, with the parser's reason, not as something
/// the engine leaves out.
#[test]
fn patterns_that_do_not_compile() {
    for (pattern, reason) in [
        ("[a-z", "unclosed character class"),
        ("^(ab$", "unclosed group"),
        ("a{2,1}", "invalid repetition count range"),
    ] {
        let schema = with_property(json!({ "type": "string", "pattern": pattern }));
        let errors = errors(&schema);
        assert_eq!(errors.len(), 1, "{errors:#?}");
        assert_eq!(errors[0].pointer, "/properties/x/pattern");
        let expected = format!(
            "pattern `{pattern}` at `/properties/x/pattern` does not compile as a regular expression: error: {reason}"
        );
        assert!(errors[0].message.starts_with(&expected), "{errors:#?}");
    }
    let schema = with_property(json!({
        "type": "object",
        "patternProperties": { "^(x": { "type": "string" } },
        "additionalProperties": false
    }));
    let errors = errors(&schema);
    assert_eq!(errors.len(), 1, "{errors:#?}");
    assert_eq!(errors[0].pointer, "/properties/x/patternProperties/^(x");
    assert!(
        errors[0]
            .message
            .contains("does not compile as a regular expression: error: unclosed group"),
        "{errors:#?}"
    );
}

/// A `$defs` node whose branches overlap and that refers back to itself through them.
fn recursive_overlap(keyword: &str, second: Value) -> Value {
    json!({
        "type": "object",
        "required": ["x"],
        "properties": { "x": { "$ref": "#/$defs/node" } },
        "$defs": {
            "node": {
                keyword: [
                    {
                        "type": "object",
                        "properties": { "child": { "$ref": "#/$defs/node" } }
                    },
                    second
                ]
            }
        }
    })
}

#[test]
fn recursive_overlapping_combinators() {
    for keyword in ["anyOf", "oneOf"] {
        // Both branches accept objects.
        rejects(
            recursive_overlap(keyword, json!({ "type": "object", "required": ["leaf"] })),
            &format!("/$defs/node/{keyword}"),
            &format!(
                "`{keyword}` at `/$defs/node` has overlapping branches (several may accept `object`) and refers back to itself"
            ),
        );
        // A branch that says nothing about its type may accept anything.
        rejects(
            recursive_overlap(keyword, json!({ "description": "anything" })),
            &format!("/$defs/node/{keyword}"),
            "exponential in the depth",
        );
        // Disjoint branches (an object or a string) are fine, and so is the null of an
        // optional recursion (which typify happens to refuse for another reason).
        accepts(recursive_overlap(keyword, json!({ "type": "string" })));
        let text = recursive_overlap(keyword, json!({ "type": "null" })).to_string();
        if let Err(errors) = generate_types(&text, "test.schema.json", "Root") {
            assert!(
                errors
                    .iter()
                    .all(|e| !e.message.contains("overlapping branches")),
                "{errors:#?}"
            );
        }
    }
}

#[test]
fn recursion_through_another_definition_and_arrays() {
    // node -> anyOf branch -> items -> $ref list -> oneOf branch -> $ref node: a cycle through
    // two combinators, each with overlapping array branches.
    let schema = json!({
        "type": "object",
        "properties": { "x": { "$ref": "#/$defs/node" } },
        "$defs": {
            "node": {
                "anyOf": [
                    { "type": "array", "items": { "$ref": "#/$defs/list" } },
                    { "type": "array", "maxItems": 0 }
                ]
            },
            "list": {
                "oneOf": [
                    { "$ref": "#/$defs/node" },
                    { "type": "integer" }
                ]
            }
        }
    });
    let errors = errors(&schema);
    let pointers: Vec<&str> = errors.iter().map(|e| e.pointer.as_str()).collect();
    assert!(pointers.contains(&"/$defs/node/anyOf"), "{errors:#?}");
    assert!(
        errors
            .iter()
            .all(|e| !e.message.contains("`oneOf` at `/$defs/list`")),
        "the oneOf's branches (array, integer) are disjoint: {errors:#?}"
    );
}

#[test]
fn recursion_outside_the_branches_is_fine() {
    // The node recurses through `properties`, not through its `anyOf`: each level checks the
    // (overlapping) branches once, so the time stays linear.
    accepts(json!({
        "type": "object",
        "properties": { "x": { "$ref": "#/$defs/node" } },
        "$defs": {
            "node": {
                "type": "object",
                "properties": { "child": { "$ref": "#/$defs/node" } },
                "anyOf": [ { "required": ["a"] }, { "required": ["b"] } ]
            }
        }
    }));
    // Overlapping branches without recursion are the existing rules' business: objects are
    // accepted.
    accepts(with_property(json!({
        "anyOf": [
            { "type": "object", "properties": { "a": { "type": "string" } } },
            { "type": "object", "properties": { "b": { "type": "string" } } }
        ]
    })));
    // A recursive JSON-like value whose branches have distinct types is fine.
    accepts(json!({
        "type": "object",
        "properties": { "x": { "$ref": "#/$defs/json" } },
        "$defs": {
            "json": {
                "anyOf": [
                    { "type": "string" },
                    { "type": "number" },
                    { "type": "boolean" },
                    { "type": "array", "items": { "$ref": "#/$defs/json" } },
                    { "type": "object", "additionalProperties": { "$ref": "#/$defs/json" } }
                ]
            }
        }
    }));
}

#[test]
fn recursion_through_the_root() {
    rejects(
        json!({
            "type": "object",
            "properties": {
                "next": {
                    "anyOf": [
                        { "$ref": "#" },
                        { "type": "object", "properties": { "end": { "type": "boolean" } } }
                    ]
                }
            }
        }),
        "/properties/next/anyOf",
        "refers back to itself",
    );
}

#[test]
fn custom_meta_schemas() {
    let mut schema = with_property(json!({ "type": "string" }));
    schema["$schema"] = json!("https://example.com/my-meta.json");
    rejects(
        schema.clone(),
        "/$schema",
        "`$schema` \"https://example.com/my-meta.json\" at `#` is not a published JSON Schema draft",
    );
    schema["$schema"] = json!(7);
    rejects(
        schema.clone(),
        "/$schema",
        "is not a published JSON Schema draft",
    );
    for draft in [
        "https://json-schema.org/draft/2020-12/schema",
        "http://json-schema.org/draft/2020-12/schema#",
        "https://json-schema.org/draft/2019-09/schema",
        "http://json-schema.org/draft-07/schema#",
    ] {
        schema["$schema"] = json!(draft);
        accepts(schema.clone());
    }
}

/// The runtime's shape check (agent-schema) runs first, located at the node to change, and
/// never overflows the stack on the schemas it refuses.
#[test]
fn schemas_validation_cannot_finish() {
    let cycle = json!({"type": "object", "properties": {"x": {"$ref": "#/$defs/a"}},
        "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}});
    let found = errors(&cycle);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(found[0].pointer.ends_with("/$ref"), "{found:#?}");
    assert!(
        found[0].message.contains("refers back to itself"),
        "{found:#?}"
    );
    rejects(
        json!({"type": "object", "allOf": [{"$ref": "#"}]}),
        "/allOf/0/$ref",
        "`#` refers back to itself",
    );
    let mut defs = serde_json::Map::new();
    for i in 0..13 {
        let next = format!("#/$defs/l{}", i + 1);
        defs.insert(
            format!("l{i}"),
            json!({"anyOf": [{"$ref": next}, {"$ref": next, "title": "again"}]}),
        );
    }
    defs.insert("l13".into(), json!({"type": "string"}));
    let shared = json!({"type": "object", "properties": {"v": {"$ref": "#/$defs/l0"}},
        "$defs": defs});
    let found = errors(&shared);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(found[0].message.contains("evaluation paths"), "{found:#?}");
    rejects(
        with_property(json!({"oneOf": [{"type": "string"}, {"type": "string"}]})),
        "/properties/x/oneOf/1",
        "lists the same branch twice (items 0 and 1)",
    );
}

/// Contracts larger than the compiler can take in reasonable time (BENCHMARKS.md).
#[test]
fn size_bounds() {
    let wide = |n: usize| {
        let properties: serde_json::Map<String, Value> = (0..n)
            .map(|i| (format!("f{i}"), json!({"type": "string"})))
            .collect();
        json!({"type": "object", "properties": properties})
    };
    accepts(wide(500));
    rejects(
        wide(501),
        "/properties",
        "`properties` at `#` has 501 properties, more than the 500",
    );
    let values: Vec<String> = (0..501).map(|i| format!("v{i}")).collect();
    rejects(
        with_property(json!({"type": "string", "enum": values})),
        "/properties/x/enum",
        "has 501 values, more than the 500",
    );
}

#[test]
fn x_source_only_on_a_property_of_an_input_contract() {
    // A field only a person can give: accepted on an input contract's property.
    accepts(with_property(
        json!({ "type": "string", "x-source": "user" }),
    ));
    // Anywhere else, or with another value, refused where it is written.
    rejects(
        json!({ "type": "object", "x-source": "user" }),
        "/x-source",
        "is read only on a property of an input contract",
    );
    rejects(
        with_property(json!({
            "type": "object",
            "properties": { "y": { "type": "string", "x-source": "user" } }
        })),
        "/properties/x/properties/y/x-source",
        "is read only on a property of an input contract",
    );
    rejects(
        with_property(json!({ "type": "string", "x-source": "model" })),
        "/properties/x/x-source",
        "the one source is \"user\"",
    );
    let options = TypeOptions {
        kind: ContractKind::Output,
        ..TypeOptions::default()
    };
    let schema = with_property(json!({ "type": "string", "x-source": "user" }));
    let errors =
        generate_types_with(&schema.to_string(), "out.json", "Root", &options).unwrap_err();
    assert_eq!(errors.len(), 1, "{errors:#?}");
    assert_eq!(errors[0].pointer, "/properties/x/x-source");
}
