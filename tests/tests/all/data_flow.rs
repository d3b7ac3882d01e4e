//! Data flow between a workflow's agents, checked at compile time: the event-planning
//! declaration compiles and decides everything, the build script shares one type for a
//! contract two agents use, a comparison beyond the check is listed as undecided, and the
//! check names the step and the field of what is wrong. The compile errors themselves are
//! the `ui/workflow/` cases.

use agent_contracts::Workflow;
use agent_contracts_codegen::flow::{self, Flow};
use agent_examples::agents::{budget_agent, catering_agent};
use agent_examples::event_planning::EventPlanning;
use std::path::Path;

mod agents {
    /// Produces a count and a kind.
    #[derive(agent_contracts::Agent)]
    #[agent(
        name = "producer",
        input = "ui/schemas/flow/producer/input.schema.json",
        output = "ui/schemas/flow/producer/output.schema.json"
    )]
    pub struct Producer;

    /// Reads the producer's kind, which must match a pattern.
    #[derive(agent_contracts::Agent)]
    #[agent(
        name = "patterned",
        input = "ui/schemas/flow/patterned/input.schema.json"
    )]
    pub struct Patterned;
}

mod topical {
    /// Needs a topic, from the run's input.
    #[derive(agent_contracts::Agent)]
    #[agent(name = "topical", input = "ui/schemas/flow/topical/input.schema.json")]
    pub struct Topical;
}

/// The run's input provides `topic`, with a tighter bound than the step asks.
#[derive(agent_contracts::Workflow)]
#[workflow(
    schemas = "ui/schemas/flow",
    input = "ui/schemas/flow_input.schema.json",
    agents = "crate::data_flow::topical",
    steps = ["topical"]
)]
struct Topics;

/// A pattern is beyond the comparison: the flow compiles, and says so.
#[derive(agent_contracts::Workflow)]
#[workflow(
    schemas = "ui/schemas/flow",
    agents = "crate::data_flow::agents",
    steps = ["producer", "patterned"]
)]
struct Patterns;

#[test]
fn event_planning_is_declared_and_decided() {
    assert_eq!(EventPlanning::NAME, "event_planning");
    assert_eq!(
        EventPlanning::STEPS,
        [
            "venue_agent",
            "budget_agent",
            "catering_agent",
            "logistics_agent"
        ]
    );
    assert_eq!(EventPlanning::UNDECIDED, [] as [&str; 0]);
    let workflow: Workflow = agent_examples::event_planning::workflow();
    workflow.check().unwrap();
}

/// The catering agent's input holds the budget agent's own output type, not a copy.
fn budget_of(input: &catering_agent::CateringAgentInput) -> &budget_agent::BudgetAgentOutput {
    &input.budget_agent_output
}

#[test]
fn a_referenced_contract_has_one_type() {
    let call = agent_contracts::contract::ToolCall::from_json_str(
        r#"{"task": "Plan the catering",
            "venue_agent_output": {"venue_name": "Loft", "capacity": 60, "cost_usd": 1500},
            "budget_agent_output": {"total_budget_usd": 5000, "allocations": {"catering": 2000}}}"#,
        &agent_contracts::Limits::default(),
    )
    .unwrap();
    let input = <catering_agent::CateringAgentInput as agent_contracts::AgentInput>::from_call(
        &call,
        &agent_contracts::Limits::default(),
    )
    .unwrap();
    assert_eq!(budget_of(&input).allocations["catering"], 2000.0);
    // The bundled contract checks the producer's shape at run time too.
    let call = agent_contracts::contract::ToolCall::from_json_str(
        r#"{"task": "Plan the catering",
            "venue_agent_output": {"venue_name": "Loft", "capacity": 60, "cost_usd": 1500},
            "budget_agent_output": {"total_budget_usd": 5000}}"#,
        &agent_contracts::Limits::default(),
    )
    .unwrap();
    let error = <catering_agent::CateringAgentInput as agent_contracts::AgentInput>::from_call(
        &call,
        &agent_contracts::Limits::default(),
    )
    .unwrap_err();
    assert_eq!(
        error.validation_message,
        "\"allocations\" is a required property"
    );
    assert_eq!(
        error.path,
        [agent_contracts::contract::PathSegment::Key(
            "budget_agent_output".into()
        )]
    );
}

