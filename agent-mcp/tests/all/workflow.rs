//! The event-planning workflow served as MCP tools, driven by rmcp's own client over
//! streamable HTTP on loopback: the tools and their schemas, a run that pauses with a question
//! and a handle and ends through `resume_event_planning`, bad handles and answers, a handle
//! used twice, the specification's `input_required` round for a client on protocol
//! `2026-07-28`, and a run paused on one server resumed by a new one on the same file store.

use agent_contracts_mcp::AgentServer;
use agent_contracts_runtime::{Message, ScriptedModel};
use agent_contracts_runtime::{store::CheckpointStore, store::RunStatus};
use agent_contracts_store::FileStore;
use agent_examples::event_planning;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientCapabilities, ClientConfig,
    ElicitRequestParams, ElicitResult, ElicitationAction, Implementation, InputRequest,
    ProtocolVersion,
};
use rmcp::service::{
    ClientLifecycleMode, ClientServiceExt as _, RequestContext, RoleClient, RunningService,
};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientHandler, ErrorData, ServiceExt as _};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};

const TASK: &str = event_planning::REQUEST;

fn server(model: Arc<ScriptedModel>) -> AgentServer {
    AgentServer::new(Vec::new(), model)
        .workflow(event_planning::workflow(), "Plans an event.")
        .unwrap()
}

/// Serves `server` on a port the OS picks; the task ends with the test's runtime, or when
/// aborted (a server that stops).
async fn serve(server: AgentServer) -> (String, tokio::task::JoinHandle<std::io::Result<()>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let task = tokio::spawn(server.serve_http_on(listener));
    (format!("http://{addr}/mcp"), task)
}

async fn connect(url: &str) -> RunningService<RoleClient, ()> {
    agent_contracts_mcp::tls::install_crypto_provider();
    ().serve(StreamableHttpClientTransport::from_uri(url.to_owned()))
        .await
        .unwrap()
}

fn call(name: &str, arguments: Value) -> CallToolRequestParams {
    let mut params = CallToolRequestParams::new(name.to_owned());
    if let Value::Object(map) = arguments {
        params.arguments = Some(map);
    }
    params
}

fn structured(result: &CallToolResult) -> Value {
    result.structured_content.clone().unwrap()
}

fn text(result: &CallToolResult) -> String {
    let content = serde_json::to_value(&result.content[0]).unwrap();
    content["text"].as_str().unwrap().to_owned()
}

/// Starts a run: it pauses at the catering specialist's question.
async fn start(client: &RunningService<RoleClient, ()>) -> Value {
    let result = client
        .call_tool(call("run_event_planning", json!({"task": TASK})))
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(false), "{result:?}");
    let paused = structured(&result);
    assert_eq!(
        serde_json::from_str::<Value>(&text(&result)).unwrap(),
        paused
    );
    paused
}

async fn resume(client: &RunningService<RoleClient, ()>, arguments: Value) -> CallToolResult {
    client
        .call_tool(call("resume_event_planning", arguments))
        .await
        .unwrap()
}

