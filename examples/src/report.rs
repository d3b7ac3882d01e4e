//! What the binaries print around a run: the model it runs on first, and a summary of the
//! transcript (model calls, retries, tokens) last.

use agent_contracts::ChatModel;
use agent_contracts::transcript::Transcript;
use agent_contracts::{stream::Delivery, stream::StreamEvent};
use std::io::Write as _;
use std::sync::{Arc, Mutex};

/// The model a `--model` flag names (`openai:<model>`, `azure:<deployment>` or
/// `anthropic:<model>`, or a comma-separated list of them tried in order), configured from
/// `env` (each binary's provider settings, flags or variables as clap read them), or the
/// scripted one without it; with the line that says which. With the `models` feature either
/// is traced (`agent_contracts::llm::Traced`): each call a `chat` span, its retries' warnings
/// inside it, shown by the binaries' log. `bin` names the binary, for the message that says
/// how to build it with real models when the feature is off.
pub fn model(
    bin: &str,
    spec: Option<&str>,
    env: impl Fn(&str) -> Option<String>,
    scripted: impl FnOnce() -> Arc<dyn ChatModel>,
) -> Result<(Arc<dyn ChatModel>, String), String> {
    match spec {
        None => Ok((
            traced_scripted(scripted()),
            "=== model: scripted (offline) ===\n".to_owned(),
        )),
        Some(spec) => Ok((
            real_model(bin, spec, env)?,
            format!("=== model: {spec} ===\n"),
        )),
    }
}

#[cfg(feature = "models")]
fn real_model(
    _bin: &str,
    spec: &str,
    env: impl Fn(&str) -> Option<String>,
) -> Result<Arc<dyn ChatModel>, String> {
    let mut traced = agent_contracts::llm::Traced::new(
        agent_contracts::llm::from_spec_with(spec, env).map_err(|e| e.to_string())?,
    );
    // One `provider:model` names both; a list names the models it may try.
    traced = match spec.split_once(':').filter(|_| !spec.contains(',')) {
        Some((provider, model)) => traced.provider(provider).request_model(model),
        None => traced.request_model(spec),
    };
    Ok(Arc::new(traced))
}

#[cfg(feature = "models")]
fn traced_scripted(scripted: Arc<dyn ChatModel>) -> Arc<dyn ChatModel> {
    Arc::new(agent_contracts::llm::Traced::new(scripted).provider("scripted"))
}

/// The tracing layer lives with the HTTP models: without them the scripted model runs as it is.
#[cfg(not(feature = "models"))]
fn traced_scripted(scripted: Arc<dyn ChatModel>) -> Arc<dyn ChatModel> {
    scripted
}

/// Without the `models` feature the HTTP stack is not compiled in: say how to get it.
#[cfg(not(feature = "models"))]
fn real_model(
    bin: &str,
    spec: &str,
    _env: impl Fn(&str) -> Option<String>,
) -> Result<Arc<dyn ChatModel>, String> {
    Err(not_built(bin, "models", &format!("--model {spec}")))
}

/// What a binary built without `feature` says when asked for `flag`: the command that builds
/// it with the feature.
pub fn not_built(bin: &str, feature: &str, flag: &str) -> String {
    format!(
        "`{flag}` needs the `{feature}` feature, which this build of {bin} leaves out; run \
         `cargo run -p agent-examples --features {feature} --bin {bin} -- {flag}`"
    )
}

/// `n` and the noun it counts, singular for one (`1 input retry`, `2 input retries`).
fn counted(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The closing summary of a run: its model calls, retries and the tokens the providers
/// reported (none for the scripted model).
pub fn summary(transcript: &Transcript) -> String {
    let counts = transcript.counts();
    let usage = transcript.usage();
    let mut summary = format!(
        "=== summary ===\n{}, {}, {}; {} input tokens ({} cached), {} output tokens\n",
        counted(counts.model_calls, "model call", "model calls"),
        counted(counts.input_retries, "input retry", "input retries"),
        counted(counts.output_retries, "output retry", "output retries"),
        usage.input_tokens,
        usage.cached_tokens,
        usage.output_tokens
    );
    if counts.stopped_answers > 0 {
        summary.push_str(&format!(
            "{} stopped early, after {} bytes in all: the rest was never generated\n",
            counted(
                counts.stopped_answers,
                "streamed answer",
                "streamed answers"
            ),
            counts.stopped_bytes
        ));
    }
    if counts.cut_streams > 0 {
        summary.push_str(&format!(
            "{} before the end and asked again (partial answers discarded)\n",
            counted(
                counts.cut_streams,
                "streamed answer cut",
                "streamed answers cut"
            )
        ));
    }
    summary
}

/// `--stream`: answers stream, each agent's printed on stderr as it arrives (stdout keeps the
/// transcript), under a line naming the agent; an answer stopped because it broke its
/// contract says so where it stops.
pub fn streamed_to_stderr() -> Delivery {
    // The agent whose answer is being printed: a new one (or a new answer) gets a header.
    let open: Mutex<Option<String>> = Mutex::new(None);
    Delivery::watched(move |event: StreamEvent<'_>| {
        let mut open = open
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut err = std::io::stderr().lock();
        // What cannot be printed (a closed stderr) is not the run's concern.
        let _ = match event {
            StreamEvent::Text { agent, text } | StreamEvent::Thinking { agent, text } => {
                if open.as_deref() != Some(agent) {
                    if open.is_some() {
                        let _ = writeln!(err);
                    }
                    let _ = writeln!(err, "--- [{agent}] streaming ---");
                    *open = Some(agent.to_owned());
                }
                write!(err, "{text}")
            }
            StreamEvent::Stopped {
                agent,
                received,
                error,
            } => {
                *open = None;
                writeln!(
                    err,
                    "\n--- [{agent}] stopped after {received} bytes: {} ---",
                    error.validation_message
                )
            }
            StreamEvent::Cut { agent, received } => {
                *open = None;
                writeln!(
                    err,
                    "\n--- [{agent}] stream cut after {received} bytes: asked again ---"
                )
            }
            // An answer of tool calls only printed nothing: nothing to close.
            StreamEvent::Done { agent } if open.as_deref() == Some(agent) => {
                *open = None;
                writeln!(err, "\n--- [{agent}] done ---")
            }
            _ => Ok(()),
        };
        let _ = err.flush();
    })
}
