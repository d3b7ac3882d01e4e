//! `agent-contract`: the contracts compiled into this binary, or a user's own (`check DIR`,
//! `--schemas DIR`), from the command line.
//!
//! Exit codes: 0 success, 1 usage error (unknown agent, unreadable file), 2 the input broke the
//! contract (the retry error JSON is on stdout), or `check` found problems.

use agent_contracts::contract::ErrorKind;
use agent_contracts::contract::extract_json;
use agent_contracts::{DynAgent, Limits, RetryError, contract::PrepareError};
use agent_examples::user_contracts::UserAgent;
use agent_examples::{agents, bench, event_planning, pipeline, report};
use clap::{Parser, Subcommand, ValueEnum};
use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

#[derive(Parser)]
#[command(
    name = "agent-contract",
    version,
    about = "Inspect and exercise the agent contracts compiled into this binary"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print one agent name per line
    List,
    /// Check a folder of agent folders (the build-script layout) as a build would: per agent,
    /// `ok` or every problem with its file:line:col; exit 2 if any
    Check {
        /// The folder of agent folders
        dir: PathBuf,
        /// The crate folder whose `askama.toml` (or `templates/`) holds the prompt templates
        #[arg(long, default_value = ".")]
        root: PathBuf,
        /// Print instead, per output contract and provider, whether it fits the provider's
        /// strict structured output as written, after the lossless rewrite that is sent, or
        /// not (and why)
        #[arg(long)]
        providers: bool,
    },
    /// Print an agent's tool definition as JSON
    Tool {
        /// The agent's name
        agent: String,
        /// The provider format
        #[arg(long, value_enum, default_value = "openai")]
        format: Format,
        /// Read the agent from this folder of agent folders instead of the compiled-in ones
        #[arg(long)]
        schemas: Option<PathBuf>,
    },
    /// Render the user prompt for kwargs JSON, or print the retry error (exit 2)
    Render {
        /// The agent's name
        agent: String,
        /// A file of kwargs JSON; `-` or nothing reads stdin
        file: Option<String>,
        /// Read the agent from this folder of agent folders instead of the compiled-in ones
        /// (its prompt is then the default one: the task, then the context)
        #[arg(long)]
        schemas: Option<PathBuf>,
    },
    /// Check kwargs (or, with --output, an answer) against the agent's contract
    Validate {
        /// The agent's name
        agent: String,
        /// A file of JSON; `-` or nothing reads stdin
        file: Option<String>,
        /// Check an answer against the output contract instead of kwargs against the input
        #[arg(long)]
        output: bool,
        /// Read the agent from this folder of agent folders instead of the compiled-in ones
        #[arg(long)]
        schemas: Option<PathBuf>,
    },
    /// Serve the agents and the event-planning workflow as MCP tools over stdio, or over
    /// streamable HTTP at `/mcp`
    Mcp {
        /// `openai:<model>`, `azure:<deployment>` or `anthropic:<model>`; without it, canned answers, offline
        #[arg(long)]
        model: Option<String>,
        /// Serve streamable HTTP on this address (such as 127.0.0.1:8080) instead of stdio
        #[arg(long)]
        http: Option<std::net::SocketAddr>,
        /// Keep paused workflow runs in this store (`sqlite:PATH` or `postgres://...`)
        /// instead of memory, so they survive a restart; resume handles are signed with the
        /// key in `AGENT_CONTRACT_MCP_KEY` (64 hex digits)
        #[arg(long)]
        store: Option<String>,
        /// With --http: also answer requests whose Host is this name (`name` or `name:port`;
        /// loopback names and the bound address are always answered). Repeatable
        #[arg(long = "allowed-host", value_name = "HOST")]
        allowed_hosts: Vec<String>,
        /// With --http: answer browsers on this origin (`https://app.example.com`,
        /// `http://localhost:*`); a request from any other Origin gets 403. Repeatable
        #[arg(long = "allowed-origin", value_name = "ORIGIN")]
        allowed_origins: Vec<String>,
        /// With --http on an address beyond loopback: serve without the bearer token of
        /// AGENT_CONTRACT_MCP_TOKEN (anyone who reaches the address runs the agents)
        #[arg(long = "no-auth")]
        no_auth: bool,
        /// With --http: keep no session between requests, so several instances behind one
        /// address (a round-robin proxy, with --store on one database and one
        /// AGENT_CONTRACT_MCP_KEY) serve one client
        #[arg(long)]
        stateless: bool,
        /// Serve the agents of this folder of agent folders (read now, not compiled in)
        /// instead of the compiled-in agents and workflow
        #[arg(long)]
        schemas: Option<PathBuf>,
    },
    /// Print the deterministic plan generator kwargs that `bench --synthetic-items` times, so
    /// another implementation can be timed on the same bytes
    Payload {
        /// Collected items (50 make about 200 KB)
        #[arg(long, default_value_t = 50)]
        synthetic_items: usize,
    },
    /// Time the per-call path (kwargs text to rendered prompt, or to the retry error JSON)
    /// against parsing the same text, and print one JSON line of median nanoseconds per call
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
        #[arg(long)]
        without: Option<String>,
        /// Time the plan generator with its compiled contract checks replaced by "pass" (what
        /// the checks themselves cost is the difference); only for `plan_generator_agent`
        #[arg(long)]
        assume_checks_pass: bool,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    Openai,
    Anthropic,
}

