//! The main job: a main agent runs the discovery, selector and accessibility sub-agents, then
//! calls the plan generator with flat kwargs that lack `collected_information`, gets the retry
//! error, calls again with everything, and the plan generator answers on its rendered prompt.
//!
//! The model is scripted, so the run is offline and deterministic; the script is what a real
//! model would say at each turn.

use crate::agents::{AccessibilityAgent, DiscoveryAgent, PlanGeneratorAgent, SelectorAgent};
use agent_contracts::RawJson;
use agent_contracts::model::tool_calls;
use agent_contracts::runtime::{LoopOutcome, LoopPause, Outcome};
use agent_contracts::{DynAgent, Error, Message, Runtime, ScriptedModel};
use serde::Serialize;
use serde_json::json;
use std::sync::Arc;

/// The main agent's name in requests and the transcript.
pub const MAIN_AGENT: &str = "main_agent";

const TARGET_URL: &str = "https://myapp.com/login";
const TASK_NAME: &str = "login_form_automation";

/// What each sub-agent answers. Numbers are kept as written (`0.60`), as a model wrote them.
const DISCOVERY_OUTPUT: &str = r##"{
  "page_title": "Login - MyApp",
  "discovered_elements": [
    {"element_id": "email-input", "type": "input",
     "attributes": {"name": "email", "placeholder": "Enter email", "required": true},
     "validation_rules": ["email_format", "not_empty"]},
    {"element_id": "password-input", "type": "input",
     "attributes": {"name": "password", "type": "password", "required": true},
     "validation_rules": ["min_length_8"]}
  ],
  "forms_detected": 1,
  "metadata": {"scan_duration_ms": 234, "framework_detected": "React"}
}"##;

const SELECTOR_OUTPUT: &str = r##"{
  "selectors": {
    "email-input": {
      "primary": {"css": "#email-input", "xpath": "//input[@id='email-input']", "confidence": 0.95},
      "fallback": [
        {"css": "input[name='email']", "confidence": 0.85},
        {"css": "form input:first-child", "confidence": 0.60}
      ]
    },
    "password-input": {
      "primary": {"css": "#password-input", "xpath": "//input[@type='password']", "confidence": 0.98},
      "fallback": []
    }
  },
  "strategy": "id-first-with-attribute-fallback",
  "warnings": []
}"##;

const ACCESSIBILITY_OUTPUT: &str = r##"{
  "overall_score": 78,
  "compliance_level": "AA",
  "issues": [
    {"severity": "critical", "wcag_criterion": "1.1.1", "affected_elements": ["logo-image"],
     "recommendation": "Add alt text to image", "auto_fixable": true},
    {"severity": "warning", "wcag_criterion": "2.4.6", "affected_elements": ["submit-btn"],
     "recommendation": "Improve button label descriptiveness", "auto_fixable": false}
  ],
  "passed_checks": {"keyboard_navigation": true, "color_contrast": true, "focus_indicators": false},
  "audit_metadata": {"tool_version": "1.2.0", "rules_applied": 56, "elements_scanned": 124}
}"##;

const PLAN_OUTPUT: &str = r##"{
  "plan_file_path": "plans/login_form_automation.md",
  "status": "success",
  "agent_response_content": "Plan: open the login page, fill #email-input and #password-input (fallbacks: input[name='email'], form input:first-child), submit. Risk: the submit button label is vague (WCAG 2.4.6)."
}"##;

/// The main agent's system prompt.
pub const MAIN_SYSTEM: &str = "You are the main agent of a web crawling team. Use your sub-agents to study the page, then have the plan generator write a crawl plan from everything they found.";

/// The user's request.
pub const USER_REQUEST: &str = "Create a crawl plan for the login form at https://myapp.com/login (task: login_form_automation).";

/// What each sub-agent's output is, as the plan generator's `collected_information` item
/// describes it.
pub const DESCRIPTIONS: [&str; 3] = [
    "Discovered interactive elements and page structure for login form",
    "Generated robust CSS and XPath selectors for identified elements",
    "Accessibility audit results with WCAG compliance scores",
];

/// The plan generator's task.
pub const PLAN_TASK: &str = "Generate Crawl Plan";

