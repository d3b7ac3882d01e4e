//! The server driven by the official Python client (`a2a-sdk`, pinned in `.ci/run`) over HTTP
//! on loopback: the card and its contracts extension, a valid call, a broken call, the
//! event-planning workflow paused and answered on the same task (through the same server, and
//! through a second server on the same store and key), and a streamed call.
//!
//! Each test runs `tests/python/client.py` with a scenario and prints its JSON verdict; the
//! assertions are here. Without the `a2a` package in python3 the tests say so and pass.

use agent_contracts_a2a::A2aServer;
use agent_contracts_runtime::store::CheckpointStore;
use agent_contracts_store::FileStore;
use agent_examples::{agents, event_planning, pipeline};
use serde_json::Value;
use std::sync::Arc;

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/python/client.py");
const KWARGS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../tests/fixtures/plan_generator/kwargs.json"
);

fn python_sdk() -> bool {
    std::process::Command::new("python3")
        .args(["-c", "import a2a.client"])
        .output()
        .is_ok_and(|out| out.status.success())
}

fn server() -> A2aServer {
    A2aServer::new(agents::AGENTS.to_vec(), Arc::new(pipeline::canned_model()))
        .workflow(event_planning::workflow(), "Plans an event.")
        .unwrap()
}

/// Serves `server` on a port the OS picks; it stops with the test's runtime.
async fn serve(server: A2aServer) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(server.serve_http_on(listener));
    format!("http://{addr}")
}

/// Runs the Python client's `scenario`; its last stdout line, as JSON.
async fn python(args: &[&str]) -> Value {
    let run = tokio::process::Command::new("python3")
        .arg(SCRIPT)
        .args(args)
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(std::time::Duration::from_secs(120), run)
        .await
        .expect("the Python client finished within 2 minutes")
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "client.py {args:?} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(stdout.lines().last().unwrap()).unwrap()
}

