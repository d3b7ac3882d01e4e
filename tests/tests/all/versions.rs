//! Contract versions on durable runs, on every store (memory, file, SQLite, and PostgreSQL
//! when `DATABASE_URL` is set): each stored event-planning run records the fingerprint of
//! every contract it depends on; a run recorded under an earlier version of a contract goes
//! on when the current version accepts what the earlier one allowed, and is otherwise refused
//! with the contract, the field and the keyword named, the run left as it was stored.
//!
//! A test cannot compile two builds, so "an earlier build" is a stored run whose record names
//! an earlier version of `venue_agent`'s output contract, kept in the store by its
//! fingerprint, as a build of that version would have left it.

use crate::stores::Opener;
use agent_contracts::{
    DynAgent, Error, ScriptedModel, store::CheckpointStore, store::RunRecord, store::RunStatus,
};
use agent_contracts::{store::StoreError, workflow::WorkflowOutcome};
use agent_examples::event_planning::{self, HUMAN_ANSWER, PLAN, REQUEST};
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;

fn venue() -> &'static dyn DynAgent {
    agent_examples::agents::find("venue_agent").unwrap()
}

/// The current `venue_agent` output schema.
fn venue_output() -> Value {
    venue().output_contract().unwrap().schema().clone()
}

async fn pause(store: Arc<dyn CheckpointStore>) -> String {
    let workflow = event_planning::workflow();
    let model = Arc::new(event_planning::scripted_model());
    let runner = workflow.runner(model).with_store(store);
    match runner.start(REQUEST).await.unwrap() {
        WorkflowOutcome::NeedsInput { state, .. } => state.run_id,
        other => panic!("expected a question, got {other:?}"),
    }
}

async fn resume(store: Arc<dyn CheckpointStore>, run_id: &str) -> Result<WorkflowOutcome, Error> {
    let workflow = event_planning::workflow();
    let model = event_planning::script_after_question(ScriptedModel::default());
    let runner = workflow.runner(Arc::new(model)).with_store(store);
    runner.resume_run(run_id, HUMAN_ANSWER).await
}

fn fingerprints(record: &RunRecord) -> BTreeMap<String, String> {
    serde_json::from_str(record.contracts.as_deref().unwrap()).unwrap()
}

/// Re-saves the run as if recorded under `edit`ed fingerprints (`None`: no fingerprints).
async fn recorded_under(
    store: &dyn CheckpointStore,
    run_id: &str,
    edit: impl FnOnce(Option<BTreeMap<String, String>>) -> Option<BTreeMap<String, String>>,
) -> RunRecord {
    let mut record = store.load(run_id).await.unwrap();
    let map = record
        .contracts
        .as_deref()
        .and_then(|t| serde_json::from_str(t).ok());
    record.contracts = edit(map).map(|m| serde_json::to_string(&m).unwrap());
    store.save(&record).await.unwrap();
    store.load(run_id).await.unwrap()
}

/// Keeps `schema` in the store as an earlier version, and records the run under it.
async fn under_earlier_venue_output(
    store: &dyn CheckpointStore,
    run_id: &str,
    schema: &Value,
) -> RunRecord {
    let fingerprint = agent_contracts_schema::fingerprint(schema);
    store
        .save_contracts(&[(fingerprint.clone(), schema.to_string())])
        .await
        .unwrap();
    recorded_under(store, run_id, |map| {
        let mut map = map.unwrap();
        map.insert("venue_agent.output".into(), fingerprint);
        Some(map)
    })
    .await
}

