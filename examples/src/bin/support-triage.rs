//! The support-triage workflow: a classifier reads a support ticket, a drafter writes the
//! reply, and a person approves, rejects or edits every draft before the run ends. Offline on
//! canned answers by default; `--model openai:<model>` (or any spec `event-planning` takes)
//! runs it on a real model configured from the environment.
//!
//! Without `--store`, one run in memory stops at the approval and prints the draft; a
//! decision flag (`--approve`, `--reject REASON`, `--edit FILE`) answers it in the same
//! process.
//!
//! `--store sqlite:PATH` (or `postgres://...`): a run of `--ticket FILE` (the canned ticket
//! without it) stops at the approval and is saved; `--resume RUN_ID` with `--approve`,
//! `--reject REASON` or `--edit FILE` (the edited draft as JSON) decides it in a new process.
//! `--enqueue FILE` saves a queued run of the ticket in FILE (the workflow's input as JSON,
//! checked against the classifier's input contract before anything is stored), `--worker`
//! drains the store's runnable runs (each to its approval) and exits, and `--list` shows the
//! stored runs (`--json`: as a JSON array).
//!
//! Exit codes: 0 success; 1 the run failed, was rejected, or a decision was refused (an edit
//! that breaks the drafter's output contract names the field); 2 a usage or I/O error.

use agent_contracts::workflow::{Decision, WorkflowOutcome};
use agent_examples::{report, support_triage};
use clap::{ArgGroup, Parser};
use convention::{EXIT_CODES, Failure, Logs, ProviderEnv};
use std::process::ExitCode;
use std::sync::Arc;

// The convention is `agent-contract`'s own file, so every binary states one text of it.
#[path = "../../../agent-cli/src/convention.rs"]
mod convention;

#[derive(Parser)]
#[command(
    name = "support-triage",
    version,
    about = "Triages a support ticket: classify, draft the reply, wait for a person's approval",
    after_help = EXIT_CODES
)]
#[command(group(ArgGroup::new("decision").args(["approve", "reject", "edit"])))]
struct Args {
    /// `openai:<model>`, `azure:<deployment>` or `anthropic:<model>`, or a comma-separated list
    /// tried in order; the canned answers when left out.
    #[arg(long)]
    model: Option<String>,
    /// A checkpoint store, `sqlite:PATH` or `postgres://...`: runs are saved at the approval.
    #[arg(long)]
    store: Option<String>,
    /// The ticket to triage: a JSON file of the workflow's input (`ticket_text`,
    /// `customer_tier`); the canned ticket when left out.
    #[arg(long, conflicts_with_all = ["resume", "enqueue", "worker", "list"])]
    ticket: Option<std::path::PathBuf>,
    /// Saves a queued run of the ticket in this JSON file, without running it, and prints its ID.
    #[arg(long, requires = "store", conflicts_with_all = ["resume", "list", "worker"])]
    enqueue: Option<std::path::PathBuf>,
    /// Drives every runnable run of the store (queued, or whose worker's lease ended) until it
    /// pauses or ends, then exits.
    #[arg(long, requires = "store", conflicts_with_all = ["resume", "list"])]
    worker: bool,
    /// Lists the stored runs with their status.
    #[arg(long, requires = "store", conflicts_with = "resume")]
    list: bool,
    /// With `--list`: a JSON array of runs (`id`, `status`, `owner`, `takeovers`, `steps`,
    /// `output`, `error`).
    #[arg(long, requires = "list")]
    json: bool,
    /// Decides the stored run with this ID, paused at its approval (with `--approve`,
    /// `--reject` or `--edit`).
    #[arg(long, requires_all = ["store", "decision"])]
    resume: Option<String>,
    /// Approves the draft.
    #[arg(long)]
    approve: bool,
    /// Rejects the draft for this reason: the run ends.
    #[arg(long, value_name = "REASON")]
    reject: Option<String>,
    /// Replaces the draft with the JSON in this file, checked against the drafter's output
    /// contract.
    #[arg(long, value_name = "FILE")]
    edit: Option<std::path::PathBuf>,
    #[command(flatten)]
    logs: Logs,
    #[command(flatten)]
    providers: ProviderEnv,
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let args = Args::parse();
    let _telemetry = args.logs.init("support-triage");
    let done = match &args.store {
        Some(url) => durable(&args, url).await,
        None => run(&args).await,
    };
    match done {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => failure.exit("error: "),
    }
}

fn read(path: &std::path::Path) -> Result<String, Failure> {
    std::fs::read_to_string(path)
        .map_err(|e| Failure::Usage(format!("cannot read `{}`: {e}", path.display())))
}

/// The decision the flags give, if any.
fn decision(args: &Args) -> Result<Option<Decision>, Failure> {
    let edit = args.edit.as_deref().map(read).transpose()?;
    Ok(support_triage::decision(
        args.approve,
        args.reject.as_deref(),
        edit,
    ))
}

/// The workflow's input as the kwargs of a run: the file's fields, and the request as `task`.
fn kwargs(path: Option<&std::path::Path>) -> Result<String, Failure> {
    let text = match path {
        Some(path) => read(path)?,
        None => support_triage::TICKET.to_owned(),
    };
    let mut fields: serde_json::Map<String, serde_json::Value> = serde_json::from_str(&text)
        .map_err(|e| Failure::Usage(format!("the ticket is not a JSON object: {e}")))?;
    fields.insert("task".into(), support_triage::REQUEST.into());
    Ok(serde_json::Value::Object(fields).to_string())
}

