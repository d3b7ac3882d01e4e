//! A tool call that waits on a person pauses the workflow step that made it: the question is
//! the run's, the turn's other calls are held so the tool messages keep the model's order,
//! the state round-trips and is checked, the answer goes to the tool (which may ask again),
//! and the agent goes on from its tool calls. A tool-calling loop cannot pause: it stops.

use agent_contracts::contract::ToolDefinition;
use agent_contracts::model::{BoxFuture, tool_calls};
use agent_contracts::runtime::{LoopOutcome, ToolOutcome, ToolPause};
use agent_contracts::workflow::{Member, WorkflowOutcome, WorkflowState};
use agent_contracts::{Agent, Error, Message, Runtime, ScriptedModel, Tool, Workflow};
use serde_json::{Value, json};
use std::sync::Arc;

/// Finds venues.
#[derive(Agent)]
#[agent(
    name = "venue_agent",
    input = "../schemas/venue_agent/input.schema.json",
    output = "../schemas/venue_agent/output.schema.json"
)]
struct VenueAgent;

const VENUE: &str = r#"{"venue_name": "Loft", "capacity": 60, "cost_usd": 1500, "notes": "ok"}"#;

/// Asks a person which city (a remote agent's question, say): `{"ask": true}` pauses; the
/// answer `again` asks once more; any other answer is the venue's name.
struct Asker;

impl Tool for Asker {
    fn definition(&self) -> ToolDefinition {
        ToolDefinition {
            name: "asker".into(),
            description: "Asks a person".into(),
            parameters: json!({"type": "object"}),
        }
    }
    fn call<'a>(&'a self, _: &'a str) -> BoxFuture<'a, Value> {
        Box::pin(async { json!({"error": "a plain call cannot ask"}) })
    }
    fn start<'a>(&'a self, arguments: &'a str) -> BoxFuture<'a, ToolOutcome> {
        Box::pin(async move {
            match serde_json::from_str::<Value>(arguments) {
                Ok(args) if args["ask"] == true => {
                    ToolOutcome::Paused(ToolPause::new("Which city?", json!({"asked": 1})))
                }
                _ => ToolOutcome::done(json!({"asked": false})),
            }
        })
    }
    fn resume<'a>(&'a self, pause: &'a ToolPause, answer: &'a str) -> BoxFuture<'a, ToolOutcome> {
        Box::pin(async move {
            if answer == "again" {
                let asked = pause.state["asked"].as_u64().unwrap_or(0) + 1;
                return ToolOutcome::Paused(ToolPause::new(
                    "Which city, really?",
                    json!({"asked": asked}),
                ));
            }
            ToolOutcome::done(json!({
                "venue_name": answer,
                "capacity": 60,
                "cost_usd": 1500,
                "notes": format!("asked {} times", pause.state["asked"]),
            }))
        })
    }
}

/// Echoes its arguments; never pauses.
struct Echo;

impl Tool for Echo {
    fn definition(&self) -> ToolDefinition {
        ToolDefinition {
            name: "echo".into(),
            description: "Echoes".into(),
            parameters: json!({"type": "object"}),
        }
    }
    fn call<'a>(&'a self, arguments: &'a str) -> BoxFuture<'a, Value> {
        Box::pin(async move { json!({"echo": arguments}) })
    }
}

fn workflow() -> Workflow {
    let member = Member::from(&VenueAgent)
        .tool(Arc::new(Asker))
        .tool(Arc::new(Echo));
    Workflow::new("venues")
        .agent(member)
        .goal([("venue_agent", "Find a venue")])
}

/// The tool messages of `conversation`, by call ID, in order.
fn tool_messages(conversation: &[Message]) -> Vec<(String, Value)> {
    conversation
        .iter()
        .filter_map(|m| {
            let id = m.tool_call_id.clone()?;
            Some((id, serde_json::from_str(&m.content).unwrap()))
        })
        .collect()
}