async fn runs_record_every_contracts_fingerprint(open: Opener) {
    let store = open().await;
    let run_id = pause(store.clone()).await;
    let stored = open().await.load(&run_id).await.unwrap();
    let map = fingerprints(&stored);
    let names: Vec<&str> = map.keys().map(String::as_str).collect();
    let mut expected = Vec::new();
    for agent in [
        "budget_agent",
        "catering_agent",
        "logistics_agent",
        "venue_agent",
    ] {
        expected.push(format!("{agent}.input"));
        expected.push(format!("{agent}.output"));
    }
    assert_eq!(names, expected);
    assert_eq!(
        map["venue_agent.output"],
        agent_contracts_schema::fingerprint(&venue_output())
    );
    // Each version is kept by its fingerprint, as its canonical text.
    for fingerprint in map.values() {
        let kept = store.load_contract(fingerprint).await.unwrap().unwrap();
        let kept: Value = serde_json::from_str(&kept).unwrap();
        assert_eq!(&agent_contracts_schema::fingerprint(&kept), fingerprint);
    }
    assert_eq!(store.load_contract("0000000000000000").await.unwrap(), None);
    // Kept once: a second copy under the same fingerprint changes nothing.
    let first = map["venue_agent.output"].clone();
    store
        .save_contracts(&[(first.clone(), "{}".into())])
        .await
        .unwrap();
    let again = store.load_contract(&first).await.unwrap().unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(&again).unwrap(),
        venue_output()
    );
}

/// An earlier version that allowed less (a `capacity` of at most 500): everything it
/// allowed passes the current contract, so the run goes on and records the current versions.
async fn a_compatible_change_resumes(open: Opener) {
    let store = open().await;
    let run_id = pause(store.clone()).await;
    let mut earlier = venue_output();
    earlier["properties"]["capacity"]["maximum"] = 500.into();
    under_earlier_venue_output(&*store, &run_id, &earlier).await;
    let Ok(WorkflowOutcome::Finished { output, .. }) = resume(open().await, &run_id).await else {
        panic!("the run goes on");
    };
    assert_eq!(output, PLAN);
    let done = store.load(&run_id).await.unwrap();
    assert_eq!(done.status, RunStatus::Finished);
    assert_eq!(
        fingerprints(&done)["venue_agent.output"],
        agent_contracts_schema::fingerprint(&venue_output())
    );
}

/// An earlier version that allowed more (any `capacity`, where the current one has a
/// `minimum` of 1): refused, naming the contract, the field and the keyword; the run is left
/// paused and unchanged, by the resume, the recorded answer and the worker alike.
async fn an_incompatible_change_is_refused(open: Opener) {
    let store = open().await;
    let run_id = pause(store.clone()).await;
    let mut earlier = venue_output();
    earlier["properties"]["capacity"]
        .as_object_mut()
        .unwrap()
        .remove("minimum");
    let paused = under_earlier_venue_output(&*store, &run_id, &earlier).await;
    let refused = resume(open().await, &run_id).await.unwrap_err();
    let Error::ContractChanged {
        run_id: named,
        contract,
        field,
        keyword,
        reason,
    } = &refused
    else {
        panic!("expected a changed contract, got {refused:?}");
    };
    assert_eq!(
        (
            named.as_str(),
            contract.as_str(),
            field.as_str(),
            keyword.as_str()
        ),
        (run_id.as_str(), "venue_agent.output", "capacity", "minimum")
    );
    assert!(reason.contains("`minimum` of 1"), "{reason}");
    assert!(
        refused.to_string().starts_with(&format!(
            "run `{run_id}` cannot go on under the current `venue_agent.output` contract: at `capacity`, "
        )),
        "{refused}"
    );
    assert_eq!(store.load(&run_id).await.unwrap(), paused);

    // Its answer is not recorded either.
    let workflow = event_planning::workflow();
    let runner = workflow
        .runner(Arc::new(ScriptedModel::default()))
        .with_store(open().await);
    let refused = runner.submit_answer(&run_id, HUMAN_ANSWER).await;
    assert!(matches!(refused, Err(Error::ContractChanged { .. })));
    assert_eq!(store.load(&run_id).await.unwrap(), paused);

    // A worker that claims it puts it back as it was (but for the claim's sequence).
    let answered = {
        let mut value = paused.clone();
        value.status = RunStatus::Answered;
        value.answer = Some(HUMAN_ANSWER.into());
        value
    };
    store.save(&answered).await.unwrap();
    let refused = runner.run_next().await;
    assert!(
        matches!(refused, Err(Error::ContractChanged { .. })),
        "{refused:?}"
    );
    let back = store.load(&run_id).await.unwrap();
    assert_eq!(
        (back.status, back.answer.as_deref(), &back.state),
        (RunStatus::Answered, Some(HUMAN_ANSWER), &paused.state)
    );
    assert_eq!((back.owner, back.contracts), (None, paused.contracts));
}

