//! What a run tells an observability tool: spans and events by the OpenTelemetry GenAI
//! semantic conventions (release v1.41), emitted through `tracing` alone, so the runtime
//! depends on no OpenTelemetry or HTTP crate. Any `tracing` subscriber sees them; the
//! `agent-contracts-otel` crate (the facade's `otel` feature) turns them into OpenTelemetry
//! spans, span events and metrics and exports them by OTLP.
//!
//! The spans follow `tracing-opentelemetry`'s conventions: `otel.name` is the span's
//! OpenTelemetry name (`invoke_agent plan_generator_agent`), `otel.kind` its kind,
//! `otel.status_code` its status. Each span's `tracing` name is the operation (`invoke_agent`,
//! `execute_tool`, `chat`, `invoke_workflow`), and every field a span may get is declared
//! when it is made (`tracing` records only declared fields). Counts are recorded as `i64`
//! (OpenTelemetry has no unsigned integers; `tracing-opentelemetry` would export a `u64` as
//! text).
//!
//! - `invoke_workflow {workflow}`: a workflow run, its steps beneath it;
//! - `invoke_agent {agent}`: every agent call (a runtime call, a sub-agent called through a
//!   tool, a workflow step), with `gen_ai.agent.name`, `gen_ai.conversation.id` (the run ID,
//!   the same on every span of a run) and [`CONTEXT_ID`];
//! - `execute_tool {tool}`: every tool call, a sub-agent's `invoke_agent` beneath it;
//! - `chat {model}`: every model call, kind client, under its agent's span, with the usage
//!   (input, output, cache-read, cache-creation and reasoning tokens) and the finish reasons.
//!
//! Every contract check is an event named [`CONTRACT_CHECK`] inside the checked agent's
//! `invoke_agent` span, with the side, the verdict, the violated fields' JSON pointers (a
//! JSON array in text: `tracing` has no array values; the OTel crate sets it as a string
//! array), the contract's fingerprint and the attempt.
//!
//! With no subscriber, or one that takes none of these spans, each costs a callsite check:
//! no field value is computed.

use crate::chat::{ChatResponse, ModelError, Usage};
use crate::error::Error;
use crate::ids::ContextId;
use agent_contracts_contract::{Contract, PathSegment, Repair, RetryError};
use std::fmt::Write as _;
use tracing::field::Empty;

/// The release of the OpenTelemetry semantic conventions the spans and metrics follow.
pub const SEMCONV_VERSION: &str = "1.41.0";

/// The `tracing` target of every span and event of the runtime's own telemetry.
pub const TARGET: &str = "agent_contracts";

/// The name of a contract check's event.
pub const CONTRACT_CHECK: &str = "agent_contracts.contract.check";
/// A check's side: `input` or `output`.
pub const CONTRACT_SIDE: &str = "agent_contracts.contract.side";
/// A check's verdict: `ok` or `violated`.
pub const CONTRACT_VERDICT: &str = "agent_contracts.contract.verdict";
/// The JSON pointers of the fields a check found violated (a missing required field as the
/// pointer it would have), as a JSON array of strings in text.
pub const CONTRACT_VIOLATIONS: &str = "agent_contracts.contract.violations";
/// The checked contract's fingerprint (`agent_contracts_schema::fingerprint` of its schema).
pub const CONTRACT_FINGERPRINT: &str = "agent_contracts.contract.fingerprint";
/// The attempt the check was of (1 for a call's first answer).
pub const CONTRACT_ATTEMPT: &str = "agent_contracts.contract.attempt";
/// The byte of a streamed answer after which it could no longer pass (a stream stopped
/// mid-answer).
pub const STREAM_STOP_BYTE: &str = "agent_contracts.stream.stop_byte";
/// An agent call's context ID, on its `invoke_agent` span.
pub const CONTEXT_ID: &str = "agent_contracts.context_id";
/// The name of a lossless repair's event: a value that broke its contract taken after the
/// fixes it lists, with no retry.
pub const CONTRACT_REPAIR: &str = "agent_contracts.contract.repair";
/// A repair's fixes, as the JSON array of `{"path", "kind", "before", "after"}` in text.
pub const CONTRACT_REPAIRS: &str = "agent_contracts.contract.repairs";
/// The `error.type` of a check that found a violation, and of an agent call that ended on
/// one.
pub const CONTRACT_VIOLATION: &str = "contract_violation";

