//! The event-planning workflow, offline on the scripted model: the catering specialist asks a
//! question, the scripted human answers (through a JSON round trip of the paused state, as a
//! new process would), and the synthesis prints the plan. `--model openai:<model>` or
//! `--model anthropic:<model>` runs it on a real model configured from the environment. The
//! output opens with the model it runs on and closes with a summary (calls, retries, tokens).
//!
//! `--stream` streams each answer, printed on stderr as it arrives.
//!
//! `--store sqlite:PATH` (or `postgres://...`) runs without the scripted human: the run pauses
//! at the question, is saved, and `--resume RUN_ID --answer TEXT` continues it in a new
//! process (`--resume RUN_ID` alone: a run already answered, with its recorded answer);
//! `--list` shows the stored runs (`--json`: as a JSON array).
//!
//! Any number of processes drain one store: `--enqueue N` saves N queued runs and prints their
//! IDs, `--worker [--concurrency C] [--lease-secs S] [--delay-ms D] [--max-attempts A]
//! [--grace-secs G]` claims and drives runnable runs until SIGTERM or SIGINT (D: the canned
//! model's delay per answer; A: claims of one step before the run fails; G: how long its runs
//! may go on after the signal before they are given back), and `--submit-answer RUN_ID
//! --answer TEXT` records a paused run's answer for a worker to resume it. `--history RUN_ID
//! --json` prints a run's transitions.
//!
//! Exit codes: 0 success; 1 the run failed (or a stored run cannot go on); 2 a usage or I/O
//! error (a model spec it cannot use, a store it cannot open or read).

use agent_contracts::workflow::WorkflowOutcome;
use agent_examples::{event_planning, report};
use clap::{ArgGroup, Parser};
use convention::{EXIT_CODES, Failure, Logs, ProviderEnv};
use std::process::ExitCode;
use std::sync::Arc;

// The convention is `agent-contract`'s own file, so every binary states one text of it.
#[path = "../../../agent-cli/src/convention.rs"]
mod convention;