/// An earlier version the store does not keep cannot be compared: refused.
async fn an_unknown_earlier_version_is_refused(open: Opener) {
    let store = open().await;
    let run_id = pause(store.clone()).await;
    let paused = recorded_under(&*store, &run_id, |map| {
        let mut map = map.unwrap();
        map.insert("venue_agent.output".into(), "0123456789abcdef".into());
        Some(map)
    })
    .await;
    let refused = resume(open().await, &run_id).await.unwrap_err();
    assert!(
        matches!(&refused, Error::ContractChanged { contract, field, .. } if contract == "venue_agent.output" && field == "$"),
        "{refused:?}"
    );
    assert!(
        refused
            .to_string()
            .contains("which the store does not keep")
    );
    assert_eq!(store.load(&run_id).await.unwrap(), paused);
}

/// A row saved before runs recorded fingerprints resumes as before, and records them; a row
/// whose fingerprints are not a map of names to fingerprints is corrupt.
async fn rows_without_fingerprints_resume(open: Opener) {
    let store = open().await;
    let run_id = pause(store.clone()).await;
    recorded_under(&*store, &run_id, |_| None).await;
    assert!(matches!(
        resume(open().await, &run_id).await,
        Ok(WorkflowOutcome::Finished { .. })
    ));
    let done = store.load(&run_id).await.unwrap();
    assert_eq!(fingerprints(&done).len(), 8);

    let run_id = pause(store.clone()).await;
    let mut record = store.load(&run_id).await.unwrap();
    record.contracts = Some("[1, 2]".into());
    store.save(&record).await.unwrap();
    let refused = resume(open().await, &run_id).await.unwrap_err();
    assert!(
        matches!(&refused, Error::Store(StoreError::Corrupt { reason, .. }) if reason.starts_with("its contract fingerprints are not a map")),
        "{refused:?}"
    );
    // A kept version that does not hash to its fingerprint is not trusted.
    let forged = "fedcba9876543210";
    store
        .save_contracts(&[(forged.into(), venue_output().to_string())])
        .await
        .unwrap();
    recorded_under(&*store, &run_id, |_| {
        let mut map = BTreeMap::new();
        map.insert("venue_agent.output".to_owned(), forged.to_owned());
        Some(map)
    })
    .await;
    let refused = resume(open().await, &run_id).await.unwrap_err();
    assert!(
        matches!(&refused, Error::Store(StoreError::Corrupt { reason, .. }) if reason.contains("does not have that fingerprint")),
        "{refused:?}"
    );
}

macro_rules! suite {
    ($($backend:ident),*) => {$(
        mod $backend {
            macro_rules! case {
                ($name:ident) => {
                    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                    async fn $name() {
                        match crate::stores::$backend() {
                            Some((open, cleanup)) => {
                                super::$name(open).await;
                                cleanup().await;
                            }
                            None => println!("skipped {}", stringify!($name)),
                        }
                    }
                };
            }
            case!(runs_record_every_contracts_fingerprint);
            case!(a_compatible_change_resumes);
            case!(an_incompatible_change_is_refused);
            case!(an_unknown_earlier_version_is_refused);
            case!(rows_without_fingerprints_resume);
        }
    )*};
}

suite!(memory, file, sqlite, postgres);
