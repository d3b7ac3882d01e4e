//! Evals from Rust: `eval_tests!` writes one test per case of the shipped plan generator
//! dataset (`evals/`), each replayed from the recorded answers; and a replay after a template
//! edit names exactly the cases whose prompt changed (those that reached the model).

use agent_contracts::eval::{Case, CaseModel, Recording, Verdict, case_runtime, run_case};
use agent_contracts::{Agent, DynAgent, Message, ScriptedModel};
use std::sync::{Arc, LazyLock};

/// The shipped recording.
static RECORDED: LazyLock<Arc<Recording>> = LazyLock::new(|| {
    let text = std::fs::read_to_string("../evals/recorded.json").expect("the recording");
    Arc::new(Recording::from_json(&text).expect("a recording"))
});

/// One test per case of the shipped datasets, on their recorded answers.
mod plan_generator_cases {
    use super::RECORDED;
    use agent_contracts::eval::CaseModel;

    agent_contracts::eval_tests!(
        agent_tests::PlanGeneratorAgent,
        "../evals/plan_generator_agent.jsonl",
        |case: &str, run: u32| CaseModel::replay(RECORDED.clone(), case, run)
    );

    /// The macro wrote a test per case, named after it.
    #[test]
    fn every_case_is_a_test() {
        let tests: [fn(); 4] = [
            login_form,
            search_page_without_audit,
            no_collected_information,
            empty_target_url,
        ];
        assert_eq!(tests.len(), DATASET.lines().count());
    }
}

mod discovery_cases {
    use super::RECORDED;
    use agent_contracts::eval::CaseModel;

    agent_contracts::eval_tests!(
        agent_tests::DiscoveryAgent,
        "../evals/discovery_agent.jsonl",
        |case: &str, run: u32| CaseModel::replay(RECORDED.clone(), case, run)
    );
}

/// The plan generator with its template edited: the same contracts, another prompt.
#[derive(Agent)]
#[agent(
    name = "plan_generator_agent",
    input = "../schemas/plan_generator_agent/input.schema.json",
    output = "../schemas/plan_generator_agent/output.schema.json",
    user_prompt = "evals/plan_generator_user_edited.md"
)]
struct EditedPlanGenerator;

/// Every case of the shipped plan generator dataset run once through `agent`, each on the
/// model `model` makes for its key; each case's verdict and whether its prompt changed.
fn run_all(
    agent: &dyn DynAgent,
    model: impl Fn(&str) -> CaseModel,
) -> Vec<(String, Verdict, bool)> {
    let text = std::fs::read_to_string("../evals/plan_generator_agent.jsonl").unwrap();
    let cases = Case::parse_dataset(&text).unwrap();
    let threads = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    cases
        .iter()
        .map(|case| {
            let model = model(&format!("{}/{}", agent.name(), case.name));
            let runtime = case_runtime(model.clone());
            let run = threads.block_on(run_case(&runtime, agent, case, None));
            (case.name.clone(), run.verdict, model.prompt_changed())
        })
        .collect()
}

#[test]
fn a_replay_after_a_template_edit_names_the_cases_whose_prompt_changed() {
    let plan = |path: &str, status: &str| {
        Message::assistant(format!(
            r#"{{"plan_file_path": "plans/{path}.md", "status": "{status}", "agent_response_content": "Fill #email-input, submit."}}"#
        ))
    };
    let model: Arc<dyn agent_contracts::ChatModel> = Arc::new(ScriptedModel::default().script(
        "plan_generator_agent",
        [
            plan("login_form_automation", "success"),
            plan("search_listing", "partial"),
        ],
    ));
    let recording = Arc::new(Recording::default());
    let recorded = run_all(&agent_tests::PlanGeneratorAgent, |key| {
        CaseModel::record(model.clone(), recording.clone(), key, 1)
    });
    let verdicts: Vec<Verdict> = recorded.iter().map(|r| r.1).collect();
    assert_eq!(verdicts, [Verdict::Pass; 4], "{recorded:?}");
    assert_eq!(recording.len(), 2, "the refused cases reach no model");
    // Through a JSON file and back, as `--record` and `--replay` do.
    let recording = Arc::new(Recording::from_json(&recording.to_json()).unwrap());
    let replay = |key: &str| CaseModel::replay(recording.clone(), key, 1);
    let same = run_all(&agent_tests::PlanGeneratorAgent, replay);
    assert_eq!(
        same, recorded,
        "the same template: the same verdicts, no prompt changed"
    );
    let edited = run_all(&EditedPlanGenerator, replay);
    let changed: Vec<&str> = edited
        .iter()
        .filter(|(_, _, changed)| *changed)
        .map(|(name, _, _)| name.as_str())
        .collect();
    assert_eq!(changed, ["login_form", "search_page_without_audit"]);
    let verdicts: Vec<Verdict> = edited.iter().map(|r| r.1).collect();
    assert_eq!(
        verdicts,
        [Verdict::Pass; 4],
        "the recorded answers still replay"
    );
}
