//! Image parts of a user message on both wire formats: after the text, by URL or inline.

use crate::common::*;
use agent_contracts_runtime::{ChatModel, Message, model::ChatRequest, model::Image};
use serde_json::json;

fn request() -> ChatRequest {
    let message = Message::user("Does it fit 80 guests?").with_images(vec![
        Image::Url("https://example.com/plan.png".into()),
        Image::Base64 {
            media_type: "image/png".into(),
            data: "iVBORw0KGgo=".into(),
        },
    ]);
    ChatRequest::new("agent", vec![message], Vec::new())
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