#[test]
fn what_the_check_cannot_decide_is_listed() {
    assert_eq!(
        Patterns::UNDECIDED,
        [
            "step `patterned`: `producer_output` from the step `producer`: `producer_output.kind`: the step's `pattern` is not implied by the schema there"
        ]
    );
}

fn event_planning(steps: &[&str]) -> Flow {
    let schemas = Path::new(env!("CARGO_MANIFEST_DIR")).join("../schemas");
    let mut read = Vec::new();
    Flow {
        name: "event_planning".into(),
        input: None,
        steps: steps
            .iter()
            .map(|s| flow::load_step(&schemas, s, &mut read).unwrap())
            .collect(),
        agents: flow::agent_folders(&schemas),
        collects: Vec::new(),
    }
}

#[test]
fn without_the_budget_step_catering_and_logistics_are_named() {
    let report = flow::check(&event_planning(&[
        "venue_agent",
        "catering_agent",
        "logistics_agent",
    ]));
    let errors: Vec<(usize, &str, &str)> = report
        .errors
        .iter()
        .map(|p| (p.step, p.field.as_str(), p.message.as_str()))
        .collect();
    assert_eq!(
        errors,
        [
            (
                1,
                "budget_agent_output",
                "step `catering_agent` needs `budget_agent_output`, which neither the workflow's input nor an earlier step provides (provided: `venue_agent_output`): add the step `budget_agent` before `catering_agent`"
            ),
            (
                2,
                "budget_agent_output",
                "step `logistics_agent` needs `budget_agent_output`, which neither the workflow's input nor an earlier step provides (provided: `venue_agent_output`, `catering_agent_output`): add the step `budget_agent` before `logistics_agent`"
            ),
        ]
    );
    let report = flow::check(&event_planning(&[
        "venue_agent",
        "budget_agent",
        "catering_agent",
        "logistics_agent",
    ]));
    assert_eq!(report, flow::FlowReport::default());
}

#[test]
fn a_renamed_field_gets_a_did_you_mean() {
    let mut flow = event_planning(&["venue_agent", "budget_agent", "catering_agent"]);
    // The catering contract as if its `budget_agent_output` had been renamed.
    let text = serde_json::to_string(&flow.steps[2].input.schema)
        .unwrap()
        .replace("\"budget_agent_output\"", "\"budget_agent_outputs\"");
    flow.steps[2].input.schema = serde_json::from_str(&text).unwrap();
    let report = flow::check(&flow);
    assert_eq!(report.errors.len(), 1);
    assert_eq!(
        report.errors[0].message,
        "step `catering_agent` needs `budget_agent_outputs`, which neither the workflow's input nor an earlier step provides (provided: `venue_agent_output`, `budget_agent_output`) (did you mean `budget_agent_output`?)"
    );
}

#[test]
fn steps_that_need_each_other_are_a_cycle() {
    let schemas = Path::new(env!("CARGO_MANIFEST_DIR")).join("ui/schemas/flow");
    let mut read = Vec::new();
    let flow = Flow {
        name: "cycle".into(),
        input: None,
        steps: ["ping", "pong"]
            .iter()
            .map(|s| flow::load_step(&schemas, s, &mut read).unwrap())
            .collect(),
        agents: flow::agent_folders(&schemas),
        collects: Vec::new(),
    };
    let report = flow::check(&flow);
    assert_eq!(report.errors.len(), 1);
    assert_eq!(
        report.errors[0].message,
        "step `ping` needs `pong_output`, but the steps need each other's output: `ping` needs the output of `pong`, which needs the output of `ping`; no order can run them"
    );
}

#[test]
fn a_declared_workflow_has_its_agents_and_steps() {
    let workflow = Patterns::workflow(["Count", "Check the kind"]);
    assert_eq!(workflow.name(), "patterns");
    workflow.check().unwrap();
    assert_eq!(Patterns::STEPS, ["producer", "patterned"]);
}

/// The build-script front end runs the same check.
#[test]
fn the_builder_checks_a_workflow_alike() {
    let builder = agent_contracts_codegen::Builder::new("../schemas")
        .manifest_dir(env!("CARGO_MANIFEST_DIR"));
    let report = builder.check_workflow(&EventPlanning::STEPS, None).unwrap();
    assert_eq!(report, flow::FlowReport::default());
    let errors = builder
        .check_workflow(&["venue_agent", "catering_agent"], None)
        .unwrap_err();
    assert_eq!(
        errors.to_string(),
        "error: step `catering_agent` needs `budget_agent_output`, which neither the workflow's input nor an earlier step provides (provided: `venue_agent_output`): add the step `budget_agent` before `catering_agent`\n"
    );
}

