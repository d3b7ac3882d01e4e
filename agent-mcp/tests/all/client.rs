//! MCP tools for agents (`agent_contracts_mcp::client`): an agent's model calls a tool of an MCP server
//! (the project's own, over streamable HTTP on loopback) with broken arguments, gets the retry
//! error without the server being reached, calls again correctly, and reads the structured
//! result; a result that breaks its `outputSchema`, an `isError` result and a slow server each
//! come back as a tool result that says so.

use agent_contracts_mcp::AgentServer;
use agent_contracts_mcp::client::{McpServer, ToolSettings};
use agent_contracts_runtime::{
    ChatModel, model::BoxFuture, model::ChatRequest, model::ChatResponse, model::ModelError,
};
use agent_contracts_runtime::{
    Message, ScriptedModel, Workflow, model::tool_calls, workflow::Member,
    workflow::WorkflowOutcome,
};
use agent_examples::agents::DiscoveryAgent;
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// The examples' canned answers, counting the calls that reached it.
#[derive(Clone, Default)]
struct Counted {
    calls: Arc<AtomicUsize>,
    delay: Duration,
}

impl ChatModel for Counted {
    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        Box::pin(async move {
            self.calls.fetch_add(1, Ordering::SeqCst);
            tokio::time::sleep(self.delay).await;
            agent_examples::pipeline::canned_model()
                .complete(request)
                .await
        })
    }
}

/// Serves the discovery agent on `model` on a port the OS picks: its URL.
async fn serve(model: Counted) -> String {
    let server = AgentServer::new(vec![&DiscoveryAgent], Arc::new(model));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(server.serve_http_on(listener));
    format!("http://{addr}/mcp")
}

const ANSWER: &str = r#"{"page_title": "Login", "discovered_elements": [], "forms_detected": 1}"#;