/// How the OpenTelemetry layer's crate reads and continues W3C trace context: set once when
/// it is installed, so that this crate names no OpenTelemetry type.
#[derive(Clone, Copy)]
struct TraceContextHooks {
    current: fn() -> Option<String>,
    continue_from: fn(&tracing::Span, &str),
}

static TRACE_CONTEXT_HOOKS: std::sync::OnceLock<TraceContextHooks> = std::sync::OnceLock::new();

/// Names the functions that read the current span's W3C `traceparent` ([`current_traceparent`])
/// and make a span the child of a remote one ([`continue_trace`]): the OpenTelemetry layer's
/// crate calls it when installed; a second call is ignored.
pub fn set_trace_context_hooks(
    current: fn() -> Option<String>,
    continue_from: fn(&tracing::Span, &str),
) {
    let _ = TRACE_CONTEXT_HOOKS.set(TraceContextHooks {
        current,
        continue_from,
    });
}

/// The W3C `traceparent` of the current span, when an OpenTelemetry layer is installed and
/// the span is in a trace: what an MCP client sends in `_meta`, so the server's spans join
/// the caller's trace.
pub fn current_traceparent() -> Option<String> {
    TRACE_CONTEXT_HOOKS
        .get()
        .and_then(|hooks| (hooks.current)())
}

/// Makes `span` a child of the remote span a W3C `traceparent` names (an MCP request's
/// `_meta.traceparent`), in the caller's trace, when an OpenTelemetry layer is installed.
/// Call it before the span is first entered: a started span keeps its parent. Text that is
/// not a `traceparent` leaves the span where it was.
pub fn continue_trace(span: &tracing::Span, traceparent: &str) {
    if let Some(hooks) = TRACE_CONTEXT_HOOKS.get()
        && !span.is_disabled()
    {
        (hooks.continue_from)(span, traceparent);
    }
}

/// A count as a field value: OpenTelemetry's integers are signed 64 bits, and
/// `tracing-opentelemetry` exports an unsigned field as text, so counts are recorded signed
/// (a count past `i64::MAX`, which no token count or byte offset reaches, saturates).
fn count(n: impl TryInto<i64>) -> i64 {
    n.try_into().unwrap_or(i64::MAX)
}

/// Which side of an agent a contract check is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CheckSide {
    Input,
    Output,
}

impl CheckSide {
    fn as_str(self) -> &'static str {
        match self {
            Self::Input => "input",
            Self::Output => "output",
        }
    }
}

/// The span of a workflow run.
pub(crate) fn invoke_workflow(workflow: &str, run_id: &str) -> tracing::Span {
    tracing::info_span!(
        target: TARGET,
        "invoke_workflow",
        otel.name = format_args!("invoke_workflow {workflow}"),
        otel.kind = "internal",
        otel.status_code = Empty,
        gen_ai.operation.name = "invoke_workflow",
        gen_ai.workflow.name = workflow,
        gen_ai.conversation.id = run_id,
        error.type = Empty,
    )
}

/// The span of one agent call, its context ID recorded later when `id` is `None`.
pub(crate) fn invoke_agent(agent: &str, id: Option<&ContextId>, run_id: &str) -> tracing::Span {
    let span = tracing::info_span!(
        target: TARGET,
        "invoke_agent",
        otel.name = format_args!("invoke_agent {agent}"),
        otel.kind = "internal",
        otel.status_code = Empty,
        gen_ai.operation.name = "invoke_agent",
        gen_ai.agent.name = agent,
        gen_ai.conversation.id = run_id,
        agent_contracts.context_id = Empty,
        error.type = Empty,
    );
    if let Some(id) = id {
        span.record(CONTEXT_ID, tracing::field::display(id));
    }
    span
}

