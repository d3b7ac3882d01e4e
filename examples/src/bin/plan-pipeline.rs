//! The main job: prints which model it runs on, the transcript, and a summary (model calls,
//! retries, tokens); exits 0 when the main agent finishes with a plan. Offline on the
//! scripted model by default; `--model openai:<model>` or `--model anthropic:<model>` runs it
//! on a real model configured from the environment (`OPENAI_API_KEY`, `OPENAI_BASE_URL`,
//! `ANTHROPIC_API_KEY`, `ANTHROPIC_BASE_URL`).
//!
//! `--stream` streams each answer, printed on stderr as it arrives, each checked against its
//! output contract as it streams (one that can no longer pass is stopped and asked again).
//!
//! A tool that waits on a person (an `--a2a` agent's skill whose task asks for input) asks its
//! question on stderr and takes the answer from a line of stdin; without one the run ends
//! with the question.
//!
//! `--declared` runs the pipeline as declared at compile time instead (`PlanPipeline`: the
//! sub-agents in order, then the plan generator, whose `collected_information` the run builds
//! from their outputs), offline, and prints the transcript with the plan generator's prompt.
//!
//! `--store URL` (`sqlite:PATH`, `postgres://...`; the `store` feature) records the run as it
//! happens: its record, listed under `main_agent` (`completed` once it ends), and its
//! transcript events, bounded and with the provider keys taken out, for `agent-contract ui`.
//!
//! Exit codes: 0 success; 1 the run failed; 2 a usage or I/O error (a model spec or an
//! `mcpServers` file it cannot use).

use agent_examples::{pipeline, report};
use clap::Parser;
use convention::{EXIT_CODES, Failure, Logs, ProviderEnv};
use std::process::ExitCode;
use std::sync::Arc;

// The convention is `agent-contract`'s own file, so every binary states one text of it.
#[path = "../../../agent-cli/src/convention.rs"]
mod convention;

#[derive(Parser)]
#[command(
    name = "plan-pipeline",
    version,
    about = "Runs the plan pipeline and prints its transcript",
    after_help = EXIT_CODES
)]
struct Args {
    /// `openai:<model>`, `azure:<deployment>` or `anthropic:<model>`, or a comma-separated list tried in order
    /// (`openai:gpt-4o,anthropic:claude-sonnet-4-5`); the scripted model when left out.
    #[arg(long)]
    model: Option<String>,
    /// Runs the declared `PlanPipeline` workflow on the scripted model instead of the main
    /// agent's tool calling.
    #[arg(long, conflicts_with = "model")]
    declared: bool,
    /// An `mcpServers` file (the format MCP hosts use: `command`/`args`/`env` or
    /// `url`/`headers`): the main agent gets those servers' tools beside its sub-agents, each
    /// tool's schemas checked on the way in and out
    #[arg(long = "mcp-config", value_name = "FILE", conflicts_with = "declared")]
    mcp_config: Option<std::path::PathBuf>,
    /// An A2A agent's base URL (its card at `/.well-known/agent-card.json`): the main agent
    /// gets its skills beside its sub-agents, each call checked against the skill's schemas
    /// (the card's `urn:agent-contracts:contracts:v1` extension) on the way in and out.
    /// Repeatable
    #[arg(long = "a2a", value_name = "URL", conflicts_with = "declared")]
    a2a: Vec<String>,
    /// Streams each answer, printing it on stderr as it arrives; an answer that breaks its
    /// output contract is stopped there and asked again. stdout keeps the transcript.
    #[arg(long, conflicts_with = "declared")]
    stream: bool,
    /// Records the run in this store (`sqlite:PATH` or `postgres://...`) as it happens: its
    /// record, under `main_agent`, and its transcript events, for `agent-contract ui`.
    #[arg(long, value_name = "URL", conflicts_with = "declared")]
    store: Option<String>,
    #[command(flatten)]
    logs: Logs,
    #[command(flatten)]
    providers: ProviderEnv,
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    // clap exits 2 on a usage error and 0 after --help or --version: the convention.
    let args = Args::parse();
    let _telemetry = args.logs.init("plan-pipeline");
    match run(args).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => failure.exit("error: "),
    }
}

