//! The plan generator served over MCP, called without `target_url` (`"x-source": "user"`):
//! a client that takes `input_required` results gets an elicitation for it; an answer that
//! breaks the field's schema is asked again with why, a good one completes the call, and the
//! model is asked nothing before the answer. A client without elicitation is told what to ask
//! its user, and its call with the field runs.

use crate::common::FIXTURE;
use agent_contracts_mcp::AgentServer;
use agent_contracts_runtime::{Message, ScriptedModel};
use agent_examples::agents::PlanGeneratorAgent;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientCapabilities, ClientConfig, ElicitRequestParams,
    ElicitResult, ElicitationAction, Implementation, InputRequest, JsonObject, ProtocolVersion,
};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt as _, RequestContext, RoleClient};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientHandler, ErrorData, ServiceExt as _};
use serde_json::{Value, json};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

const PLAN: &str = r#"{"plan_file_path": "plans/login_form_automation.md", "status": "success", "agent_response_content": "Fill the form, submit."}"#;

fn model() -> Arc<ScriptedModel> {
    Arc::new(ScriptedModel::default().script("plan_generator_agent", [Message::assistant(PLAN)]))
}

async fn serve(model: Arc<ScriptedModel>) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = AgentServer::new(vec![&PlanGeneratorAgent], model);
    tokio::spawn(server.serve_http_on(listener));
    format!("http://{addr}/mcp")
}

/// The fixture's arguments without the field only a person gives.
fn without_url() -> JsonObject {
    let mut arguments: JsonObject = serde_json::from_str(FIXTURE).unwrap();
    assert!(arguments.remove("target_url").is_some());
    arguments
}

fn call(arguments: JsonObject) -> CallToolRequestParams {
    let mut params = CallToolRequestParams::new("run_plan_generator_agent");
    params.arguments = Some(arguments);
    params
}

/// A client on protocol `2026-07-28` that declares elicitation, answers each form with the
/// next of `answers`, and notes each question with how many requests the model had seen.
struct Person {
    /// The protocol it speaks when the server asks (`None`: the SDK's latest).
    protocol: Option<ProtocolVersion>,
    answers: Mutex<VecDeque<&'static str>>,
    asked: Arc<Mutex<Vec<(String, Value, usize)>>>,
    model: Arc<ScriptedModel>,
}

impl ClientHandler for Person {
    fn get_info(&self) -> ClientConfig {
        let config = ClientConfig::new(
            ClientCapabilities::builder().enable_elicitation().build(),
            Implementation::new("person", "1.0.0"),
        );
        match &self.protocol {
            Some(version) => config.with_protocol_version(version.clone()),
            None => config,
        }
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let seen = self.model.requests_of("plan_generator_agent").len();
        if let ElicitRequestParams::FormElicitationParams {
            message,
            requested_schema,
            ..
        } = request
        {
            let schema = serde_json::to_value(requested_schema).unwrap();
            self.asked.lock().unwrap().push((message, schema, seen));
        }
        let answer = self.answers.lock().unwrap().pop_front().unwrap();
        Ok(
            ElicitResult::new(ElicitationAction::Accept)
                .with_content(json!({"target_url": answer})),
        )
    }
}

