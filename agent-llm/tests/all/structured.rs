//! Native structured output on both wire formats: an agent's output contract goes out in the
//! strict form the build decided (here the venue agent's, rewritten: its optional `notes` and
//! `next_agent` required and nullable, the root closed, `$schema` dropped, and for Anthropic
//! `minimum` too), the strict answer's `null`s are removed before the contract check, and
//! tools whose parameters fit as written are marked `strict`.

use crate::common::*;
use agent_contracts_runtime::{
    ChatModel, Message, Runtime, contract::ToolDefinition, model::ChatRequest,
};
use agent_examples::agents::VenueAgent;
use serde_json::{Value, json};

/// What a strict model answers: `null` for the optional properties it had to fill.
const STRICT_ANSWER: &str = r#"{"venue_name": "Hall 9", "capacity": 80, "cost_usd": 1200.5, "notes": null, "next_agent": null}"#;

/// The venue agent's output contract in OpenAI's strict form.
fn openai_schema() -> Value {
    json!({
        "type": "object",
        "required": ["capacity", "cost_usd", "next_agent", "notes", "venue_name"],
        "additionalProperties": false,
        "properties": {
            "venue_name": {"type": "string", "description": "Name of the recommended venue"},
            "capacity": {"type": "integer", "minimum": 1, "description": "Guests the venue holds"},
            "cost_usd": {"type": "number", "minimum": 0, "description": "Rental cost in US dollars"},
            "notes": {"anyOf": [
                {"type": "string", "description": "What else the planner should know about the venue"},
                {"type": "null"}
            ]},
            "next_agent": {"anyOf": [
                {"type": "string", "description": "The specialist that should continue, if not the default next one"},
                {"type": "null"}
            ]}
        }
    })
}

#[tokio::test]
async fn openai_is_sent_the_rewritten_contract_strict_and_its_nulls_pass_the_contract() {
    let reply = completion(
        json!({"role": "assistant", "content": STRICT_ANSWER}),
        "stop",
    );
    let server = serve(OPENAI_PATH, vec![ok(reply)]).await;
    let model = openai_builder(&server).build().expect("a model");
    let venue = Runtime::new(model)
        .call::<VenueAgent>(r#"{"task": "Find a venue"}"#)
        .await
        .expect("the strict answer passes the contract");
    assert_eq!((venue.venue_name.as_str(), venue.notes), ("Hall 9", None));
    let body = &bodies(&server).await[0];
    let expected = json!({
        "type": "json_schema",
        "json_schema": {"name": "venue_agent", "schema": openai_schema(), "strict": true},
    });
    assert_eq!(body["response_format"], expected);
}

#[tokio::test]
async fn anthropic_is_sent_the_rewritten_contract_as_output_config() {
    let text = serde_json::to_string(STRICT_ANSWER).expect("a JSON string");
    let reply = message(&format!(r#"{{"type":"text","text":{text}}}"#), "end_turn");
    let server = serve(ANTHROPIC_PATH, vec![ok(reply)]).await;
    let model = anthropic_builder(&server).build().expect("a model");
    let venue = Runtime::new(model)
        .call::<VenueAgent>(r#"{"task": "Find a venue"}"#)
        .await
        .expect("the strict answer passes the contract");
    assert_eq!(venue.next_agent, None);
    let mut schema = openai_schema();
    // Anthropic takes no numeric bounds: dropped, the contract still checks them.
    schema["properties"]["capacity"] =
        json!({"type": "integer", "description": "Guests the venue holds"});
    schema["properties"]["cost_usd"] =
        json!({"type": "number", "description": "Rental cost in US dollars"});
    let body = &bodies(&server).await[0];
    let expected = json!({"format": {"type": "json_schema", "schema": schema}});
    assert_eq!(body["output_config"], expected);
}

#[tokio::test]
async fn structured_output_off_sends_neither_format_nor_strict_tools() {
    let reply = message(r#"{"type":"text","text":"{}"}"#, "end_turn");
    let server = serve(ANTHROPIC_PATH, vec![ok(reply.clone()), ok(reply)]).await;
    for mode in [
        agent_contracts_llm::StructuredOutput::Auto,
        agent_contracts_llm::StructuredOutput::Off,
    ] {
        let model = anthropic_builder(&server)
            .structured_output(mode)
            .build()
            .expect("a model");
        model.complete(&tool_request()).await.expect("a reply");
    }
    let bodies = bodies(&server).await;
    let strict: Vec<Value> = bodies
        .iter()
        .map(|b| b["tools"][0]["strict"].clone())
        .collect();
    assert_eq!(strict, [json!(true), Value::Null]);
}

/// A request with a tool whose parameters fit both strict subsets and one whose do not.
fn tool_request() -> ChatRequest {
    let fits = ToolDefinition {
        name: "lookup".into(),
        description: "Looks a word up.".into(),
        parameters: json!({"type": "object", "properties": {"word": {"type": "string"}},
            "required": ["word"], "additionalProperties": false}),
    };
    let open = ToolDefinition {
        name: "search".into(),
        description: "Searches.".into(),
        parameters: json!({"type": "object", "properties": {"q": {"type": "string"}}}),
    };
    ChatRequest::new("agent", vec![Message::user("Hi")], vec![fits, open])
}

#[tokio::test]
async fn tools_that_fit_as_written_are_strict_in_both_formats() {
    let server = serve(
        OPENAI_PATH,
        vec![ok(completion(
            json!({"role": "assistant", "content": "ok"}),
            "stop",
        ))],
    )
    .await;
    let model = openai_builder(&server).build().expect("a model");
    model.complete(&tool_request()).await.expect("a reply");
    let body = &bodies(&server).await[0];
    let expected = json!([
        {"type": "function", "function": {"name": "lookup", "description": "Looks a word up.",
            "parameters": tool_request().tools[0].parameters, "strict": true}},
        {"type": "function", "function": {"name": "search", "description": "Searches.",
            "parameters": tool_request().tools[1].parameters}},
    ]);
    assert_eq!(body["tools"], expected);

    let reply = message(r#"{"type":"text","text":"ok"}"#, "end_turn");
    let server = serve(ANTHROPIC_PATH, vec![ok(reply)]).await;
    let model = anthropic_builder(&server).build().expect("a model");
    model.complete(&tool_request()).await.expect("a reply");
    let body = &bodies(&server).await[0];
    let expected = json!([
        {"name": "lookup", "description": "Looks a word up.",
            "input_schema": tool_request().tools[0].parameters, "strict": true},
        {"name": "search", "description": "Searches.",
            "input_schema": tool_request().tools[1].parameters},
    ]);
    assert_eq!(body["tools"], expected);
}