async fn run(args: Args) -> Result<(), Failure> {
    if args.declared {
        return declared().await;
    }
    let (model, line) = report::model(
        "plan-pipeline",
        args.model.as_deref(),
        |name| args.providers.var(name),
        || Arc::new(pipeline::scripted_model()),
    )
    .map_err(Failure::Usage)?;
    print!("{line}");
    let mut tools = match &args.mcp_config {
        Some(path) => mcp_tools(path).await.map_err(Failure::Usage)?,
        None => Vec::new(),
    };
    if !args.a2a.is_empty() {
        tools.extend(a2a_tools(&args.a2a).await.map_err(Failure::Usage)?);
    }
    let mut config = agent_contracts::Config::default().with_delivery(match args.stream {
        true => report::streamed_to_stderr(),
        false => agent_contracts::stream::Delivery::Whole,
    });
    let recorder = match &args.store {
        Some(url) => {
            let recorder = record::start(url, &args.providers).await?;
            config = config.with_transcript_sink(recorder.clone());
            Some(recorder)
        }
        None => None,
    };
    let prices = config.prices.clone();
    let (runtime, outcome) = pipeline::run_answering(model, tools, config, ask_person).await;
    print!("{}", runtime.transcript());
    print!("{}", report::summary(runtime.transcript()));
    if let Some(recorder) = recorder {
        let ended = outcome.as_ref().map(drop).map_err(ToString::to_string);
        let record = recorder
            .finish(runtime.transcript(), &prices, ended)
            .await
            .map_err(|e| Failure::Failed(format!("the run's record: {e}")))?;
        println!(
            "=== recorded: run {} ({}) ===",
            record.run_id,
            agent_examples::worker::status_text(record.status)
        );
    }
    match outcome {
        // The main agent's answer is the transcript's last message: printed once, above.
        Ok(outcome) => {
            println!(
                "=== done: `{}` answered ({} bytes, the last message above) ===",
                pipeline::MAIN_AGENT,
                outcome.content.len()
            );
            Ok(())
        }
        Err(e) => Err(Failure::Failed(e.to_string())),
    }
}

/// A remote agent's question (an A2A skill's task that asks for input), asked on stderr and
/// answered by a line of stdin; the end of stdin or an empty line ends the run with the
/// question (exit 1): the main agent never answers for the person.
fn ask_person(pause: &agent_contracts::runtime::LoopPause) -> Option<String> {
    eprintln!(
        "=== `{}` (called by `{}`) asks: {} ===",
        pause.tool, pause.agent, pause.question
    );
    eprint!("your answer> ");
    let mut line = String::new();
    match std::io::stdin().read_line(&mut line) {
        Ok(read) if read > 0 && !line.trim().is_empty() => Some(line.trim_end().to_owned()),
        _ => None,
    }
}

/// Recording a run in a store (`--store`).
mod record {
    use super::{Failure, ProviderEnv};
    use agent_contracts::recorder::RunRecorder;
    use std::sync::Arc;

    /// The provider keys and tokens a run's record must never hold.
    #[cfg(feature = "store")]
    const SECRETS: [&str; 5] = [
        "OPENAI_API_KEY",
        "AZURE_OPENAI_API_KEY",
        "AZURE_OPENAI_AD_TOKEN",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
    ];

    /// Without the `store` feature there is no SQL store: say how to get it.
    #[cfg(not(feature = "store"))]
    pub async fn start(url: &str, _: &ProviderEnv) -> Result<Arc<RunRecorder>, Failure> {
        let _ = url;
        Err(Failure::Usage(agent_examples::report::not_built(
            "plan-pipeline",
            "store",
            "--store URL",
        )))
    }

