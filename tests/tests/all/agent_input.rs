//! Code first: `#[derive(AgentInput)]` on a struct that derives `Deserialize` and
//! `JsonSchema` gives the same runtime behaviour as a schema file, with schemars' schema.

use agent_contracts::{AgentInput, RetryError, contract::ToolCall};
use serde_json::json;

/// Searches the crawled pages.
#[derive(
    Debug, PartialEq, serde::Deserialize, schemars::JsonSchema, agent_contracts::AgentInput,
)]
struct Search {
    query: String,
    #[schemars(range(min = 1, max = 50))]
    limit: u32,
}

/// The same contract as a schema file.
#[derive(agent_contracts::Agent)]
#[agent(input = "fixtures/agent_input/search.schema.json")]
struct SearchAgent;

fn from_kwargs(kwargs: &str) -> Result<Search, RetryError> {
    Search::from_call(
        &ToolCall::from_json_str(kwargs, &agent_contracts::Limits::default())?,
        &agent_contracts::Limits::default(),
    )
}

#[test]
fn valid_kwargs_are_typed() {
    let search = from_kwargs(r#"{"task": "Find the login page", "query": "login", "limit": 5}"#);
    let expected = Search {
        query: "login".into(),
        limit: 5,
    };
    assert_eq!(search.unwrap(), expected);
    // Data in `context` counts the same as flat data.
    let search = from_kwargs(r#"{"task": "x", "context": {"query": "login", "limit": 5}}"#);
    assert_eq!(search.unwrap().query, "login");
}

#[test]
fn missing_fields_give_the_retry_error() {
    let error = from_kwargs(r#"{"task": "x"}"#).unwrap_err();
    assert_eq!(error.missing_fields, ["query", "limit"]);
    let expected = json!({
        "success": false,
        "error": "Input contract validation failed",
        "validation_message": "\"query\" is a required property",
        "path": [],
        "required_fields": ["query", "limit"],
        "missing_fields": ["query", "limit"],
        "provided_fields": [],
        "hint": "Please provide all required fields: query, limit",
        "errors": [
            {"path": [], "message": "\"query\" is a required property"},
            {"path": [], "message": "\"limit\" is a required property"}
        ]
    });
    assert_eq!(error.to_json(), expected);
}

#[test]
fn schemars_range_is_checked() {
    let error = from_kwargs(r#"{"task": "x", "query": "login", "limit": 51}"#).unwrap_err();
    let expected = json!({
        "success": false,
        "error": "Input contract validation failed",
        "validation_message": "51 is greater than the maximum of 50",
        "path": ["limit"],
        "required_fields": ["query", "limit"],
        "missing_fields": [],
        "provided_fields": ["query", "limit"],
        "hint": "Please fix the invalid fields: limit",
        "errors": [{"path": ["limit"], "message": "51 is greater than the maximum of 50"}]
    });
    assert_eq!(error.to_json(), expected);
}

#[test]
fn same_retry_error_as_a_schema_file_contract() {
    for kwargs in [
        r#"{"task": "x"}"#,
        r#"{"task": "x", "query": "login", "limit": 51}"#,
        r#"{"task": "x", "query": 3, "limit": 0}"#,
    ] {
        let code_first = from_kwargs(kwargs).unwrap_err().to_json();
        let schema_file =
            agent_contracts::contract::check_call::<SearchAgent>(kwargs, &Default::default());
        assert_eq!(code_first, schema_file.unwrap_err().to_json(), "{kwargs}");
    }
}

/// A schema file's input has checks compiled from it and decides a valid call by itself; a
/// code-first input has none, so the validator reads every call first (on the call's tape).
#[test]
fn only_the_schema_file_input_has_compiled_checks() {
    type FromFile = <SearchAgent as agent_contracts::Agent>::Input;
    const { assert!(<FromFile as AgentInput>::COMPILED_CHECKS) };
    const { assert!(!<Search as AgentInput>::COMPILED_CHECKS) };
    let kwargs = r#"{"task": "x", "query": "login", "limit": 5}"#;
    let call = ToolCall::from_json_str(kwargs, &agent_contracts::Limits::default()).unwrap();
    let typed = FromFile::from_call(&call, &agent_contracts::Limits::default()).unwrap();
    assert_eq!(typed.satisfies_contract(), Some(true));
    assert!(
        !call.context_built(),
        "the compiled checks decided without a Value"
    );
    let call = ToolCall::from_json_str(kwargs, &agent_contracts::Limits::default()).unwrap();
    let code_first = Search::from_call(&call, &agent_contracts::Limits::default()).unwrap();
    assert_eq!(code_first.satisfies_contract(), None);
    assert!(
        !call.context_built(),
        "the validator read the call on its tape, without a Value"
    );
    // A limit past the schema's maximum: the checks say no and the validator explains it.
    let call = ToolCall::from_json_str(
        r#"{"task": "x", "query": "login", "limit": 51}"#,
        &agent_contracts::Limits::default(),
    )
    .unwrap();
    let error = FromFile::from_call(&call, &agent_contracts::Limits::default()).unwrap_err();
    assert_eq!(
        error.errors[0].path,
        [agent_contracts::contract::PathSegment::Key("limit".into())]
    );
    assert!(
        !call.context_built(),
        "the retry error was written from the tape"
    );
}
