//! `agent-contract`: the agent contracts of a folder of agent folders (the layout a build
//! script reads: `<agent>/input.schema.json`, optionally `output.schema.json` and
//! `agent.json`), from the command line: check them as a build would, list them, print their
//! tool definitions, render and validate calls, time the per-call path, serve them over MCP;
//! and look at a store's runs in a local web page (`ui`).
//!
//! Exit codes: 0 success; 1 the input broke a contract (the retry error JSON is on stdout), a
//! check found problems or a run failed; 2 a usage or I/O error.

#![forbid(unsafe_code)]

mod a2a;
mod convention;
mod eval;
mod folder;
mod offline;
mod serve;
mod timing;
mod ui;

use agent_contracts::contract::{Repair, Repairs, repair_answer, repair_kwargs};
use agent_contracts::{
    DynAgent, Limits, RetryError, contract::ErrorKind, contract::PrepareError,
    contract::extract_json,
};
use clap::{CommandFactory as _, Parser, Subcommand, ValueEnum};
use convention::{EXIT_CODES, Failure, Logs, ProviderEnv};
use folder::UserAgent;
use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

/// The name on stderr before each message.
const BIN: &str = "agent-contract";

#[derive(Parser)]
#[command(
    name = "agent-contract",
    version,
    about = "Check, inspect, exercise and serve the agent contracts of a folder of agent folders",
    after_help = EXIT_CODES
)]
struct Cli {
    /// The folder of agent folders (each `<agent>/input.schema.json`, optionally
    /// `output.schema.json` and `agent.json`)
    #[arg(
        long,
        env = "AGENT_CONTRACT_SCHEMAS",
        value_name = "DIR",
        default_value = "schemas",
        global = true
    )]
    schemas: PathBuf,
    #[command(flatten)]
    logs: Logs,
    #[command(subcommand)]
    command: Command,
}

