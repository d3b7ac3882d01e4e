//! OpenTelemetry for agent-contracts: the runtime's spans, contract verdicts and metrics
//! ([`agent_contracts_runtime::telemetry`], emitted through `tracing`) exported by OTLP, by
//! the OpenTelemetry GenAI semantic conventions v1.41.
//!
//! Use it through the `agent-contracts` crate's `otel` feature (`agent_contracts::otel`). One
//! call installs it when the environment asks for it:
//!
//! ```no_run
//! # fn main() -> Result<(), agent_contracts_otel::OtelError> {
//! // `None` unless OTEL_EXPORTER_OTLP_ENDPOINT (or ..._TRACES_ENDPOINT) is set. Keep the
//! // guard: dropping it (or `shutdown`) flushes what is left, before the process exits.
//! let telemetry = agent_contracts_otel::install("my-service")?;
//! // ... run agents ...
//! if let Some(telemetry) = telemetry {
//!     telemetry.shutdown()?;
//! }
//! # Ok(()) }
//! ```
//!
//! The exporters are OTLP over HTTP with protobuf bodies, configured by the standard
//! variables: `OTEL_EXPORTER_OTLP_ENDPOINT` (and the per-signal `..._TRACES_ENDPOINT`,
//! `..._METRICS_ENDPOINT`), `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_EXPORTER_OTLP_TIMEOUT`,
//! `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_METRIC_EXPORT_INTERVAL`,
//! `OTEL_SDK_DISABLED`; `OTEL_EXPORTER_OTLP_PROTOCOL` may be `http/protobuf` only.
//!
//! What is exported:
//!
//! - spans: `invoke_workflow`, `invoke_agent`, `execute_tool`, `chat` (see the runtime's
//!   `telemetry` module), and the MCP server's `tools/call`, a child of the caller's span when
//!   the request carries a `traceparent`;
//! - span events: every contract check (`agent_contracts.contract.check`, its violations a
//!   string array), and every other `tracing` event of the runtime's crates at `info` and
//!   above;
//! - metrics: `gen_ai.client.token.usage` and `gen_ai.client.operation.duration` (histograms
//!   with the conventions' bucket boundaries) from each `chat` span, and the counter
//!   `agent_contracts.contract.checks` by agent, side and verdict.
//!
//! The spans are `tracing-opentelemetry`'s `OpenTelemetryLayer` (names, kinds, statuses,
//! parents, events), over a tracer that sets the two string-array attributes `tracing`
//! cannot carry; the remote parent of an MCP call is set with `OpenTelemetrySpanExt`, the
//! W3C `traceparent` read and written by the SDK's `TraceContextPropagator`. A small layer
//! beside it feeds the meter and applies a span name recorded late (a model naming its
//! `chat` span).
//!
//! For a subscriber of your own (a log beside the export), add [`Telemetry::layer`] to it
//! instead of calling [`install`].
#![forbid(unsafe_code)]
#![warn(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod arrays;
mod layer;

use opentelemetry::metrics::MeterProvider as _;
use opentelemetry::propagation::TextMapPropagator as _;
use opentelemetry::trace::TraceContextExt as _;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::SdkTracerProvider;
use std::collections::HashMap;
use tracing_opentelemetry::OpenTelemetrySpanExt as _;
use tracing_subscriber::Layer as _;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::registry::LookupSpan;

/// The OpenTelemetry crates this one is built on, at the versions it uses: for an exporter
/// or a provider of your own ([`Telemetry::with_providers`]), or `OpenTelemetrySpanExt` on
/// spans of your own.
pub use {opentelemetry, opentelemetry_sdk, tracing_opentelemetry};

/// The instrumentation scope of the spans and metrics.
const SCOPE: &str = "agent-contracts";

/// Telemetry could not be set up, or not flushed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OtelError {
    /// An OTLP exporter could not be built from the environment.
    #[error("cannot set up the OTLP exporter: {0}")]
    Exporter(String),
    /// `OTEL_EXPORTER_OTLP_PROTOCOL` names a protocol this build does not speak.
    #[error("OTEL_EXPORTER_OTLP_PROTOCOL is `{0}`: this build exports by `http/protobuf` only")]
    Protocol(String),
    /// A global `tracing` subscriber was installed before.
    #[error("a global tracing subscriber is already installed: add `Telemetry::layer` to it")]
    AlreadyInstalled,
    /// What was recorded could not all be exported.
    #[error("cannot flush the telemetry: {0}")]
    Flush(String),
}

