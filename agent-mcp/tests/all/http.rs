//! The server driven by rmcp's own client over streamable HTTP on loopback: tools listed with
//! both schemas, broken calls as `isError` retry errors, a valid call whose first answer breaks
//! the output contract, an unknown tool, a model failure, and a session that survives them all;
//! arguments that reach the prompt as the client wrote them, and bodies the server cannot read
//! for their text that rmcp answers as ever.

use agent_contracts_mcp::AgentServer;
use agent_contracts_runtime::{Config, Message, ScriptedModel};
use agent_examples::agents::{DiscoveryAgent, PlanGeneratorAgent};
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use rmcp::ServiceExt as _;
use rmcp::model::{CallToolRequestParams, CallToolResult, ErrorCode, JsonObject};
use rmcp::service::{RoleClient, RunningService, ServiceError};
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::{Value, json};
use std::sync::Arc;

use crate::common::{FIXTURE, GOLDEN_PROMPT, NUMBERS, NUMBERS_PROMPT, Wire};

const BAD_PLAN: &str = r#"{"plan_file_path": "plans/login.md", "status": "done"}"#;
const GOOD_PLAN: &str = r#"{"plan_file_path": "plans/login.md", "status": "success", "agent_response_content": "Fill both inputs, submit."}"#;

/// Serves the plan generator and the discovery agent on `model`, on a port the OS picks; the
/// server stops with the test's runtime.
async fn client(model: Arc<ScriptedModel>) -> RunningService<RoleClient, ()> {
    let server = AgentServer::new(vec![&PlanGeneratorAgent, &DiscoveryAgent], model);
    client_of(server, Wire::default()).await
}

/// Serves `server`'s router behind `wire` on a port the OS picks.
async fn client_of(server: AgentServer, wire: Wire) -> RunningService<RoleClient, ()> {
    let router = server
        .http_router()
        .layer(axum::middleware::from_fn_with_state(wire, rewrite));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await });
    agent_contracts_mcp::tls::install_crypto_provider();
    let transport = StreamableHttpClientTransport::from_uri(format!("http://{addr}/mcp"));
    ().serve(transport).await.unwrap()
}

async fn rewrite(State(wire): State<Wire>, request: Request, next: Next) -> Response {
    let (mut parts, body) = request.into_parts();
    let mut body = axum::body::to_bytes(body, usize::MAX)
        .await
        .unwrap()
        .to_vec();
    if let Some(text) = wire.apply(&String::from_utf8_lossy(&body)) {
        body = text.into_bytes();
    }
    parts.headers.remove(axum::http::header::CONTENT_LENGTH);
    let chunks: Vec<Result<Bytes, std::convert::Infallible>> = body
        .chunks(16 * 1024)
        .map(|chunk| Ok(Bytes::copy_from_slice(chunk)))
        .collect();
    let body = Body::from_stream(futures_util::stream::iter(chunks));
    next.run(Request::from_parts(parts, body)).await
}

fn call(name: &str, arguments: Value) -> CallToolRequestParams {
    let mut params = CallToolRequestParams::new(name.to_owned());
    let Value::Object(map) = arguments else {
        panic!("arguments are an object")
    };
    params.arguments = Some(map);
    params
}

fn fixture() -> JsonObject {
    serde_json::from_str(FIXTURE).unwrap()
}

fn plan_model() -> Arc<ScriptedModel> {
    Arc::new(ScriptedModel::default().script(
        "plan_generator_agent",
        [Message::assistant(BAD_PLAN), Message::assistant(GOOD_PLAN)],
    ))
}

/// The text content of a result, parsed: the same JSON as its structured content.
fn text_json(result: &CallToolResult) -> Value {
    let text = serde_json::to_value(&result.content[0]).unwrap();
    serde_json::from_str(text["text"].as_str().unwrap()).unwrap()
}

