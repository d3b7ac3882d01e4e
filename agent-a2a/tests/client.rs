//! The client against an agent served by the official Python SDK (`a2a-sdk`,
//! `tests/python/server.py`): its skill offered as a tool with the card's schemas, a call
//! that breaks the input schema refused before it is sent (the agent's log of calls shows it
//! never arrived), a valid call answered, and an answer that breaks the output schema refused.
//! Without the `a2a` package in python3 the test says so and passes.

use agent_contracts_a2a::client::{RemoteAgent, ToolSettings};
use serde_json::json;
use std::io::BufRead as _;

const SERVER: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/python/server.py");

fn python_sdk() -> bool {
    std::process::Command::new("python3")
        .args(["-c", "import a2a.server, uvicorn, starlette"])
        .output()
        .is_ok_and(|out| out.status.success())
}

/// Kills the Python server when the test ends, passed or not.
struct Running(std::process::Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test]
async fn a_skill_of_an_a2a_sdk_agent_is_a_checked_tool() {
    if !python_sdk() {
        eprintln!(
            "skipped: python3 has no `a2a` package (pip install a2a-sdk[http-server]; .ci/run does)"
        );
        return;
    }
    let calls = std::env::temp_dir().join(format!("a2a-calls-{}.jsonl", std::process::id()));
    let _ = std::fs::remove_file(&calls);
    let mut child = std::process::Command::new("python3")
        .arg(SERVER)
        .arg(&calls)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let _running = Running(child);
    let mut line = String::new();
    std::io::BufReader::new(stdout)
        .read_line(&mut line)
        .unwrap();
    let url = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("{line}"))
        .to_owned();

    let agent = RemoteAgent::connect(&url).await.unwrap();
    let tools = agent.tools(ToolSettings::default()).unwrap();
    assert_eq!(tools.len(), 1);
    let add = &tools[0];
    let definition = add.definition();
    assert_eq!(definition.name, "add");
    assert_eq!(definition.parameters["required"], json!(["a", "b"]));

    // Broken calls never reach the agent: the model gets the retry error.
    let refused = add.call(r#"{"a": 2}"#).await;
    assert_eq!(refused["missing_fields"], json!(["b"]), "{refused}");
    let refused = add.call(r#"{"a": "two", "b": 3}"#).await;
    assert!(refused.to_string().contains("\"a\""), "{refused}");
    assert!(!calls.exists(), "a refused call reached the agent");

    // A valid call: the agent's data part, checked against the output schema (the integer
    // arrives as the protobuf double `5.0`).
    let answer = add.call(r#"{"a": 2, "b": 3}"#).await;
    assert_eq!(answer, json!({"sum": 5.0}));
    // An answer that breaks the output schema is refused, with what is wrong.
    let broken = add.call(r#"{"a": 0, "b": 0}"#).await;
    assert_eq!(broken["success"], false, "{broken}");
    assert_eq!(
        broken["error"],
        "the remote agent's answer breaks the skill's output schema"
    );
    let received = || -> Vec<serde_json::Value> {
        std::fs::read_to_string(&calls)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    assert_eq!(
        received(),
        [json!({"a": 2.0, "b": 3.0}), json!({"a": 0.0, "b": 0.0})]
    );

    // What `plan-pipeline --a2a URL` runs (`pipeline::run_with`): the main agent is offered
    // the skill beside its sub-agents; its call that breaks the skill's input schema gets the
    // retry error and never reaches the agent; its fixed call does.
    use agent_contracts_runtime::model::tool_calls;
    use agent_contracts_runtime::{Message, ScriptedModel};
    use agent_examples::pipeline;
    let model = std::sync::Arc::new(ScriptedModel::default().script(
        pipeline::MAIN_AGENT,
        [
            tool_calls([("add", r#"{"a": 4}"#)]),
            tool_calls([("add", r#"{"a": 4, "b": 5}"#)]),
            Message::assistant("4 and 5 make 9."),
        ],
    ));
    let (_runtime, outcome) = pipeline::run_with(
        model.clone(),
        tools,
        agent_contracts_runtime::Config::default(),
    )
    .await;
    let outcome = outcome.unwrap();
    let offered = &model.requests_of(pipeline::MAIN_AGENT)[0].tools;
    assert!(offered.iter().any(|t| t.name == "add"), "{offered:?}");
    assert!(offered.iter().any(|t| t.name == "run_plan_generator_agent"));
    let results: Vec<serde_json::Value> = outcome
        .messages
        .iter()
        .filter(|m| m.tool_call_id.is_some())
        .map(|m| serde_json::from_str(&m.content).unwrap())
        .collect();
    assert_eq!(results[0]["missing_fields"], json!(["b"]), "{results:?}");
    assert_eq!(results[1], json!({"sum": 9.0}));
    assert_eq!(
        received(),
        [
            json!({"a": 2.0, "b": 3.0}),
            json!({"a": 0.0, "b": 0.0}),
            json!({"a": 4.0, "b": 5.0})
        ]
    );
    let _ = std::fs::remove_file(&calls);
}

/// The client against this crate's own server: an agent's skill takes `task` beside its
/// contract's fields, and a workflow's question pauses the call (`Tool::start`) with its
/// task, answered on the same task (`Tool::resume`): an empty answer or a pause of another
/// skill is not sent, and a plain `call` says it cannot pause.
#[tokio::test]
async fn a_workflow_skill_pauses_the_call_and_is_answered_on_its_task() {
    use agent_contracts_runtime::runtime::{ToolOutcome, ToolPause};
    use agent_examples::{agents, event_planning, pipeline};
    let server = agent_contracts_a2a::A2aServer::new(
        agents::AGENTS.to_vec(),
        std::sync::Arc::new(pipeline::canned_model()),
    )
    .workflow(event_planning::workflow(), "Plans an event.")
    .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(server.serve_http_on(listener));

    let agent = RemoteAgent::connect(&url).await.unwrap();
    let tools = agent.tools(ToolSettings::default()).unwrap();
    // One tool a skill: the questions are answered through the run's pause.
    assert_eq!(tools.len(), agents::AGENTS.len() + 1);
    let find = |name: &str| {
        tools
            .iter()
            .find(|t| t.definition().name == name)
            .unwrap_or_else(|| panic!("no tool {name}"))
    };
    let planner = find("plan_generator_agent");
    assert_eq!(
        planner.definition().parameters["required"],
        json!(["task", "task_name", "collected_information"])
    );
    let missing = planner
        .call(r#"{"task": "Plan", "target_url": "https://a.example", "task_name": "t"}"#)
        .await;
    assert_eq!(
        missing["missing_fields"],
        json!(["collected_information"]),
        "{missing}"
    );

    let planning = find("event_planning");
    let kwargs = json!({"task": event_planning::REQUEST}).to_string();
    let plain = planning.call(&kwargs).await;
    assert_eq!(plain["status"], "input_required", "{plain}");
    assert_eq!(plain["success"], false, "{plain}");

    let ToolOutcome::Paused(pause) = planning.start(&kwargs).await else {
        panic!("the workflow asks first");
    };
    assert_eq!(pause.question, "Do any guests have dietary restrictions?");
    assert_eq!(pause.state["skill"], "event_planning");
    let task_id = pause.state["task_id"].as_str().unwrap().to_owned();
    // An empty answer is not sent: the question stands.
    assert_eq!(
        planning.resume(&pause, " ").await,
        ToolOutcome::Paused(pause.clone())
    );
    // A pause naming another skill's task is not answered through this tool.
    let forged = ToolPause::new(
        "?",
        json!({"skill": "plan_generator_agent", "task_id": task_id}),
    );
    let ToolOutcome::Done(refused) = planning.resume(&forged, "3 vegetarians").await else {
        panic!("a forged pause is refused");
    };
    assert_eq!(refused.value["success"], false, "{:?}", refused.value);
    let ToolOutcome::Done(done) = planning.resume(&pause, "3 vegetarians").await else {
        panic!("the answered workflow completes");
    };
    assert_eq!(
        done.value["output"],
        event_planning::PLAN,
        "{:?}",
        done.value
    );
}