/// A usage error: message on stderr, exit 1.
struct Usage(String);

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => {
            // --help and --version are not errors.
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(1);
        }
    };
    agent_examples::report::init_logs();
    match run(cli.command) {
        Ok(code) => code,
        Err(Usage(message)) => {
            eprintln!("agent-contract: {message}");
            ExitCode::from(1)
        }
    }
}

fn run(command: Command) -> Result<ExitCode, Usage> {
    match command {
        Command::List => {
            for agent in agents::AGENTS {
                println!("{}", agent.name());
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Check {
            dir,
            root,
            providers,
        } => check(&dir, &root, providers),
        Command::Mcp {
            model,
            http,
            store,
            allowed_hosts,
            allowed_origins,
            no_auth,
            stateless,
            schemas,
        } => {
            let settings = match http {
                Some(addr) => Some(
                    http_settings(addr, allowed_hosts, allowed_origins, no_auth)?.sessions(
                        match stateless {
                            true => agent_contracts::mcp::Sessions::Stateless,
                            false => agent_contracts::mcp::Sessions::default(),
                        },
                    ),
                ),
                None => None,
            };
            let served = match schemas {
                Some(dir) => Served::Folder(loaded(&dir)?),
                None => Served::CompiledIn,
            };
            mcp(
                model.as_deref(),
                http.zip(settings),
                store.as_deref(),
                served,
            )
        }
        Command::Tool {
            agent,
            format,
            schemas,
        } => {
            let definition = agent_of(&agent, schemas.as_deref())?.tool_definition();
            let definition = match format {
                Format::Openai => agent_contracts::llm::openai::tool_json(&definition),
                Format::Anthropic => agent_contracts::llm::anthropic::tool_json(&definition),
            };
            println!("{}", pretty(&definition));
            Ok(ExitCode::SUCCESS)
        }
        Command::Render {
            agent,
            file,
            schemas,
        } => {
            let agent = agent_of(&agent, schemas.as_deref())?;
            let text = match read_input(file.as_deref())? {
                Ok(text) => text,
                Err(e) => return Ok(retry(&e.with_required(required(agent)).to_json())),
            };
            match agent.prepare(&text, &Limits::default()) {
                Ok(prepared) => {
                    // The prompt byte for byte: no newline of our own after it.
                    let mut out = std::io::stdout().lock();
                    out.write_all(prepared.user_prompt.as_bytes())
                        .and_then(|()| out.flush())
                        .map_err(|e| Usage(format!("cannot write the prompt: {e}")))?;
                    Ok(ExitCode::SUCCESS)
                }
                Err(PrepareError::Retry(e)) => Ok(retry(&e.to_json())),
                Err(PrepareError::Prompt(e)) => Err(Usage(e.to_string())),
            }
        }
        Command::Validate {
            agent,
            file,
            output,
            schemas,
        } => {
            let agent = agent_of(&agent, schemas.as_deref())?;
            let text = match read_input(file.as_deref())? {
                Ok(text) => text,
                Err(e) if output => return Ok(retry(&e.to_json())),
                Err(e) => return Ok(retry(&e.with_required(required(agent)).to_json())),
            };
            let limits = Limits::default();
            let result = if output {
                extract_json(&text, &limits)
                    .and_then(|answer| agent.check_output(&answer, &limits).map(drop))
            } else {
                agent.validate(&text, &limits).map(drop)
            };
            Ok(verdict(result))
        }
        Command::Payload { synthetic_items } => {
            print!("{}", bench::synthetic_kwargs(synthetic_items));
            Ok(ExitCode::SUCCESS)
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
            let options = bench::Options { iterations, rounds };
            let agent = match (assume_checks_pass, agent.as_str()) {
                (false, _) => find(&agent)?,
                (true, "plan_generator_agent") => &bench::AssumedChecksPlanGenerator,
                (true, other) => {
                    return Err(Usage(format!(
                        "--assume-checks-pass is for plan_generator_agent, not `{other}`"
                    )));
                }
            };
            run_bench(
                agent,
                file.as_deref(),
                synthetic_items,
                without.as_deref(),
                options,
            )
        }
    }
}

/// `{"success": true}` and exit 0, or the retry error and exit 2.
fn verdict(result: Result<(), agent_contracts::RetryError>) -> ExitCode {
    match result {
        Ok(()) => {
            println!("{}", serde_json::json!({"success": true}));
            ExitCode::SUCCESS
        }
        Err(e) => retry(&e.to_json()),
    }
}

/// `check DIR`: one line per agent, `ok <name>` or `error <name>` followed by its problems;
/// with `--providers`, the strict-output table.
fn check(dir: &Path, root: &Path, providers: bool) -> Result<ExitCode, Usage> {
    let absolute =
        |p: &Path| std::path::absolute(p).map_err(|e| Usage(format!("{}: {e}", p.display())));
    let builder =
        agent_contracts_codegen::Builder::new(absolute(dir)?).manifest_dir(absolute(root)?);
    let checks = builder.check().map_err(|e| Usage(e.0.join("; ")))?;
    if checks.is_empty() {
        return Err(Usage(format!(
            "no agent folder (with an `input.schema.json`) in {}",
            dir.display()
        )));
    }
    if providers {
        print!("{}", strict_table(&checks));
        return Ok(ExitCode::SUCCESS);
    }
    let mut failed = false;
    for agent in checks {
        let verdict = if agent.errors.is_empty() {
            "ok"
        } else {
            "error"
        };
        println!("{verdict} {}", agent.name);
        for warning in &agent.warnings {
            println!("  warning: {warning}");
        }
        for error in &agent.errors {
            println!("  error: {error}");
        }
        failed |= !agent.errors.is_empty();
    }
    Ok(if failed {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    })
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
    out
}

fn run_bench(
    agent: &'static dyn agent_contracts::DynAgent,
    file: Option<&str>,
    synthetic_items: Option<usize>,
    without: Option<&str>,
    options: bench::Options,
) -> Result<ExitCode, Usage> {
    let mut text = match synthetic_items {
        Some(items) => bench::synthetic_kwargs(items),
        None => read_input(file)?.map_err(|e| Usage(e.to_string()))?,
    };
    if let Some(key) = without {
        text = bench::without_key(&text, key)
            .map_err(|e| Usage(format!("--without {key}: the kwargs {e}")))?;
    }
    let report = bench::measure(agent, &text, options).map_err(Usage)?;
    if let bench::Outcome::Retry(_) = report.outcome {
        eprintln!("agent-contract: the kwargs break the contract: timed the retry path");
    }
    println!("{}", report.to_json());
    Ok(ExitCode::SUCCESS)
}

/// The description of the event-planning workflow as a tool.
const EVENT_PLANNING: &str = "Plans an event: venue, budget, catering and logistics specialists, then a synthesized plan. Put the whole request (guests, date, city, budget) in `task`.";

/// Serves the compiled-in agents and the event-planning workflow until the client disconnects (stdio) or the process ends.
/// The bearer token of the HTTP endpoint, when set.
const TOKEN_VAR: &str = "AGENT_CONTRACT_MCP_TOKEN";

/// Who may reach `--http ADDR`: the token of [`TOKEN_VAR`], required beyond loopback unless
/// `--no-auth` says otherwise, and the listed hosts and origins.
fn http_settings(
    addr: std::net::SocketAddr,
    hosts: Vec<String>,
    origins: Vec<String>,
    no_auth: bool,
) -> Result<agent_contracts::mcp::HttpSettings, Usage> {
    let mut settings = agent_contracts::mcp::HttpSettings::default();
    for host in hosts {
        settings = settings.allowed_host(host);
    }
    for origin in origins {
        settings = settings.allowed_origin(origin);
    }
    match std::env::var(TOKEN_VAR) {
        Ok(token) if token.len() >= 16 => settings = settings.bearer_token(token),
        Ok(_) => {
            return Err(Usage(format!(
                "{TOKEN_VAR} is shorter than 16 characters; use a long random secret, such as the output of `openssl rand -hex 32`"
            )));
        }
        Err(_) if addr.ip().is_loopback() => {}
        Err(_) if no_auth => eprintln!(
            "agent-contract: warning: serving {addr} without a token (--no-auth): anyone who reaches it runs the agents on this model account"
        ),
        Err(_) => {
            return Err(Usage(format!(
                "--http {addr} is reachable beyond this machine; set a bearer token in {TOKEN_VAR}, or pass --no-auth to serve it without one"
            )));
        }
    }
    Ok(settings)
}

fn mcp(
    model: Option<&str>,
    http: Option<(std::net::SocketAddr, agent_contracts::mcp::HttpSettings)>,
    store: Option<&str>,
    served: Served,
) -> Result<ExitCode, Usage> {
    let (model, _) = report::model("agent-contract", model, || {
        Arc::new(pipeline::canned_model())
    })
    .map_err(|e| Usage(e.to_string()))?;
    let mut server = match served {
        Served::CompiledIn => {
            agent_contracts::mcp::AgentServer::new(agents::AGENTS.to_vec(), model)
                .workflow(event_planning::workflow(), EVENT_PLANNING)
                .map_err(|e| Usage(e.to_string()))?
        }
        Served::Folder(agents) => agent_contracts::mcp::AgentServer::new(agents, model),
    };
    let key = store.map(|_| handle_key()).transpose()?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Usage(e.to_string()))?;
    runtime.block_on(async {
        if let (Some(url), Some(key)) = (store, key) {
            let store = agent_contracts::store::open(url)
                .await
                .map_err(|e| Usage(format!("--store {url}: {e}")))?;
            server = server
                .with_store(store, key)
                .map_err(|e| Usage(format!("AGENT_CONTRACT_MCP_KEY: {e}")))?;
        }
        let served = match http {
            Some((addr, settings)) => {
                let listener = tokio::net::TcpListener::bind(addr)
                    .await
                    .map_err(|e| Usage(format!("--http {addr}: {e}")))?;
                // The address as bound (port 0 names the port the OS picked), for the user and
                // for a script that starts the server.
                if let Ok(bound) = listener.local_addr() {
                    eprintln!(
                        "agent-contract: serving MCP at http://{bound}{}",
                        agent_contracts::mcp::HTTP_PATH
                    );
                }
                server.with_http(settings).serve_http_on(listener).await
            }
            None => server.serve_stdio().await,
        };
        served.map_err(|e| Usage(format!("the MCP server stopped: {e}")))
    })?;
    Ok(ExitCode::SUCCESS)
}

/// The key resume handles are signed with, when paused runs are stored: 64 hex digits in
/// `AGENT_CONTRACT_MCP_KEY`.
fn handle_key() -> Result<[u8; 32], Usage> {
    const VAR: &str = "AGENT_CONTRACT_MCP_KEY";
    let usage = || {
        Usage(format!(
            "--store needs a secret key in {VAR}: 64 hex digits, such as the output of `openssl rand -hex 32`"
        ))
    };
    let text = std::env::var(VAR).map_err(|_| usage())?;
    let text = text.trim();
    if text.len() != 64 || !text.is_ascii() {
        return Err(usage());
    }
    let mut key = [0u8; 32];
    for (i, byte) in key.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&text[2 * i..2 * i + 2], 16).map_err(|_| usage())?;
    }
    Ok(key)
}