/// The build-script front end checks a `collect` as the derive does.
#[test]
fn the_builder_checks_a_collect_alike() {
    let builder = agent_contracts_codegen::Builder::new("../schemas")
        .manifest_dir(env!("CARGO_MANIFEST_DIR"));
    let input = Path::new("../examples/workflows/plan_pipeline.input.schema.json");
    let steps = [
        "discovery_agent",
        "selector_agent",
        "accessibility_agent",
        "plan_generator_agent",
    ];
    let all: &[&str] = &["discovery_agent", "selector_agent", "accessibility_agent"];
    let report = builder
        .check_workflow_collecting(&steps, Some(input), &[("collected_information", all)])
        .unwrap();
    assert_eq!(report.errors, []);
    // Without the collect, nobody provides the field.
    let errors = builder.check_workflow(&steps, Some(input)).unwrap_err();
    assert!(
        errors.to_string().contains("`collected_information`"),
        "{errors}"
    );
    // A producer that runs after its consumer.
    let late = [
        "discovery_agent",
        "selector_agent",
        "plan_generator_agent",
        "accessibility_agent",
    ];
    let errors = builder
        .check_workflow_collecting(&late, Some(input), &[("collected_information", all)])
        .unwrap_err()
        .to_string();
    assert!(
        errors.contains("move `accessibility_agent` before `plan_generator_agent`"),
        "{errors}"
    );
}

/// A derive whose contract names sibling contracts embeds the bundled text and tracks every
/// file it read, so editing the budget agent's output contract rebuilds the catering agent.
#[test]
fn the_derive_tracks_the_sibling_files() {
    let derive: syn::DeriveInput = syn::parse_quote! {
        /// Plans the food.
        #[agent(
            name = "catering_agent",
            input = "../schemas/catering_agent/input.schema.json",
        )]
        pub struct CateringAgent;
    };
    let expanded = agent_contracts_codegen::derive::derive_agent(&derive).to_string();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let schemas = root.parent().unwrap().join("schemas");
    for path in [
        root.join("../schemas/catering_agent/input.schema.json"),
        schemas.join("venue_agent/output.schema.json"),
        schemas.join("budget_agent/output.schema.json"),
    ] {
        let tracked = format!("include_bytes ! ({:?})", path.to_string_lossy());
        assert!(expanded.contains(&tracked), "{tracked} in {expanded}");
    }
    assert!(!expanded.contains("include_str"));
}

#[test]
fn the_run_input_provides_fields() {
    assert_eq!(Topics::UNDECIDED, [] as [&str; 0]);
    Topics::workflow(["Write about the topic"]).check().unwrap();
    let builder = agent_contracts_codegen::Builder::new("ui/schemas/flow")
        .manifest_dir(env!("CARGO_MANIFEST_DIR"));
    let errors = builder.check_workflow(&["topical"], None).unwrap_err();
    assert_eq!(
        errors.to_string(),
        "error: step `topical` needs `topic`, which neither the workflow's input nor an earlier step provides (nothing is provided before it)\n"
    );
}

/// The catering agent through the derive, using the budget agent's own output type (here the
/// build script's) where its contract refers to `../budget_agent/output.schema.json`.
mod mapped {
    /// Plans the catering within its allocation.
    #[derive(agent_contracts::Agent)]
    #[agent(
        name = "catering_agent",
        input = "../schemas/catering_agent/input.schema.json",
        output = "../schemas/catering_agent/output.schema.json",
        types = { "../budget_agent/output.schema.json" = agent_examples::agents::budget_agent::BudgetAgentOutput }
    )]
    pub struct CateringAgent;
}

/// Takes the producer's type: called with the derived consumer's field, it compiles only if
/// the consumer holds that very type.
fn catering_allocation(budget: &budget_agent::BudgetAgentOutput) -> f64 {
    budget.allocations["catering"]
}