fn paused(outcome: WorkflowOutcome) -> (String, Option<String>, WorkflowState) {
    match outcome {
        WorkflowOutcome::NeedsInput { request, state, .. } => (
            request.prompt.clone(),
            request.asking_tool().map(str::to_owned),
            state,
        ),
        other => panic!("expected a pause, got {other:?}"),
    }
}

#[tokio::test]
async fn a_tool_question_pauses_the_step_and_its_answers_go_to_the_tool_in_the_models_order() {
    let workflow = workflow();
    let turn = tool_calls([
        ("echo", r#"{"i": 0}"#),
        ("asker", r#"{"ask": true}"#),
        ("echo", r#"{"i": 2}"#),
        ("asker", r#"{"ask": true}"#),
    ]);
    let model =
        Arc::new(ScriptedModel::default().script("venue_agent", [turn, Message::assistant(VENUE)]));
    let runner = workflow.runner(model.clone());

    // The second call asks: the turn stops there, the first call's message is in.
    let (prompt, tool, state) = paused(runner.start("A party").await.unwrap());
    assert_eq!(prompt, "Which city?");
    assert_eq!(tool.as_deref(), Some("asker"));
    let ids: Vec<String> = tool_messages(&state.conversation)
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    assert_eq!(ids, ["call_echo_0"]);

    // The paused state is JSON, read back through the state checks.
    let text = serde_json::to_string(&state).unwrap();
    let state = workflow.parse_state(&text).unwrap();

    // The tool asks again: the run stays paused at its new question, nothing appended.
    let (prompt, tool, state) = paused(runner.resume(state, "again").await.unwrap());
    assert_eq!(prompt, "Which city, really?");
    assert_eq!(tool.as_deref(), Some("asker"));
    assert_eq!(tool_messages(&state.conversation).len(), 1);

    // Answered: that call's result and the next call's, then the turn's second question.
    let (prompt, _, state) = paused(runner.resume(state, "Seattle").await.unwrap());
    assert_eq!(prompt, "Which city?");
    let messages = tool_messages(&state.conversation);
    let ids: Vec<&str> = messages.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(ids, ["call_echo_0", "call_asker_1", "call_echo_2"]);
    assert_eq!(messages[1].1["venue_name"], "Seattle");
    assert_eq!(messages[1].1["notes"], "asked 2 times");
    // The model was asked once so far: the questions were the tool's, not the agent's.
    assert_eq!(model.requests_of("venue_agent").len(), 1);

    // The last answer: the turn is done and the agent answers from all four results.
    let done = runner.resume(state, "Portland").await.unwrap();
    let WorkflowOutcome::Finished { state, .. } = done else {
        panic!("the agent answers after its tools: {done:?}");
    };
    let requests = model.requests_of("venue_agent");
    assert_eq!(requests.len(), 2);
    let seen: Vec<String> = tool_messages(&requests[1].messages)
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    assert_eq!(
        seen,
        ["call_echo_0", "call_asker_1", "call_echo_2", "call_asker_3"]
    );
    assert_eq!(
        state.upstream.to_context_map()["venue_agent_output"]["venue_name"],
        "Loft"
    );
}

#[tokio::test]
async fn a_stored_tool_pause_must_name_a_call_the_agent_made_of_its_own_tool() {
    let workflow = workflow();
    let model = ScriptedModel::default()
        .script("venue_agent", [tool_calls([("asker", r#"{"ask": true}"#)])]);
    let runner = workflow.runner(model);
    let (_, _, state) = paused(runner.start("A party").await.unwrap());
    let text = serde_json::to_string(&state).unwrap();
    let good: Value = serde_json::from_str(&text).unwrap();
    let turn = "/pending/turn/calls/0/paused";
    assert_eq!(good.pointer(&format!("{turn}/tool")).unwrap(), "asker");

    let refused = |edit: &dyn Fn(&mut Value)| {
        let mut value = good.clone();
        edit(&mut value);
        match workflow.parse_state(&value.to_string()) {
            Err(Error::BadState { reason, .. }) => reason,
            other => panic!("a tampered state was taken: {other:?}"),
        }
    };
    let reason = refused(&|v| *v.pointer_mut(&format!("{turn}/tool")).unwrap() = json!("echo"));
    assert!(reason.contains("did not make"), "{reason}");
    let reason = refused(&|v| *v.pointer_mut(&format!("{turn}/tool")).unwrap() = json!("rm"));
    assert!(reason.contains("not a tool of `venue_agent`"), "{reason}");
    let reason = refused(&|v| *v.pointer_mut(&format!("{turn}/id")).unwrap() = json!("call_x"));
    assert!(reason.contains("did not make"), "{reason}");
    let reason = refused(&|v| *v.pointer_mut("/pending/prompt").unwrap() = json!("Your PIN?"));
    assert!(reason.contains("not its tool's question"), "{reason}");
}

#[tokio::test]
async fn a_step_whose_output_is_its_first_tool_result_takes_the_answered_call() {
    let member = Member::from(&VenueAgent)
        .tool(Arc::new(Asker))
        .return_tool_output();
    let workflow = Workflow::new("venues")
        .agent(member)
        .goal([("venue_agent", "Find a venue")]);
    let model = Arc::new(
        ScriptedModel::default()
            .script("venue_agent", [tool_calls([("asker", r#"{"ask": true}"#)])]),
    );
    let runner = workflow.runner(model.clone());
    let (_, _, state) = paused(runner.start("A party").await.unwrap());
    let done = runner.resume(state, "Barn").await.unwrap();
    let WorkflowOutcome::Finished { state, .. } = done else {
        panic!("the answered call is the output: {done:?}");
    };
    assert_eq!(
        state.upstream.to_context_map()["venue_agent_output"]["venue_name"],
        "Barn"
    );
    assert_eq!(model.requests_of("venue_agent").len(), 1);
}

#[tokio::test]
async fn a_tool_calling_loop_stops_at_a_tool_question_instead_of_answering_it() {
    let model = ScriptedModel::default().script(
        "main",
        [
            tool_calls([("asker", r#"{"ask": true}"#)]),
            Message::assistant("I made the answer up"),
        ],
    );
    let runtime = Runtime::new(model).with_tool(Arc::new(Asker));
    let error = runtime
        .run_loop("main", "", "Plan it", &[])
        .await
        .unwrap_err();
    match error {
        Error::ToolPaused {
            agent,
            tool,
            question,
        } => {
            assert_eq!((agent.as_str(), tool.as_str()), ("main", "asker"));
            assert_eq!(question, "Which city?");
        }
        other => panic!("{other}"),
    }
}

#[tokio::test]
async fn a_pausable_loop_waits_at_a_tool_question_and_goes_on_with_the_answer() {
    let model = Arc::new(ScriptedModel::default().script(
        "main",
        [
            tool_calls([("asker", r#"{"ask": true}"#), ("echo", r#"{"i": 1}"#)]),
            Message::assistant("Done"),
        ],
    ));
    let runtime = Runtime::new(model.clone())
        .with_tool(Arc::new(Asker))
        .with_tool(Arc::new(Echo));
    let LoopOutcome::Paused(pause) = runtime
        .run_loop_pausable("main", "", "Plan it", &[])
        .await
        .unwrap()
    else {
        panic!("the tool asks");
    };
    assert_eq!(
        (pause.tool.as_str(), pause.question.as_str()),
        ("asker", "Which city?")
    );
    let LoopOutcome::Paused(pause) = runtime.resume_loop(pause, "again", &[]).await.unwrap() else {
        panic!("the tool asks again");
    };
    assert_eq!(pause.question, "Which city, really?");
    assert_eq!(model.requests_of("main").len(), 1);
    let LoopOutcome::Done(outcome) = runtime.resume_loop(pause, "Seattle", &[]).await.unwrap()
    else {
        panic!("the loop ends after the answer");
    };
    assert_eq!(outcome.content, "Done");
    let ids: Vec<(String, Value)> = tool_messages(&outcome.messages);
    assert_eq!(ids[0].0, "call_asker_0");
    assert_eq!(ids[0].1["venue_name"], "Seattle");
    assert_eq!(ids[1].0, "call_echo_1");
    assert_eq!(model.requests_of("main").len(), 2);
}
