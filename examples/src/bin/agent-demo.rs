//! `agent-demo`: what only the compiled-in example agents can show, beside the published
//! `agent-contract` command (which reads any folder of contracts at run time): the prompts
//! their askama templates render, the event-planning workflow served over MCP with the agents,
//! the plan generator's synthetic payload and the timing of its compiled contract checks.
//!
//! Exit codes: 0 success; 1 the input broke the contract (the retry error JSON is on stdout)
//! or a run failed; 2 a usage or I/O error.

use agent_contracts::{DynAgent, Limits, RetryError, contract::ErrorKind, contract::PrepareError};
use agent_examples::{agents, bench, event_planning, pipeline, report, support_triage};
use clap::{Parser, Subcommand};
use convention::{EXIT_CODES, Failure, Logs, ProviderEnv};
use std::io::{Read as _, Write as _};
use std::process::ExitCode;
use std::sync::Arc;

// The convention and the MCP flags are `agent-contract`'s own files, so the binaries keep one
// text of them (agent-contracts-cli has no library to share them through).
#[path = "../../../agent-cli/src/a2a.rs"]
mod a2a;
#[path = "../../../agent-cli/src/convention.rs"]
mod convention;
#[path = "../../../agent-cli/src/serve.rs"]
mod serve;

/// The name on stderr before each message.
const BIN: &str = "agent-demo";

#[derive(Parser)]
#[command(
    name = "agent-demo",
    version,
    about = "Render, time and serve the example agents compiled into this binary",
    after_help = EXIT_CODES
)]
struct Cli {
    #[command(flatten)]
    logs: Logs,
    #[command(subcommand)]
    command: Command,
}

// One command is parsed per process: `mcp`'s many settings cost nothing worth a box.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand)]
enum Command {
    /// Print one compiled-in agent name per line
    #[command(after_help = EXIT_CODES)]
    List,
    /// Render the user prompt of the agent's template for kwargs JSON, or print the retry
    /// error (exit 1)
    #[command(after_help = EXIT_CODES)]
    Render {
        /// The agent's name
        agent: String,
        /// A file of kwargs JSON; `-` or nothing reads stdin
        file: Option<String>,
    },
    /// Serve the compiled-in agents and the event-planning workflow as MCP tools over stdio,
    /// or over streamable HTTP at `/mcp`
    #[command(after_help = EXIT_CODES)]
    Mcp {
        /// `openai:<model>`, `azure:<deployment>` or `anthropic:<model>`; without it, canned
        /// answers, offline
        #[arg(long, value_name = "PROVIDER:MODEL")]
        model: Option<String>,
        #[command(flatten)]
        serving: serve::Serving,
        #[command(flatten)]
        durable: serve::Durable,
        #[command(flatten)]
        providers: ProviderEnv,
    },
    /// Serve the compiled-in agents and the event-planning workflow as an A2A agent over HTTP
    /// (`--http ADDR`): the agent card at `/.well-known/agent-card.json`, JSON-RPC at `/`
    #[command(after_help = EXIT_CODES)]
    A2a {
        /// `openai:<model>`, `azure:<deployment>` or `anthropic:<model>`; without it, canned
        /// answers, offline
        #[arg(long, value_name = "PROVIDER:MODEL")]
        model: Option<String>,
        #[command(flatten)]
        serving: serve::Serving,
        #[command(flatten)]
        durable: serve::Durable,
        #[command(flatten)]
        providers: ProviderEnv,
    },
    /// Print the deterministic plan generator kwargs that `bench --synthetic-items` times, so
    /// another implementation can be timed on the same bytes
    #[command(after_help = EXIT_CODES)]
    Payload {
        /// Collected items (50 make about 200 KB)
        #[arg(long, default_value_t = 50)]
        synthetic_items: usize,
    },
    /// Time the per-call path (kwargs text to rendered prompt, or to the retry error JSON)
    /// against parsing the same text, and print one JSON line of median nanoseconds per call
    #[command(after_help = EXIT_CODES)]
    Bench {
        /// The agent's name
        agent: String,
        /// A file of kwargs JSON; `-` or nothing reads stdin
        #[arg(conflicts_with = "synthetic_items")]
        file: Option<String>,
        /// Calls per function per round (default: about 50 ms of pipeline per round)
        #[arg(long)]
        iterations: Option<usize>,
        /// Rounds; the figures are medians over them
        #[arg(long, default_value_t = 15)]
        rounds: usize,
        /// Instead of a file, the deterministic plan generator kwargs with this many collected
        /// items (50 make about 200 KB)
        #[arg(long)]
        synthetic_items: Option<usize>,
        /// Remove this top-level key from the kwargs first, to time the retry path
        #[arg(long, value_name = "KEY")]
        without: Option<String>,
        /// Time the plan generator with its compiled contract checks replaced by "pass" (what
        /// the checks themselves cost is the difference); only for `plan_generator_agent`
        #[arg(long)]
        assume_checks_pass: bool,
    },
}