/// The span of one tool call of `caller`'s conversation.
pub(crate) fn execute_tool(tool: &str, call_id: &str, kind: &str, run_id: &str) -> tracing::Span {
    tracing::info_span!(
        target: TARGET,
        "execute_tool",
        otel.name = format_args!("execute_tool {tool}"),
        otel.kind = "internal",
        otel.status_code = Empty,
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = tool,
        gen_ai.tool.call.id = call_id,
        gen_ai.tool.type = kind,
        gen_ai.conversation.id = run_id,
        error.type = Empty,
    )
}

/// The `chat` span of one model call of `agent`'s, in the run `run_id` if known. The
/// provider, the model asked for and the server are recorded by the model that answers
/// ([`record_model`]: a provider knows them, a scripted model names itself), the response's
/// fields when it comes ([`record_response`]).
///
/// The runtime makes one for each model call; a layer over a model (`Traced`) makes its own
/// only for a call made outside the runtime ([`in_chat_span`] says which).
pub fn chat(agent: &str, run_id: Option<&str>) -> tracing::Span {
    tracing::info_span!(
        target: TARGET,
        "chat",
        otel.name = "chat",
        otel.kind = "client",
        otel.status_code = Empty,
        gen_ai.operation.name = "chat",
        gen_ai.agent.name = agent,
        gen_ai.conversation.id = run_id,
        gen_ai.provider.name = Empty,
        gen_ai.request.model = Empty,
        gen_ai.request.temperature = Empty,
        gen_ai.request.max_tokens = Empty,
        gen_ai.response.id = Empty,
        gen_ai.response.model = Empty,
        gen_ai.response.finish_reasons = Empty,
        gen_ai.usage.input_tokens = Empty,
        gen_ai.usage.output_tokens = Empty,
        gen_ai.usage.cache_read.input_tokens = Empty,
        gen_ai.usage.cache_creation.input_tokens = Empty,
        gen_ai.usage.reasoning.output_tokens = Empty,
        server.address = Empty,
        server.port = Empty,
        error.type = Empty,
    )
}

/// Names the model a `chat` span is of, and where it is served: what a model records on the
/// current span when it is called (a field the current span does not have is ignored).
///
/// The span's name becomes `chat {model}`.
pub fn record_model(provider: &str, model: Option<&str>, server: Option<(&str, u16)>) {
    let span = tracing::Span::current();
    if span.is_disabled() {
        return;
    }
    span.record("gen_ai.provider.name", provider);
    if let Some(model) = model {
        span.record("gen_ai.request.model", model);
        span.record("otel.name", format_args!("chat {model}"));
    }
    if let Some((address, port)) = server {
        span.record("server.address", address);
        span.record("server.port", i64::from(port));
    }
}

/// Whether the current span is the runtime's `chat` span of a model call.
pub fn in_chat_span() -> bool {
    tracing::Span::current()
        .metadata()
        .is_some_and(|m| m.name() == "chat" && m.target() == TARGET)
}

/// Records a model's response on its `chat` span: the response's ID and model, the finish
/// reasons (a JSON array in text) and the usage.
pub fn record_response(span: &tracing::Span, response: &ChatResponse) {
    if span.is_disabled() {
        return;
    }
    if let Some(id) = &response.id {
        span.record("gen_ai.response.id", id.as_str());
    }
    if let Some(model) = &response.model {
        span.record("gen_ai.response.model", model.as_str());
    }
    if let Some(reason) = &response.finish_reason {
        span.record(
            "gen_ai.response.finish_reasons",
            format_args!("{}", serde_json::Value::from(vec![reason.as_str()])),
        );
    }
    if let Some(usage) = &response.usage {
        record_usage(span, usage);
    }
}

/// Records what a model call used on its `chat` span.
pub fn record_usage(span: &tracing::Span, usage: &Usage) {
    span.record("gen_ai.usage.input_tokens", count(usage.input_tokens));
    span.record("gen_ai.usage.output_tokens", count(usage.output_tokens));
    span.record(
        "gen_ai.usage.cache_read.input_tokens",
        count(usage.cached_tokens),
    );
    span.record(
        "gen_ai.usage.cache_creation.input_tokens",
        count(usage.cache_write_tokens),
    );
    span.record(
        "gen_ai.usage.reasoning.output_tokens",
        count(usage.reasoning_tokens),
    );
}

