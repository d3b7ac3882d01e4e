//! A remote agent's question pauses the calling run. A workflow step calls this crate's own
//! server's `event_planning` skill as a tool; the remote workflow asks about dietary
//! restrictions (`TASK_STATE_INPUT_REQUIRED`), so the calling run pauses with that question,
//! saved in a SQLite store. Another runner, on another connection to the same file, answers
//! it: the answer goes to the remote task, the tool call completes with the remote plan, and
//! the calling agent answers from it. Its model is asked nothing while the question is open.

use agent_contracts_a2a::A2aServer;
use agent_contracts_a2a::client::{RemoteAgent, ToolSettings};
use agent_contracts_runtime::model::tool_calls;
use agent_contracts_runtime::store::RunStatus;
use agent_contracts_runtime::workflow::{Member, WorkflowOutcome};
use agent_contracts_runtime::{Error, Message, Runtime, ScriptedModel, Tool, Workflow};
use agent_examples::{agents, event_planning, pipeline};
use serde_json::{Value, json};
use std::sync::Arc;

const VENUE: &str = r#"{"venue_name": "The Lakeview Loft", "capacity": 60, "cost_usd": 1500, "notes": "The remote planner's pick"}"#;

/// This crate's server with the event-planning workflow, on a port the OS picks; its
/// `event_planning` skill as a tool.
async fn remote_planner() -> Arc<dyn Tool> {
    let server = A2aServer::new(agents::AGENTS.to_vec(), Arc::new(pipeline::canned_model()))
        .workflow(event_planning::workflow(), "Plans an event.")
        .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(server.serve_http_on(listener));
    let agent = RemoteAgent::connect(&url).await.unwrap();
    agent
        .tools(ToolSettings::default())
        .unwrap()
        .into_iter()
        .find(|tool| tool.definition().name == "event_planning")
        .unwrap()
}

