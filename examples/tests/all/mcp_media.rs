//! An image an MCP tool returns reaches the next model request as an image part, on both wire
//! formats: an MCP server on loopback (rmcp's streamable HTTP server with a tool written here)
//! answers with a text block and an image block; a loop's model, pointed at a loopback server
//! that speaks the provider's wire format, calls the tool and then answers. Anthropic's second
//! request carries the image inside the `tool_result`; OpenAI's, whose tool messages take text
//! only, in a user message right after the tool message.

use agent_contracts::Runtime;
use agent_contracts::llm::{HttpModel, Provider};
use agent_contracts::mcp::client::{McpServer, ToolSettings};
use rmcp::ErrorData;
use rmcp::handler::server::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::{Value, json};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

/// A 1x1 PNG's first bytes, base64: what the tool shows.
const PNG: &str = "iVBORw0KGgo=";

/// An MCP server with one tool, `chart`, that answers with a caption and an image.
#[derive(Clone)]
struct Charts;

impl ServerHandler for Charts {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let Value::Object(schema) = json!({"type": "object"}) else {
            unreachable!()
        };
        let tool = rmcp::model::Tool::new("chart", "Draws the sales chart", Arc::new(schema));
        Ok(ListToolsResult::with_all_items(vec![tool]))
    }

    async fn call_tool(
        &self,
        _: CallToolRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        Ok(CallToolResult::success(vec![
            ContentBlock::text("The sales chart"),
            ContentBlock::image(PNG, "image/png"),
        ])
        .into())
    }
}

async fn chart_tool() -> Arc<dyn agent_contracts::Tool> {
    let service = StreamableHttpService::new(
        || Ok(Charts),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    let router = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, router).await });
    let server = McpServer::http("charts", &url, None).await.unwrap();
    server
        .tools(ToolSettings::default())
        .await
        .unwrap()
        .remove(0)
}

/// Answers each request with the next body of the queue.
struct Queue(Mutex<VecDeque<String>>);

impl Respond for Queue {
    fn respond(&self, _: &Request) -> ResponseTemplate {
        let body = self.0.lock().unwrap().pop_front().unwrap_or_default();
        ResponseTemplate::new(200).set_body_raw(body.into_bytes(), "application/json")
    }
}

/// A loop whose model (at a loopback server answering `replies`) calls the chart tool and
/// answers: the bodies of the model's requests.
async fn run(provider: Provider, replies: [Value; 2]) -> Vec<Value> {
    let server = MockServer::start().await;
    let replies = replies.iter().map(Value::to_string).collect();
    Mock::given(method("POST"))
        .respond_with(Queue(Mutex::new(replies)))
        .mount(&server)
        .await;
    let base = match provider {
        Provider::OpenAi => format!("{}/v1", server.uri()),
        _ => server.uri(),
    };
    let model = HttpModel::builder(provider, "test-model")
        .base_url(base)
        .api_key("sk-test-0123456789")
        .build()
        .unwrap();
    let runtime = Runtime::new(model).with_tool(chart_tool().await);
    runtime
        .run_loop("analyst", "You read charts.", "How are sales going?", &[])
        .await
        .unwrap();
    let requests = server.received_requests().await.unwrap();
    requests
        .iter()
        .map(|request| serde_json::from_slice(&request.body).unwrap())
        .collect()
}

#[tokio::test]
async fn an_image_from_an_mcp_tool_reaches_the_next_openai_request_after_the_tool_message() {
    let call = json!({"choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
        "role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function",
            "function": {"name": "chart", "arguments": "{}"}}]}}]});
    let answer = json!({"choices": [{"index": 0, "finish_reason": "stop",
        "message": {"role": "assistant", "content": "Rising."}}]});
    let bodies = run(Provider::OpenAi, [call, answer]).await;
    assert_eq!(bodies.len(), 2);
    let messages = bodies[1]["messages"].as_array().unwrap();
    let n = messages.len();
    // The tool message keeps the text; the image follows it in a user message.
    assert_eq!(
        messages[n - 2],
        json!({"role": "tool", "tool_call_id": "call_1", "content": "\"The sales chart\""})
    );
    assert_eq!(
        messages[n - 1],
        json!({"role": "user", "content": [
            {"type": "text", "text": "Media returned by the tool call call_1:"},
            {"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{PNG}")}},
        ]})
    );
}

#[tokio::test]
async fn an_image_from_an_mcp_tool_reaches_the_next_anthropic_request_inside_the_tool_result() {
    let call = json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "m",
        "content": [{"type": "tool_use", "id": "toolu_1", "name": "chart", "input": {}}],
        "stop_reason": "tool_use", "usage": {"input_tokens": 1, "output_tokens": 1}});
    let answer = json!({"id": "msg_2", "type": "message", "role": "assistant", "model": "m",
        "content": [{"type": "text", "text": "Rising."}],
        "stop_reason": "end_turn", "usage": {"input_tokens": 1, "output_tokens": 1}});
    let bodies = run(Provider::Anthropic, [call, answer]).await;
    assert_eq!(bodies.len(), 2);
    let turns = bodies[1]["messages"].as_array().unwrap();
    assert_eq!(
        turns.last().unwrap(),
        &json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1",
        "content": [
            {"type": "text", "text": "\"The sales chart\""},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                "data": PNG}},
        ]}]})
    );
}
