//! Structured outputs: the versioned delegation (orchestrators) and consolidation (collectors)
//! templates of `schemas/delegation` and `schemas/consolidation`, as output contracts.

use agent_contracts::prompt::UpstreamContext;
use agent_contracts::{
    Agent, ChatModel, DynAgent, Message, Runtime, ScriptedModel, contract::PathSegment,
    contract::check_output, model::ChatRequest, model::Role,
};
use agent_contracts::{
    PromptContributor, prompt::ContextIdContributor, prompt::ContributorRegistry,
};
use agent_contracts::{
    model::BoxFuture, model::ChatResponse, model::ModelError, model::tool_calls,
};
use agent_contracts::{transcript::ContextId, transcript::ContextIdGenerator};
use agent_tests::block_on;
use serde_json::{Value, json};
use std::sync::Arc;

/// Orchestrator: splits a goal among the available agents and answers with a versioned
/// delegation template (schemaVersion 1.0.0)
#[derive(Agent)]
#[agent(
    name = "delegation",
    input = "../schemas/delegation/input.schema.json",
    output = "../schemas/delegation/output.schema.json"
)]
struct DelegationAgent;

/// Collector: merges upstream outputs and answers with a versioned consolidation template
/// (schemaVersion 1.0.0)
#[derive(Agent)]
#[agent(
    name = "consolidation",
    input = "../schemas/consolidation/input.schema.json",
    output = "../schemas/consolidation/output.schema.json"
)]
struct ConsolidationAgent;

const RESULT_ID: &str = "run-7/delegation/1/2026-01-19T10:15:00.000Z";
const UPSTREAM_ID: &str = "run-7/main_agent/1/2026-01-19T10:14:59.000Z";
const DISCOVERY_ID: &str = "run-7/discovery_agent/1/2026-01-19T10:14:30.250Z";

fn delegation(result_id: &str) -> Value {
    json!({
        "schemaVersion": "1.0.0",
        "resultId": result_id,
        "upstreamContextId": UPSTREAM_ID,
        "goal": "Write a crawl plan for the login form at https://myapp.com/login",
        "delegationRationale": "Selectors and accessibility need the discovered elements, so discovery runs first; the two audits are independent.",
        "assignments": [
            {"agentId": "discovery-1", "agentType": "discovery_agent",
             "assignedGoal": "Find the login form's interactive elements",
             "subdomainFocus": "login form",
             "contextToPass": {"target_url": "https://myapp.com/login"}},
            {"agentId": "selector-1", "agentType": "selector_agent",
             "assignedGoal": "Generate robust selectors for the discovered elements",
             "subdomainFocus": null,
             "contextToPass": {"target_url": "https://myapp.com/login"}}
        ],
        "contextSelections": [
            {"selectionId": "sel-1", "sourceContextId": DISCOVERY_ID,
             "selectedContent": "email-input, password-input",
             "selectionRationale": "The selector agent only needs the element ids"}
        ],
        "metadata": {"domain": "web"}
    })
}

fn delegation_kwargs() -> String {
    json!({
        "task": "Delegate the crawl plan",
        "goal": "Write a crawl plan for the login form at https://myapp.com/login",
        "available_agents": [
            {"agent_type": "discovery_agent", "description": "Discovers the page's interactive elements"},
            {"agent_type": "selector_agent", "description": "Generates selectors"}
        ],
        "upstream_context_id": UPSTREAM_ID
    })
    .to_string()
}

fn path(segments: &[PathSegment]) -> String {
    segments
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("/")
}

// ---- the contracts ------------------------------------------------------------------------

#[test]
fn both_templates_are_versioned() {
    for agent in [&DelegationAgent as &dyn DynAgent, &ConsolidationAgent] {
        let schema = agent.output_contract().unwrap().schema();
        assert_eq!(
            schema["properties"]["schemaVersion"]["const"],
            "1.0.0",
            "{}",
            agent.name()
        );
        assert!(
            schema["required"]
                .as_array()
                .unwrap()
                .contains(&json!("schemaVersion"))
        );
        assert!(
            schema["required"]
                .as_array()
                .unwrap()
                .contains(&json!("resultId"))
        );
        assert_eq!(schema["additionalProperties"], false);
    }
}