/// The plan pipeline declared as a workflow: the same sub-agents in order, then the plan
/// generator, whose `collected_information` the run builds from their outputs (each as the
/// model wrote it). The crate compiles only if every step gets what its input contract
/// requires and each collected output fits the item the plan generator's contract
/// describes.
#[derive(agent_contracts::Workflow)]
#[workflow(
    name = "plan_pipeline",
    schemas = "../schemas",
    agents = "crate::agents",
    input = "workflows/plan_pipeline.input.schema.json",
    steps = ["discovery_agent", "selector_agent", "accessibility_agent", "plan_generator_agent"],
    collect = { collected_information = ["discovery_agent", "selector_agent", "accessibility_agent"] }
)]
pub struct PlanPipeline;

/// The declared pipeline's workflow, with the tasks and descriptions of the main job.
pub fn declared_workflow() -> agent_contracts::Workflow {
    PlanPipeline::workflow(
        [
            "Discover the login form's interactive elements",
            "Generate selectors for the login form",
            "Audit the login page's accessibility",
            PLAN_TASK,
        ],
        DESCRIPTIONS,
    )
}

/// The declared pipeline's run input: the page, the task, the elements.
pub fn declared_kwargs() -> String {
    json!({
        "task": USER_REQUEST,
        "target_url": TARGET_URL,
        "task_name": TASK_NAME,
        "element_ids": ["email-input", "password-input"],
    })
    .to_string()
}

/// The scripted model of the declared pipeline: each step answers as in the main job.
pub fn declared_model() -> ScriptedModel {
    ScriptedModel::default()
        .script("discovery_agent", [Message::assistant(DISCOVERY_OUTPUT)])
        .script(
            "selector_agent",
            [Message::assistant(format!(
                "Here are the selectors:\n```json\n{SELECTOR_OUTPUT}\n```"
            ))],
        )
        .script(
            "accessibility_agent",
            [Message::assistant(format!(
                "The audit found two issues. {ACCESSIBILITY_OUTPUT} That is all."
            ))],
        )
        .script("plan_generator_agent", [Message::assistant(PLAN_OUTPUT)])
}

/// A sub-agent's answer as it wrote it (the constants above are fixed, valid JSON).
fn written(text: &str) -> RawJson {
    serde_json::from_str(text).unwrap_or_default()
}

/// The call a well-behaved main agent makes after its retry: everything, passed flat, each
/// sub-agent's output as that agent wrote it (a parent model copies text).
pub fn full_plan_kwargs() -> String {
    #[derive(Serialize)]
    struct Item {
        agent_name: &'static str,
        description: &'static str,
        output: RawJson,
    }
    #[derive(Serialize)]
    struct Kwargs {
        task: &'static str,
        run_identifier: &'static str,
        target_url: &'static str,
        task_name: &'static str,
        collected_information: [Item; 3],
    }
    let item = |agent_name, description, output| Item {
        agent_name,
        description,
        output: written(output),
    };
    let kwargs = Kwargs {
        task: PLAN_TASK,
        run_identifier: "12345",
        target_url: TARGET_URL,
        task_name: TASK_NAME,
        collected_information: [
            item("discovery_agent", DESCRIPTIONS[0], DISCOVERY_OUTPUT),
            item("selector_agent", DESCRIPTIONS[1], SELECTOR_OUTPUT),
            item("accessibility_agent", DESCRIPTIONS[2], ACCESSIBILITY_OUTPUT),
        ],
    };
    serde_json::to_string(&kwargs).unwrap_or_default()
}

/// The scripted model of the main job; it reports an estimated usage (a token per four
/// bytes), so an offline run shows token counts and exports token metrics.
pub fn scripted_model() -> ScriptedModel {
    let discovery = json!({"task": "Discover the login form's interactive elements", "target_url": TARGET_URL, "focus": "login form"}).to_string();
    let selectors = json!({"task": "Generate selectors for the login form", "target_url": TARGET_URL, "element_ids": ["email-input", "password-input"]}).to_string();
    let audit = json!({"task": "Audit the login page's accessibility", "target_url": TARGET_URL, "wcag_level": "AA"}).to_string();
    // The classic failure: data passed flat, and `collected_information` forgotten.
    let incomplete = json!({"task": "Generate Crawl Plan", "run_identifier": "12345", "target_url": TARGET_URL, "task_name": TASK_NAME}).to_string();
    let full = full_plan_kwargs();
    ScriptedModel::default()
        .with_estimated_usage()
        .script(
            MAIN_AGENT,
            [
                tool_calls([("run_discovery_agent", discovery.as_str())]),
                tool_calls([("run_selector_agent", selectors.as_str())]),
                tool_calls([("run_accessibility_agent", audit.as_str())]),
                tool_calls([("run_plan_generator_agent", incomplete.as_str())]),
                tool_calls([("run_plan_generator_agent", full.as_str())]),
                Message::assistant(
                    "The crawl plan is written to plans/login_form_automation.md: it fills the email and password inputs by id with attribute fallbacks, and flags the vague submit button label.",
                ),
            ],
        )
        .script("discovery_agent", [Message::assistant(DISCOVERY_OUTPUT)])
        .script(
            "selector_agent",
            [Message::assistant(format!("Here are the selectors:\n```json\n{SELECTOR_OUTPUT}\n```"))],
        )
        .script(
            "accessibility_agent",
            [Message::assistant(format!("The audit found two issues. {ACCESSIBILITY_OUTPUT} That is all."))],
        )
        .script("plan_generator_agent", [Message::assistant(PLAN_OUTPUT)])
}

