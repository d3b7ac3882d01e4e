//! A contract with media fields, end to end: an agent whose input holds a PNG screenshot and a
//! PDF invoice (real bytes, the repository's `tests/fixtures/media/`) sends them to both wire formats as the
//! right parts at its template's places, and the default prompt puts them after the task;
//! bad media (a PNG declared as JPEG, past the size bound, a `file:` URL) is refused with the
//! field named before any request; an image a tool returns reaches the next request.

use crate::common::*;
use agent_contracts::contract::PathSegment;
use agent_contracts::model::{BoxFuture, Media, MediaData};
use agent_contracts::{Config, DynAgent, Error, Limits, Runtime, Tool, ToolOutput};
use agent_contracts_runtime::contract::ToolDefinition;
use base64::Engine as _;
use serde_json::{Value, json};
use std::sync::Arc;

/// Reads an invoice from a screenshot and the PDF, its prompt placing each.
#[derive(agent_contracts::Agent)]
#[agent(
    name = "invoice_reader_agent",
    input = "../tests/fixtures/media/invoice_reader_agent/input.schema.json",
    output = "../tests/fixtures/media/invoice_reader_agent/output.schema.json",
    user_prompt = "tests/invoice_reader.md"
)]
struct InvoiceReaderAgent;

/// The same contracts with the default prompt.
#[derive(agent_contracts::Agent)]
#[agent(
    name = "invoice_default_agent",
    input = "../tests/fixtures/media/invoice_reader_agent/input.schema.json",
    output = "../tests/fixtures/media/invoice_reader_agent/output.schema.json"
)]
struct InvoiceDefaultAgent;

const PNG: &[u8] = include_bytes!("../../../tests/fixtures/media/pixel.png");
const PDF: &[u8] = include_bytes!("../../../tests/fixtures/media/invoice.pdf");

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn kwargs(screenshot: &str, invoice: &str) -> String {
    json!({
        "task": "Which total does the customer owe?",
        "customer": "Ada",
        "screenshot": screenshot,
        "invoice": invoice,
    })
    .to_string()
}

const ANSWER: &str = r#"{"total": "12.00 EUR"}"#;

/// The template's text around the two media.
const BEFORE_IMAGE: &str =
    "Which total does the customer owe?\n\nThe customer Ada sees this on the billing page:\n";
const BETWEEN: &str = "\nThe invoice they ask about:\n";

#[tokio::test]
async fn an_image_and_a_pdf_reach_openai_as_parts_at_the_templates_places() {
    let reply = completion(json!({"role": "assistant", "content": ANSWER}), "stop");
    let server = serve(OPENAI_PATH, vec![ok(reply)]).await;
    let runtime = Runtime::new(openai_builder(&server).build().expect("a model"));
    let output = runtime
        .call::<InvoiceReaderAgent>(&kwargs(&b64(PNG), &b64(PDF)))
        .await
        .expect("an answer");
    assert_eq!(output.total, "12.00 EUR");
    let body = &bodies(&server).await[0];
    let user = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "user")
        .expect("a user message");
    let parts = user["content"].as_array().expect("parts");
    assert_eq!(parts[0], json!({"type": "text", "text": BEFORE_IMAGE}));
    assert_eq!(
        parts[1],
        json!({"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{}", b64(PNG))}})
    );
    assert_eq!(parts[2], json!({"type": "text", "text": BETWEEN}));
    assert_eq!(
        parts[3],
        json!({"type": "file", "file": {"filename": "document", "file_data": format!("data:application/pdf;base64,{}", b64(PDF))}})
    );
    assert_eq!(parts[4]["type"], "text");
    assert!(
        parts[4]["text"]
            .as_str()
            .unwrap()
            .starts_with("\nAnswer with the invoice's total."),
        "{}",
        parts[4]
    );
    assert_eq!(parts.len(), 5);
    // The bytes are parts only, never text.
    let text: String = parts.iter().filter_map(|p| p["text"].as_str()).collect();
    assert!(!text.contains(&b64(PNG)) && !text.contains(&b64(PDF)));
}