#[tokio::test]
async fn broken_arguments_never_reach_the_server_and_the_corrected_call_does_once() {
    let remote = Counted::default();
    let url = serve(remote.clone()).await;
    let server = McpServer::http("agents", &url, None).await.unwrap();
    let tools = server.tools(ToolSettings::default()).await.unwrap();
    assert_eq!(tools.len(), 1);
    let tool = tools[0].clone();
    assert_eq!(tool.definition().name, "run_discovery_agent");

    // The local agent's model calls the remote agent twice: without `target_url`, then with.
    let model = Arc::new(ScriptedModel::default().script(
        "discovery_agent",
        [
            tool_calls([("run_discovery_agent", r#"{"task": "Scan the page"}"#)]),
            tool_calls([(
                "run_discovery_agent",
                r#"{"task": "Scan the page", "target_url": "https://a.example/login"}"#,
            )]),
            Message::assistant(ANSWER),
        ],
    ));
    let workflow = Workflow::new("uses_mcp")
        .agent(Member::from(&DiscoveryAgent).tool(tool))
        .goal([("discovery_agent", "Find the login form")]);
    let outcome = workflow
        .runner(model.clone())
        .start_with_kwargs(
            r#"{"task": "Find the login form", "target_url": "https://a.example/login"}"#,
        )
        .await
        .unwrap();
    assert!(matches!(outcome, WorkflowOutcome::Finished { .. }));
    // One call reached the server: the corrected one.
    assert_eq!(remote.calls.load(Ordering::SeqCst), 1);
    let requests = model.requests_of("discovery_agent");
    let tool_result = |request: usize| -> Value {
        let message = requests[request].messages.last().unwrap();
        serde_json::from_str(&message.content).unwrap()
    };
    // The model got the retry error of the tool's inputSchema...
    let refused = tool_result(1);
    assert_eq!(refused["success"], false);
    assert_eq!(refused["missing_fields"], json!(["target_url"]));
    // ...and then the remote agent's checked, structured output.
    let answered = tool_result(2);
    assert_eq!(answered["page_title"], "Login - MyApp", "{answered}");
}

#[tokio::test]
async fn a_slow_server_times_out_as_a_tool_result() {
    let remote = Counted {
        delay: Duration::from_secs(30),
        ..Counted::default()
    };
    let url = serve(remote).await;
    let server = McpServer::http("agents", &url, None).await.unwrap();
    let settings = ToolSettings::default().with_timeout(Duration::from_millis(200));
    let tool = server.tools(settings).await.unwrap().remove(0);
    let result = tool
        .call(r#"{"task": "Scan", "target_url": "https://a.example"}"#)
        .await;
    assert_eq!(result["success"], false);
    assert!(
        result["error"]
            .as_str()
            .unwrap()
            .contains("did not answer within 0.2 s"),
        "{result}"
    );
    // Nested past the agents' depth bound: the retry error, from this side (the server's own
    // refusal would carry the call's `context_id`).
    let deep = format!(
        r#"{{"task": "Scan", "target_url": "https://a.example", "x": {}1{}}}"#,
        "[".repeat(100),
        "]".repeat(100)
    );
    let result = tool.call(&deep).await;
    assert_eq!(result["success"], false, "{result}");
    assert!(result["validation_message"].as_str().is_some(), "{result}");
    assert!(result.get("context_id").is_none(), "{result}");
    // Not JSON at all: said so, nothing sent.
    let result = tool.call("{not json").await;
    assert!(
        result["error"]
            .as_str()
            .unwrap()
            .starts_with("the arguments are not JSON")
    );
}

#[tokio::test]
async fn a_server_that_dies_mid_call_is_a_tool_result_not_a_failed_run() {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/fixtures/python_mcp/dies.py"
    );
    let mut command = tokio::process::Command::new("python3");
    command.arg(script);
    let server = McpServer::stdio("dies", command).await.unwrap();
    let tool = server
        .tools(ToolSettings::default())
        .await
        .unwrap()
        .remove(0);
    let result = tokio::time::timeout(Duration::from_secs(10), tool.call("{}"))
        .await
        .expect("the call ends when the server does");
    assert_eq!(result["success"], false, "{result}");
    assert!(
        result["error"]
            .as_str()
            .unwrap()
            .contains("could not be called"),
        "{result}"
    );
}

/// A server written straight on rmcp: `count` answers outside its `outputSchema`, `fail`
/// answers `isError`.
#[derive(Clone)]
struct Odd;

impl rmcp::ServerHandler for Odd {
    fn get_info(&self) -> rmcp::model::ServerConfig {
        rmcp::model::ServerConfig::new(
            rmcp::model::ServerCapabilities::builder()
                .enable_tools()
                .build(),
        )
    }

    async fn list_tools(
        &self,
        _: Option<rmcp::model::PaginatedRequestParams>,
        _: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> Result<rmcp::model::ListToolsResult, rmcp::ErrorData> {
        let object = |value: Value| Arc::new(value.as_object().unwrap().clone());
        let input = object(json!({"type": "object"}));
        let count = rmcp::model::Tool::new("count", "Counts", input.clone()).with_raw_output_schema(
            object(json!({"type": "object", "required": ["n"], "properties": {"n": {"type": "integer"}}})),
        );
        let fail = rmcp::model::Tool::new("fail", "Fails", input);
        Ok(rmcp::model::ListToolsResult::with_all_items(vec![
            count, fail,
        ]))
    }

    async fn call_tool(
        &self,
        request: rmcp::model::CallToolRequestParams,
        _: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> Result<rmcp::model::CallToolResponse, rmcp::ErrorData> {
        let result = match request.name.as_ref() {
            "count" => rmcp::model::CallToolResult::structured(json!({"n": "many"})),
            _ => rmcp::model::CallToolResult::error(vec![rmcp::model::ContentBlock::text(
                "the disk is full",
            )]),
        };
        Ok(result.into())
    }
}

#[tokio::test]
async fn a_result_outside_its_output_schema_and_an_is_error_result_are_said_to_the_model() {
    use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
    use rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService,
    };
    let config = StreamableHttpServerConfig::default().with_legacy_session_mode(false);
    let service =
        StreamableHttpService::new(|| Ok(Odd), Arc::new(NeverSessionManager::default()), config);
    let app = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });

    let server = McpServer::http("odd", &format!("http://{addr}/mcp"), None)
        .await
        .unwrap();
    let tools = server.tools(ToolSettings::default()).await.unwrap();
    let named = |name: &str| {
        tools
            .iter()
            .find(|t| t.definition().name == name)
            .unwrap()
            .clone()
    };
    let outside = named("count").call("{}").await;
    assert_eq!(outside["success"], false);
    assert_eq!(
        outside["error"],
        "the tool's result breaks its outputSchema"
    );
    assert_eq!(outside["violations"]["path"], json!(["n"]), "{outside}");
    let failed = named("fail").call("{}").await;
    assert_eq!(
        failed,
        json!({"success": false, "tool": "fail", "error": "the disk is full"})
    );
}

/// Whether this machine's Python has the official MCP SDK (`.ci/run` installs it).
fn python_sdk() -> bool {
    std::process::Command::new("python3")
        .args(["-c", "import mcp.server.fastmcp"])
        .output()
        .is_ok_and(|out| out.status.success())
}

#[tokio::test]
async fn a_server_of_the_official_python_sdk_gets_only_the_corrected_call() {
    if !python_sdk() {
        eprintln!("skipped: python3 has no `mcp` package (pip install mcp; .ci/run does)");
        return;
    }
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/fixtures/python_mcp/server.py"
    );
    let mut command = tokio::process::Command::new("python3");
    command.arg(script).stderr(std::process::Stdio::null());
    let server = McpServer::stdio("python", command).await.unwrap();
    let tools = server.tools(ToolSettings::default()).await.unwrap();
    let add = tools[0].clone();
    assert_eq!(add.definition().name, "add");

    let model = Arc::new(ScriptedModel::default().script(
        "discovery_agent",
        [
            tool_calls([("add", r#"{"a": "two", "b": 3}"#)]),
            tool_calls([("add", r#"{"a": 2, "b": 3}"#)]),
            Message::assistant(ANSWER),
        ],
    ));
    let workflow = Workflow::new("uses_python")
        .agent(Member::from(&DiscoveryAgent).tool(add))
        .goal([("discovery_agent", "Add two numbers")]);
    let outcome = workflow
        .runner(model.clone())
        .start_with_kwargs(r#"{"task": "Add them", "target_url": "https://a.example"}"#)
        .await
        .unwrap();
    assert!(matches!(outcome, WorkflowOutcome::Finished { .. }));
    let requests = model.requests_of("discovery_agent");
    let tool_result = |request: usize| -> Value {
        let message = requests[request].messages.last().unwrap();
        serde_json::from_str(&message.content).unwrap()
    };
    // The broken call got the retry error of the tool's inputSchema, here...
    let refused = tool_result(1);
    assert_eq!(refused["success"], false);
    assert_eq!(refused["path"], json!(["a"]), "{refused}");
    // ...and the corrected one was the server's first: its structured result reached the model.
    assert_eq!(tool_result(2), json!({"sum": 5, "calls": 1}));
}
