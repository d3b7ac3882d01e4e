//! The HTTP endpoint's refusals, by hand (HTTP/1.1 on a TCP stream): a bearer token required
//! and each token's tasks its own, a body past the bound, requests that are not JSON-RPC, an
//! unknown method and skill, and a message on a task that asks for nothing.

use agent_contracts_a2a::{A2aServer, HttpSettings};
use agent_examples::{agents, pipeline};
use serde_json::{Value, json};
use std::sync::Arc;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

const KWARGS: &str = include_str!("../../tests/fixtures/plan_generator/kwargs.json");
const FIRST: &str = "first-client-token-0123456789";
const SECOND: &str = "second-client-token-0123456789";

async fn serve(settings: HttpSettings) -> String {
    let server = A2aServer::new(agents::AGENTS.to_vec(), Arc::new(pipeline::canned_model()))
        .with_http(settings);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(server.serve_http_on(listener));
    addr.to_string()
}

/// One request; the status code and the body.
async fn request(addr: &str, head: &str, token: Option<&str>, body: &str) -> (u16, String) {
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let auth = token
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    let text = format!(
        "{head}\r\nHost: {addr}\r\n{auth}Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(text.as_bytes()).await.unwrap();
    // A body past the bound may be refused before it is all sent.
    let _ = stream.write_all(body.as_bytes()).await;
    let mut response = Vec::new();
    let _ = stream.read_to_end(&mut response).await;
    let response = String::from_utf8_lossy(&response).into_owned();
    let status = response[9..12].parse().unwrap();
    let body = response.split_once("\r\n\r\n").unwrap().1.to_owned();
    (status, body)
}

async fn rpc(addr: &str, token: Option<&str>, method: &str, params: Value) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": "r1", "method": method, "params": params});
    let (status, body) = request(addr, "POST / HTTP/1.1", token, &body.to_string()).await;
    assert_eq!(status, 200, "{body}");
    serde_json::from_str(&body).unwrap()
}

fn send(skill: &str, data: Value) -> Value {
    json!({"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"data": data}],
        "metadata": {"skill": skill}}})
}

#[tokio::test]
async fn a_token_is_required_and_each_token_sees_its_own_tasks() {
    let addr = serve(
        HttpSettings::default()
            .bearer_token(FIRST)
            .bearer_token(SECOND),
    )
    .await;
    let (status, _) = request(&addr, "GET /.well-known/agent-card.json HTTP/1.1", None, "").await;
    assert_eq!(status, 401);
    let (status, card) = request(
        &addr,
        "GET /.well-known/agent-card.json HTTP/1.1",
        Some(FIRST),
        "",
    )
    .await;
    assert_eq!(status, 200);
    assert!(card.contains("plan_generator_agent"));
    let answer = rpc(
        &addr,
        Some(FIRST),
        "SendMessage",
        send(
            "plan_generator_agent",
            serde_json::from_str(KWARGS).unwrap(),
        ),
    )
    .await;
    let task = &answer["result"]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{answer}");
    let id = task["id"].clone();
    let mine = rpc(&addr, Some(FIRST), "GetTask", json!({"id": id})).await;
    assert_eq!(mine["result"]["id"], id);
    let theirs = rpc(&addr, Some(SECOND), "GetTask", json!({"id": id})).await;
    assert_eq!(theirs["error"]["code"], -32001, "{theirs}");
    // An agent's task takes no further message.
    let mut again = send("plan_generator_agent", json!({"task": "again"}));
    again["message"]["taskId"] = id;
    let refused = rpc(&addr, Some(FIRST), "SendMessage", again).await;
    assert_eq!(refused["error"]["code"], -32004, "{refused}");
}

#[tokio::test]
async fn bad_requests_get_json_rpc_errors() {
    let addr = serve(HttpSettings::default()).await;
    let huge = format!(
        r#"{{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {{"pad": "{}"}}}}"#,
        "x".repeat(agent_contracts_runtime::Limits::default().max_bytes + 70_000)
    );
    let (status, body) = request(&addr, "POST / HTTP/1.1", None, &huge).await;
    assert_eq!(status, 413, "{body}");
    let (status, body) = request(&addr, "POST / HTTP/1.1", None, "{not json").await;
    assert_eq!(status, 200);
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap()["error"]["code"],
        -32700
    );
    let (_, body) = request(
        &addr,
        "POST / HTTP/1.1",
        None,
        r#"{"id": 1, "method": "GetTask"}"#,
    )
    .await;
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap()["error"]["code"],
        -32600
    );
    let unknown = rpc(&addr, None, "tasks/send", json!({})).await;
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");
    let no_skill = rpc(
        &addr,
        None,
        "SendMessage",
        send("nobody", json!({"task": "x"})),
    )
    .await;
    assert_eq!(no_skill["error"]["code"], -32602);
    assert!(
        no_skill["error"]["message"]
            .as_str()
            .unwrap()
            .contains("plan_generator_agent"),
        "{no_skill}"
    );
    // A host that is not allowed is refused before anything is read.
    let mut stream = tokio::net::TcpStream::connect(&addr).await.unwrap();
    stream
        .write_all(b"GET /.well-known/agent-card.json HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).await.unwrap();
    assert!(response.starts_with("HTTP/1.1 403"), "{response}");
}