/// The agent `name`: read from the folder `schemas` when one is given, else compiled in.
fn agent_of(name: &str, schemas: Option<&Path>) -> Result<&'static dyn DynAgent, Usage> {
    match schemas {
        Some(dir) => {
            let agent = UserAgent::load(dir, name).map_err(Usage)?;
            Ok(Box::leak(Box::new(agent)))
        }
        None => find(name),
    }
}

/// Every agent of the folder `dir`, read now.
fn loaded(dir: &Path) -> Result<Vec<&'static dyn DynAgent>, Usage> {
    let agents = UserAgent::load_all(dir).map_err(Usage)?;
    Ok(agents
        .into_iter()
        .map(|agent| &*Box::leak(Box::new(agent)) as &'static dyn DynAgent)
        .collect())
}

/// What `mcp` serves.
enum Served {
    /// The compiled-in agents and the event-planning workflow.
    CompiledIn,
    /// The agents of a folder read at start.
    Folder(Vec<&'static dyn DynAgent>),
}

fn find(name: &str) -> Result<&'static dyn DynAgent, Usage> {
    agents::find(name).ok_or_else(|| {
        let known: Vec<&str> = agents::AGENTS.iter().map(|a| a.name()).collect();
        Usage(format!(
            "unknown agent `{name}`; known agents: {}",
            known.join(", ")
        ))
    })
}

/// The kwargs (or answer) text from a file or stdin. A file that cannot be read is a usage
/// error; bytes that are not UTF-8 are bad input like any other, answered with a retry error.
fn read_input(file: Option<&str>) -> Result<Result<String, RetryError>, Usage> {
    let bytes = match file {
        None | Some("-") => {
            let mut bytes = Vec::new();
            std::io::stdin()
                .read_to_end(&mut bytes)
                .map_err(|e| Usage(format!("cannot read stdin: {e}")))?;
            bytes
        }
        Some(path) => {
            std::fs::read(path).map_err(|e| Usage(format!("cannot read `{path}`: {e}")))?
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

fn retry(error: &serde_json::Value) -> ExitCode {
    println!("{}", pretty(error));
    ExitCode::from(2)
}

fn pretty(value: &serde_json::Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default()
}
