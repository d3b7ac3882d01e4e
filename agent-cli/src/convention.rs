//! The convention every binary of agent-contracts keeps: one meaning per exit code, stated in
//! its `--help`; the environment variables it reads declared to clap, so `--help` lists them
//! (a secret's value never shown); the log on stderr; the OpenTelemetry export whenever
//! `OTEL_EXPORTER_OTLP_ENDPOINT` is set (in a build with the `otel` feature), flushed before
//! the process exits.
//!
//! The examples' binaries (`plan-pipeline`, `event-planning`, `support-triage`, `agent-demo`) include this file
//! too (`#[path]`), so the convention has one text; it uses only `std`, `clap`,
//! `tracing-subscriber` and, with their `otel` feature, `agent_contracts::otel`, which they
//! have.

use std::process::ExitCode;

/// The exit codes, as each binary's `--help` ends (`after_help`). clap's own parse errors exit
/// 2 and `--help`/`--version` exit 0 already, which is why usage errors are 2 here.
pub const EXIT_CODES: &str = "\
Exit status:
  0  success
  1  the input broke a contract, a check found problems, or a run failed
  2  a usage or I/O error (a bad flag or value, an unknown agent, a file that cannot be read)";

/// Why a command did not succeed; each kind is one exit code of [`EXIT_CODES`].
#[derive(Debug)]
pub enum Failure {
    /// The input broke a contract, a check found problems or a run failed: exit 1. The
    /// message (if any) goes to stderr; what the command printed on stdout stays.
    Failed(String),
    /// A usage or I/O error: exit 2, the message on stderr.
    Usage(String),
}

impl Failure {
    /// The exit code, after the message on stderr behind `prefix` (`agent-contract: `,
    /// `error: `).
    pub fn exit(self, prefix: &str) -> ExitCode {
        let (code, message) = match self {
            Self::Failed(message) => (1, message),
            Self::Usage(message) => (2, message),
        };
        if !message.is_empty() {
            eprintln!("{prefix}{message}");
        }
        ExitCode::from(code)
    }
}

/// `--log FILTER`, or `RUST_LOG`: which events the log on stderr shows.
#[derive(Debug, clap::Args)]
pub struct Logs {
    /// Which events the log on stderr shows (`warn`, `info`, `agent_contracts_llm=debug`, ...):
    /// retries, waits and fallbacks are warnings; an unreadable filter means `warn`
    #[arg(
        long = "log",
        env = "RUST_LOG",
        value_name = "FILTER",
        default_value = "warn",
        global = true
    )]
    pub filter: String,
}

/// The guard of the OpenTelemetry export: keep it until `main` returns; dropping it flushes
/// what is left (an error exit included, as `main` returns its exit code).
#[cfg(feature = "otel")]
pub type Telemetry = Option<agent_contracts::otel::Telemetry>;
/// Nothing to flush: this build has no OpenTelemetry export (always `None`).
#[cfg(not(feature = "otel"))]
pub type Telemetry = Option<std::convert::Infallible>;

impl Logs {
    /// Installs the log on stderr, without colours, and the OpenTelemetry export of the
    /// service `service` when `OTEL_EXPORTER_OTLP_ENDPOINT` (or `..._TRACES_ENDPOINT`) is set;
    /// a setting the export cannot use is a warning, never a failed run.
    pub fn init(&self, service: &str) -> Telemetry {
        use tracing_subscriber::Layer as _;
        use tracing_subscriber::layer::SubscriberExt as _;
        use tracing_subscriber::util::SubscriberInitExt as _;
        let filter = tracing_subscriber::EnvFilter::try_new(&self.filter)
            .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
        let log = tracing_subscriber::fmt::layer()
            .with_writer(std::io::stderr)
            .with_ansi(false)
            .with_filter(filter);
        let telemetry = export(service);
        #[cfg(feature = "otel")]
        let export = telemetry.as_ref().map(|t| t.layer());
        #[cfg(not(feature = "otel"))]
        let export: Option<tracing_subscriber::layer::Identity> = None;
        // A second install (a test calling twice) keeps the first: nothing to report.
        let _ = tracing_subscriber::registry()
            .with(log)
            .with(export)
            .try_init();
        telemetry
    }
}

/// The export the environment asks for, if this build has it.
#[cfg(feature = "otel")]
fn export(service: &str) -> Telemetry {
    if !agent_contracts::otel::enabled_by_env() {
        return None;
    }
    agent_contracts::otel::Telemetry::from_env(service)
        .map_err(|e| eprintln!("warning: no OpenTelemetry export: {e}"))
        .ok()
}