fn main() -> ExitCode {
    // clap exits 2 on a usage error and 0 after --help or --version: the convention.
    let cli = Cli::parse();
    let _telemetry = cli.logs.init(BIN);
    match run(cli.command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => failure.exit(&format!("{BIN}: ")),
    }
}

fn run(command: Command) -> Result<(), Failure> {
    match command {
        Command::List => {
            let mut out = std::io::stdout().lock();
            for agent in agents::AGENTS {
                writeln!(out, "{}", agent.name()).map_err(write_error)?;
            }
            Ok(())
        }
        Command::Render { agent, file } => {
            let agent = find(&agent)?;
            let text = match read_input(file.as_deref())? {
                Ok(text) => text,
                Err(e) => {
                    let required = agent.input_contract().required_fields();
                    return retry(&e.with_required(required).to_json());
                }
            };
            match agent.prepare(&text, &Limits::default()) {
                Ok(prepared) => {
                    // The prompt byte for byte: no newline of our own after it.
                    let mut out = std::io::stdout().lock();
                    out.write_all(prepared.user_prompt.as_bytes())
                        .and_then(|()| out.flush())
                        .map_err(write_error)
                }
                Err(PrepareError::Retry(e)) => retry(&e.to_json()),
                Err(PrepareError::Prompt(e)) => Err(Failure::Failed(e.to_string())),
            }
        }
        Command::Mcp {
            model,
            serving,
            durable,
            providers,
        } => {
            // What needs no model first: a refused token or key costs no connection.
            let plan = serving.plan(BIN)?;
            let store = durable.checked()?;
            let (model, _) = report::model(
                BIN,
                model.as_deref(),
                |name| providers.var(name),
                || Arc::new(pipeline::canned_model()),
            )
            .map_err(Failure::Usage)?;
            let server = agent_contracts::mcp::AgentServer::new(agents::AGENTS.to_vec(), model)
                .workflow(event_planning::workflow(), EVENT_PLANNING)
                .and_then(|server| server.workflow(support_triage::workflow(), SUPPORT_TRIAGE))
                .map_err(|e| Failure::Failed(e.to_string()))?;
            plan.serve(server, BIN, async |server| {
                let Some((url, key)) = store else {
                    return Ok(server);
                };
                let store = serve::open_store(&url).await?;
                server
                    .with_store(store, key)
                    .map_err(|e| Failure::Usage(format!("{} (--mcp-key): {e}", serve::KEY_VAR)))
            })
        }
        Command::A2a {
            model,
            serving,
            durable,
            providers,
        } => {
            // What needs no model first: a refused token or key costs no connection.
            let plan = a2a::plan(&serving, BIN)?;
            let store = durable.checked()?;
            let (model, _) = report::model(
                BIN,
                model.as_deref(),
                |name| providers.var(name),
                || Arc::new(pipeline::canned_model()),
            )
            .map_err(Failure::Usage)?;
            let server = agent_contracts::a2a::A2aServer::new(agents::AGENTS.to_vec(), model)
                .workflow(event_planning::workflow(), EVENT_PLANNING)
                .map_err(|e| Failure::Failed(e.to_string()))?;
            plan.serve(server, BIN, async |server| {
                let Some((url, key)) = store else {
                    return Ok(server);
                };
                let store = serve::open_store(&url).await?;
                server
                    .with_store(store, key)
                    .map_err(|e| Failure::Usage(format!("{} (--mcp-key): {e}", serve::KEY_VAR)))
            })
        }
        Command::Payload { synthetic_items } => {
            let mut out = std::io::stdout().lock();
            write!(out, "{}", bench::synthetic_kwargs(synthetic_items)).map_err(write_error)
        }
        Command::Bench {
            agent,
            file,
            iterations,
            rounds,
            synthetic_items,
            without,
            assume_checks_pass,
        } => {
            let agent = match (assume_checks_pass, agent.as_str()) {
                (false, _) => find(&agent)?,
                (true, "plan_generator_agent") => &bench::AssumedChecksPlanGenerator,
                (true, other) => {
                    return Err(Failure::Usage(format!(
                        "--assume-checks-pass is for plan_generator_agent, not `{other}`"
                    )));
                }
            };
            let mut text = match synthetic_items {
                Some(items) => bench::synthetic_kwargs(items),
                None => read_input(file.as_deref())?.map_err(|e| Failure::Usage(e.to_string()))?,
            };
            if let Some(key) = without {
                text = bench::without_key(&text, &key)
                    .map_err(|e| Failure::Usage(format!("--without {key}: the kwargs {e}")))?;
            }
            let options = bench::Options { iterations, rounds };
            let report = bench::measure(agent, &text, options).map_err(Failure::Failed)?;
            if let bench::Outcome::Retry(_) = report.outcome {
                eprintln!("{BIN}: the kwargs break the contract: timed the retry path");
            }
            writeln!(std::io::stdout().lock(), "{}", report.to_json()).map_err(write_error)
        }
    }
}