#[tokio::test]
async fn the_workflow_and_its_resume_tool_are_listed_with_their_schemas() {
    let (url, _server) = serve(server(Arc::new(ScriptedModel::default()))).await;
    let client = connect(&url).await;
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, ["run_event_planning", "resume_event_planning"]);
    // The run's input is the first agent's: `task` and the venue agent's fields.
    let run = &tools[0];
    assert_eq!(run.input_schema["required"], json!(["task"]));
    assert_eq!(
        run.input_schema["properties"]["preferred_area"]["type"],
        "string"
    );
    assert_eq!(
        run.description.as_deref().unwrap(),
        "Plans an event. A run may pause to ask the user a question: the result then has `status: \"input_required\"`, the `question` and a `handle`; answer it with `resume_event_planning`."
    );
    let resume = &tools[1];
    assert_eq!(resume.input_schema["required"], json!(["handle", "answer"]));
    assert_eq!(resume.input_schema["additionalProperties"], false);
    assert_eq!(
        resume.description.as_deref().unwrap(),
        "Answers the question a paused `run_event_planning` asked: pass its `handle` and the user's `answer`. The result is the run's next question or its end."
    );
    for tool in [run, resume] {
        let output = tool.output_schema.as_ref().unwrap();
        let statuses: Vec<&Value> = output["oneOf"]
            .as_array()
            .unwrap()
            .iter()
            .map(|branch| &branch["properties"]["status"]["const"])
            .collect();
        assert_eq!(statuses, [&json!("finished"), &json!("input_required")]);
    }
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_paused_run_answers_with_a_question_and_a_handle_and_resumes_to_its_end() {
    let model = Arc::new(event_planning::scripted_model());
    let (url, _server) = serve(server(model.clone())).await;
    let client = connect(&url).await;
    let paused = start(&client).await;
    assert_eq!(paused["status"], "input_required");
    assert_eq!(
        paused["question"],
        "Do any guests have dietary restrictions?"
    );
    assert_eq!(paused["requesting_agent"], "catering_agent");
    assert_eq!(paused["resume_tool"], "resume_event_planning");
    let handle = paused["handle"].as_str().unwrap();
    // 64 hex digits of signature, the checkpoint's sequence, the run's ID.
    let (signature, rest) = handle.split_once('.').unwrap();
    assert_eq!(signature.len(), 64);
    assert!(
        rest.split_once('.').unwrap().1.starts_with("run-"),
        "{handle}"
    );

    let result = resume(
        &client,
        json!({"handle": handle, "answer": event_planning::HUMAN_ANSWER}),
    )
    .await;
    assert_eq!(result.is_error, Some(false), "{result:?}");
    let finished = structured(&result);
    assert_eq!(finished["status"], "finished");
    assert_eq!(finished["output"], event_planning::PLAN);
    let outputs = finished["outputs"].as_object().unwrap();
    // A JSON object for machines: its keys in serde_json's (sorted) order.
    let keys: Vec<&str> = outputs.keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "budget_agent_output",
            "catering_agent_output",
            "logistics_agent_output",
            "venue_agent_output",
        ]
    );
    assert_eq!(outputs["catering_agent_output"]["cost_usd"], 1900);
    assert_eq!(
        serde_json::from_str::<Value>(&text(&result)).unwrap(),
        finished
    );
    // The answer reached the specialist that asked, as the conversation's last message.
    let catering = model.requests_of("catering_agent");
    assert_eq!(catering.len(), 2);
    assert_eq!(
        catering[1].messages.last().unwrap().content,
        format!(
            "User provided the following input: {}\nPlease continue with your analysis based on this feedback.",
            event_planning::HUMAN_ANSWER
        )
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn bad_handles_and_answers_are_is_error_results_and_the_session_survives() {
    let model = Arc::new(event_planning::scripted_model());
    let (url, _server) = serve(server(model.clone())).await;
    let client = connect(&url).await;
    let paused = start(&client).await;
    let handle = paused["handle"].as_str().unwrap();

    // An answer that is not a string: the resume contract's retry error.
    let result = resume(&client, json!({"handle": handle, "answer": 3})).await;
    assert_eq!(result.is_error, Some(true));
    let error = structured(&result);
    assert_eq!(error["error"], "Input contract validation failed");
    assert_eq!(error["path"], json!(["answer"]));
    // No handle, and a key the tool does not take.
    let result = resume(&client, json!({"answer": "yes", "run": "x"})).await;
    assert_eq!(result.is_error, Some(true));
    assert_eq!(structured(&result)["missing_fields"], json!(["handle"]));

    // A handle with its sequence changed, one of garbage, one too long.
    let (signature, rest) = handle.split_once('.').unwrap();
    let (sequence, run_id) = rest.split_once('.').unwrap();
    let forged = format!(
        "{signature}.{}.{run_id}",
        sequence.parse::<u64>().unwrap() + 1
    );
    for bad in [forged.as_str(), "not-a-handle"] {
        let result = resume(&client, json!({"handle": bad, "answer": "yes"})).await;
        assert_eq!(result.is_error, Some(true));
        assert_eq!(
            text(&result),
            "unknown resume handle: it was not issued by this server for `event_planning`, or it was changed"
        );
    }
    let long = "a".repeat(agent_contracts_mcp::MAX_HANDLE_BYTES + 1);
    let result = resume(&client, json!({"handle": long, "answer": "yes"})).await;
    assert_eq!(structured(&result)["path"], json!(["handle"]));

    // A broken run call is the first agent's retry error; none of this reached a model after
    // the pause.
    let result = client
        .call_tool(call("run_event_planning", json!({"preferred_area": 7})))
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(true));
    assert_eq!(
        structured(&result)["error"],
        "Missing required `task` string"
    );
    assert_eq!(model.requests_of("catering_agent").len(), 1);

    // The session survives, and the real handle still answers.
    assert_eq!(client.list_all_tools().await.unwrap().len(), 2);
    let result = resume(
        &client,
        json!({"handle": handle, "answer": event_planning::HUMAN_ANSWER}),
    )
    .await;
    assert_eq!(structured(&result)["status"], "finished");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_handle_answers_one_question_once() {
    let (url, _server) = serve(server(Arc::new(event_planning::scripted_model()))).await;
    let client = connect(&url).await;
    let paused = start(&client).await;
    let arguments = json!({"handle": paused["handle"], "answer": event_planning::HUMAN_ANSWER});
    let first = resume(&client, arguments.clone()).await;
    assert_eq!(structured(&first)["status"], "finished");
    let second = resume(&client, arguments).await;
    assert_eq!(second.is_error, Some(true));
    assert_eq!(
        text(&second),
        "this question was already answered: the run is finished"
    );
    client.cancel().await.unwrap();
}

/// A client on protocol `2026-07-28` that declares elicitation and answers every request with
/// `answer`, recording the questions.
struct Answering {
    answer: &'static str,
    asked: Arc<Mutex<Vec<String>>>,
}

impl ClientHandler for Answering {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::builder().enable_elicitation().build(),
            Implementation::new("answering-client", "1.0.0"),
        )
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        if let ElicitRequestParams::FormElicitationParams { message, .. } = request {
            self.asked.lock().unwrap().push(message);
        }
        Ok(ElicitResult::new(ElicitationAction::Accept)
            .with_content(json!({"answer": self.answer})))
    }
}