/// Without the `otel` feature an endpoint set in the environment gets a warning.
#[cfg(not(feature = "otel"))]
fn export(service: &str) -> Telemetry {
    if std::env::var_os("OTEL_EXPORTER_OTLP_ENDPOINT").is_some() {
        eprintln!(
            "warning: OTEL_EXPORTER_OTLP_ENDPOINT is set, but this build of {service} has no OpenTelemetry export (build it with the `otel` feature)"
        );
    }
    None
}

/// The settings `--model` reads, each from its flag or its variable (a flag's value shows in
/// the process list: prefer the variable for keys). The names are those
/// `agent_contracts::llm::from_spec_with` asks for; [`ProviderEnv::var`] answers it.
#[derive(Debug, Default, clap::Args)]
#[command(next_help_heading = "Model provider settings (for --model)")]
pub struct ProviderEnv {
    /// The OpenAI API key (`openai:`)
    #[arg(
        long,
        env = "OPENAI_API_KEY",
        hide_env_values = true,
        value_name = "KEY"
    )]
    pub openai_api_key: Option<String>,
    /// An OpenAI-compatible endpoint instead of OpenAI's (`openai:`)
    #[arg(long, env = "OPENAI_BASE_URL", value_name = "URL")]
    pub openai_base_url: Option<String>,
    /// The OpenAI organization (`openai:`)
    #[arg(long, env = "OPENAI_ORG_ID", value_name = "ID")]
    pub openai_org_id: Option<String>,
    /// The OpenAI project (`openai:`)
    #[arg(long, env = "OPENAI_PROJECT_ID", value_name = "ID")]
    pub openai_project_id: Option<String>,
    /// The Azure OpenAI resource's endpoint (`azure:`)
    #[arg(long, env = "AZURE_OPENAI_ENDPOINT", value_name = "URL")]
    pub azure_openai_endpoint: Option<String>,
    /// The Azure OpenAI key (`azure:`)
    #[arg(
        long,
        env = "AZURE_OPENAI_API_KEY",
        hide_env_values = true,
        value_name = "KEY"
    )]
    pub azure_openai_api_key: Option<String>,
    /// A Microsoft Entra ID token instead of the Azure key (`azure:`)
    #[arg(
        long,
        env = "AZURE_OPENAI_AD_TOKEN",
        hide_env_values = true,
        value_name = "TOKEN"
    )]
    pub azure_openai_ad_token: Option<String>,
    /// The Azure OpenAI API version (`azure:`)
    #[arg(long, env = "OPENAI_API_VERSION", value_name = "VERSION")]
    pub openai_api_version: Option<String>,
    /// The Anthropic API key (`anthropic:`)
    #[arg(
        long,
        env = "ANTHROPIC_API_KEY",
        hide_env_values = true,
        value_name = "KEY"
    )]
    pub anthropic_api_key: Option<String>,
    /// A bearer token instead of the Anthropic key (`anthropic:`)
    #[arg(
        long,
        env = "ANTHROPIC_AUTH_TOKEN",
        hide_env_values = true,
        value_name = "TOKEN"
    )]
    pub anthropic_auth_token: Option<String>,
    /// An Anthropic-compatible endpoint instead of Anthropic's (`anthropic:`)
    #[arg(long, env = "ANTHROPIC_BASE_URL", value_name = "URL")]
    pub anthropic_base_url: Option<String>,
    /// Each model request's timeout, in seconds (default 600)
    #[arg(long, env = "AGENT_CONTRACT_REQUEST_TIMEOUT", value_name = "SECONDS")]
    pub request_timeout: Option<String>,
}

impl ProviderEnv {
    /// The setting of the variable `name`, from its flag or the environment as clap read it;
    /// `None` for a name not declared here.
    pub fn var(&self, name: &str) -> Option<String> {
        let value = match name {
            "OPENAI_API_KEY" => &self.openai_api_key,
            "OPENAI_BASE_URL" => &self.openai_base_url,
            "OPENAI_ORG_ID" => &self.openai_org_id,
            "OPENAI_PROJECT_ID" => &self.openai_project_id,
            "AZURE_OPENAI_ENDPOINT" => &self.azure_openai_endpoint,
            "AZURE_OPENAI_API_KEY" => &self.azure_openai_api_key,
            "AZURE_OPENAI_AD_TOKEN" => &self.azure_openai_ad_token,
            "OPENAI_API_VERSION" => &self.openai_api_version,
            "ANTHROPIC_API_KEY" => &self.anthropic_api_key,
            "ANTHROPIC_AUTH_TOKEN" => &self.anthropic_auth_token,
            "ANTHROPIC_BASE_URL" => &self.anthropic_base_url,
            "AGENT_CONTRACT_REQUEST_TIMEOUT" => &self.request_timeout,
            _ => return None,
        };
        value.clone()
    }
}