#[tokio::test]
async fn an_omitted_user_field_is_elicited_checked_and_the_call_completes() {
    let model = model();
    let url = serve(model.clone()).await;
    let asked = Arc::new(Mutex::new(Vec::new()));
    let person = Person {
        protocol: None,
        answers: Mutex::new(VecDeque::from(["", "https://myapp.com/login"])),
        asked: asked.clone(),
        model: model.clone(),
    };
    agent_contracts_mcp::tls::install_crypto_provider();
    let client = person
        .serve_with_lifecycle(
            StreamableHttpClientTransport::from_uri(url),
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        )
        .await
        .unwrap();

    // One round by hand: the result asks for the field, by name, with its schema's bounds.
    let response = client.call_tool_once(call(without_url())).await.unwrap();
    let CallToolResponse::InputRequired(required) = response else {
        panic!("expected an input_required result, got {response:?}");
    };
    assert_eq!(required.request_state.as_deref(), Some("target_url"));
    let requests = required.input_requests.unwrap();
    let Some(InputRequest::Elicitation(elicit)) = requests.get("fields") else {
        panic!("expected an elicitation request for the fields");
    };
    let request = serde_json::to_value(&elicit.params).unwrap();
    let schema = &request["requestedSchema"];
    assert_eq!(schema["required"], json!(["target_url"]));
    assert_eq!(schema["properties"]["target_url"]["type"], "string");
    assert_eq!(schema["properties"]["target_url"]["minLength"], 1);
    assert!(model.requests_of("plan_generator_agent").is_empty());

    // The SDK's driver: each round answered by the person, the refused one asked again.
    let result = client.call_tool(call(without_url())).await.unwrap();
    assert_eq!(result.is_error, Some(false), "{result:?}");
    let output = result.structured_content.unwrap();
    assert_eq!(output["status"], "success");
    let asked = asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 2, "{asked:?}");
    let question = "`plan_generator_agent` needs `target_url`, which only you can give: The URL of the page the crawl plan is for, exactly as the sub-agents visited it. Example: 'https://myapp.com/login'";
    assert_eq!(asked[0].0, question);
    assert_eq!(
        asked[1].0,
        format!("That answer was refused: \"\" is shorter than 1 character. {question}")
    );
    // The model saw nothing before the answer, and one request after it, with the answer.
    assert_eq!((asked[0].2, asked[1].2), (0, 0));
    let requests = model.requests_of("plan_generator_agent");
    assert_eq!(requests.len(), 1);
    assert!(
        requests[0].messages[1]
            .content
            .contains("https://myapp.com/login")
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_client_without_elicitation_is_told_what_to_ask_and_calls_again() {
    let model = model();
    let url = serve(model.clone()).await;
    agent_contracts_mcp::tls::install_crypto_provider();
    let client = ().serve(StreamableHttpClientTransport::from_uri(url)).await.unwrap();

    let result = client.call_tool(call(without_url())).await.unwrap();
    assert_eq!(result.is_error, Some(true));
    let asked = result.structured_content.unwrap();
    assert_eq!(asked["status"], "input_required");
    assert_eq!(asked["fields"], json!(["target_url"]));
    assert_eq!(asked["schemas"]["target_url"]["minLength"], 1);
    assert!(
        asked["question"]
            .as_str()
            .unwrap()
            .starts_with("`plan_generator_agent` needs `target_url`")
    );
    assert!(model.requests_of("plan_generator_agent").is_empty());

    let mut given = without_url();
    given.insert("target_url".into(), "https://myapp.com/login".into());
    let result = client.call_tool(call(given)).await.unwrap();
    assert_eq!(result.is_error, Some(false), "{result:?}");
    assert_eq!(result.structured_content.unwrap()["status"], "success");
    assert_eq!(model.requests_of("plan_generator_agent").len(), 1);
    client.cancel().await.unwrap();
}

/// Arguments the server repaired losslessly (`"aa"` for the enum's `AA`) run, and the
/// client is told each repair in the result's `_meta.repairs` (the structured content is
/// the output contract's).
#[tokio::test]
async fn the_repairs_made_to_a_clients_arguments_come_back_in_meta() {
    use agent_examples::agents::AccessibilityAgent;
    let audit = r#"{"overall_score": 78, "compliance_level": "AA", "issues": [], "passed_checks": {}, "audit_metadata": {"tool_version": "1.2.0", "rules_applied": 56, "elements_scanned": 124}}"#;
    let model = Arc::new(
        ScriptedModel::default().script("accessibility_agent", [Message::assistant(audit)]),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(
        AgentServer::new(vec![&AccessibilityAgent], model.clone()).serve_http_on(listener),
    );
    agent_contracts_mcp::tls::install_crypto_provider();
    let client = ()
        .serve(StreamableHttpClientTransport::from_uri(format!(
            "http://{addr}/mcp"
        )))
        .await
        .unwrap();
    let arguments = json!({"task": "Audit", "target_url": "https://a.example", "wcag_level": "aa"});
    let mut params = CallToolRequestParams::new("run_accessibility_agent");
    params.arguments = Some(serde_json::from_value(arguments).unwrap());
    let result = client.call_tool(params).await.unwrap();
    assert_eq!(result.is_error, Some(false), "{result:?}");
    let meta = serde_json::to_value(result.meta.unwrap()).unwrap();
    assert_eq!(meta["repairs"][0]["path"], "/wcag_level");
    // `before` and `after` are JSON texts.
    assert_eq!(meta["repairs"][0]["before"], r#""aa""#);
    assert_eq!(meta["repairs"][0]["after"], r#""AA""#);
    assert!(meta["context_id"].is_string());
    let prompt = &model.requests_of("accessibility_agent")[0].messages[1].content;
    assert!(prompt.contains("AA"), "{prompt}");
    client.cancel().await.unwrap();
}

/// A client on protocol `2025-06-18` that declares elicitation is asked by
/// `elicitation/create` while its call waits: the refused answer is asked again, the good one
/// completes the call, and the model is asked nothing before it.
#[tokio::test]
async fn a_client_on_an_earlier_protocol_is_asked_by_elicitation_create() {
    let model = model();
    let url = serve(model.clone()).await;
    let asked = Arc::new(Mutex::new(Vec::new()));
    let person = Person {
        protocol: Some(ProtocolVersion::V_2025_06_18),
        answers: Mutex::new(VecDeque::from(["", "https://myapp.com/login"])),
        asked: asked.clone(),
        model: model.clone(),
    };
    agent_contracts_mcp::tls::install_crypto_provider();
    let client = person
        .serve(StreamableHttpClientTransport::from_uri(url))
        .await
        .unwrap();
    assert_eq!(
        client.peer_info().unwrap().protocol_version,
        ProtocolVersion::V_2025_06_18
    );
    let result = client.call_tool(call(without_url())).await.unwrap();
    assert_eq!(result.is_error, Some(false), "{result:?}");
    assert_eq!(result.structured_content.unwrap()["status"], "success");
    let asked = asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 2, "{asked:?}");
    assert!(
        asked[0]
            .0
            .starts_with("`plan_generator_agent` needs `target_url`")
    );
    assert!(asked[1].0.starts_with("That answer was refused: "));
    assert_eq!(asked[0].1["properties"]["target_url"]["minLength"], 1);
    assert_eq!((asked[0].2, asked[1].2), (0, 0));
    assert_eq!(model.requests_of("plan_generator_agent").len(), 1);
    client.cancel().await.unwrap();
}

/// The official Python MCP SDK's client (`mcp`, pinned in `.ci/run`) with an elicitation
/// callback: asked for `target_url`, its refused answer asked again, its good one completing
/// the call; the model saw nothing before.
#[tokio::test]
async fn the_official_python_sdks_client_answers_the_elicitation() {
    let has_sdk = std::process::Command::new("python3")
        .args(["-c", "import mcp.client.streamable_http"])
        .output()
        .is_ok_and(|out| out.status.success());
    if !has_sdk {
        eprintln!("skipped: python3 has no `mcp` package (pip install mcp; .ci/run does)");
        return;
    }
    let model = model();
    let url = serve(model.clone()).await;
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/fixtures/python_mcp/elicit_client.py"
    );
    let arguments = serde_json::to_string(&without_url()).unwrap();
    let output = tokio::time::timeout(
        std::time::Duration::from_secs(60),
        tokio::process::Command::new("python3")
            .args([script, url.as_str(), arguments.as_str()])
            .output(),
    )
    .await
    .unwrap()
    .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let seen: Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(seen["is_error"], false, "{seen}");
    assert_eq!(seen["structured"]["status"], "success");
    let asked = seen["asked"].as_array().unwrap();
    assert_eq!(asked.len(), 2, "{seen}");
    assert!(
        asked[0]["message"]
            .as_str()
            .unwrap()
            .starts_with("`plan_generator_agent` needs `target_url`")
    );
    assert!(
        asked[1]["message"]
            .as_str()
            .unwrap()
            .starts_with("That answer was refused: ")
    );
    assert_eq!(asked[0]["schema"]["required"], json!(["target_url"]));
    let requests = model.requests_of("plan_generator_agent");
    assert_eq!(requests.len(), 1);
    assert!(
        requests[0].messages[1]
            .content
            .contains("https://myapp.com/login")
    );
}