async fn modern_client(url: &str, handler: Answering) -> RunningService<RoleClient, Answering> {
    agent_contracts_mcp::tls::install_crypto_provider();
    handler
        .serve_with_lifecycle(
            StreamableHttpClientTransport::from_uri(url.to_owned()),
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        )
        .await
        .unwrap()
}

#[tokio::test]
async fn a_client_that_takes_input_required_results_gets_an_elicitation_round() {
    let model = Arc::new(event_planning::scripted_model());
    let (url, _server) = serve(server(model.clone())).await;
    let asked = Arc::new(Mutex::new(Vec::new()));
    let handler = Answering {
        answer: event_planning::HUMAN_ANSWER,
        asked: asked.clone(),
    };
    let client = modern_client(&url, handler).await;

    // One round by hand: the `input_required` result asks for the answer and carries the
    // handle as its request state.
    let response = client
        .call_tool_once(call("run_event_planning", json!({"task": TASK})))
        .await
        .unwrap();
    let CallToolResponse::InputRequired(required) = response else {
        panic!("expected an input_required result, got {response:?}");
    };
    let handle = required.request_state.clone().unwrap();
    assert_eq!(handle.split_once('.').unwrap().0.len(), 64);
    let requests = required.input_requests.unwrap();
    let Some(InputRequest::Elicitation(elicit)) = requests.get("answer") else {
        panic!("expected an elicitation request for the answer");
    };
    let request = serde_json::to_value(&elicit.params).unwrap();
    assert_eq!(
        request["message"],
        "Do any guests have dietary restrictions?"
    );
    assert_eq!(request["requestedSchema"]["required"], json!(["answer"]));

    // A retry whose user declined is an error, and the run stays paused.
    let mut declined = call("run_event_planning", json!({"task": TASK}));
    declined.request_state = Some(handle.clone());
    declined.input_responses = Some(
        [(
            "answer".to_owned(),
            serde_json::to_value(ElicitResult::new(ElicitationAction::Decline)).unwrap(),
        )]
        .into(),
    );
    let CallToolResponse::Complete(refused) = client.call_tool_once(declined).await.unwrap() else {
        panic!("expected a final result");
    };
    assert_eq!(refused.is_error, Some(true));
    assert!(text(&refused).starts_with("the user did not answer: the run stays paused"));

    // The resume tool answers the same run for any client.
    let result = client
        .call_tool(call(
            "resume_event_planning",
            json!({"handle": handle, "answer": "none"}),
        ))
        .await
        .unwrap();
    assert_eq!(structured(&result)["status"], "finished");

    // The SDK's own driver: it answers the round through the client's handler and retries.
    let model = Arc::new(event_planning::scripted_model());
    let (url, _server) = serve(server(model.clone())).await;
    let handler = Answering {
        answer: event_planning::HUMAN_ANSWER,
        asked: asked.clone(),
    };
    let client = modern_client(&url, handler).await;
    let result = client
        .call_tool(call("run_event_planning", json!({"task": TASK})))
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(false), "{result:?}");
    assert_eq!(structured(&result)["output"], event_planning::PLAN);
    assert_eq!(
        *asked.lock().unwrap(),
        ["Do any guests have dietary restrictions?"]
    );
    let catering = model.requests_of("catering_agent");
    assert!(
        catering[1]
            .messages
            .last()
            .unwrap()
            .content
            .contains(event_planning::HUMAN_ANSWER)
    );
}

fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "agent-mcp-{name}-{}-{}",
        std::process::id(),
        agent_contracts_runtime::store::now_ms()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[tokio::test]
async fn a_new_server_on_the_same_store_resumes_a_run_the_old_one_paused() {
    let dir = temp_dir("restart");
    let store: Arc<dyn CheckpointStore> = Arc::new(FileStore::open(&dir).unwrap());
    let key: [u8; 32] = std::array::from_fn(|i| (i as u8).wrapping_mul(73).wrapping_add(7));
    let before = Arc::new(event_planning::script_before_question(
        ScriptedModel::default(),
    ));
    let (url, old) = serve(server(before).with_store(store.clone(), key).unwrap()).await;
    let client_of_old = connect(&url).await;
    let paused = start(&client_of_old).await;
    let handle = paused["handle"].as_str().unwrap().to_owned();
    let run_id = handle.splitn(3, '.').nth(2).unwrap().to_owned();
    assert_eq!(store.load(&run_id).await.unwrap().status, RunStatus::Paused);
    // The old server stops; nothing of the run is left in any process.
    old.abort();
    let _ = old.await;
    drop(client_of_old);

    // A server with another key refuses the handle.
    let other = Arc::new(ScriptedModel::default());
    let (url, _other) = serve(
        server(other)
            .with_store(
                store.clone(),
                std::array::from_fn(|i| (i as u8).wrapping_mul(37).wrapping_add(8)),
            )
            .unwrap(),
    )
    .await;
    let client_of_other = connect(&url).await;
    let result = resume(
        &client_of_other,
        json!({"handle": handle, "answer": "none"}),
    )
    .await;
    assert!(text(&result).starts_with("unknown resume handle"));
    client_of_other.cancel().await.unwrap();

    // A new server on the same store and key, with a model that never saw the run.
    let after = Arc::new(event_planning::script_after_question(
        ScriptedModel::default(),
    ));
    let (url, _new) = serve(
        server(after.clone())
            .with_store(store.clone(), key)
            .unwrap(),
    )
    .await;
    let client = connect(&url).await;
    let result = resume(
        &client,
        json!({"handle": handle, "answer": event_planning::HUMAN_ANSWER}),
    )
    .await;
    assert_eq!(result.is_error, Some(false), "{result:?}");
    assert_eq!(structured(&result)["output"], event_planning::PLAN);
    assert_eq!(after.requests_of("catering_agent").len(), 1);
    assert_eq!(
        store.load(&run_id).await.unwrap().status,
        RunStatus::Finished
    );

    // A run deleted from the store: its handle has expired.
    let paused = {
        let model = Arc::new(event_planning::script_before_question(
            ScriptedModel::default(),
        ));
        let (url, _server) = serve(server(model).with_store(store.clone(), key).unwrap()).await;
        start(&connect(&url).await).await
    };
    let handle = paused["handle"].as_str().unwrap();
    store
        .delete(handle.splitn(3, '.').nth(2).unwrap())
        .await
        .unwrap();
    let result = resume(&client, json!({"handle": handle, "answer": "none"})).await;
    assert_eq!(result.is_error, Some(true));
    assert_eq!(
        text(&result),
        "unknown or expired resume handle: the run is no longer stored"
    );
    client.cancel().await.unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_model_failure_mid_run_is_an_is_error_result() {
    // The venue agent answers, the budget agent has nothing scripted.
    let model = ScriptedModel::default().script(
        "venue_agent",
        [Message::assistant(
            r#"{"venue_name": "Loft", "capacity": 60, "cost_usd": 1500, "notes": "ok"}"#,
        )],
    );
    let (url, _server) = serve(server(Arc::new(model))).await;
    let client = connect(&url).await;
    let result = client
        .call_tool(call("run_event_planning", json!({"task": TASK})))
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(true));
    assert!(
        text(&result).starts_with("`event_planning` could not finish: "),
        "{}",
        text(&result)
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn the_handle_of_an_earlier_question_does_not_answer_a_later_one() {
    use agent_examples::agents::VenueAgent;
    const VENUE: &str =
        r#"{"venue_name": "Loft", "capacity": 60, "cost_usd": 1500, "notes": "ok"}"#;
    let model = ScriptedModel::default().script(
        "venue_agent",
        [
            Message::assistant(r#"{"user_input_needed": true, "user_prompt": "Indoors?"}"#),
            Message::assistant(r#"{"user_input_needed": true, "user_prompt": "Which area?"}"#),
            Message::assistant(VENUE),
        ],
    );
    let workflow = agent_contracts_runtime::Workflow::new("venues")
        .agent(&VenueAgent)
        .goal([("venue_agent", "Find a venue")]);
    let server = AgentServer::new(Vec::new(), Arc::new(model))
        .workflow(workflow, "Finds a venue.")
        .unwrap();
    let (url, _server) = serve(server).await;
    let client = connect(&url).await;
    let ask = |name: &str, arguments: Value| client.call_tool(call(name, arguments));

    let first = structured(&ask("run_venues", json!({"task": "A party"})).await.unwrap());
    assert_eq!(first["question"], "Indoors?");
    let answer = |handle: &Value, text: &str| json!({"handle": handle, "answer": text});
    let second = ask("resume_venues", answer(&first["handle"], "Yes"))
        .await
        .unwrap();
    let second = structured(&second);
    assert_eq!(second["question"], "Which area?");
    assert_ne!(second["handle"], first["handle"]);

    let again = ask("resume_venues", answer(&first["handle"], "No"))
        .await
        .unwrap();
    assert_eq!(again.is_error, Some(true));
    assert_eq!(
        text(&again),
        "this question was already answered: the run has gone on and asks another question, with its own handle"
    );
    let last = ask("resume_venues", answer(&second["handle"], "Downtown"))
        .await
        .unwrap();
    let last = structured(&last);
    assert_eq!(last["status"], "finished");
    // Without a synthesis the output is the last agent's answer.
    assert_eq!(last["output"], VENUE);
    assert_eq!(last["outputs"]["venue_agent_output"]["venue_name"], "Loft");
    client.cancel().await.unwrap();
}

/// Fails its second request with a 503, then answers from the script.
struct OverloadedOnce {
    inner: ScriptedModel,
    requests: std::sync::atomic::AtomicU32,
}

impl agent_contracts_runtime::ChatModel for OverloadedOnce {
    fn complete<'a>(
        &'a self,
        request: &'a agent_contracts_runtime::model::ChatRequest,
    ) -> agent_contracts_runtime::model::BoxFuture<
        'a,
        Result<
            agent_contracts_runtime::model::ChatResponse,
            agent_contracts_runtime::model::ModelError,
        >,
    > {
        let n = self
            .requests
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if n == 1 {
            let overloaded = agent_contracts_runtime::model::ModelError::Status {
                status: 503,
                body: "overloaded".into(),
                retry_after: None,
                should_retry: None,
            };
            return Box::pin(async move { Err(overloaded) });
        }
        self.inner.complete(request)
    }
}

#[tokio::test]
async fn an_answer_the_model_could_not_take_gets_a_fresh_handle_to_the_same_question() {
    use agent_examples::agents::VenueAgent;
    const VENUE: &str =
        r#"{"venue_name": "Loft", "capacity": 60, "cost_usd": 1500, "notes": "ok"}"#;
    let inner = ScriptedModel::default().script(
        "venue_agent",
        [
            Message::assistant(r#"{"user_input_needed": true, "user_prompt": "Indoors?"}"#),
            Message::assistant(VENUE),
        ],
    );
    let model = OverloadedOnce {
        inner,
        requests: Default::default(),
    };
    let workflow = agent_contracts_runtime::Workflow::new("venues")
        .agent(&VenueAgent)
        .goal([("venue_agent", "Find a venue")]);
    let server = AgentServer::new(Vec::new(), Arc::new(model))
        .workflow(workflow, "Finds a venue.")
        .unwrap();
    let (url, _server) = serve(server).await;
    let client = connect(&url).await;
    let ask = |name: &str, arguments: Value| client.call_tool(call(name, arguments));
    let answer = |handle: &str| json!({"handle": handle, "answer": "Yes"});

    let first = structured(&ask("run_venues", json!({"task": "A party"})).await.unwrap());
    assert_eq!(first["question"], "Indoors?");
    let failed = ask("resume_venues", answer(first["handle"].as_str().unwrap()))
        .await
        .unwrap();
    assert_eq!(failed.is_error, Some(true));
    let message = text(&failed);
    let (before, handle) = message.rsplit_once(" the handle `").unwrap();
    assert!(
        before.starts_with("`venues` could not go on: ")
            && before.ends_with(
                "Nothing is lost: the run is paused at the same question; answer it again with"
            ),
        "{message}"
    );
    let handle = handle.strip_suffix('`').unwrap();
    assert_ne!(handle, first["handle"]);
    let done = ask("resume_venues", answer(handle)).await.unwrap();
    let done = structured(&done);
    assert_eq!(done["status"], "finished");
    assert_eq!(done["outputs"]["venue_agent_output"]["venue_name"], "Loft");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_handle_past_its_lifetime_expires_and_the_run_stays_paused() {
    let server = server(Arc::new(event_planning::scripted_model()))
        .with_handle_ttl(std::time::Duration::from_millis(100));
    let (url, _server) = serve(server).await;
    let client = connect(&url).await;
    let paused = start(&client).await;
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let arguments = json!({"handle": paused["handle"], "answer": event_planning::HUMAN_ANSWER});
    let late = resume(&client, arguments).await;
    assert_eq!(late.is_error, Some(true));
    let message = text(&late);
    assert!(
        message.starts_with("this resume handle expired: its question was asked ")
            && message.ends_with(" ago, and handles of `event_planning` answer for 100 ms"),
        "{message}"
    );
    client.cancel().await.unwrap();
}

/// A client of `url` with the bearer `token`.
async fn connect_as(url: &str, token: &str) -> RunningService<RoleClient, ()> {
    agent_contracts_mcp::tls::install_crypto_provider();
    let config =
        rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(
            url.to_owned(),
        )
        .auth_header(token.to_owned());
    ().serve(StreamableHttpClientTransport::from_config(config))
        .await
        .unwrap()
}

#[tokio::test]
async fn one_client_cannot_evict_anothers_paused_runs() {
    let (first, second) = ("first-client-token-0123", "second-client-token-0123");
    let settings = agent_contracts_mcp::HttpSettings::default()
        .bearer_token(first)
        .bearer_token(second);
    // The CLI's canned model answers any number of runs.
    let model = Arc::new(agent_examples::pipeline::canned_model());
    let server = AgentServer::new(Vec::new(), model)
        .workflow(event_planning::workflow(), "Plans an event.")
        .unwrap()
        .with_http(settings)
        .with_max_paused_runs(1);
    let (url, _server) = serve(server).await;
    let (a, b) = (
        connect_as(&url, first).await,
        connect_as(&url, second).await,
    );
    let answer = |paused: &Value| json!({"handle": paused["handle"], "answer": event_planning::HUMAN_ANSWER});

    let b_run = start(&b).await;
    // The first client starts two runs: its second pushes out its first, and only that.
    let a_old = start(&a).await;
    let a_new = start(&a).await;
    let gone = resume(&a, answer(&a_old)).await;
    assert_eq!(gone.is_error, Some(true), "{gone:?}");
    assert!(text(&gone).contains("no longer kept"), "{}", text(&gone));
    let finished = resume(&b, answer(&b_run)).await;
    assert_eq!(finished.is_error, Some(false), "{finished:?}");
    assert_eq!(structured(&finished)["status"], "finished");
    // A handle answers only for the client it was given to.
    let not_yours = resume(&b, answer(&a_new)).await;
    assert_eq!(not_yours.is_error, Some(true), "{not_yours:?}");
    let finished = resume(&a, answer(&a_new)).await;
    assert_eq!(structured(&finished)["status"], "finished");
}