fn model(args: &Args) -> Result<Arc<dyn agent_contracts::ChatModel>, Failure> {
    let (model, line) = report::model(
        "support-triage",
        args.model.as_deref(),
        |name| args.providers.var(name),
        || Arc::new(support_triage::Canned),
    )
    .map_err(Failure::Usage)?;
    print!("{line}");
    Ok(model)
}

/// What a run's outcome prints; a failure (a rejection too) is exit 1.
fn print_outcome(
    outcome: Result<WorkflowOutcome, agent_contracts::Error>,
    resume_hint: Option<&str>,
) -> Result<(), Failure> {
    match outcome {
        Ok(WorkflowOutcome::NeedsInput { request, state, .. }) => {
            println!(
                "=== [{}] waits for approval ===\n{}",
                request.requesting_agent, request.prompt
            );
            if let Some(draft) = &request.approval {
                println!("{draft}");
            }
            println!();
            match resume_hint {
                Some(store) => {
                    println!("run {} is saved, waiting for approval", state.run_id);
                    println!(
                        "decide with: support-triage --store {store} --resume {} --approve | --reject REASON | --edit FILE",
                        state.run_id
                    );
                }
                None => println!("run {} waits for approval", state.run_id),
            }
            Ok(())
        }
        Ok(WorkflowOutcome::Finished { output, .. }) => {
            println!("=== reply ===\n{output}");
            Ok(())
        }
        Err(e) => Err(Failure::Failed(e.to_string())),
    }
}

/// One run in memory: to the approval, and a decision flag's answer in the same process.
async fn run(args: &Args) -> Result<(), Failure> {
    let model = model(args)?;
    let workflow = support_triage::workflow();
    let runner = workflow.runner(model);
    let decision = decision(args)?;
    let mut outcome = runner
        .start_with_kwargs(&kwargs(args.ticket.as_deref())?)
        .await;
    if let (Ok(WorkflowOutcome::NeedsInput { state, .. }), Some(decision)) = (&outcome, &decision) {
        for event in runner.transcript().events() {
            print!("{event}");
        }
        let printed = runner.transcript().events().len();
        outcome = runner.decide(state.clone(), decision).await;
        for event in &runner.transcript().events()[printed..] {
            print!("{event}");
        }
        if outcome.is_ok() {
            print!("{}", report::summary(runner.transcript()));
        }
        return print_outcome(outcome, None);
    }
    for event in runner.transcript().events() {
        print!("{event}");
    }
    print_outcome(outcome, None)
}

/// Without the `store` feature the database stack is not compiled in: say how to get it.
#[cfg(not(feature = "store"))]
async fn durable(_: &Args, url: &str) -> Result<(), Failure> {
    Err(Failure::Usage(report::not_built(
        "support-triage",
        "store",
        &format!("--store {url}"),
    )))
}

/// The `--store` flows: start and stop at the approval, decide, enqueue, drain, or list.
#[cfg(feature = "store")]
async fn durable(args: &Args, url: &str) -> Result<(), Failure> {
    let io = |e: &dyn std::fmt::Display| Failure::Usage(e.to_string());
    let store = agent_contracts::store::open(url)
        .await
        .map_err(|e| io(&e))?;
    if args.list {
        let runs = store.list().await.map_err(|e| io(&e))?;
        let runs = runs
            .into_iter()
            .filter(|run| match run {
                Ok(run) => run.workflow == support_triage::NAME,
                Err(_) => true,
            })
            .collect();
        let workflow = support_triage::workflow();
        let (listed, skipped) = agent_examples::worker::list_runs(&workflow, runs);
        for e in skipped {
            eprintln!("skipped: {e}");
        }
        if args.json {
            println!("{listed}");
        } else {
            for run in listed.as_array().into_iter().flatten() {
                println!(
                    "{}  {}  {}",
                    run["id"].as_str().unwrap_or_default(),
                    run["status"].as_str().unwrap_or_default(),
                    support_triage::NAME
                );
            }
        }
        return Ok(());
    }
    let workflow = support_triage::workflow();
    if let Some(path) = &args.enqueue {
        let kwargs = kwargs(Some(path))?;
        let runner = workflow
            .runner(support_triage::Canned)
            .with_store(store.clone());
        return match runner.enqueue_with_kwargs(&kwargs).await {
            Ok(run_id) => {
                println!("{run_id}");
                Ok(())
            }
            Err(e) => Err(Failure::Failed(e.to_string())),
        };
    }
    let model = model(args)?;
    let runner = workflow.runner(model).with_store(store);
    if args.worker {
        let mut drained = 0;
        loop {
            match runner.run_next().await {
                Ok(None) => break,
                Ok(Some(WorkflowOutcome::NeedsInput { state, .. })) => {
                    println!("run {} waits for approval", state.run_id);
                }
                Ok(Some(WorkflowOutcome::Finished { state, .. })) => {
                    println!("run {} completed", state.run_id);
                }
                Err(e) => eprintln!("error: {e}"),
            }
            drained += 1;
        }
        eprintln!("worker stopped: {drained} runs driven, none left");
        return Ok(());
    }
    let shown = agent_contracts::store::redact_url(url);
    let outcome = match (&args.resume, decision(args)?) {
        (Some(run_id), Some(decision)) => runner.decide_run(run_id, &decision).await,
        _ => {
            runner
                .start_with_kwargs(&kwargs(args.ticket.as_deref())?)
                .await
        }
    };
    for event in runner.transcript().events() {
        print!("{event}");
    }
    if let Ok(WorkflowOutcome::Finished { .. }) = &outcome {
        print!("{}", report::summary(runner.transcript()));
    }
    print_outcome(outcome, Some(shown.as_str()))
}