/// The tracer and meter providers a run's spans and metrics go to; the guard of an
/// installed export. Dropping it flushes and shuts the providers down, as
/// [`Telemetry::shutdown`] does (which reports a failure).
pub struct Telemetry {
    tracer_provider: SdkTracerProvider,
    meter_provider: SdkMeterProvider,
    shut: bool,
}

impl std::fmt::Debug for Telemetry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Telemetry").finish_non_exhaustive()
    }
}

impl Telemetry {
    /// OTLP/HTTP exporters of spans and metrics, set up from the standard `OTEL_*` variables
    /// (see the crate's documentation); the service is `default_service_name` unless
    /// `OTEL_SERVICE_NAME` or `OTEL_RESOURCE_ATTRIBUTES` names it.
    pub fn from_env(default_service_name: &str) -> Result<Self, OtelError> {
        use opentelemetry_otlp::{Protocol, WithExportConfig as _};
        if let Ok(protocol) = std::env::var("OTEL_EXPORTER_OTLP_PROTOCOL")
            && !protocol.trim().is_empty()
            && protocol.trim() != "http/protobuf"
        {
            return Err(OtelError::Protocol(protocol));
        }
        let build = || {
            // reqwest's rustls, once on, needs a process-wide crypto provider to build any client.
            #[cfg(feature = "rustls")]
            if rustls::crypto::CryptoProvider::get_default().is_none() {
                // Another thread may install one first: either way one is installed.
                let _ = rustls::crypto::ring::default_provider().install_default();
            }
            let spans = opentelemetry_otlp::SpanExporter::builder()
                .with_http()
                .with_protocol(Protocol::HttpBinary)
                .build()
                .map_err(|e| OtelError::Exporter(e.to_string()))?;
            let metrics = opentelemetry_otlp::MetricExporter::builder()
                .with_http()
                .with_protocol(Protocol::HttpBinary)
                .build()
                .map_err(|e| OtelError::Exporter(e.to_string()))?;
            Ok::<_, OtelError>((spans, metrics))
        };
        // Built on a thread of their own: their blocking HTTP client may not be made inside an
        // async runtime, and a binary's `main` often is one. They export from the SDK's own
        // threads.
        let (spans, metrics) = std::thread::scope(|scope| scope.spawn(build).join())
            .map_err(|_| OtelError::Exporter("the exporter's setup panicked".into()))??;
        let resource = resource(default_service_name);
        let tracer_provider = SdkTracerProvider::builder()
            .with_batch_exporter(spans)
            .with_resource(resource.clone())
            .build();
        let meter_provider = SdkMeterProvider::builder()
            .with_periodic_exporter(metrics)
            .with_resource(resource)
            .build();
        Ok(Self::with_providers(tracer_provider, meter_provider))
    }

    /// Spans and metrics go to these providers (an in-memory exporter's in tests, say).
    pub fn with_providers(
        tracer_provider: SdkTracerProvider,
        meter_provider: SdkMeterProvider,
    ) -> Self {
        agent_contracts_runtime::telemetry::set_trace_context_hooks(
            current_traceparent,
            continue_trace,
        );
        Self {
            tracer_provider,
            meter_provider,
            shut: false,
        }
    }

    /// The `tracing` layer that feeds these providers: the spans and events of the
    /// agent-contracts crates (their targets start with `agent_contracts`) at `info` and
    /// above. Add it to a `tracing_subscriber::registry()`.
    pub fn layer<S>(&self) -> impl tracing_subscriber::Layer<S> + Send + Sync + 'static
    where
        S: tracing::Subscriber + for<'a> LookupSpan<'a> + Send + Sync + 'static,
    {
        let tracer = arrays::ArrayTracer(self.tracer_provider.tracer(SCOPE));
        // Only the conventions' attributes: no source locations, threads, targets or busy
        // and idle times on the spans.
        let spans = tracing_opentelemetry::layer::<S>()
            .with_tracer(tracer)
            .with_location(false)
            .with_threads(false)
            .with_target(false)
            .with_tracked_inactivity(false);
        let metrics = layer::MetricsAndNames::new(&self.meter_provider.meter(SCOPE));
        let targets = Targets::new().with_target("agent_contracts", tracing::Level::INFO);
        spans.and_then(metrics).with_filter(targets)
    }