#[tokio::test]
async fn an_image_and_a_pdf_reach_anthropic_as_image_and_document_blocks() {
    let reply = message(
        &json!({"type": "text", "text": ANSWER}).to_string(),
        "end_turn",
    );
    let server = serve(ANTHROPIC_PATH, vec![ok(reply)]).await;
    let runtime = Runtime::new(anthropic_builder(&server).build().expect("a model"));
    runtime
        .call::<InvoiceReaderAgent>(&kwargs(&b64(PNG), &b64(PDF)))
        .await
        .expect("an answer");
    let body = &bodies(&server).await[0];
    let blocks = body["messages"][0]["content"].as_array().expect("blocks");
    assert_eq!(blocks[0], json!({"type": "text", "text": BEFORE_IMAGE}));
    assert_eq!(
        blocks[1],
        json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": b64(PNG)}})
    );
    assert_eq!(blocks[2], json!({"type": "text", "text": BETWEEN}));
    assert_eq!(
        blocks[3],
        json!({"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": b64(PDF)}})
    );
    assert_eq!(blocks.len(), 5);
}

#[test]
fn the_default_prompt_puts_media_after_the_task_and_out_of_the_context() {
    let receipt = "https://example.com/receipt.jpg";
    let mut call: Value = serde_json::from_str(&kwargs(&b64(PNG), &b64(PDF))).unwrap();
    call["receipt"] = receipt.into();
    let prepared = InvoiceDefaultAgent
        .prepare(&call.to_string(), &Limits::default())
        .expect("a prepared call");
    assert_eq!(
        prepared.user_prompt,
        "Which total does the customer owe?\n\n## Context\n```json\n{\n  \"customer\": \"Ada\"\n}\n```"
    );
    let task = "Which total does the customer owe?".len();
    let placed: Vec<(&str, Option<usize>)> = prepared
        .media
        .iter()
        .map(|m| (m.media_type.as_str(), m.at))
        .collect();
    // In the contract's order.
    assert_eq!(
        placed,
        [
            ("image/png", Some(task)),
            ("application/pdf", Some(task)),
            ("image/jpeg", Some(task)),
        ]
    );
    assert_eq!(prepared.media[2].data, MediaData::Url(receipt.into()));
}

/// The retry error of a call with bad media, and that it reached no model.
async fn refused(kwargs: &str, limits: Limits) -> agent_contracts::contract::RetryDetails {
    let server = serve(OPENAI_PATH, Vec::new()).await;
    let runtime = Runtime::with_config(
        openai_builder(&server).build().expect("a model"),
        Config::default().with_limits(limits),
    );
    let error = runtime
        .call::<InvoiceReaderAgent>(kwargs)
        .await
        .expect_err("refused");
    assert!(bodies(&server).await.is_empty(), "no request was sent");
    match error {
        Error::Retry { error, .. } => (*error).clone(),
        other => panic!("not a retry error: {other:?}"),
    }
}

#[tokio::test]
async fn bad_media_is_refused_with_the_field_named() {
    let key = |name: &str| vec![PathSegment::Key(name.into())];
    // A PNG declared as JPEG.
    let declared = format!("data:image/jpeg;base64,{}", b64(PNG));
    let error = refused(&kwargs(&declared, &b64(PDF)), Limits::default()).await;
    assert_eq!(error.path, key("screenshot"));
    assert!(
        error.validation_message.contains("declared image/jpeg"),
        "{error:?}"
    );
    // A PDF where the PNG goes.
    let error = refused(&kwargs(&b64(PDF), &b64(PDF)), Limits::default()).await;
    assert_eq!(error.path, key("screenshot"));
    assert!(error.validation_message.contains("must be image/png"));
    // Past the size bound.
    let small = Limits::default().with_max_media_bytes(PNG.len());
    let error = refused(&kwargs(&b64(PNG), &b64(PDF)), small).await;
    assert_eq!(error.path, key("invoice"));
    assert!(error.validation_message.contains("over the limit"));
    // A `file:` URL.
    let mut call: Value = serde_json::from_str(&kwargs(&b64(PNG), &b64(PDF))).unwrap();
    call["receipt"] = "file:///etc/passwd".into();
    let error = refused(&call.to_string(), Limits::default()).await;
    assert_eq!(error.path, key("receipt"));
    assert!(error.validation_message.contains("`file:`"), "{error:?}");
    assert_eq!(error.errors[0].path, key("receipt"));
}