#[test]
fn a_valid_delegation_passes_and_is_typed() {
    let value = delegation(RESULT_ID);
    let typed =
        check_output::<DelegationAgent>(&value, &agent_contracts::Limits::default()).unwrap();
    // The typed output serializes to the same JSON, a null `subdomainFocus` left out.
    let mut without_null = value.clone();
    without_null["assignments"][1]
        .as_object_mut()
        .unwrap()
        .remove("subdomainFocus");
    assert_eq!(serde_json::to_value(&typed).unwrap(), without_null);
    // Context ids in it are real context ids.
    let result_id: ContextId = value["resultId"].as_str().unwrap().parse().unwrap();
    assert_eq!(
        (result_id.agent_type(), result_id.sequence()),
        ("delegation", 1)
    );
    let source: ContextId = value["contextSelections"][0]["sourceContextId"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(source.agent_type(), "discovery_agent");
}

#[test]
fn a_wrong_schema_version_is_rejected() {
    for version in [json!("2.0.0"), json!("1.0"), json!(1), Value::Null] {
        let mut value = delegation(RESULT_ID);
        value["schemaVersion"] = version.clone();
        let error = DelegationAgent
            .check_output(&value, &agent_contracts::Limits::default())
            .unwrap_err();
        assert_eq!(
            error.error, "Output contract validation failed",
            "{version}"
        );
        assert_eq!(path(&error.path), "schemaVersion", "{version}: {error}");
        assert_eq!(
            error.errors[0].description.as_deref(),
            Some("Version of this template, for filtering datasets by version. Always '1.0.0'")
        );
    }
    let mut missing = delegation(RESULT_ID);
    missing.as_object_mut().unwrap().remove("schemaVersion");
    let error = DelegationAgent
        .check_output(&missing, &agent_contracts::Limits::default())
        .unwrap_err();
    assert!(
        error.validation_message.contains("schemaVersion"),
        "{error}"
    );
}

/// Where a broken delegation should fail, and how to break it.
type Breakage = (&'static str, Box<dyn Fn(&mut Value)>);

#[test]
fn malformed_delegations_are_rejected_where_they_break() {
    let cases: Vec<Breakage> = vec![
        (
            "resultId",
            Box::new(|v| v["resultId"] = json!("not-a-context-id")),
        ),
        (
            "resultId",
            Box::new(|v| v["resultId"] = json!("run-7/delegation/01/2026-01-19T10:15:00.000Z")),
        ),
        (
            "upstreamContextId",
            Box::new(|v| v["upstreamContextId"] = json!("run-7/main_agent/1/2026-01-19T10:14:59Z")),
        ),
        ("assignments", Box::new(|v| v["assignments"] = json!([]))),
        (
            "assignments/0/agentType",
            Box::new(|v| v["assignments"][0]["agentType"] = json!("discovery agent")),
        ),
        (
            "assignments/1/contextToPass/target_url",
            Box::new(|v| v["assignments"][1]["contextToPass"]["target_url"] = json!(1)),
        ),
        (
            "contextSelections/0/sourceContextId",
            Box::new(|v| v["contextSelections"][0]["sourceContextId"] = json!("discovery_agent")),
        ),
        (
            "metadata/domain",
            Box::new(|v| v["metadata"]["domain"] = json!(["web"])),
        ),
        ("", Box::new(|v| v["extra"] = json!(true))),
    ];
    for (at, break_it) in cases {
        let mut value = delegation(RESULT_ID);
        break_it(&mut value);
        let error = DelegationAgent
            .check_output(&value, &agent_contracts::Limits::default())
            .unwrap_err();
        assert_eq!(path(&error.path), at, "{error}");
    }
}

#[test]
fn the_delegation_input_contract_checks_the_orchestrators_call() {
    DelegationAgent
        .prepare(&delegation_kwargs(), &Default::default())
        .unwrap();
    let error = DelegationAgent
        .validate(r#"{"task": "Delegate", "goal": "g"}"#, &Default::default())
        .unwrap_err();
    assert_eq!(error.missing_fields, ["available_agents"]);
}

// ---- an orchestrator that emits a delegation (scripted) -----------------------------------

#[test]
fn a_scripted_orchestrator_delegates_through_the_runtime() {
    let answer = format!(
        "Here is the delegation:\n```json\n{}\n```",
        serde_json::to_string_pretty(&delegation(RESULT_ID)).unwrap()
    );
    let kwargs = delegation_kwargs();
    let mut wrong_version = delegation(RESULT_ID);
    wrong_version["schemaVersion"] = json!("2.0.0");
    let model = Arc::new(
        ScriptedModel::default()
            .script(
                "main_agent",
                [
                    tool_calls([("run_delegation", kwargs.as_str())]),
                    Message::assistant("Delegated."),
                ],
            )
            .script(
                "delegation",
                [
                    Message::assistant(wrong_version.to_string()),
                    Message::assistant(answer),
                ],
            ),
    );
    let runtime = Runtime::new(model.clone())
        .with_context_ids(Arc::new(ContextIdGenerator::new("run-7").unwrap()));
    let tools: [&dyn DynAgent; 1] = [&DelegationAgent];
    let outcome =
        block_on(runtime.run_loop("main_agent", "You coordinate agents.", "Plan it", &tools))
            .unwrap();
    assert_eq!(outcome.content, "Delegated.");

    // The wrong version went back with the error; the second answer passed.
    let requests = model.requests_of("delegation");
    assert_eq!(requests.len(), 2);
    let retry = &requests[1].messages[3].content;
    assert!(retry.contains("\"schemaVersion\""), "{retry}");
    assert!(retry.contains("## Previous attempt"), "{retry}");
    assert!(retry.contains("- **schemaVersion**: 2.0.0"), "{retry}");

    let result: Value = outcome
        .messages
        .iter()
        .find(|m| m.role == Role::Tool)
        .map(|m| serde_json::from_str(&m.content).unwrap())
        .unwrap();
    assert_eq!(result["success"], true);
    assert_eq!(result["output"], delegation(RESULT_ID));
    let call: ContextId = result["context_id"].as_str().unwrap().parse().unwrap();
    assert_eq!(
        (call.run_id(), call.agent_type(), call.sequence()),
        ("run-7", "delegation", 1)
    );
    let typed = serde_json::to_value(
        check_output::<DelegationAgent>(&result["output"], &agent_contracts::Limits::default())
            .unwrap(),
    )
    .unwrap();
    assert_eq!(typed["assignments"][0]["subdomainFocus"], "login form");
    assert_eq!(typed["assignments"][1].get("subdomainFocus"), None);
}

/// An orchestrator model that reads its context id from the system prompt (the
/// `context_id` contributor) and records it as the delegation's `resultId`.
struct EchoIdModel;

impl ChatModel for EchoIdModel {
    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        let system = &request.messages[0].content;
        let id = system
            .split("Your context id for this call is `")
            .nth(1)
            .and_then(|rest| rest.split('`').next())
            .unwrap_or("missing");
        let reply = Message::assistant(delegation(id).to_string());
        Box::pin(async move { Ok(reply.into()) })
    }
}

#[test]
fn the_result_id_is_the_calls_context_id() {
    let runtime = Runtime::new(Arc::new(EchoIdModel)).with_contributors(
        ContributorRegistry::default().with(ContextIdContributor.only_for(["delegation"])),
    );

    let first = block_on(runtime.call_sub_agent(
        &DelegationAgent,
        &delegation_kwargs(),
        Default::default(),
    ))
    .unwrap();
    let second = block_on(runtime.call_sub_agent(
        &DelegationAgent,
        &delegation_kwargs(),
        Default::default(),
    ))
    .unwrap();
    for output in [&first, &second] {
        assert_eq!(
            output.output.value()["resultId"],
            output.context_id.to_string()
        );
    }
    assert_eq!(
        (first.context_id.sequence(), second.context_id.sequence()),
        (1, 2)
    );
}

// ---- consolidation ------------------------------------------------------------------------

fn consolidation(result_id: &str) -> Value {
    json!({
        "schemaVersion": "1.0.0",
        "resultId": result_id,
        "inputs": [
            {"inputContextId": DISCOVERY_ID, "inputType": "discovery_agent",
             "inputSummary": "Two inputs of the login form"},
            {"inputContextId": "run-7/discovery_agent/2/2026-01-19T10:14:31.000Z", "inputType": "discovery_agent",
             "inputSummary": "The same form, plus a remember-me checkbox"}
        ],
        "mergeStrategy": "Union of elements by id; the later scan wins on attributes",
        "conflictResolutions": [
            {"conflictDescription": "The scans disagree on whether the email input is required",
             "resolutionApproach": "Kept required: the HTML has the attribute",
             "conflictingInputs": [DISCOVERY_ID, "run-7/discovery_agent/2/2026-01-19T10:14:31.000Z"]}
        ],
        "aggregatedMetrics": {"elements": 3, "mean_confidence": 0.82},
        "consolidatedOutput": "email-input, password-input, remember-me",
        "decision": {"decisionType": "advance_phase", "rationale": "Every element has an id"},
        "upstreamContextChain": [UPSTREAM_ID, DISCOVERY_ID],
        "curations": [
            {"curationId": "cur-1", "targetAgentType": "selector_agent",
             "summary": "Element ids for selector generation", "sourceContextIds": [DISCOVERY_ID]}
        ]
    })
}

#[test]
fn a_collector_consolidates_an_upstream_context() {
    // The upstream context serializes to the collector's `inputs`.
    let ids = ContextIdGenerator::new("run-7").unwrap();
    let mut upstream = UpstreamContext::default();
    upstream
        .push(
            "discovery_agent",
            ids.next("discovery_agent").unwrap(),
            json!({"page_title": "Login"}),
        )
        .push(
            "discovery_agent",
            ids.next("discovery_agent").unwrap(),
            json!({"page_title": "Login"}),
        );
    let kwargs = json!({"task": "Merge the scans", "inputs": upstream, "goal": "One element list"});
    let prepared = ConsolidationAgent
        .prepare(&kwargs.to_string(), &Default::default())
        .unwrap();
    assert!(prepared.user_prompt.contains("run-7/discovery_agent/2/"));

    let value = consolidation("run-7/consolidation/1/2026-01-19T10:16:00.000Z");
    let typed =
        check_output::<ConsolidationAgent>(&value, &agent_contracts::Limits::default()).unwrap();
    assert_eq!(
        serde_json::to_value(&typed).unwrap()["decision"]["decisionType"],
        "advance_phase"
    );

    let mut bad = value.clone();
    bad["decision"]["decisionType"] = json!("continue");
    assert_eq!(
        path(
            &ConsolidationAgent
                .check_output(&bad, &agent_contracts::Limits::default())
                .unwrap_err()
                .path
        ),
        "decision/decisionType"
    );
    let mut bad = value.clone();
    bad["schemaVersion"] = json!("1.1.0");
    assert_eq!(
        path(
            &ConsolidationAgent
                .check_output(&bad, &agent_contracts::Limits::default())
                .unwrap_err()
                .path
        ),
        "schemaVersion"
    );
    let mut bad = value.clone();
    bad["upstreamContextChain"][1] = json!("run-7/discovery_agent");
    assert_eq!(
        path(
            &ConsolidationAgent
                .check_output(&bad, &agent_contracts::Limits::default())
                .unwrap_err()
                .path
        ),
        "upstreamContextChain/1"
    );
    let mut bad = value;
    bad["aggregatedMetrics"]["elements"] = json!("three");
    assert_eq!(
        path(
            &ConsolidationAgent
                .check_output(&bad, &agent_contracts::Limits::default())
                .unwrap_err()
                .path
        ),
        "aggregatedMetrics/elements"
    );

    // An input that does not name its call is refused.
    let bad_input = json!({"task": "Merge", "inputs": [{"producer": "discovery_agent", "context_id": "?", "value": {}}]});
    let error = ConsolidationAgent
        .validate(&bad_input.to_string(), &Default::default())
        .unwrap_err();
    assert_eq!(path(&error.path), "inputs/0/context_id");
}