macro_rules! needs_python_sdk {
    () => {
        if !python_sdk() {
            eprintln!("skipped: python3 has no `a2a` package (pip install a2a-sdk; .ci/run does)");
            return;
        }
    };
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_client_reads_the_card_and_gets_checked_calls() {
    needs_python_sdk!();
    let url = serve(server()).await;
    let verdict = python(&["agent", &url, KWARGS]).await;

    // The card: one skill per agent and workflow, the contracts in the extension.
    let skills: Vec<&str> = verdict["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect();
    assert!(skills.contains(&"plan_generator_agent"), "{skills:?}");
    assert!(skills.contains(&"event_planning"), "{skills:?}");
    let extension = &verdict["extension"];
    assert_eq!(extension["uri"], "urn:agent-contracts:contracts:v1");
    let input = &extension["params"]["skills"]["plan_generator_agent"]["input_schema"];
    let plan_generator = agents::find("plan_generator_agent").unwrap();
    // Protobuf values carry every number as a double (`100` arrives as `100.0`).
    assert_eq!(
        as_doubles(input),
        as_doubles(plan_generator.input_contract().schema())
    );
    let required: Vec<&str> = input["required"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect();
    assert!(required.contains(&"collected_information"), "{input}");

    // A valid call: completed, the checked output as a data part artifact.
    let valid = &verdict["valid"];
    assert_eq!(valid["status"]["state"], "TASK_STATE_COMPLETED", "{valid}");
    let output = &valid["artifacts"][0]["parts"][0]["data"];
    let contract = plan_generator.output_contract().unwrap();
    assert!(output.is_object(), "{valid}");
    contract
        .check(output, &agent_contracts_runtime::Limits::default())
        .unwrap();
    assert_eq!(verdict["fetched_state"], "TASK_STATE_COMPLETED");

    // A call without `collected_information`: rejected, the retry error naming the field.
    let broken = &verdict["broken"];
    assert_eq!(broken["status"]["state"], "TASK_STATE_REJECTED", "{broken}");
    let parts = &broken["status"]["message"]["parts"];
    let retry = &parts[1]["data"];
    assert!(
        retry.to_string().contains("collected_information"),
        "{retry}"
    );
    assert!(broken["artifacts"].is_null(), "{broken}");

    // A completed task cannot be canceled; an unknown one is not found.
    assert_eq!(verdict["cancel_error"], "TaskNotCancelableError");
    assert_eq!(verdict["missing_error"], "TaskNotFoundError");
}

/// The paused run's question, the refused empty answer, the finished plan.
fn assert_paused_answered_done(verdict: &Value) {
    let paused = &verdict["paused"];
    assert_eq!(
        paused["status"]["state"], "TASK_STATE_INPUT_REQUIRED",
        "{paused}"
    );
    assert_eq!(
        paused["status"]["message"]["parts"][0]["text"],
        "Do any guests have dietary restrictions?"
    );
    let empty = &verdict["empty"];
    assert_eq!(empty["id"], paused["id"]);
    assert_eq!(
        empty["status"]["state"], "TASK_STATE_INPUT_REQUIRED",
        "{empty}"
    );
    assert!(
        empty["status"]["message"]["parts"][1]["data"]
            .to_string()
            .contains("answer"),
        "{empty}"
    );
    let answered = &verdict["answered"];
    assert_eq!(answered["id"], paused["id"]);
    assert_eq!(
        answered["status"]["state"], "TASK_STATE_COMPLETED",
        "{answered}"
    );
    let output = &answered["artifacts"][0]["parts"][0]["data"];
    assert_eq!(output["output"], event_planning::PLAN);
    assert!(
        output["outputs"]["catering_agent_output"]["menu"].is_array(),
        "{output}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_workflow_is_answered_on_the_same_task() {
    needs_python_sdk!();
    let url = serve(server()).await;
    let verdict = python(&["workflow", &url]).await;
    assert_paused_answered_done(&verdict);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_paused_through_one_server_is_answered_through_another_on_its_store() {
    needs_python_sdk!();
    let dir = std::env::temp_dir().join(format!("a2a-store-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let store: Arc<dyn CheckpointStore> = Arc::new(FileStore::open(&dir).unwrap());
    let key: [u8; 32] = std::array::from_fn(|i| (i as u8).wrapping_mul(37).wrapping_add(11));
    let first = serve(server().with_store(store.clone(), key).unwrap()).await;
    let second = serve(server().with_store(store, key).unwrap()).await;
    let verdict = python(&["workflow", &first, &second]).await;
    assert_paused_answered_done(&verdict);
    // A server with another key does not know the task.
    let other = serve(
        server()
            .with_store(
                Arc::new(FileStore::open(&dir).unwrap()),
                std::array::from_fn(|i| (i as u8).wrapping_mul(91).wrapping_add(3)),
            )
            .unwrap(),
    )
    .await;
    let id = verdict["paused"]["id"].as_str().unwrap();
    let body =
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": id}});
    let answer = post(&other, &body.to_string()).await;
    assert_eq!(answer["error"]["code"], -32001, "{answer}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streamed_call_sends_status_updates_before_the_result() {
    needs_python_sdk!();
    let url = serve(server()).await;
    let verdict = python(&["stream", &url, KWARGS]).await;
    let kinds: Vec<&str> = verdict["kinds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k.as_str().unwrap())
        .collect();
    assert_eq!(kinds.first(), Some(&"task"), "{kinds:?}");
    let events = verdict["events"].as_array().unwrap();
    let first_artifact = kinds.iter().position(|k| *k == "artifactUpdate").unwrap();
    let working = events[..first_artifact].iter().any(|e| {
        e["statusUpdate"]["status"]["state"] == "TASK_STATE_WORKING"
            && e["statusUpdate"]["status"]["message"]["parts"][0]["text"]
                .as_str()
                .is_some_and(|t| t.contains("plan_generator_agent"))
    });
    assert!(working, "{events:?}");
    // The partial answer streams before the checked output, which comes before the end.
    let partial = events
        .iter()
        .position(|e| e["artifactUpdate"]["artifact"]["name"] == "partial")
        .unwrap();
    let output = events
        .iter()
        .position(|e| e["artifactUpdate"]["artifact"]["name"] == "output")
        .unwrap();
    assert!(partial < output, "{kinds:?}");
    let last = events.last().unwrap();
    assert_eq!(
        last["statusUpdate"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{last}"
    );
}

/// `value` with every number as a double, as a protobuf value carries it.
fn as_doubles(value: &Value) -> Value {
    match value {
        Value::Number(n) => serde_json::json!(n.as_f64().unwrap()),
        Value::Array(items) => Value::Array(items.iter().map(as_doubles).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), as_doubles(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// One JSON-RPC request by hand (plain HTTP/1.1 on a TCP stream); the response's JSON.
async fn post(base: &str, body: &str) -> Value {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let addr = base.trim_start_matches("http://");
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let request = format!(
        "POST / HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).await.unwrap();
    let (_, body) = response.split_once("\r\n\r\n").unwrap();
    serde_json::from_str(body).unwrap()
}