// One command is parsed per process: `mcp`'s many settings cost nothing worth a box.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand)]
enum Command {
    /// Check the folder as a build would: per agent, `ok` or every problem with its
    /// file:line:col; exit 1 if any
    #[command(after_help = EXIT_CODES)]
    Check {
        /// The crate folder whose `askama.toml` (or `templates/`) holds the prompt templates
        #[arg(long, value_name = "DIR", default_value = ".")]
        root: PathBuf,
        /// Print instead, per output contract and provider, whether it fits the provider's
        /// strict structured output as written, after the lossless rewrite that is sent, or
        /// not (and why)
        #[arg(long)]
        providers: bool,
        /// Check the eval datasets of this folder too (each `<agent>.jsonl` against its
        /// agent's contracts: kwargs, assertion paths and values)
        #[arg(long, value_name = "EVALS_DIR")]
        evals: Option<PathBuf>,
    },
    /// Print one agent name per line
    #[command(after_help = EXIT_CODES)]
    List,
    /// Print an agent's tool definition as JSON
    #[command(after_help = EXIT_CODES)]
    Tool {
        /// The agent's name
        agent: String,
        /// The provider format
        #[arg(long, value_enum, default_value = "openai")]
        format: Format,
    },
    /// Render the user prompt for kwargs JSON (the default prompt: the task, then the
    /// context), or print the retry error (exit 1)
    #[command(after_help = EXIT_CODES)]
    Render {
        /// The agent's name
        agent: String,
        /// A file of kwargs JSON; `-` or nothing reads stdin
        file: Option<String>,
    },
    /// Check kwargs (or, with --output, an answer) against the agent's contract, after the
    /// lossless repairs the runtime makes: prints `{"value": ..., "repairs": [...]}` (the
    /// checked context or answer, and each fix as `{"path", "kind", "before", "after"}`), or
    /// the retry error when only a fix that could change its meaning would do (exit 1)
    #[command(after_help = EXIT_CODES)]
    Validate {
        /// The agent's name
        agent: String,
        /// A file of JSON; `-` or nothing reads stdin
        file: Option<String>,
        /// Check an answer against the output contract instead of kwargs against the input
        #[arg(long)]
        output: bool,
    },
    /// Time the per-call path (kwargs text to rendered prompt, or to the retry error JSON)
    /// against parsing the same text, and print one JSON line of median nanoseconds per call
    #[command(after_help = EXIT_CODES)]
    Bench {
        /// The agent's name
        agent: String,
        /// A file of kwargs JSON; `-` or nothing reads stdin
        file: Option<String>,
        /// Calls per function per round (default: about 50 ms of pipeline per round)
        #[arg(long)]
        iterations: Option<usize>,
        /// Rounds; the figures are medians over them
        #[arg(long, default_value_t = 15)]
        rounds: usize,
        /// Remove this top-level key from the kwargs first, to time the retry path
        #[arg(long, value_name = "KEY")]
        without: Option<String>,
    },
    /// Serve the folder's agents as MCP tools over stdio, or over streamable HTTP at `/mcp`:
    /// each call checked against its input contract, answered by the model, the answer
    /// checked against the output contract
    #[command(after_help = EXIT_CODES)]
    Mcp {
        /// `openai:<model>`, `azure:<deployment>` or `anthropic:<model>`, or a
        /// comma-separated list tried in order (`openai:gpt-4o,anthropic:claude-sonnet-4-5`);
        /// without it, offline: each agent answers the first `examples` entry of its output
        /// contract
        #[arg(long, value_name = "PROVIDER:MODEL")]
        model: Option<String>,
        #[command(flatten)]
        serving: serve::Serving,
        #[command(flatten)]
        providers: ProviderEnv,
    },
    /// Serve the folder's agents as an A2A agent over HTTP (`--http ADDR`): the agent card at
    /// `/.well-known/agent-card.json` (one skill per agent, its contracts in the card's
    /// `urn:agent-contracts:contracts:v1` extension), JSON-RPC at `/`; each message's data
    /// part checked against the skill's input contract, answered by the model, the answer
    /// checked against the output contract
    #[command(after_help = EXIT_CODES)]
    A2a {
        /// `openai:<model>`, `azure:<deployment>` or `anthropic:<model>`, or a
        /// comma-separated list tried in order (`openai:gpt-4o,anthropic:claude-sonnet-4-5`);
        /// without it, offline: each agent answers the first `examples` entry of its output
        /// contract
        #[arg(long, value_name = "PROVIDER:MODEL")]
        model: Option<String>,
        #[command(flatten)]
        serving: serve::Serving,
        #[command(flatten)]
        durable: serve::Durable,
        #[command(flatten)]
        providers: ProviderEnv,
    },
    /// Run the eval datasets of a folder (`<agent>.jsonl`, one case a line) through their
    /// agents on a model or on recorded answers, after checking each against its contracts:
    /// a markdown report on stdout; exit 1 when a case fails or errors (with `--baseline`,
    /// only one that passed there), 2 when a dataset fails its check
    #[command(after_help = EXIT_CODES)]
    Eval {
        #[command(flatten)]
        args: eval::EvalArgs,
    },
    /// Serve a local web inspector of a store's runs (`--store URL`): the runs, each run's
    /// timeline with its prompts, answers and contract verdicts, a paused run's question
    /// answered from the page, and the folder's agents; prints the address it bound
    #[command(after_help = EXIT_CODES)]
    Ui {
        #[command(flatten)]
        args: ui::UiArgs,
    },
    /// Print the completion script of a shell, for it to source
    #[command(after_help = EXIT_CODES)]
    Completions {
        /// The shell
        shell: clap_complete::Shell,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    Openai,
    Anthropic,
}

fn main() -> ExitCode {
    // clap exits 2 on a usage error and 0 after --help or --version: the convention.
    let cli = Cli::parse();
    let _telemetry = cli.logs.init(BIN);
    match run(cli.command, &cli.schemas) {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => failure.exit(&format!("{BIN}: ")),
    }
}

fn run(command: Command, schemas: &Path) -> Result<(), Failure> {
    match command {
        Command::Check {
            root,
            providers,
            evals,
        } => check(schemas, &root, providers, evals.as_deref()),
        Command::List => {
            let names = UserAgent::names(schemas).map_err(Failure::Usage)?;
            let mut out = std::io::stdout().lock();
            for name in names {
                writeln!(out, "{name}").map_err(write_error)?;
            }
            Ok(())
        }
        Command::Tool { agent, format } => {
            let definition = load(schemas, &agent)?.tool_definition();
            let definition = match format {
                Format::Openai => agent_contracts::llm::openai::tool_json(&definition),
                Format::Anthropic => agent_contracts::llm::anthropic::tool_json(&definition),
            };
            print_json(&definition)
        }
        Command::Render { agent, file } => {
            let agent = load(schemas, &agent)?;
            let text = match read_input(file.as_deref())? {
                Ok(text) => text,
                Err(e) => return retry(&e.with_required(required(agent)).to_json()),
            };
            match agent.prepare(&text, &Limits::default()) {
                Ok(prepared) => {
                    if let Some(template) = agent.template() {
                        eprintln!(
                            "{BIN}: note: a build renders `{}` with its template `{template}`; this is the default prompt (a template is compiled with its crate)",
                            agent.name()
                        );
                    }
                    // The prompt byte for byte: no newline of our own after it. Media stand in
                    // their places as labels (`[image/png, 34 KB]`), never as bytes.
                    let shown = match prepared.media.is_empty() {
                        true => prepared.user_prompt,
                        false => agent_contracts::__private::show_parts(
                            &prepared.user_prompt,
                            &prepared.media,
                        ),
                    };
                    let mut out = std::io::stdout().lock();
                    out.write_all(shown.as_bytes())
                        .and_then(|()| out.flush())
                        .map_err(write_error)
                }
                Err(PrepareError::Retry(e)) => retry(&e.to_json()),
                Err(PrepareError::Prompt(e)) => Err(Failure::Failed(e.to_string())),
            }
        }
        Command::Validate {
            agent,
            file,
            output,
        } => {
            let agent = load(schemas, &agent)?;
            let text = match read_input(file.as_deref())? {
                Ok(text) => text,
                Err(e) if output => return retry(&e.to_json()),
                Err(e) => return retry(&e.with_required(required(agent)).to_json()),
            };
            let side = if output { Side::Output } else { Side::Input };
            match validate(agent, &text, side, &Limits::default()) {
                Ok((value, repairs)) => {
                    print_line(serde_json::json!({"value": value, "repairs": repairs}))
                }
                Err(e) => retry(&e.to_json()),
            }
        }
        Command::Bench {
            agent,
            file,
            iterations,
            rounds,
            without,
        } => {
            let agent = load(schemas, &agent)?;
            let mut text =
                read_input(file.as_deref())?.map_err(|e| Failure::Usage(e.to_string()))?;
            if let Some(key) = without {
                text = timing::without_key(&text, &key)
                    .map_err(|e| Failure::Usage(format!("--without {key}: the kwargs {e}")))?;
            }
            let options = timing::Options { iterations, rounds };
            let report = timing::measure(agent, &text, options).map_err(Failure::Failed)?;
            if let timing::Outcome::Retry(_) = report.outcome {
                eprintln!("{BIN}: the kwargs break the contract: timed the retry path");
            }
            print_line(report.to_json())
        }
        Command::Mcp {
            model,
            serving,
            providers,
        } => {
            // What needs no model first: a refused token or key costs no connection.
            let plan = serving.plan(BIN)?;
            let (agents, model) = served(schemas, model.as_deref(), &providers)?;
            let server = agent_contracts::mcp::AgentServer::new(agents, model);
            plan.serve(server, BIN, async |server| Ok(server))
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
            let (agents, model) = served(schemas, model.as_deref(), &providers)?;
            let server = agent_contracts::a2a::A2aServer::new(agents, model);
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
        Command::Eval { args } => eval::eval(schemas, args),
        Command::Ui { args } => ui::serve(args, schemas, BIN),
        Command::Completions { shell } => {
            clap_complete::generate(shell, &mut Cli::command(), BIN, &mut std::io::stdout());
            Ok(())
        }
    }
}

/// The agents a server serves, and the model that answers them.
type Served = (
    Vec<&'static dyn DynAgent>,
    Arc<dyn agent_contracts::ChatModel>,
);

/// The folder's agents, for the process, and the model that answers them: the one `spec`
/// names, or without one the agents' canned answers, offline ([`offline::Canned`]).
fn served(schemas: &Path, spec: Option<&str>, providers: &ProviderEnv) -> Result<Served, Failure> {
    let agents = UserAgent::load_all(schemas).map_err(Failure::Usage)?;
    let model: Arc<dyn agent_contracts::ChatModel> = match spec {
        Some(spec) => agent_contracts::llm::from_spec_with(spec, |name| providers.var(name))
            .map_err(|e| Failure::Usage(format!("--model {spec}: {e}")))?,
        None => {
            let canned = offline::Canned::of(&agents).map_err(Failure::Usage)?;
            eprintln!(
                "{BIN}: no --model: answering offline, each agent with the first `examples` entry of its output contract ({} of {} agents have one)",
                canned.len(),
                agents.len()
            );
            Arc::new(canned)
        }
    };
    let agents = agents
        .into_iter()
        .map(|agent| &*Box::leak(Box::new(agent)) as &'static dyn DynAgent)
        .collect();
    Ok((agents, model))
}

/// Which contract `validate` checks.
#[derive(Clone, Copy)]
enum Side {
    /// Kwargs against the input contract.
    Input,
    /// An answer against the output contract.
    Output,
}

/// `validate`: the checked value (a call's context, or an answer) and the lossless repairs it
/// needed, as the runtime takes it; or the retry error of the text as written.
fn validate(
    agent: &UserAgent,
    text: &str,
    side: Side,
    limits: &Limits,
) -> Result<(serde_json::Value, Vec<Repair>), RetryError> {
    let repairs = Repairs::default();
    match side {
        Side::Input => {
            let error = match agent.validate(text, limits) {
                Ok(call) => return Ok((call.context().clone(), Vec::new())),
                Err(error) => error,
            };
            let repaired = repair_kwargs(text, agent.input_contract(), repairs, limits)
                .and_then(|r| Some((agent.validate(&r.text, limits).ok()?, r.repairs)));
            match repaired {
                Some((call, repairs)) => Ok((call.context().clone(), repairs)),
                None => Err(error),
            }
        }
        Side::Output => {
            let checked = extract_json(text, limits)
                .and_then(|answer| agent.check_output(&answer, limits).map(|_| answer));
            let error = match checked {
                Ok(answer) => return Ok((answer, Vec::new())),
                Err(error) => error,
            };
            let repaired = repair_answer(text, agent.output_contract(), repairs, limits)
                .filter(|r| agent.check_output(&r.value, limits).is_ok());
            match repaired {
                Some(repaired) => Ok((repaired.value, repaired.repairs)),
                None => Err(error),
            }
        }
    }
}

/// `check`: one line per agent, `ok <name>` or `error <name>` followed by its problems; with
/// `--providers`, the strict-output table.
fn check(dir: &Path, root: &Path, providers: bool, evals: Option<&Path>) -> Result<(), Failure> {
    let absolute = |p: &Path| {
        std::path::absolute(p).map_err(|e| Failure::Usage(format!("{}: {e}", p.display())))
    };
    let mut builder =
        agent_contracts_codegen::Builder::new(absolute(dir)?).manifest_dir(absolute(root)?);
    if let Some(evals) = evals {
        builder = builder.evals(absolute(evals)?);
    }
    let checks = builder
        .check()
        .map_err(|e| Failure::Usage(e.0.join("; ")))?;
    if checks.is_empty() {
        return Err(Failure::Usage(format!(
            "no agent folder (with an `input.schema.json`) in {}",
            dir.display()
        )));
    }
    let mut out = std::io::stdout().lock();
    if providers {
        return write!(out, "{}", strict_table(&checks)).map_err(write_error);
    }
    let mut failed = false;
    for agent in checks {
        let verdict = if agent.errors.is_empty() {
            "ok"
        } else {
            "error"
        };
        let mut text = format!("{verdict} {}\n", agent.name);
        for warning in &agent.warnings {
            text.push_str(&format!("  warning: {warning}\n"));
        }
        for error in &agent.errors {
            text.push_str(&format!("  error: {error}\n"));
        }
        out.write_all(text.as_bytes()).map_err(write_error)?;
        failed |= !agent.errors.is_empty();
    }
    match failed {
        // The problems are on stdout already.
        true => Err(Failure::Failed(String::new())),
        false => Ok(()),
    }
}

/// One line per output contract and provider: `as written`, `rewritten` with what the rewrite
/// does, or `no` with what prevents it; agents with problems say so.
fn strict_table(checks: &[agent_contracts_codegen::AgentCheck]) -> String {
    use agent_contracts_codegen::Strictness;
    let width = checks
        .iter()
        .map(|c| c.name.len())
        .max()
        .unwrap_or(0)
        .max(15);
    let mut out = format!(
        "{:width$}  provider   strict     how, or why not\n",
        "output contract"
    );
    for agent in checks {
        let name = &agent.name;
        if !agent.errors.is_empty() {
            out.push_str(&format!(
                "{name:width$}  -          error      see `check`\n"
            ));
        } else if agent.strict.is_empty() {
            out.push_str(&format!("{name:width$}  -          no output contract\n"));
        }
        for (dialect, verdict) in &agent.strict {
            let (kind, detail) = match verdict {
                Strictness::AsWritten => ("as written", String::new()),
                Strictness::Rewritten(rewrite) => ("rewritten", rewrite.summary()),
                Strictness::Not(reasons) => ("no", reasons.join("; ")),
            };
            let line = format!("{name:width$}  {:9}  {kind:10} {detail}", dialect.name());
            out.push_str(line.trim_end());
            out.push('\n');
        }
    }
    // Media fields of input contracts: a provider that cannot take one is refused here.
    let rows: Vec<(String, &str, &str, &str)> = checks
        .iter()
        .flat_map(|agent| {
            agent.media.iter().map(|(field, dialect, verdict)| {
                let (kind, detail) = match verdict {
                    Ok(()) => ("taken", ""),
                    Err(why) => ("no", why.as_str()),
                };
                (
                    format!("{}.{field}", agent.name),
                    dialect.name(),
                    kind,
                    detail,
                )
            })
        })
        .collect();
    let width = rows
        .iter()
        .map(|row| row.0.len())
        .max()
        .unwrap_or(0)
        .max(15);
    let media: Vec<String> = rows
        .iter()
        .map(|(label, provider, kind, detail)| {
            let line = format!("{label:width$}  {provider:9}  {kind:10} {detail}");
            line.trim_end().to_owned()
        })
        .collect();
    if !media.is_empty() {
        out.push_str(&format!("\n{:width$}  provider   media\n", "media field"));
        for line in media {
            out.push_str(&line);
            out.push('\n');
        }
    }
    out
}

/// The agent `name` of the folder `schemas`, read now. It lives for the process, as a
/// [`DynAgent`]'s contracts do.
fn load(schemas: &Path, name: &str) -> Result<&'static UserAgent, Failure> {
    let agent = UserAgent::load(schemas, name).map_err(Failure::Usage)?;
    Ok(Box::leak(Box::new(agent)))
}

/// The kwargs (or answer) text from a file or stdin. A file that cannot be read is an I/O
/// error; bytes that are not UTF-8 are bad input like any other, answered with a retry error.
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

/// The input contract's required fields, for a retry error raised before the contract ran.
fn required(agent: &dyn DynAgent) -> &[String] {
    agent.input_contract().required_fields()
}

/// The retry error on stdout, and exit 1: the input broke the contract.
fn retry(error: &serde_json::Value) -> Result<(), Failure> {
    print_json(error)?;
    Err(Failure::Failed(String::new()))
}

/// `value` pretty-printed on stdout.
fn print_json(value: &serde_json::Value) -> Result<(), Failure> {
    print_line(serde_json::to_string_pretty(value).unwrap_or_default())
}

/// One line on stdout.
fn print_line(text: impl std::fmt::Display) -> Result<(), Failure> {
    writeln!(std::io::stdout().lock(), "{text}").map_err(write_error)
}

/// stdout closed or full: an I/O error.
fn write_error(e: std::io::Error) -> Failure {
    Failure::Usage(format!("cannot write to stdout: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every variable `--model` asks for is one `ProviderEnv` declares (so `--help` shows
    /// it and its flag sets it): a name agent-llm starts to read would fail here.
    #[test]
    fn the_provider_settings_cover_every_variable_a_model_spec_reads() {
        let mut args = vec!["agent-contract".to_owned(), "mcp".into(), "--model".into()];
        args.push("openai:m".into());
        let command = Cli::command();
        let settings = command
            .find_subcommand("mcp")
            .expect("mcp")
            .get_arguments()
            .filter(|a| a.get_help_heading() == Some("Model provider settings (for --model)"))
            .collect::<Vec<_>>();
        let flags = settings
            .iter()
            .map(|a| format!("--{}", a.get_long().expect("a flag")))
            .collect::<Vec<_>>();
        assert_eq!(flags.len(), 12, "{flags:?}");
        for flag in flags {
            args.push(flag);
            args.push("1".into());
        }
        let Command::Mcp { providers, .. } = Cli::parse_from(args).command else {
            panic!("mcp");
        };
        for spec in ["openai:m", "azure:d", "anthropic:m"] {
            let asked = std::cell::RefCell::new(Vec::new());
            let model = agent_contracts::llm::from_spec_with(spec, |name| {
                asked.borrow_mut().push(name.to_owned());
                let value = match name {
                    _ if name.ends_with("_URL") || name.ends_with("_ENDPOINT") => {
                        "http://127.0.0.1:9"
                    }
                    "AGENT_CONTRACT_REQUEST_TIMEOUT" => "5",
                    _ => "x",
                };
                Some(value.to_owned())
            });
            assert!(model.is_ok(), "{spec}: {:?}", model.err());
            let asked = asked.into_inner();
            assert!(asked.len() >= 3, "{spec}: {asked:?}");
            for name in asked {
                assert_eq!(providers.var(&name).as_deref(), Some("1"), "{spec}: {name}");
            }
        }
        // Each declared variable reads its own setting, whether or not a spec asks for it.
        for setting in settings {
            let name = setting.get_env().expect("a variable").to_string_lossy();
            assert_eq!(providers.var(&name).as_deref(), Some("1"), "{name}");
        }
        assert_eq!(providers.var("HOME"), None);
    }

    #[test]
    fn the_command_is_well_formed() {
        Cli::command().debug_assert();
    }
}