/// A model that answers every call of each sub-agent with that agent's canned output, and
/// every step of the event-planning workflow ([`crate::event_planning::canned_answer`]): the
/// offline model of `agent-demo mcp`, which serves any number of calls.
pub fn canned_model() -> Canned {
    Canned
}

/// See [`canned_model`].
#[derive(Debug, Clone, Copy, Default)]
pub struct Canned;

impl agent_contracts::ChatModel for Canned {
    fn complete<'a>(
        &'a self,
        request: &'a agent_contracts::model::ChatRequest,
    ) -> agent_contracts::model::BoxFuture<
        'a,
        Result<agent_contracts::model::ChatResponse, agent_contracts::model::ModelError>,
    > {
        let answer = match request.agent.as_str() {
            "discovery_agent" => Ok(DISCOVERY_OUTPUT),
            "selector_agent" => Ok(SELECTOR_OUTPUT),
            "accessibility_agent" => Ok(ACCESSIBILITY_OUTPUT),
            "plan_generator_agent" => Ok(PLAN_OUTPUT),
            other => crate::event_planning::canned_answer(request)
                .or_else(|| crate::support_triage::canned_answer(request))
                .ok_or_else(|| {
                    agent_contracts::model::ModelError::Other(format!(
                        "no canned answer for `{other}`"
                    ))
                }),
        };
        Box::pin(async move { answer.map(|text| Message::assistant(text).into()) })
    }
}

/// The sub-agents the main agent may call.
pub fn tools() -> [&'static dyn DynAgent; 4] {
    [
        &DiscoveryAgent,
        &SelectorAgent,
        &AccessibilityAgent,
        &PlanGeneratorAgent,
    ]
}

/// Runs the main job on `model`; the runtime keeps the transcript.
pub async fn run(model: Arc<dyn agent_contracts::ChatModel>) -> (Runtime, Result<Outcome, Error>) {
    run_with(model, Vec::new(), agent_contracts::Config::default()).await
}

/// Runs the main job on `model` under `config` (streamed answers, say) with `tools` (an MCP
/// server's, say) offered to the main agent beside its sub-agents.
pub async fn run_with(
    model: Arc<dyn agent_contracts::ChatModel>,
    extra: Vec<Arc<dyn agent_contracts::Tool>>,
    config: agent_contracts::Config,
) -> (Runtime, Result<Outcome, Error>) {
    run_answering(model, extra, config, |_| None).await
}

/// Runs the main job as [`run_with`] does; when one of its tools waits on a person (a remote
/// A2A agent's question), `answer` is asked: its answer goes to that tool and the main agent
/// goes on; `None` ends the run with [`Error::ToolPaused`] and the question.
pub async fn run_answering(
    model: Arc<dyn agent_contracts::ChatModel>,
    extra: Vec<Arc<dyn agent_contracts::Tool>>,
    config: agent_contracts::Config,
    mut answer: impl FnMut(&LoopPause) -> Option<String>,
) -> (Runtime, Result<Outcome, Error>) {
    let runtime = extra
        .into_iter()
        .fold(Runtime::with_config(model, config), |runtime, tool| {
            runtime.with_tool(tool)
        });
    let tools = tools();
    let mut step = runtime
        .run_loop_pausable(MAIN_AGENT, MAIN_SYSTEM, USER_REQUEST, &tools)
        .await;
    let outcome = loop {
        match step {
            Ok(LoopOutcome::Done(outcome)) => break Ok(outcome),
            Ok(LoopOutcome::Paused(pause)) => match answer(&pause) {
                Some(given) => step = runtime.resume_loop(pause, &given, &tools).await,
                None => {
                    break Err(Error::ToolPaused {
                        agent: pause.agent,
                        tool: pause.tool,
                        question: pause.question,
                    });
                }
            },
            Err(error) => break Err(error),
        }
    };
    (runtime, outcome)
}
