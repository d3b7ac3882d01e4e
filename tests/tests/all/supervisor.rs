//! The supervisor pipeline (database -> analysis -> reporting): the context each
//! agent received, `return_tool_output`, a handoff failure and its recovery, and bad input.

use agent_contracts::contract::ToolDefinition;
use agent_contracts::{Agent, ScriptedModel};
use agent_contracts::{Message, model::tool_calls};
use agent_contracts::{Tool, Workflow, workflow::Member, workflow::WorkflowOutcome};
use serde_json::{Value, json};
use std::sync::Arc;

/// Fetches data from the database
#[derive(Agent)]
#[agent(input = "fixtures/pipeline/database.input.schema.json")]
pub struct DatabaseAgent;

/// Analyzes data
#[derive(Agent)]
#[agent(input = "fixtures/pipeline/analysis.input.schema.json")]
pub struct AnalysisAgent;

/// Generates reports
#[derive(Agent)]
#[agent(input = "fixtures/pipeline/reporting.input.schema.json")]
pub struct ReportingAgent;

/// The database tool: returns fixed rows, so the agent's output is exactly these.
struct FetchProductData;

impl Tool for FetchProductData {
    fn definition(&self) -> ToolDefinition {
        ToolDefinition {
            name: "fetch_product_data".into(),
            description: "Fetches product sales".into(),
            parameters: json!({"type": "object", "properties": {}}),
        }
    }
    fn call<'a>(&'a self, _arguments: &'a str) -> agent_contracts::model::BoxFuture<'a, Value> {
        Box::pin(async {
            json!({"data": [{"product": "widget", "sales": 120}, {"product": "gadget", "sales": 80}]})
        })
    }
}

fn workflow() -> Workflow {
    Workflow::new("data_pipeline")
        .agent(
            Member::from(&DatabaseAgent)
                .tool(Arc::new(FetchProductData))
                .return_tool_output(),
        )
        .agent(&AnalysisAgent)
        .agent(&ReportingAgent)
        .goal([
            ("database_agent", "Fetch product sales data"),
            ("analysis_agent", "Analyze the product data"),
            ("reporting_agent", "Generate final report"),
        ])
        .handoff::<AnalysisAgent, ReportingAgent>(|output: &Value| {
            match output["insights"].as_array() {
                Some(items) if !items.is_empty() => Ok(()),
                _ => Err("`insights` must list at least one insight".into()),
            }
        })
}

fn model(analysis: Vec<Message>) -> ScriptedModel {
    ScriptedModel::default()
        .script(
            "database_agent",
            [tool_calls([("fetch_product_data", "{}")])],
        )
        .script("analysis_agent", analysis)
        .script(
            "reporting_agent",
            [Message::assistant("Widgets outsell gadgets 3:2.")],
        )
}

fn context_of(request: &agent_contracts::model::ChatRequest) -> Value {
    let routed = &request
        .messages
        .iter()
        .rev()
        .find(|m| m.content.contains("## Context"))
        .unwrap()
        .content;
    let json = routed
        .split("```json\n")
        .nth(1)
        .unwrap()
        .split("\n```")
        .next()
        .unwrap();
    serde_json::from_str(json).unwrap()
}

#[tokio::test]
async fn each_agent_receives_the_accumulated_context() {
    let insights = r#"{"insights": ["widget leads"]}"#;
    let model = Arc::new(model(vec![Message::assistant(insights)]));
    let workflow = workflow();
    let runner = workflow.runner(model.clone());
    let WorkflowOutcome::Finished { output, state } =
        runner.start("Run data pipeline").await.unwrap()
    else {
        panic!("expected the pipeline to finish");
    };
    assert_eq!(output, "Widgets outsell gadgets 3:2.");
    let rows =
        json!({"data": [{"product": "widget", "sales": 120}, {"product": "gadget", "sales": 80}]});
    // The database agent starts with no context: its prompt is the task alone.
    let db = &model.requests_of("database_agent")[0];
    assert_eq!(
        db.messages.last().unwrap().content,
        "Fetch product sales data"
    );
    assert_eq!(
        model.requests_of("database_agent").len(),
        1,
        "return_tool_output needs no second turn"
    );
    assert_eq!(
        context_of(&model.requests_of("analysis_agent")[0]),
        json!({"database_agent_output": rows})
    );
    assert_eq!(
        context_of(&model.requests_of("reporting_agent")[0]),
        json!({"database_agent_output": rows, "analysis_agent_output": {"insights": ["widget leads"]}})
    );
    // A non-JSON answer is stored as the raw string.
    assert_eq!(
        state
            .upstream
            .get::<serde_json::Value>("reporting_agent")
            .unwrap()
            .value,
        "Widgets outsell gadgets 3:2."
    );
    // Each part records the call that produced it: `{run}/{agent}/{sequence}/{timestamp}`.
    let ids: Vec<String> = state
        .upstream
        .entries()
        .iter()
        .map(|part| &part.context_id)
        .map(|id| format!("{}/{}/{}", id.run_id(), id.agent_type(), id.sequence()))
        .collect();
    let run = &state.run_id;
    assert_eq!(
        ids,
        [
            format!("{run}/database_agent/1"),
            format!("{run}/analysis_agent/1"),
            format!("{run}/reporting_agent/1")
        ]
    );
}