    /// Opens the store and saves the run's record, running, under `main_agent`.
    #[cfg(feature = "store")]
    pub async fn start(url: &str, providers: &ProviderEnv) -> Result<Arc<RunRecorder>, Failure> {
        use agent_contracts::recorder::{RecordLimits, Redactor};
        let store = agent_contracts::store::open(url).await.map_err(|e| {
            let url = agent_contracts::store::redact_url(url);
            Failure::Usage(format!("--store {url}: {e}"))
        })?;
        let redactor = SECRETS
            .iter()
            .filter_map(|name| providers.var(name))
            .fold(Redactor::default(), Redactor::with_secret);
        let agent = agent_examples::pipeline::MAIN_AGENT;
        RunRecorder::start_with(store, agent, RecordLimits::default(), redactor)
            .await
            .map_err(|e| Failure::Usage(format!("--store: {e}")))
    }
}

/// Without the `mcp` feature the MCP client is not compiled in: say how to get it.
#[cfg(not(feature = "mcp"))]
async fn mcp_tools(path: &std::path::Path) -> Result<Vec<Arc<dyn agent_contracts::Tool>>, String> {
    let flag = format!("--mcp-config {}", path.display());
    Err(report::not_built("plan-pipeline", "mcp", &flag))
}

/// The tools of every server of the `mcpServers` file at `path`.
#[cfg(feature = "mcp")]
async fn mcp_tools(path: &std::path::Path) -> Result<Vec<Arc<dyn agent_contracts::Tool>>, String> {
    use agent_contracts::mcp::client::{McpServer, ToolSettings, server_specs};
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut tools = Vec::new();
    for (name, spec) in server_specs(&text).map_err(|e| format!("{}: {e}", path.display()))? {
        let server = McpServer::connect(&name, &spec)
            .await
            .map_err(|e| e.to_string())?;
        let offered = server
            .tools(ToolSettings::default())
            .await
            .map_err(|e| e.to_string())?;
        println!("=== MCP server `{name}`: {} tools ===", offered.len());
        // Each tool keeps the connection open as long as it lives.
        tools.extend(offered);
    }
    Ok(tools)
}

/// Without the `a2a` feature the A2A client is not compiled in: say how to get it.
#[cfg(not(feature = "a2a"))]
async fn a2a_tools(urls: &[String]) -> Result<Vec<Arc<dyn agent_contracts::Tool>>, String> {
    let flag = format!("--a2a {}", urls[0]);
    Err(report::not_built("plan-pipeline", "a2a", &flag))
}

/// The skills of every A2A agent at `urls`, as tools.
#[cfg(feature = "a2a")]
async fn a2a_tools(urls: &[String]) -> Result<Vec<Arc<dyn agent_contracts::Tool>>, String> {
    use agent_contracts::a2a::client::{RemoteAgent, ToolSettings};
    let mut tools = Vec::new();
    for url in urls {
        let agent = RemoteAgent::connect(url).await.map_err(|e| e.to_string())?;
        let offered = agent
            .tools(ToolSettings::default())
            .map_err(|e| e.to_string())?;
        let names: Vec<String> = offered.iter().map(|t| t.definition().name).collect();
        println!(
            "=== A2A agent {url}: {} skills ({}) ===",
            offered.len(),
            names.join(", ")
        );
        tools.extend(offered);
    }
    Ok(tools)
}

/// The declared pipeline: no main agent; the workflow routes each step and collects the
/// sub-agents' outputs for the plan generator.
async fn declared() -> Result<(), Failure> {
    use agent_contracts::workflow::WorkflowOutcome;
    use agent_examples::pipeline::PlanPipeline;
    println!(
        "Workflow `{}` (declared, checked at compile time): {}",
        PlanPipeline::NAME,
        PlanPipeline::STEPS.join(" -> ")
    );
    let workflow = pipeline::declared_workflow();
    let runner = workflow.runner(Arc::new(pipeline::declared_model()));
    let outcome = runner.start_with_kwargs(&pipeline::declared_kwargs()).await;
    print!("{}", runner.transcript());
    match outcome {
        Ok(WorkflowOutcome::Finished { output, .. }) => {
            println!("=== done ===\n{output}");
            Ok(())
        }
        Ok(WorkflowOutcome::NeedsInput { request, .. }) => Err(Failure::Failed(format!(
            "`{}` asked the user: {}",
            request.requesting_agent, request.prompt
        ))),
        Err(e) => Err(Failure::Failed(e.to_string())),
    }
}