/// A model that never answers: its calls run until they are stopped.
struct Silent;

impl agent_contracts_runtime::ChatModel for Silent {
    fn complete<'a>(
        &'a self,
        _request: &'a agent_contracts_runtime::model::ChatRequest,
    ) -> agent_contracts_runtime::model::BoxFuture<
        'a,
        Result<
            agent_contracts_runtime::model::ChatResponse,
            agent_contracts_runtime::model::ModelError,
        >,
    > {
        Box::pin(std::future::pending())
    }
}

#[tokio::test]
async fn a_task_returned_at_once_works_until_it_is_canceled() {
    let server = A2aServer::new(agents::AGENTS.to_vec(), Arc::new(Silent));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    tokio::spawn(server.serve_http_on(listener));
    let mut params = send(
        "plan_generator_agent",
        serde_json::from_str(KWARGS).unwrap(),
    );
    params["configuration"] = json!({"returnImmediately": true});
    let answer = rpc(&addr, None, "SendMessage", params).await;
    let task = &answer["result"]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_WORKING", "{answer}");
    let id = task["id"].clone();
    let canceled = rpc(&addr, None, "CancelTask", json!({"id": id})).await;
    assert_eq!(
        canceled["result"]["status"]["state"], "TASK_STATE_CANCELED",
        "{canceled}"
    );
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    let fetched = rpc(&addr, None, "GetTask", json!({"id": id})).await;
    assert_eq!(fetched["result"]["status"]["state"], "TASK_STATE_CANCELED");
    let again = rpc(&addr, None, "CancelTask", json!({"id": id})).await;
    assert_eq!(again["error"]["code"], -32002, "{again}");
}

/// The plan generator's task without `target_url` (`"x-source": "user"`) waits in
/// `input-required` with the field's question before the model is asked; an answer that
/// breaks the field's schema is asked again, and the answer on the same task completes it.
#[tokio::test]
async fn an_omitted_user_field_makes_the_task_input_required_until_a_person_answers() {
    use agent_contracts_runtime::{Message, ScriptedModel};
    let plan = r#"{"plan_file_path": "plans/login.md", "status": "success", "agent_response_content": "Fill the form, submit."}"#;
    let model = Arc::new(
        ScriptedModel::default().script("plan_generator_agent", [Message::assistant(plan)]),
    );
    let server = A2aServer::new(vec![&agents::PlanGeneratorAgent], model.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    tokio::spawn(server.serve_http_on(listener));

    let mut kwargs: Value = serde_json::from_str(KWARGS).unwrap();
    kwargs.as_object_mut().unwrap().remove("target_url");
    let answer = rpc(
        &addr,
        None,
        "SendMessage",
        send("plan_generator_agent", kwargs),
    )
    .await;
    let task = &answer["result"]["task"];
    assert_eq!(
        task["status"]["state"], "TASK_STATE_INPUT_REQUIRED",
        "{answer}"
    );
    let parts = &task["status"]["message"]["parts"];
    let question = parts[0]["text"].as_str().unwrap();
    assert!(
        question.starts_with(
            "`plan_generator_agent` needs `target_url`, which only you can give: The URL"
        ),
        "{question}"
    );
    assert_eq!(parts[1]["data"]["field"], "target_url");
    assert_eq!(parts[1]["data"]["schema"]["minLength"], 1);
    assert!(model.requests_of("plan_generator_agent").is_empty());
    let id = task["id"].clone();

    // A text answer breaking `minLength` is asked again, with why.
    let reply = |text: &str| {
        json!({"message": {"messageId": "m2", "role": "ROLE_USER", "taskId": id,
            "parts": [{"text": text}]}})
    };
    let answer = rpc(&addr, None, "SendMessage", reply("")).await;
    // An empty text part is no text: the answer is empty, and refused.
    let task = &answer["result"]["task"];
    assert_eq!(
        task["status"]["state"], "TASK_STATE_INPUT_REQUIRED",
        "{answer}"
    );
    let question = task["status"]["message"]["parts"][0]["text"]
        .as_str()
        .unwrap();
    assert!(
        question.starts_with("That answer was refused: \"\" is shorter than 1 character."),
        "{question}"
    );
    assert!(model.requests_of("plan_generator_agent").is_empty());

    let answer = rpc(&addr, None, "SendMessage", reply("https://myapp.com/login")).await;
    let task = &answer["result"]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{answer}");
    assert_eq!(
        task["artifacts"][0]["parts"][0]["data"]["status"],
        "success"
    );
    let requests = model.requests_of("plan_generator_agent");
    assert_eq!(requests.len(), 1);
    assert!(
        requests[0].messages[1]
            .content
            .contains("https://myapp.com/login")
    );
}
