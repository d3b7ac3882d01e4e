//! Media parts of a user message on both wire formats: in place in the text or after it, by
//! URL or inline; and the media of tool results, in each format's place for them.

use crate::common::*;
use agent_contracts_runtime::model::{ChatRequest, Media, MediaData};
use agent_contracts_runtime::{ChatModel, Message};
use serde_json::json;

fn request() -> ChatRequest {
    let message = Message::user("Does it fit 80 guests?").with_media(vec![
        Media::of_type(
            "image/png",
            MediaData::Url("https://example.com/plan.png".into()),
        ),
        Media::of_type("image/png", MediaData::Base64("iVBORw0KGgo=".into())),
    ]);
    ChatRequest::new("agent", vec![message], Vec::new())
}

/// An image and a PDF placed inside the text, and audio after it.
fn placed_request() -> ChatRequest {
    let text = "Screenshot: then the invoice: Which total?";
    let message = Message::user(text).with_media(vec![
        Media::of_type("image/png", MediaData::Base64("iVBORw0KGgo=".into())).at(12),
        Media::of_type("application/pdf", MediaData::Base64("JVBERi0=".into())).at(30),
        Media::of_type("audio/wav", MediaData::Base64("UklGRg==".into())),
    ]);
    ChatRequest::new("agent", vec![message], Vec::new())
}

#[tokio::test]
async fn placed_media_parts_stand_where_the_text_puts_them() {
    let reply = completion(json!({"role": "assistant", "content": "yes"}), "stop");
    let server = serve(OPENAI_PATH, vec![ok(reply)]).await;
    let model = openai_builder(&server).build().expect("a model");
    model.complete(&placed_request()).await.expect("a reply");
    let body = &bodies(&server).await[0];
    let expected = json!([{"role": "user", "content": [
        {"type": "text", "text": "Screenshot: "},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
        {"type": "text", "text": "then the invoice: "},
        {"type": "file", "file": {"filename": "document", "file_data": "data:application/pdf;base64,JVBERi0="}},
        {"type": "text", "text": "Which total?"},
        {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}},
    ]}]);
    assert_eq!(body["messages"], expected);

    let reply = message(r#"{"type":"text","text":"yes"}"#, "end_turn");
    let server = serve(ANTHROPIC_PATH, vec![ok(reply)]).await;
    let model = anthropic_builder(&server).build().expect("a model");
    model.complete(&placed_request()).await.expect("a reply");
    let body = &bodies(&server).await[0];
    let expected = json!([{"role": "user", "content": [
        {"type": "text", "text": "Screenshot: "},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}},
        {"type": "text", "text": "then the invoice: "},
        {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": "JVBERi0="}},
        {"type": "text", "text": "Which total?"},
        {"type": "text", "text": "(audio of type audio/wav, not shown: this model takes no such block)"},
    ]}]);
    assert_eq!(body["messages"], expected);
}

#[tokio::test]
async fn image_parts_in_both_wire_formats() {
    let reply = completion(json!({"role": "assistant", "content": "yes"}), "stop");
    let server = serve(OPENAI_PATH, vec![ok(reply)]).await;
    let model = openai_builder(&server).build().expect("a model");
    model.complete(&request()).await.expect("a reply");
    let body = &bodies(&server).await[0];
    let expected = json!([{"role": "user", "content": [
        {"type": "text", "text": "Does it fit 80 guests?"},
        {"type": "image_url", "image_url": {"url": "https://example.com/plan.png"}},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
    ]}]);
    assert_eq!(body["messages"], expected);

    let reply = message(r#"{"type":"text","text":"yes"}"#, "end_turn");
    let server = serve(ANTHROPIC_PATH, vec![ok(reply)]).await;
    let model = anthropic_builder(&server).build().expect("a model");
    model.complete(&request()).await.expect("a reply");
    let body = &bodies(&server).await[0];
    let expected = json!([{"role": "user", "content": [
        {"type": "text", "text": "Does it fit 80 guests?"},
        {"type": "image", "source": {"type": "url", "url": "https://example.com/plan.png"}},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png",
            "data": "iVBORw0KGgo="}},
    ]}]);
    assert_eq!(body["messages"], expected);
}