/// A tool whose result brings a PNG.
struct Camera;

impl Tool for Camera {
    fn definition(&self) -> ToolDefinition {
        ToolDefinition {
            name: "snapshot".into(),
            description: "A picture of the page".into(),
            parameters: json!({"type": "object"}),
        }
    }
    fn call<'a>(&'a self, _arguments: &'a str) -> BoxFuture<'a, Value> {
        Box::pin(async { json!({"taken": true}) })
    }
    fn call_with_media<'a>(&'a self, _arguments: &'a str) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async {
            let png = Media::of_type("image/png", MediaData::Base64(b64(PNG)));
            ToolOutput::new(json!({"taken": true})).with_media(vec![png])
        })
    }
}

#[tokio::test]
async fn an_image_a_tool_returns_reaches_the_next_request() {
    let call = json!({"role": "assistant", "content": null, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "snapshot", "arguments": "{}"}}
    ]});
    let done = completion(json!({"role": "assistant", "content": "seen"}), "stop");
    let server = serve(
        OPENAI_PATH,
        vec![ok(completion(call, "tool_calls")), ok(done)],
    )
    .await;
    let runtime =
        Runtime::new(openai_builder(&server).build().expect("a model")).with_tool(Arc::new(Camera));
    runtime
        .run_loop("inspector", "Look at the page.", "What does it show?", &[])
        .await
        .expect("a finished loop");
    let sent = bodies(&server).await;
    assert_eq!(sent.len(), 2);
    let last = sent[1]["messages"].as_array().unwrap().last().unwrap();
    assert_eq!(last["role"], "user");
    assert_eq!(
        last["content"][1],
        json!({"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{}", b64(PNG))}})
    );

    let call = json!({"type": "tool_use", "id": "toolu_1", "name": "snapshot", "input": {}});
    let done = json!({"type": "text", "text": "seen"});
    let server = serve(
        ANTHROPIC_PATH,
        vec![
            ok(message(&call.to_string(), "tool_use")),
            ok(message(&done.to_string(), "end_turn")),
        ],
    )
    .await;
    let runtime = Runtime::new(anthropic_builder(&server).build().expect("a model"))
        .with_tool(Arc::new(Camera));
    runtime
        .run_loop("inspector", "Look at the page.", "What does it show?", &[])
        .await
        .expect("a finished loop");
    let bodies = bodies(&server).await;
    let result = &bodies[1]["messages"][2]["content"][0];
    assert_eq!(result["type"], "tool_result");
    assert_eq!(
        result["content"][1],
        json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": b64(PNG)}})
    );
}

#[tokio::test]
async fn a_workflow_step_sends_its_media_in_place_too() {
    use agent_contracts::{ScriptedModel, Workflow, model::Part};
    let model = Arc::new(ScriptedModel::default().script("invoice_reader_agent", [ANSWER]));
    let workflow = Workflow::new("read_invoice")
        .agent(&InvoiceReaderAgent)
        .goal([("invoice_reader_agent", "Which total does the customer owe?")]);
    workflow
        .runner(model.clone())
        .start_with_kwargs(&kwargs(&b64(PNG), &b64(PDF)))
        .await
        .expect("a finished run");
    let request = &model.requests_of("invoice_reader_agent")[0];
    let user = request
        .messages
        .iter()
        .rev()
        .find(|m| !m.media.is_empty())
        .expect("the step's prompt with its media");
    let kinds: Vec<&str> = user
        .parts()
        .iter()
        .map(|part| match part {
            Part::Text(_) => "text",
            Part::Media(media) => media.media_type.as_str(),
            _ => "other",
        })
        .collect();
    assert_eq!(
        kinds,
        ["text", "image/png", "text", "application/pdf", "text"]
    );
    assert!(!user.content.contains(&b64(PNG)));
}