#[derive(Parser)]
#[command(
    name = "event-planning",
    version,
    about = "Runs the event-planning workflow and prints its transcript",
    after_help = EXIT_CODES
)]
#[command(group(ArgGroup::new("answered").args(["resume", "submit_answer"])))]
struct Args {
    /// `openai:<model>`, `azure:<deployment>` or `anthropic:<model>`, or a comma-separated list tried in order
    /// (`openai:gpt-4o,anthropic:claude-sonnet-4-5`); the scripted model when left out.
    #[arg(long)]
    model: Option<String>,
    /// A checkpoint store, `sqlite:PATH` or `postgres://...`: the run stops at the question.
    #[arg(long)]
    store: Option<String>,
    /// Resumes the stored paused run with this ID with `--answer`; without it, runs the
    /// stored answered run (answered by `--submit-answer` or in `agent-contract ui`) now.
    #[arg(long, requires = "store")]
    resume: Option<String>,
    /// The user's answer to the stored run's question.
    #[arg(long, requires = "answered")]
    answer: Option<String>,
    /// Lists the stored runs with their status.
    #[arg(long, requires = "store", conflicts_with = "resume")]
    list: bool,
    /// With `--list`: a JSON array of runs (`id`, `status`, `owner`, `takeovers`, `steps`,
    /// `output`, `error`); with `--history`: a JSON array of transitions (`at`, `event`,
    /// `owner`, `step`).
    #[arg(long)]
    json: bool,
    /// Prints the transitions of the stored run with this ID, oldest first, with the store's
    /// times.
    #[arg(long, requires = "store", conflicts_with_all = ["resume", "list"])]
    history: Option<String>,
    /// Saves this many queued runs, without running them, and prints their IDs.
    #[arg(long, requires = "store", conflicts_with_all = ["resume", "list"])]
    enqueue: Option<u32>,
    /// Claims and drives runnable runs (queued, answered, or whose worker's lease ended)
    /// until stopped.
    #[arg(long, requires = "store", conflicts_with_all = ["resume", "list", "enqueue"])]
    worker: bool,
    /// With `--worker`: how many runs it drives at once.
    #[arg(long, requires = "worker", default_value_t = 1)]
    concurrency: usize,
    /// With `--worker`: how long a claim holds a run, in seconds (renewed while it runs).
    #[arg(long, requires = "worker", default_value_t = 30.0)]
    lease_secs: f64,
    /// With `--worker`: the canned model's delay per answer, in milliseconds.
    #[arg(long, requires = "worker", default_value_t = 0)]
    delay_ms: u64,
    /// With `--worker`: how many claims of one step a run gets; a run whose workers died that
    /// often fails.
    #[arg(long, requires = "worker", default_value_t = 3)]
    max_attempts: u64,
    /// With `--worker`: after SIGTERM or SIGINT, how long its runs may go on (in seconds)
    /// before they are given back to other workers.
    #[arg(long, requires = "worker", default_value_t = 30.0)]
    grace_secs: f64,
    /// Records the answer (`--answer`) to the stored paused run with this ID, without running
    /// it: a worker resumes it.
    #[arg(long, requires_all = ["store", "answer"], conflicts_with_all = ["resume", "list", "enqueue", "worker"])]
    submit_answer: Option<String>,
    /// Streams each answer, printing it on stderr as it arrives (stdout keeps the transcript).
    #[arg(long, conflicts_with = "store")]
    stream: bool,
    #[command(flatten)]
    logs: Logs,
    #[command(flatten)]
    providers: ProviderEnv,
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    // clap exits 2 on a usage error and 0 after --help or --version: the convention.
    let args = Args::parse();
    let _telemetry = args.logs.init("event-planning");
    let done = match &args.store {
        Some(url) => durable(&args, url).await,
        None => run(&args).await,
    };
    match done {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => failure.exit("error: "),
    }
}

/// The run in memory, the scripted human answering the question.
async fn run(args: &Args) -> Result<(), Failure> {
    let (model, line) = report::model(
        "event-planning",
        args.model.as_deref(),
        |name| args.providers.var(name),
        || Arc::new(event_planning::scripted_model()),
    )
    .map_err(Failure::Usage)?;
    print!("{line}");
    let mut workflow = event_planning::workflow();
    if args.stream {
        workflow = workflow
            .config(agent_contracts::Config::default().with_delivery(report::streamed_to_stderr()));
    }
    let runner = workflow.runner(model);
    let mut outcome = runner.start(event_planning::REQUEST).await;
    let mut printed = 0;
    let mut print_new = || {
        let events = runner.transcript().events();
        for event in &events[printed..] {
            print!("{event}");
        }
        printed = events.len();
    };
    loop {
        match outcome {
            Ok(WorkflowOutcome::NeedsInput { request, state, .. }) => {
                print_new();
                println!(
                    "=== [{}] asks the user ===\n{}\n",
                    request.requesting_agent, request.prompt
                );
                println!("=== [user] answers ===\n{}\n", event_planning::HUMAN_ANSWER);
                let saved = serde_json::to_string(&state).unwrap_or_default();
                let state = workflow
                    .parse_state(&saved)
                    .map_err(|e| Failure::Failed(e.to_string()))?;
                outcome = runner.resume(state, event_planning::HUMAN_ANSWER).await;
            }
            Ok(WorkflowOutcome::Finished { output, .. }) => {
                print_new();
                print!("{}", report::summary(runner.transcript()));
                println!("=== plan ===\n{output}");
                return Ok(());
            }
            Err(e) => {
                print_new();
                return Err(Failure::Failed(e.to_string()));
            }
        }
    }
}