#[test]
fn a_mapped_contract_is_the_producers_type() {
    use agent_contracts::__private::ContractType;
    let call = agent_contracts::contract::ToolCall::from_json_str(
        r#"{"task": "Plan the catering",
            "venue_agent_output": {"venue_name": "Loft", "capacity": 60, "cost_usd": 1500},
            "budget_agent_output": {"total_budget_usd": 5000, "allocations": {"catering": 2000}}}"#,
        &agent_contracts::Limits::default(),
    )
    .unwrap();
    let input =
        <mapped::catering_agent::CateringAgentInput as agent_contracts::AgentInput>::from_call(
            &call,
            &agent_contracts::Limits::default(),
        )
        .unwrap();
    assert_eq!(catering_allocation(&input.budget_agent_output), 2000.0);
    assert_eq!(
        <mapped::CateringAgent as agent_contracts::Agent>::NAME,
        "catering_agent"
    );
    // The derive's consumer and the build script's consumer hold the same type, and the
    // fingerprints of the two front ends agree for the same schema.
    let built = <catering_agent::CateringAgentInput as agent_contracts::AgentInput>::from_call(
        &call,
        &agent_contracts::Limits::default(),
    )
    .unwrap();
    assert_eq!(input.budget_agent_output, built.budget_agent_output);
    assert_eq!(
        <mapped::catering_agent::CateringAgentInput as ContractType>::FINGERPRINT,
        <catering_agent::CateringAgentInput as ContractType>::FINGERPRINT
    );
    assert_ne!(
        <budget_agent::BudgetAgentOutput as ContractType>::FINGERPRINT,
        <catering_agent::CateringAgentInput as ContractType>::FINGERPRINT
    );
}

fn plan_pipeline(steps: &[&str], from: &[&str]) -> Flow {
    let mut flow = event_planning(steps);
    flow.name = "plan_pipeline".into();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut read = Vec::new();
    flow.input = Some(
        flow::load_contract(
            &root.join("../examples/workflows/plan_pipeline.input.schema.json"),
            &mut read,
        )
        .unwrap(),
    );
    flow.collects = vec![flow::FlowCollect {
        field: "collected_information".into(),
        from: from.iter().map(|s| s.to_string()).collect(),
    }];
    flow
}

fn messages(report: &flow::FlowReport) -> Vec<&str> {
    report.errors.iter().map(|p| p.message.as_str()).collect()
}

#[test]
fn the_plan_pipeline_collects_what_its_contract_accepts() {
    let all = ["discovery_agent", "selector_agent", "accessibility_agent"];
    let steps = [
        "discovery_agent",
        "selector_agent",
        "accessibility_agent",
        "plan_generator_agent",
    ];
    let report = flow::check(&plan_pipeline(&steps, &all));
    assert_eq!(report, flow::FlowReport::default());
    // The contract requires discovery and selector outputs (`contains`): leaving one out of the
    // collect is an error naming the step, the field and the producer. The accessibility
    // audit is optional.
    let report = flow::check(&plan_pipeline(&steps, &all[1..]));
    assert_eq!(
        messages(&report),
        [
            "step `plan_generator_agent`: `collected_information` must contain an item with `agent_name` `discovery_agent` (`contains`), and the collect has none: add `discovery_agent` to the collect"
        ]
    );
    assert!(report.undecided.is_empty(), "{report:?}");
    let report = flow::check(&plan_pipeline(&steps, &all[..2]));
    assert_eq!(report, flow::FlowReport::default());
    // Nothing collected: below `minItems`, and neither required output.
    let report = flow::check(&plan_pipeline(&steps, &[]));
    assert_eq!(
        messages(&report),
        [
            "step `plan_generator_agent`: `collected_information` collects 0 item(s), and the step's contract needs at least 1 (`minItems`)",
            "step `plan_generator_agent`: `collected_information` must contain an item with `agent_name` `discovery_agent` (`contains`), and the collect has none: add `discovery_agent` to the collect",
            "step `plan_generator_agent`: `collected_information` must contain an item with `agent_name` `selector_agent` (`contains`), and the collect has none: add `selector_agent` to the collect"
        ]
    );
}