/// A tool result's media, one of each kind and source, after a call.
fn tool_media_request() -> ChatRequest {
    use agent_contracts_runtime::model::{Media, MediaData, MediaKind, tool_calls};
    let media = vec![
        Media::new(
            MediaKind::Image,
            "image/png",
            MediaData::Url("https://example.com/c.png".into()),
        ),
        Media::new(
            MediaKind::Audio,
            "audio/wav",
            MediaData::Base64("UklGRg==".into()),
        ),
        Media::new(
            MediaKind::Audio,
            "audio/ogg",
            MediaData::Base64("T2dnUw==".into()),
        ),
        Media::new(
            MediaKind::Document,
            "application/pdf",
            MediaData::Base64("JVBERi0=".into()),
        )
        .with_uri("file:///reports/q3.pdf"),
        Media::new(
            MediaKind::Document,
            "application/zip",
            MediaData::Url("https://example.com/a.zip".into()),
        ),
    ];
    let messages = vec![
        Message::user("Report?"),
        tool_calls([("report", "{}")]),
        Message::tool("call_report_0", "\"Q3\"").with_media(media),
        Message::tool("call_report_1", "\"none\""),
    ];
    ChatRequest::new("agent", messages, Vec::new())
}

#[tokio::test]
async fn a_tool_results_media_in_both_wire_formats() {
    let reply = completion(json!({"role": "assistant", "content": "ok"}), "stop");
    let server = serve(OPENAI_PATH, vec![ok(reply)]).await;
    let model = openai_builder(&server).build().expect("a model");
    model
        .complete(&tool_media_request())
        .await
        .expect("a reply");
    let body = &bodies(&server).await[0];
    let messages = body["messages"].as_array().unwrap();
    // Both tool messages first (the API wants them right after the call), then the media.
    assert_eq!(messages[2]["role"], "tool");
    assert_eq!(messages[3]["role"], "tool");
    assert_eq!(
        messages[4],
        json!({"role": "user", "content": [
            {"type": "text", "text": "Media returned by the tool call call_report_0:"},
            {"type": "image_url", "image_url": {"url": "https://example.com/c.png"}},
            {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}},
            {"type": "text", "text": "(audio of type audio/ogg, not shown: this model takes no such part)"},
            {"type": "file", "file": {"filename": "q3.pdf", "file_data": "data:application/pdf;base64,JVBERi0="}},
            {"type": "text", "text": "(a document of type application/zip at https://example.com/a.zip, not shown: this model takes no such part)"},
        ]})
    );
    assert_eq!(messages.len(), 5);

    let reply = message(r#"{"type":"text","text":"ok"}"#, "end_turn");
    let server = serve(ANTHROPIC_PATH, vec![ok(reply)]).await;
    let model = anthropic_builder(&server).build().expect("a model");
    model
        .complete(&tool_media_request())
        .await
        .expect("a reply");
    let body = &bodies(&server).await[0];
    let expected = json!({"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "call_report_0", "content": [
            {"type": "text", "text": "\"Q3\""},
            {"type": "image", "source": {"type": "url", "url": "https://example.com/c.png"}},
            {"type": "text", "text": "(audio of type audio/wav, not shown: this model takes no such block)"},
            {"type": "text", "text": "(audio of type audio/ogg, not shown: this model takes no such block)"},
            {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": "JVBERi0="}},
            {"type": "text", "text": "(a document of type application/zip at https://example.com/a.zip, not shown: this model takes no such block)"},
        ]},
        {"type": "tool_result", "tool_use_id": "call_report_1", "content": "\"none\""},
    ]});
    assert_eq!(body["messages"][2], expected);
}