/// Without the `store` feature the database stack is not compiled in: say how to get it.
#[cfg(not(feature = "store"))]
async fn durable(_: &Args, url: &str) -> Result<(), Failure> {
    Err(Failure::Usage(report::not_built(
        "event-planning",
        "store",
        &format!("--store {url}"),
    )))
}

/// The `--store` flows: start and stop at the question, resume, or list. A store that
/// cannot be opened or read is an I/O error; a run that cannot go on, a failed run.
#[cfg(feature = "store")]
async fn durable(args: &Args, url: &str) -> Result<(), Failure> {
    use agent_examples::worker::{self, WorkerSettings};
    let io = |e: &dyn std::fmt::Display| Failure::Usage(e.to_string());
    let store = agent_contracts::store::open(url)
        .await
        .map_err(|e| io(&e))?;
    if let Some(done) = queue_flows(args, &store).await {
        return done;
    }
    if args.worker {
        let seconds = |value: f64, flag: &str| {
            std::time::Duration::try_from_secs_f64(value)
                .map_err(|_| Failure::Usage(format!("`{flag}` must be a number of seconds")))
        };
        let mut settings = WorkerSettings::new();
        settings.concurrency = args.concurrency;
        settings.lease = seconds(args.lease_secs, "--lease-secs")?;
        settings.delay = std::time::Duration::from_millis(args.delay_ms);
        settings.max_attempts = args.max_attempts;
        settings.grace = seconds(args.grace_secs, "--grace-secs")?;
        let shutdown = agent_contracts::runtime::CancellationToken::new();
        let signals = on_signal(shutdown.clone()).map_err(|e| io(&e))?;
        let report = worker::work(store, settings, shutdown).await;
        signals.abort();
        eprintln!(
            "worker stopped: {} finished, {} paused, {} errors, {} given back",
            report.finished, report.paused, report.errors, report.released
        );
        return Ok(());
    }
    if let Some(run_id) = &args.history {
        let history = store.history(run_id).await.map_err(|e| match e {
            agent_contracts::store::StoreError::NotFound { .. } => Failure::Failed(e.to_string()),
            e => io(&e),
        })?;
        if args.json {
            println!("{}", worker::history_json(&history));
        } else {
            for entry in &history.entries {
                println!(
                    "{}  {}  {}  {}",
                    entry.at_rfc3339(),
                    entry.event,
                    entry.owner.as_deref().unwrap_or("-"),
                    entry.step.as_deref().unwrap_or("-")
                );
            }
        }
        return Ok(());
    }
    if args.list && args.json {
        let runs = store.list().await.map_err(|e| io(&e))?;
        let (listed, skipped) = worker::list_json(runs);
        for e in skipped {
            eprintln!("skipped: {e}");
        }
        println!("{listed}");
        return Ok(());
    }
    if args.list {
        let runs = store.list().await.map_err(|e| io(&e))?;
        // A corrupt row is named and skipped: the others still list.
        for run in runs {
            match run {
                Ok(run) => println!(
                    "{}  {}  {}",
                    run.run_id,
                    worker::status_text(run.status),
                    run.workflow
                ),
                Err(e) => eprintln!("skipped: {e}"),
            }
        }
        return Ok(());
    }
    let (model, line) = report::model(
        "event-planning",
        args.model.as_deref(),
        |name| args.providers.var(name),
        || {
            let scripted = agent_contracts::ScriptedModel::default();
            Arc::new(match &args.resume {
                Some(_) => event_planning::script_after_question(scripted),
                None => event_planning::script_before_question(scripted),
            })
        },
    )
    .map_err(Failure::Usage)?;
    print!("{line}");
    let workflow = event_planning::workflow();
    let runner = workflow.runner(model).with_store(Arc::clone(&store));
    let outcome = match (&args.resume, &args.answer) {
        (Some(run_id), Some(answer)) => runner.resume_run(run_id, answer).await,
        (Some(run_id), None) => runner.resume_answered(run_id).await,
        _ => runner.start(event_planning::REQUEST).await,
    };
    let events = runner.transcript().events();
    for event in &events {
        print!("{event}");
    }
    // The run's transcript beside its record, for `agent-contract ui`: this process's part.
    // A resume refused before it ran (no such run, not paused) has no part to keep.
    let run_id = match (&outcome, &args.resume) {
        (Ok(WorkflowOutcome::NeedsInput { state, .. }), _) => Some(state.run_id.clone()),
        (Ok(_), Some(run_id)) => Some(run_id.clone()),
        _ => None,
    };
    if let Some(run_id) = run_id {
        use agent_contracts::recorder::{RecordLimits, Redactor, append_transcript};
        let redactor = [
            "OPENAI_API_KEY",
            "AZURE_OPENAI_API_KEY",
            "AZURE_OPENAI_AD_TOKEN",
            "ANTHROPIC_API_KEY",
            "ANTHROPIC_AUTH_TOKEN",
        ]
        .iter()
        .filter_map(|name| args.providers.var(name))
        .fold(Redactor::default(), Redactor::with_secret);
        if let Err(e) = append_transcript(
            &*store,
            &run_id,
            &events,
            RecordLimits::default(),
            &redactor,
        )
        .await
        {
            eprintln!("event-planning: warning: the run's transcript was not kept: {e}");
        }
    }
    match outcome {
        Ok(WorkflowOutcome::NeedsInput { request, state, .. }) => {
            println!(
                "=== [{}] asks the user ===\n{}\n",
                request.requesting_agent, request.prompt
            );
            println!("run {} is saved, paused", state.run_id);
            println!(
                "resume with: event-planning --store {} --resume {} --answer TEXT",
                agent_contracts::store::redact_url(url),
                state.run_id
            );
            Ok(())
        }
        Ok(WorkflowOutcome::Finished { output, .. }) => {
            print!("{}", report::summary(runner.transcript()));
            println!("=== plan ===\n{output}");
            Ok(())
        }
        Err(e) => Err(Failure::Failed(e.to_string())),
    }
}