    /// Exports what was recorded so far.
    pub fn flush(&self) -> Result<(), OtelError> {
        let spans = self.tracer_provider.force_flush();
        let metrics = self.meter_provider.force_flush();
        spans
            .map_err(|e| OtelError::Flush(e.to_string()))
            .and(metrics.map_err(|e| OtelError::Flush(e.to_string())))
    }

    /// Exports what is left and shuts the providers down.
    pub fn shutdown(mut self) -> Result<(), OtelError> {
        self.shut = true;
        self.shut_down()
    }

    fn shut_down(&self) -> Result<(), OtelError> {
        let spans = self.tracer_provider.shutdown();
        let metrics = self.meter_provider.shutdown();
        spans
            .map_err(|e| OtelError::Flush(e.to_string()))
            .and(metrics.map_err(|e| OtelError::Flush(e.to_string())))
    }
}

impl Drop for Telemetry {
    fn drop(&mut self) {
        if !self.shut {
            // Nowhere to report a failure from a drop: `shutdown` reports it.
            let _ = self.shut_down();
        }
    }
}

/// Whether the environment asks for an export: `OTEL_EXPORTER_OTLP_ENDPOINT` or
/// `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is set, and `OTEL_SDK_DISABLED` is not `true`.
pub fn enabled_by_env() -> bool {
    let set = |name: &str| std::env::var(name).is_ok_and(|v| !v.trim().is_empty());
    let disabled =
        std::env::var("OTEL_SDK_DISABLED").is_ok_and(|v| v.trim().eq_ignore_ascii_case("true"));
    !disabled && (set("OTEL_EXPORTER_OTLP_ENDPOINT") || set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))
}

/// Installs the export as the global `tracing` subscriber when the environment asks for it
/// ([`enabled_by_env`]), the service named `default_service_name` unless the environment
/// names it; `None` when it does not ask. Keep the guard until the process ends.
pub fn install(default_service_name: &str) -> Result<Option<Telemetry>, OtelError> {
    if !enabled_by_env() {
        return Ok(None);
    }
    let telemetry = Telemetry::from_env(default_service_name)?;
    let subscriber = tracing_subscriber::registry().with(telemetry.layer());
    tracing::subscriber::set_global_default(subscriber).map_err(|_| OtelError::AlreadyInstalled)?;
    Ok(Some(telemetry))
}

/// The resource of the environment (`OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`), its
/// service named `default_service_name` when the environment names none.
fn resource(default_service_name: &str) -> Resource {
    let named = std::env::var("OTEL_SERVICE_NAME").is_ok_and(|v| !v.trim().is_empty())
        || std::env::var("OTEL_RESOURCE_ATTRIBUTES").is_ok_and(|v| {
            v.split(',')
                .any(|kv| kv.trim().starts_with("service.name="))
        });
    let builder = Resource::builder();
    match named {
        true => builder.build(),
        false => builder
            .with_service_name(default_service_name.to_owned())
            .build(),
    }
}

/// The W3C `traceparent` of the current OpenTelemetry context (the innermost entered span
/// the layer keeps: `tracing-opentelemetry` attaches a span's context when it is entered),
/// for [`agent_contracts_runtime::telemetry::current_traceparent`].
fn current_traceparent() -> Option<String> {
    let mut carrier: HashMap<String, String> = HashMap::new();
    TraceContextPropagator::new().inject_context(&opentelemetry::Context::current(), &mut carrier);
    carrier.remove("traceparent")
}

/// Makes `span` a child of the remote span `traceparent` names, for
/// [`agent_contracts_runtime::telemetry::continue_trace`]; text that is not a `traceparent`
/// leaves it where it was.
fn continue_trace(span: &tracing::Span, traceparent: &str) {
    let carrier = HashMap::from([("traceparent".to_owned(), traceparent.to_owned())]);
    let remote = TraceContextPropagator::new()
        .extract_with_context(&opentelemetry::Context::new(), &carrier);
    if remote.span().span_context().is_valid() {
        // Refused only for a span that started already (or that no layer of this crate
        // keeps): it stays in its own trace.
        let _ = span.set_parent(remote);
    }
}