#[tokio::test]
async fn a_handoff_failure_re_asks_the_producer_then_recovers() {
    let model = Arc::new(model(vec![
        Message::assistant(r#"{"insights": []}"#),
        Message::assistant(r#"{"insights": ["widget leads"]}"#),
    ]));
    let workflow = workflow();
    let outcome = workflow
        .runner(model.clone())
        .start("Run data pipeline")
        .await
        .unwrap();
    assert!(matches!(outcome, WorkflowOutcome::Finished { .. }));
    let second = &model.requests_of("analysis_agent")[1];
    let refusal = &second.messages.last().unwrap().content;
    let WorkflowOutcome::Finished { state, .. } = &outcome else {
        unreachable!()
    };
    let call = &state
        .upstream
        .get::<serde_json::Value>("analysis_agent")
        .unwrap()
        .context_id;
    assert!(
        refusal.starts_with(&format!(
            "The `reporting_agent` agent cannot use your output: `insights` must list at least one insight\nFix it and answer again with one JSON object.\n\n## Previous attempt\n\nAttempt 1 at this task (context id `{call}`, "
        )),
        "{refusal}"
    );
    assert_eq!(
        context_of(&model.requests_of("reporting_agent")[0])["analysis_agent_output"],
        json!({"insights": ["widget leads"]})
    );
}

#[tokio::test]
async fn a_handoff_that_keeps_failing_stops_naming_both_agents() {
    let model = Arc::new(model(vec![Message::assistant(r#"{"insights": []}"#); 10]));
    let config = agent_contracts::Config::default().with_max_retries(2);
    let workflow = workflow().config(config);
    let error = workflow
        .runner(model.clone())
        .start("Run data pipeline")
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "`analysis_agent` failed its handoff to `reporting_agent` 3 times (1 attempt and 2 retries); last error: Handoff validation failed: the `reporting_agent` agent cannot use the output: `insights` must list at least one insight"
    );
    assert_eq!(model.requests_of("analysis_agent").len(), 3);
    assert!(model.requests_of("reporting_agent").is_empty());
}

#[tokio::test]
async fn an_unknown_agent_in_a_goal_is_a_clear_error() {
    let workflow = workflow().goal([("summary_agent", "Summarize")]);
    let error = workflow
        .runner(Arc::new(ScriptedModel::default()))
        .start("go")
        .await
        .unwrap_err();
    assert!(matches!(error, agent_contracts::Error::UnknownAgent { .. }));
    assert_eq!(
        error.to_string(),
        "workflow `data_pipeline`: step 4 names unknown agent `summary_agent`; known agents: analysis_agent, database_agent, reporting_agent"
    );
}

#[tokio::test]
async fn routing_that_loops_stops_at_the_hop_bound() {
    let back = Message::assistant(r#"{"insights": ["again"], "next_agent": "analysis_agent"}"#);
    let model = Arc::new(model(vec![back; 20]));
    let config = agent_contracts::Config::default().with_max_hops(5);
    let workflow = workflow().config(config);
    let error = workflow
        .runner(model.clone())
        .start("Run data pipeline")
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "workflow `data_pipeline` stopped after 5 hops, the limit; last agents: database_agent -> analysis_agent -> analysis_agent -> analysis_agent -> analysis_agent"
    );
}

#[tokio::test]
async fn context_that_breaks_an_input_contract_stops_before_the_agent_runs() {
    // The database tool result lacks `data`, which the analysis contract requires.
    let workflow = Workflow::new("broken")
        .agent(&DatabaseAgent)
        .agent(&AnalysisAgent)
        .goal([("database_agent", "Fetch"), ("analysis_agent", "Analyze")]);
    let model = Arc::new(
        ScriptedModel::default().script("database_agent", [Message::assistant(r#"{"rows": []}"#)]),
    );
    let error = workflow
        .runner(model.clone())
        .start("go")
        .await
        .unwrap_err();
    let agent_contracts::Error::Retry { agent, error, .. } = &error else {
        panic!("expected a retry error, got {error}");
    };
    assert_eq!(agent, "analysis_agent");
    assert_eq!(
        error.path,
        [agent_contracts::contract::PathSegment::Key(
            "database_agent_output".into()
        )]
    );
    assert!(model.requests_of("analysis_agent").is_empty());
}

#[tokio::test]
async fn a_made_up_tool_name_is_retried_not_stored() {
    // The first database reply calls a tool the agent lacks.
    let model = Arc::new(
        ScriptedModel::default()
            .script(
                "database_agent",
                [
                    tool_calls([("drop_tables", "{}")]),
                    tool_calls([("fetch_product_data", "{}")]),
                ],
            )
            .script(
                "analysis_agent",
                [Message::assistant(r#"{"insights": ["widget leads"]}"#)],
            )
            .script("reporting_agent", [Message::assistant("Report.")]),
    );
    let workflow = workflow();
    let WorkflowOutcome::Finished { state, .. } =
        workflow.runner(model.clone()).start("go").await.unwrap()
    else {
        panic!("expected the pipeline to finish");
    };
    let db = model.requests_of("database_agent");
    assert_eq!(db.len(), 2);
    let retry = &db[1].messages.last().unwrap().content;
    assert!(
        retry.starts_with("Your answer broke your output contract."),
        "{retry}"
    );
    assert!(retry.contains("\"error\": \"Unknown tool\""), "{retry}");
    assert_eq!(
        state
            .upstream
            .get::<serde_json::Value>("database_agent")
            .unwrap()
            .value["data"][0]["product"],
        "widget"
    );
}

#[tokio::test]
async fn an_unknown_next_agent_is_sent_back_to_the_agent() {
    let model = Arc::new(model(vec![
        Message::assistant(r#"{"insights": ["a"], "next_agent": "nobody"}"#),
        Message::assistant(r#"{"insights": ["a"]}"#),
    ]));
    let workflow = workflow();
    let outcome = workflow.runner(model.clone()).start("go").await.unwrap();
    assert!(matches!(outcome, WorkflowOutcome::Finished { .. }));
    let second = &model.requests_of("analysis_agent")[1];
    let retry = &second.messages.last().unwrap().content;
    assert!(
        retry.contains("`next_agent` names `nobody`, which is not an agent of this workflow"),
        "{retry}"
    );
}

#[tokio::test]
async fn an_agent_outside_the_goal_returns_to_the_goal() {
    /// A reviewer that is a member but not a declared step.
    #[derive(Agent)]
    #[agent(input = "fixtures/pipeline/database.input.schema.json")]
    pub struct ReviewAgent;

    let workflow = workflow().agent(&ReviewAgent);
    let model = Arc::new(
        model(vec![Message::assistant(
            r#"{"insights": ["a"], "next_agent": "review_agent"}"#,
        )])
        .script("review_agent", [Message::assistant(r#"{"ok": true}"#)]),
    );
    let WorkflowOutcome::Finished { state, .. } =
        workflow.runner(model.clone()).start("go").await.unwrap()
    else {
        panic!("expected the pipeline to finish");
    };
    let order: Vec<&str> = state
        .upstream
        .entries()
        .iter()
        .map(|e| e.producer.as_str())
        .collect();
    assert_eq!(
        order,
        [
            "database_agent",
            "analysis_agent",
            "review_agent",
            "reporting_agent"
        ]
    );
    assert_eq!(
        model.requests_of("database_agent").len(),
        1,
        "the goal must not start over"
    );
}