/// Cancels `shutdown` at the first SIGTERM or SIGINT.
#[cfg(feature = "store")]
fn on_signal(
    shutdown: agent_contracts::runtime::CancellationToken,
) -> std::io::Result<tokio::task::JoinHandle<()>> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate())?;
    let mut int = signal(SignalKind::interrupt())?;
    Ok(tokio::spawn(async move {
        tokio::select! {
            _ = term.recv() => {}
            _ = int.recv() => {}
        }
        eprintln!("stopping: no new runs; the runs in hand get their grace period");
        shutdown.cancel();
    }))
}

/// `--enqueue` and `--submit-answer`: runs saved or answered without running them. A run that
/// cannot be saved is an I/O error; an answer to a run that is not waiting for one, a failed
/// run.
#[cfg(feature = "store")]
async fn queue_flows(
    args: &Args,
    store: &Arc<dyn agent_contracts::store::CheckpointStore>,
) -> Option<Result<(), Failure>> {
    let workflow = event_planning::workflow();
    // Nothing is run: the model is never asked.
    let runner = workflow
        .runner(agent_contracts::ScriptedModel::default())
        .with_store(store.clone());
    if let Some(count) = args.enqueue {
        for _ in 0..count {
            match runner.enqueue(event_planning::REQUEST).await {
                Ok(run_id) => println!("{run_id}"),
                Err(e) => return Some(Err(Failure::Usage(e.to_string()))),
            }
        }
        return Some(Ok(()));
    }
    let (Some(run_id), Some(answer)) = (&args.submit_answer, &args.answer) else {
        return None;
    };
    Some(match runner.submit_answer(run_id, answer).await {
        Ok(()) => {
            println!("run {run_id} is answered: a worker resumes it");
            Ok(())
        }
        Err(e) => Err(Failure::Failed(e.to_string())),
    })
}