fn caller(planner: Arc<dyn Tool>) -> Workflow {
    let venue = agents::find("venue_agent").unwrap();
    Workflow::new("venue_through_a_planner")
        .agent(Member::from(venue).tool(planner))
        .goal([("venue_agent", "Find a venue through the remote planner")])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_question_pauses_the_calling_run_and_another_runner_answers_it_from_sqlite() {
    let planner = remote_planner().await;
    let dir = std::env::temp_dir().join(format!("a2a-pause-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let url = format!("sqlite:{}", dir.join("runs.db").display());

    let kwargs = json!({"task": event_planning::REQUEST}).to_string();
    let first_model = ScriptedModel::default().script(
        "venue_agent",
        [tool_calls([("event_planning", kwargs.as_str())])],
    );
    let workflow = caller(planner.clone());
    let store = agent_contracts_store::open(&url).await.unwrap();
    let runner = workflow.runner(first_model).with_store(store.clone());
    let outcome = runner.start("Find a venue for our party").await.unwrap();
    let WorkflowOutcome::NeedsInput { request, state, .. } = outcome else {
        panic!("the remote question pauses the run: {outcome:?}");
    };
    assert_eq!(request.prompt, "Do any guests have dietary restrictions?");
    assert_eq!(request.requesting_agent, "venue_agent");
    assert_eq!(request.asking_tool(), Some("event_planning"));
    assert!(
        state.conversation.iter().all(|m| m.tool_call_id.is_none()),
        "the paused call has no result yet"
    );
    let run_id = state.run_id.clone();
    assert_eq!(store.load(&run_id).await.unwrap().status, RunStatus::Paused);
    drop(runner);
    drop(store);

    // Another process: its own connection to the file, its own runner and model (which only
    // knows the agent's last answer: the question was not the model's to answer).
    let store = agent_contracts_store::open(&url).await.unwrap();
    let model =
        Arc::new(ScriptedModel::default().script("venue_agent", [Message::assistant(VENUE)]));
    let workflow = caller(planner);
    let later = workflow.runner(model.clone()).with_store(store.clone());
    // An empty answer is not sent to the remote task: the run stays paused at the question.
    let outcome = later.resume_run(&run_id, " ").await.unwrap();
    let WorkflowOutcome::NeedsInput { request, .. } = outcome else {
        panic!("an empty answer leaves the question open: {outcome:?}");
    };
    assert_eq!(request.prompt, "Do any guests have dietary restrictions?");
    assert!(model.requests_of("venue_agent").is_empty());

    let outcome = later
        .resume_run(&run_id, event_planning::HUMAN_ANSWER)
        .await
        .unwrap();
    let WorkflowOutcome::Finished { state, .. } = outcome else {
        panic!("the answered run finishes: {outcome:?}");
    };
    let requests = model.requests_of("venue_agent");
    assert_eq!(
        requests.len(),
        1,
        "the model is asked once, after the answer"
    );
    let result = requests[0].messages.last().unwrap();
    assert_eq!(
        result.tool_call_id.as_deref(),
        Some("call_event_planning_0")
    );
    let result: Value = serde_json::from_str(&result.content).unwrap();
    assert_eq!(result["output"], event_planning::PLAN, "{result}");
    assert_eq!(
        state.upstream.to_context_map()["venue_agent_output"]["venue_name"],
        "The Lakeview Loft"
    );
    assert_eq!(
        store.load(&run_id).await.unwrap().status,
        RunStatus::Finished
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `Runtime::run_loop` keeps no pause to resume: the remote question stops it, naming the
/// question, and its model never answers it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_question_stops_a_tool_calling_loop() {
    let planner = remote_planner().await;
    let kwargs = json!({"task": event_planning::REQUEST}).to_string();
    let model = Arc::new(ScriptedModel::default().script(
        "main_agent",
        [
            tool_calls([("event_planning", kwargs.as_str())]),
            Message::assistant("They have no restrictions, I suppose."),
        ],
    ));
    let runtime = Runtime::new(model.clone()).with_tool(planner);
    let error = runtime
        .run_loop("main_agent", "", "Plan the party", &[])
        .await
        .unwrap_err();
    let Error::ToolPaused { tool, question, .. } = &error else {
        panic!("{error}");
    };
    assert_eq!(tool, "event_planning");
    assert_eq!(question, "Do any guests have dietary restrictions?");
    assert_eq!(model.requests_of("main_agent").len(), 1);
}

/// What `plan-pipeline --a2a URL` runs (`pipeline::run_answering`): the main agent's loop
/// pauses at the remote question, the person's answer goes to the remote task, and the loop
/// goes on from the call's result; its model is asked nothing meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_question_pauses_a_tool_calling_loop_which_goes_on_with_the_answer() {
    let planner = remote_planner().await;
    let kwargs = json!({"task": event_planning::REQUEST}).to_string();
    let model = Arc::new(ScriptedModel::default().script(
        pipeline::MAIN_AGENT,
        [
            tool_calls([("event_planning", kwargs.as_str())]),
            Message::assistant("The party is planned."),
        ],
    ));
    let mut asked = Vec::new();
    let (_runtime, outcome) = pipeline::run_answering(
        model.clone(),
        vec![planner],
        agent_contracts_runtime::Config::default(),
        |pause| {
            asked.push((pause.tool.clone(), pause.question.clone()));
            // The model has not been asked again while the question is open.
            assert_eq!(model.requests_of(pipeline::MAIN_AGENT).len(), 1);
            Some(event_planning::HUMAN_ANSWER.to_owned())
        },
    )
    .await;
    let outcome = outcome.unwrap();
    assert_eq!(
        asked,
        [(
            "event_planning".to_owned(),
            "Do any guests have dietary restrictions?".to_owned()
        )]
    );
    assert_eq!(outcome.content, "The party is planned.");
    let result = outcome
        .messages
        .iter()
        .find(|m| m.tool_call_id.as_deref() == Some("call_event_planning_0"))
        .unwrap();
    let result: Value = serde_json::from_str(&result.content).unwrap();
    assert_eq!(result["output"], event_planning::PLAN, "{result}");
}

/// One JSON-RPC request to `base`; the response's JSON.
async fn rpc(base: &str, method: &str, params: Value) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let response = reqwest::Client::new()
        .post(format!("{base}/"))
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    serde_json::from_slice(&response.bytes().await.unwrap()).unwrap()
}

/// What `agent-contract a2a --store sqlite:PATH` and `agent-demo a2a --store` do: each
/// instance opens the store by its URL (`agent_contracts_store::open`) and signs task IDs
/// with the one key. A task paused through one instance is answered through the other; an
/// instance with another key does not know it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_paused_through_one_instance_is_answered_through_another_on_one_sqlite_file() {
    let dir = std::env::temp_dir().join(format!("a2a-instances-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let url = format!("sqlite:{}", dir.join("tasks.db").display());
    let key: [u8; 32] = std::array::from_fn(|i| (i as u8).wrapping_mul(29).wrapping_add(7));
    let instance = async |key: [u8; 32]| {
        let store = agent_contracts_store::open(&url).await.unwrap();
        let server = A2aServer::new(agents::AGENTS.to_vec(), Arc::new(pipeline::canned_model()))
            .workflow(event_planning::workflow(), "Plans an event.")
            .unwrap()
            .with_store(store, key)
            .unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(server.serve_http_on(listener));
        base
    };
    let first = instance(key).await;
    let second = instance(key).await;

    let started = rpc(
        &first,
        "SendMessage",
        json!({"message": {
        "messageId": "m1", "role": "ROLE_USER",
        "parts": [{"data": {"task": event_planning::REQUEST}}],
        "metadata": {"skill": "event_planning"}}}),
    )
    .await;
    let task = &started["result"]["task"];
    assert_eq!(
        task["status"]["state"], "TASK_STATE_INPUT_REQUIRED",
        "{started}"
    );
    let id = task["id"].as_str().unwrap();

    let other = instance(std::array::from_fn(|i| {
        (i as u8).wrapping_mul(53).wrapping_add(1)
    }))
    .await;
    let unknown = rpc(&other, "GetTask", json!({"id": id})).await;
    assert_eq!(unknown["error"]["code"], -32001, "{unknown}");

    let answered = rpc(
        &second,
        "SendMessage",
        json!({"message": {
        "messageId": "m2", "role": "ROLE_USER", "taskId": id,
        "parts": [{"text": event_planning::HUMAN_ANSWER}],
        "metadata": {"skill": "event_planning"}}}),
    )
    .await;
    let task = &answered["result"]["task"];
    assert_eq!(
        task["status"]["state"], "TASK_STATE_COMPLETED",
        "{answered}"
    );
    assert_eq!(
        task["artifacts"][0]["parts"][0]["data"]["output"],
        event_planning::PLAN
    );
    // The first instance, which still held the task as paused, reads it again from the
    // store: it ended, with the output.
    let seen = rpc(&first, "GetTask", json!({"id": id})).await;
    assert_eq!(
        seen["result"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{seen}"
    );
    assert_eq!(
        seen["result"]["artifacts"][0]["parts"][0]["data"]["output"],
        event_planning::PLAN
    );
    let _ = std::fs::remove_dir_all(&dir);
}