/// The description of the event-planning workflow as a tool.
const EVENT_PLANNING: &str = "Plans an event: venue, budget, catering and logistics specialists, then a synthesized plan. Put the whole request (guests, date, city, budget) in `task`.";

/// The description of the support-triage workflow as a tool.
const SUPPORT_TRIAGE: &str = "Triages a support ticket: classifies it, drafts the reply, and waits for a person to approve, reject or edit the draft. Pass the ticket as `ticket_text` and the customer's plan as `customer_tier`.";

/// The compiled-in agent `name`.
fn find(name: &str) -> Result<&'static dyn DynAgent, Failure> {
    agents::find(name).ok_or_else(|| {
        let known: Vec<&str> = agents::AGENTS.iter().map(|a| a.name()).collect();
        Failure::Usage(format!(
            "unknown agent `{name}`; known agents: {}",
            known.join(", ")
        ))
    })
}

/// The kwargs text from a file or stdin. A file that cannot be read is an I/O error; bytes
/// that are not UTF-8 are bad input like any other, answered with a retry error.
fn read_input(file: Option<&str>) -> Result<Result<String, RetryError>, Failure> {
    let bytes = match file {
        None | Some("-") => {
            let mut bytes = Vec::new();
            std::io::stdin()
                .read_to_end(&mut bytes)
                .map_err(|e| Failure::Usage(format!("cannot read stdin: {e}")))?;
            bytes
        }
        Some(path) => {
            std::fs::read(path).map_err(|e| Failure::Usage(format!("cannot read `{path}`: {e}")))?
        }
    };
    Ok(String::from_utf8(bytes).map_err(|e| {
        RetryError::call(
            ErrorKind::NotJson,
            format!(
                "the input is not valid UTF-8: invalid byte at offset {}",
                e.utf8_error().valid_up_to()
            ),
            "Send the tool call arguments as UTF-8 JSON text",
        )
    }))
}

/// The retry error on stdout, and exit 1: the input broke the contract.
fn retry(error: &serde_json::Value) -> Result<(), Failure> {
    let text = serde_json::to_string_pretty(error).unwrap_or_default();
    writeln!(std::io::stdout().lock(), "{text}").map_err(write_error)?;
    Err(Failure::Failed(String::new()))
}

/// stdout closed or full: an I/O error.
fn write_error(e: std::io::Error) -> Failure {
    Failure::Usage(format!("cannot write to stdout: {e}"))
}