/// Marks `span` failed with `error_type` (`error.type`, and the status `error`).
pub(crate) fn fail(span: &tracing::Span, error_type: &str) {
    if span.is_disabled() {
        return;
    }
    span.record("error.type", error_type);
    span.record("otel.status_code", "error");
}

/// Marks `span` failed if `result` is an error.
pub(crate) fn end<T>(span: &tracing::Span, result: &Result<T, Error>) {
    if let Err(error) = result {
        fail(span, error_type(error));
    }
}

/// A short, stable name of what a run's error is, for `error.type`.
pub(crate) fn error_type(error: &Error) -> &'static str {
    match error {
        Error::Retry { .. } | Error::RetriesExhausted { .. } => CONTRACT_VIOLATION,
        Error::TooManyTurns { .. } => "too_many_turns",
        Error::TooManyHops { .. } => "too_many_hops",
        Error::UnknownAgent { .. } => "unknown_agent",
        Error::BadState { .. } => "bad_state",
        Error::ContractChanged { .. } => "contract_changed",
        Error::AttemptsExhausted { .. } => "attempts_exhausted",
        Error::Rejected { .. } => "rejected",
        Error::EditRefused { .. } => CONTRACT_VIOLATION,
        Error::ToolPaused { .. } => "tool_paused",
        Error::Cancelled { .. } => "cancelled",
        Error::TokenBudget { .. } => "token_budget",
        Error::CostBudget { .. } => "cost_budget",
        Error::Unpriced { .. } => "unpriced",
        Error::Model(error) => error.error_type(),
        Error::Prompt(_) => "prompt",
        Error::ContextId(_) => "context_id",
        Error::Contributor(_) => "contributor",
        Error::Store(_) => "store",
    }
}

impl ModelError {
    /// A short, stable name of the kind of error (`timeout`, `rate_limited`, `http_status`,
    /// ...), for the `error.type` of a trace.
    pub fn error_type(&self) -> &'static str {
        match self {
            Self::ScriptExhausted { .. } => "script_exhausted",
            Self::RateLimited { .. } => "rate_limited",
            Self::Status { .. } => "http_status",
            Self::Timeout => "timeout",
            Self::MaxTokens { .. } => "max_tokens",
            Self::Transport(_) => "transport",
            Self::Malformed(_) => "malformed_response",
            Self::GaveUp { last, .. } => last.error_type(),
            Self::Stopped { .. } => "stopped",
            Self::Other(_) => "other",
        }
    }
}

/// One contract check of `agent`'s, as an event in the current span (the agent's
/// `invoke_agent`): the verdict is `ok` when `error` is `None`.
pub(crate) fn contract_check(
    agent: &str,
    side: CheckSide,
    contract: Option<&Contract>,
    error: Option<&RetryError>,
    attempt: u32,
    stop_byte: Option<usize>,
) {
    // The values below (the pointers, the fingerprint's hash of the schema) are computed only
    // for a subscriber that takes the event.
    let fingerprint = || contract.map(|c| agent_contracts_schema::fingerprint(c.schema()));
    let violations = || error.map(violated_pointers).unwrap_or_else(|| "[]".into());
    match (error, stop_byte) {
        (None, _) => tracing::event!(
            target: TARGET,
            tracing::Level::INFO,
            {
            gen_ai.agent.name = agent,
            agent_contracts.contract.side = side.as_str(),
            agent_contracts.contract.verdict = "ok",
            agent_contracts.contract.violations = violations(),
            agent_contracts.contract.fingerprint = fingerprint(),
            agent_contracts.contract.attempt = i64::from(attempt),
            },
            "agent_contracts.contract.check"
        ),
        (Some(_), None) => tracing::event!(
            target: TARGET,
            tracing::Level::INFO,
            {
            gen_ai.agent.name = agent,
            agent_contracts.contract.side = side.as_str(),
            agent_contracts.contract.verdict = "violated",
            agent_contracts.contract.violations = violations(),
            agent_contracts.contract.fingerprint = fingerprint(),
            agent_contracts.contract.attempt = i64::from(attempt),
            error.type = CONTRACT_VIOLATION,
            },
            "agent_contracts.contract.check"
        ),
        (Some(_), Some(at)) => tracing::event!(
            target: TARGET,
            tracing::Level::INFO,
            {
            gen_ai.agent.name = agent,
            agent_contracts.contract.side = side.as_str(),
            agent_contracts.contract.verdict = "violated",
            agent_contracts.contract.violations = violations(),
            agent_contracts.contract.fingerprint = fingerprint(),
            agent_contracts.contract.attempt = i64::from(attempt),
            agent_contracts.stream.stop_byte = count(at),
            error.type = CONTRACT_VIOLATION,
            },
            "agent_contracts.contract.check"
        ),
    }
}