#[tokio::test]
async fn tools_are_listed_with_both_schemas() {
    let client = client(plan_model()).await;
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, ["run_plan_generator_agent", "run_discovery_agent"]);
    let plan = &tools[0];
    assert_eq!(
        plan.input_schema["required"],
        json!(["task", "task_name", "collected_information"])
    );
    let output = <PlanGeneratorAgent as agent_contracts_runtime::Agent>::output_contract().unwrap();
    assert_eq!(
        &Value::Object((**plan.output_schema.as_ref().unwrap()).clone()),
        output.schema()
    );
    assert!(
        plan.description
            .as_deref()
            .unwrap()
            .ends_with("Required inputs (pass them as top-level arguments): task_name, collected_information\n\nOnly a person can give (pass them only as your user wrote them; left out, the user is asked): target_url")
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_broken_call_is_an_is_error_result_with_the_retry_error() {
    let model = plan_model();
    let client = client(model.clone()).await;
    // A missing field.
    let mut arguments = fixture();
    arguments.remove("collected_information");
    let result = client
        .call_tool(call("run_plan_generator_agent", Value::Object(arguments)))
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(true));
    let error = result.structured_content.clone().unwrap();
    assert_eq!(error["error"], "Input contract validation failed");
    assert_eq!(error["missing_fields"], json!(["collected_information"]));
    assert_eq!(text_json(&result), error);
    let id = error["context_id"].as_str().unwrap();
    assert_eq!(result.meta.as_ref().unwrap().0["context_id"], id);
    // Wrong types.
    let mut arguments = fixture();
    arguments.insert("target_url".into(), json!(42));
    let result = client
        .call_tool(call("run_plan_generator_agent", Value::Object(arguments)))
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(true));
    let error = result.structured_content.unwrap();
    assert_eq!(error["path"], json!(["target_url"]));
    // No `task`.
    let result = client
        .call_tool(call(
            "run_discovery_agent",
            json!({"target_url": "https://a.example"}),
        ))
        .await
        .unwrap();
    assert_eq!(
        result.structured_content.unwrap()["error"],
        "Missing required `task` string"
    );
    // None of them reached the model.
    assert!(model.requests_of("discovery_agent").is_empty());
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_valid_call_returns_the_checked_output_after_an_output_retry() {
    let model = plan_model();
    let wire = Wire::default();
    let server = AgentServer::new(vec![&PlanGeneratorAgent, &DiscoveryAgent], model.clone());
    let client = client_of(server, wire.clone()).await;
    let arguments = wire.as_written(FIXTURE);
    let result = client
        .call_tool(call("run_plan_generator_agent", Value::Object(arguments)))
        .await
        .unwrap();
    assert!(wire.all_sent());
    assert_eq!(result.is_error, Some(false));
    let output = result.structured_content.clone().unwrap();
    assert_eq!(output, serde_json::from_str::<Value>(GOOD_PLAN).unwrap());
    assert_eq!(text_json(&result), output);
    let id = result.meta.as_ref().unwrap().0["context_id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(id.contains("/plan_generator_agent/1/"), "{id}");
    let requests = model.requests_of("plan_generator_agent");
    assert_eq!(requests.len(), 2);
    // The first request's user message is the plan generator's prompt, from the arguments'
    // text as sent: the golden prompt, keys in the fixture's order and `0.60` as written.
    assert_eq!(requests[0].messages[1].content, GOLDEN_PROMPT);
    assert!(requests[1].messages[3].content.contains(&id));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn an_unknown_tool_is_invalid_params_and_the_session_survives_every_bad_call() {
    let model = Arc::new(ScriptedModel::default());
    let client = client(model).await;
    let error = client
        .call_tool(call("run_nobody", json!({"task": "t"})))
        .await
        .unwrap_err();
    let ServiceError::McpError(error) = error else {
        panic!("expected a JSON-RPC error, got {error:?}");
    };
    assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
    assert!(
        error.message.starts_with("unknown tool `run_nobody`"),
        "{}",
        error.message
    );
    // A model failure is an `isError` result with a clear message.
    let result = client
        .call_tool(call(
            "run_discovery_agent",
            json!({"task": "Scan", "target_url": "https://a.example"}),
        ))
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(true));
    let text = serde_json::to_value(&result.content[0]).unwrap();
    assert!(
        text["text"]
            .as_str()
            .unwrap()
            .starts_with("`discovery_agent` could not answer: the script has no reply left"),
        "{text}"
    );
    // The session still lists tools.
    assert_eq!(client.list_all_tools().await.unwrap().len(), 2);
    client.cancel().await.unwrap();
}

/// Never answers; counts the calls it saw dropped.
#[derive(Default)]
struct Silent(Arc<std::sync::atomic::AtomicUsize>);

struct CountDrop(Arc<std::sync::atomic::AtomicUsize>);

impl Drop for CountDrop {
    fn drop(&mut self) {
        self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
}

impl agent_contracts_runtime::ChatModel for Silent {
    fn complete<'a>(
        &'a self,
        _: &'a agent_contracts_runtime::model::ChatRequest,
    ) -> agent_contracts_runtime::model::BoxFuture<
        'a,
        Result<
            agent_contracts_runtime::model::ChatResponse,
            agent_contracts_runtime::model::ModelError,
        >,
    > {
        let guard = CountDrop(self.0.clone());
        Box::pin(async move {
            let _guard = guard;
            std::future::pending().await
        })
    }
}

#[tokio::test]
async fn a_cancelled_request_stops_the_agents_run() {
    let dropped = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let server = AgentServer::new(vec![&DiscoveryAgent], Arc::new(Silent(dropped.clone())));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(server.serve_http_on(listener));
    agent_contracts_mcp::tls::install_crypto_provider();
    let transport = StreamableHttpClientTransport::from_uri(format!("http://{addr}/mcp"));
    let client = ().serve(transport).await.unwrap();
    let arguments = json!({"task": "Scan", "target_url": "https://a.example"});
    // The client gives up: dropping its request sends `notifications/cancelled`.
    let gave_up = tokio::time::timeout(
        std::time::Duration::from_millis(200),
        client.call_tool(call("run_discovery_agent", arguments)),
    )
    .await;
    assert!(gave_up.is_err());
    // The server cancels the run, which drops the model call (waiting at most 5 s for it).
    for _ in 0..100 {
        if dropped.load(std::sync::atomic::Ordering::SeqCst) > 0 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(dropped.load(std::sync::atomic::Ordering::SeqCst), 1);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn untyped_arguments_reach_the_prompt_as_the_client_wrote_them() {
    let model = plan_model();
    let wire = Wire::default();
    let server = AgentServer::new(vec![&PlanGeneratorAgent], model.clone());
    let client = client_of(server, wire.clone()).await;
    let arguments = wire.as_written(NUMBERS);
    let result = client
        .call_tool(call("run_plan_generator_agent", Value::Object(arguments)))
        .await
        .unwrap();
    assert!(wire.all_sent());
    assert_eq!(result.is_error, Some(false), "{result:?}");
    let prompt = &model.requests_of("plan_generator_agent")[0].messages[1].content;
    assert_eq!(prompt, NUMBERS_PROMPT);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_body_too_long_or_not_json_gets_a_json_rpc_error_and_the_session_survives() {
    let model = Arc::new(ScriptedModel::default().script(
        "plan_generator_agent",
        [GOOD_PLAN; 3].map(Message::assistant),
    ));
    let wire = Wire::default();
    // Arguments' text is read from bodies of up to 8 KiB + the envelope room.
    let mut config = Config::default();
    config.limits.max_bytes = 8 * 1024;
    let server = AgentServer::with_config(vec![&PlanGeneratorAgent], model.clone(), config);
    let client = client_of(server, wire.clone()).await;

    // Past the bound (by insignificant whitespace): refused unread, with a JSON-RPC error
    // under the call's id, so the client's call ends with it; no agent runs.
    let padding = " ".repeat(agent_contracts_mcp::MAX_ENVELOPE_BYTES + 16 * 1024);
    let padded = FIXTURE.replacen('{', &format!("{{{padding}"), 1);
    let arguments = wire.as_written(&padded);
    let error = client
        .call_tool(call("run_plan_generator_agent", Value::Object(arguments)))
        .await
        .unwrap_err();
    assert!(wire.all_sent());
    let max = 8 * 1024 + agent_contracts_mcp::MAX_ENVELOPE_BYTES;
    assert!(
        error
            .to_string()
            .contains(&format!("too large: the server reads at most {max} bytes")),
        "{error}"
    );
    assert_eq!(model.requests_of("plan_generator_agent").len(), 0);

    // Not JSON: a JSON-RPC parse error, under the id the body's start names.
    let broken = json!({"task": "Scan", "target_url": "https://a.example"});
    let Value::Object(map) = broken.clone() else {
        unreachable!()
    };
    wire.swap(&map, r#"{"task": "Scan", "target_url": 0.60,}"#);
    let error = client
        .call_tool(call("run_plan_generator_agent", broken))
        .await
        .unwrap_err();
    assert!(wire.all_sent());
    assert!(
        error.to_string().contains("the body is not JSON"),
        "{error}"
    );
    assert_eq!(model.requests_of("plan_generator_agent").len(), 0);

    // The session goes on, its next call read as written.
    let arguments = wire.as_written(NUMBERS);
    let result = client
        .call_tool(call("run_plan_generator_agent", Value::Object(arguments)))
        .await
        .unwrap();
    assert!(wire.all_sent());
    assert_eq!(result.is_error, Some(false), "{result:?}");
    let requests = model.requests_of("plan_generator_agent");
    assert_eq!(requests[0].messages[1].content, NUMBERS_PROMPT);
    assert_eq!(client.list_all_tools().await.unwrap().len(), 1);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn past_the_calls_in_flight_a_call_is_told_the_server_is_busy() {
    let dropped = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let server = AgentServer::new(vec![&DiscoveryAgent], Arc::new(Silent(dropped.clone())))
        .with_max_calls(1);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(server.serve_http_on(listener));
    agent_contracts_mcp::tls::install_crypto_provider();
    let transport = StreamableHttpClientTransport::from_uri(format!("http://{addr}/mcp"));
    let client = ().serve(transport).await.unwrap();
    let arguments = json!({"task": "Scan", "target_url": "https://a.example"});
    // One call waits on the model forever; the next is refused at once.
    let waiting = client.call_tool(call("run_discovery_agent", arguments.clone()));
    let refused = async {
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        client
            .call_tool(call("run_discovery_agent", arguments.clone()))
            .await
            .unwrap()
    };
    let refused = tokio::select! {
        refused = refused => refused,
        _ = waiting => unreachable!("the model never answers"),
    };
    assert_eq!(refused.is_error, Some(true));
    let message = serde_json::to_value(&refused.content[0]).unwrap();
    assert!(
        message["text"]
            .as_str()
            .unwrap()
            .contains("as many calls as it runs at once"),
        "{message}"
    );
    client.cancel().await.unwrap();
}