#[test]
fn a_collect_names_the_step_and_the_field_of_what_is_wrong() {
    // The plan generator runs before the accessibility audit it collects; a step the item's
    // `agent_name` does not allow; a step that is not in the workflow.
    let steps = [
        "discovery_agent",
        "venue_agent",
        "plan_generator_agent",
        "accessibility_agent",
    ];
    let report = flow::check(&plan_pipeline(
        &steps,
        &[
            "discovery_agent",
            "venue_agent",
            "accessibility_agent",
            "selector_agent",
        ],
    ));
    let errors: Vec<(usize, Option<usize>, &str)> = report
        .errors
        .iter()
        .map(|p| (p.step, p.collect.and_then(|c| c.item), p.message.as_str()))
        .collect();
    assert_eq!(
        errors,
        [
            (
                2,
                Some(1),
                "step `plan_generator_agent`: `collected_information` collects `venue_agent`: `collected_information[venue_agent].agent_name` may be `\"venue_agent\"`, which the step's enum does not allow"
            ),
            (
                2,
                Some(2),
                "step `plan_generator_agent`: `collected_information` collects the output of `accessibility_agent`, which runs after it: move `accessibility_agent` before `plan_generator_agent`"
            ),
            (
                2,
                Some(3),
                "step `plan_generator_agent`: `collected_information` collects the output of `selector_agent`, which is not a step of the workflow: add the step `selector_agent` before `plan_generator_agent`"
            ),
        ]
    );
}

/// Each collected output is checked against the output contract of the agent its item names,
/// on both front ends (the build script's agent and the derive's), and a call whose outputs
/// all fit is decided by the generated checks alone (no `Value`, no validator).
#[test]
fn the_plan_generator_checks_each_output_against_its_agents_contract() {
    use agent_contracts::contract::PrepareError;
    use agent_contracts::{DynAgent, Limits};
    use serde_json::{Value, json};

    let fixture: Value = serde_json::from_str(agent_tests::KWARGS).unwrap();
    let with = |edit: &dyn Fn(&mut Vec<Value>)| {
        let mut kwargs = fixture.clone();
        edit(kwargs["collected_information"].as_array_mut().unwrap());
        kwargs.to_string()
    };
    let agents: [&dyn DynAgent; 2] = [
        agent_examples::agents::find("plan_generator_agent").unwrap(),
        &agent_tests::PlanGeneratorAgent,
    ];
    for agent in agents {
        let fast = |kwargs: &str| {
            let prepared = agent.prepare(kwargs, &Limits::default()).unwrap();
            assert!(!prepared.call.context_built(), "{kwargs}");
        };
        let refused = |kwargs: &str| match agent.prepare(kwargs, &Limits::default()) {
            Err(PrepareError::Retry(e)) => (
                serde_json::to_value(&e.path).unwrap(),
                e.validation_message.clone(),
            ),
            other => panic!("{kwargs} was not refused: {other:?}"),
        };
        fast(agent_tests::KWARGS);
        // Selector first; an agent without an output contract may send any object; an
        // accessibility-shaped output under that agent's name passes too.
        fast(&with(&|items| items.swap(0, 1)));
        fast(&with(&|items| {
            items.push(json!({"agent_name": "data_prep_agent", "description": "d", "output": {"rows": [1]}}))
        }));
        fast(&with(&|items| {
            items[2]["agent_name"] = json!("data_prep_agent")
        }));
        // A discovery output without its required title; an accessibility score past its
        // maximum; a selector's output under the discovery agent's name.
        assert_eq!(
            refused(&with(&|items| {
                items[0]["output"]
                    .as_object_mut()
                    .unwrap()
                    .remove("page_title");
            })),
            (
                json!(["collected_information", 0, "output"]),
                "\"page_title\" is a required property".to_owned()
            )
        );
        assert_eq!(
            refused(&with(
                &|items| items[2]["output"]["overall_score"] = json!(101)
            )),
            (
                json!(["collected_information", 2, "output", "overall_score"]),
                "101 is greater than the maximum of 100".to_owned()
            )
        );
        assert_eq!(
            refused(&with(
                &|items| items[0]["output"] = items[1]["output"].clone()
            ))
            .0,
            json!(["collected_information", 0, "output"])
        );
        // Without the selector's output at all.
        assert_eq!(
            refused(&with(&|items| {
                items.remove(1);
            })),
            (
                json!(["collected_information"]),
                "No item is the output of selector_agent (an item whose agent_name is \"selector_agent\")"
                    .to_owned()
            )
        );
    }
}