/// The event of a lossless repair on the current span (the agent call's `invoke_agent`): the
/// value of `agent`'s `side` at `attempt` was taken after `repairs`. Their JSON is written
/// only for a subscriber that takes the event.
pub(crate) fn repaired(agent: &str, side: CheckSide, repairs: &[Repair], attempt: u32) {
    tracing::event!(
        target: TARGET,
        tracing::Level::INFO,
        {
        gen_ai.agent.name = agent,
        agent_contracts.contract.side = side.as_str(),
        agent_contracts.contract.repairs = serde_json::to_string(repairs).unwrap_or_default(),
        agent_contracts.contract.attempt = attempt,
        },
        "agent_contracts.contract.repair"
    );
}

/// The JSON pointers of what `error` found, each once, as a JSON array in text: a missing
/// required field as the pointer it would have (`/collected_information`), every other
/// violation at its instance location.
pub(crate) fn violated_pointers(error: &RetryError) -> String {
    let mut pointers: Vec<String> = Vec::new();
    let mut push = |pointer: String| {
        if !pointers.contains(&pointer) {
            pointers.push(pointer);
        }
    };
    for field in &error.missing_fields {
        push(pointer(&[PathSegment::Key(field.clone())]));
    }
    for violation in &error.errors {
        let mut path = violation.path.clone();
        // A `required` violation sits at the object that lacks the field: name the field.
        if let Some(field) = required_field(&violation.message) {
            path.push(PathSegment::Key(field.to_owned()));
        }
        push(pointer(&path));
    }
    if error.errors.is_empty() && error.missing_fields.is_empty() {
        push(pointer(&error.path));
    }
    serde_json::Value::from(pointers).to_string()
}

/// The field a validator's "`"name" is a required property`" message names.
fn required_field(message: &str) -> Option<&str> {
    let rest = message.strip_suffix("\" is a required property")?;
    rest.strip_prefix('"')
}

/// An instance location as a JSON pointer (RFC 6901: `~` as `~0`, `/` as `~1`).
fn pointer(path: &[PathSegment]) -> String {
    let mut out = String::new();
    for segment in path {
        out.push('/');
        match segment {
            PathSegment::Key(key) => {
                for c in key.chars() {
                    match c {
                        '~' => out.push_str("~0"),
                        '/' => out.push_str("~1"),
                        c => out.push(c),
                    }
                }
            }
            PathSegment::Index(i) => {
                let _ = write!(out, "{i}");
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_contracts_contract::ErrorKind;

    #[test]
    fn pointers_escape_their_keys_and_name_missing_fields() {
        let path = [
            PathSegment::Key("a/b~c".into()),
            PathSegment::Index(3),
            PathSegment::Key("d".into()),
        ];
        assert_eq!(pointer(&path), "/a~1b~0c/3/d");
        assert_eq!(pointer(&[]), "");
        assert_eq!(
            required_field("\"output\" is a required property"),
            Some("output")
        );
        assert_eq!(required_field("5 is not of type \"string\""), None);
        let error = RetryError::call(ErrorKind::UnknownTool, "no such tool", "call another");
        assert_eq!(violated_pointers(&error), r#"[""]"#);
    }
}
