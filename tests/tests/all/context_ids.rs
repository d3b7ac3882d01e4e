//! Context IDs: round trip, ordering, concurrency, malformed text; the runtime gives every
//! agent call one and carries it in tool results, retry errors and outputs; typed upstream
//! context records the call behind each part.

use agent_contracts::model::tool_calls;
use agent_contracts::transcript::Event;
use agent_contracts::{Message, Runtime, ScriptedModel, model::Role};
use agent_contracts::{prompt::Upstream, prompt::UpstreamContext, prompt::UpstreamError};
use agent_contracts::{
    transcript::ContextId, transcript::ContextIdError, transcript::ContextIdGenerator,
    transcript::Segment, transcript::Timestamp,
};
use agent_tests::{DiscoveryAgent, block_on};
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::sync::Arc;

const ID: &str = "run-20260119T101500Z-1a2b3c4d/discovery_agent/12/2026-01-19T10:15:00.123Z";

/// The segment a context ID error is about, if any.
fn segment(error: &ContextIdError) -> Option<Segment> {
    match error {
        ContextIdError::BadSegment { segment, .. } => Some(*segment),
        _ => None,
    }
}

fn id(text: &str) -> ContextId {
    text.parse().unwrap_or_else(|e| panic!("{text}: {e}"))
}

// ---- round trip ---------------------------------------------------------------------------

#[test]
fn text_round_trips_unchanged() {
    let parsed = id(ID);
    assert_eq!(parsed.run_id(), "run-20260119T101500Z-1a2b3c4d");
    assert_eq!(parsed.agent_type(), "discovery_agent");
    assert_eq!(parsed.sequence(), 12);
    assert_eq!(parsed.timestamp().to_string(), "2026-01-19T10:15:00.123Z");
    assert_eq!(parsed.to_string(), ID);
}

#[test]
fn generated_ids_round_trip_through_text_and_serde() {
    let ids = ContextIdGenerator::default();
    for agent in ["main_agent", "discovery_agent", "a", "Agent.v2-beta"] {
        let generated = ids.next(agent).unwrap();
        assert_eq!(generated.run_id(), ids.run_id());
        assert_eq!(generated.agent_type(), agent);
        assert_eq!(generated.sequence(), 1);
        assert_eq!(id(&generated.to_string()), generated);
        let json = serde_json::to_value(&generated).unwrap();
        assert_eq!(json, Value::String(generated.to_string()));
        assert_eq!(
            serde_json::from_value::<ContextId>(json).unwrap(),
            generated
        );
    }
}

#[test]
fn timestamps_are_iso_8601_utc_with_milliseconds() {
    let now = ContextIdGenerator::new("run-1")
        .unwrap()
        .next("a")
        .unwrap()
        .timestamp();
    let text = now.to_string();
    assert_eq!(text.len(), 24, "{text}");
    assert!(text.ends_with('Z') && text.as_bytes()[10] == b'T', "{text}");
    assert_eq!(text.parse::<Timestamp>().unwrap(), now);
    for text in ["1970-01-01T00:00:00.000Z", "2024-02-29T00:00:00.000Z"] {
        let parsed: Timestamp = text.parse().unwrap();
        assert_eq!(parsed.to_string(), text);
        assert_eq!(
            serde_json::to_string(&parsed).unwrap(),
            format!("\"{text}\"")
        );
    }
    let bad = "2024-02-30T00:00:00.000Z".parse::<Timestamp>().unwrap_err();
    assert_eq!(segment(&bad), Some(Segment::Timestamp));
}

// ---- ordering -----------------------------------------------------------------------------

#[test]
fn ids_order_by_run_agent_then_sequence_numerically() {
    let ids = ContextIdGenerator::new("run-1").unwrap();
    let issued: Vec<ContextId> = (0..12)
        .map(|_| ids.next("selector_agent").unwrap())
        .collect();
    // 10 sorts after 9 (numbers, not text), and issue order is sort order.
    let mut shuffled = issued.clone();
    shuffled.reverse();
    shuffled.swap(0, 5);
    shuffled.sort();
    assert_eq!(shuffled, issued);
    assert!(issued[8] < issued[9]);
    assert!(
        issued[8].to_string() > issued[9].to_string(),
        "text order differs"
    );

    let a = id("run-1/a_agent/5/2026-01-01T00:00:00.000Z");
    let b = id("run-1/b_agent/1/2020-01-01T00:00:00.000Z");
    let later_run = id("run-2/a_agent/1/2020-01-01T00:00:00.000Z");
    assert!(a < b && b < later_run);
    let same_seq_later = id("run-1/a_agent/5/2026-01-01T00:00:00.001Z");
    assert!(a < same_seq_later);
}

#[test]
fn each_agent_type_counts_on_its_own() {
    let ids = ContextIdGenerator::new("run-1").unwrap();
    let seq = |agent| ids.next(agent).unwrap().sequence();
    assert_eq!(
        [seq("a"), seq("b"), seq("a"), seq("a"), seq("b")],
        [1, 1, 2, 3, 2]
    );
    assert_eq!(
        (ids.issued("a"), ids.issued("b"), ids.issued("c")),
        (3, 2, 0)
    );
}

// ---- concurrency --------------------------------------------------------------------------

#[test]
fn eight_threads_get_unique_dense_sequences() {
    const THREADS: u64 = 8;
    const PER_THREAD: u64 = 500;
    let ids = ContextIdGenerator::new("run-concurrent").unwrap();
    let per_thread: Vec<Vec<ContextId>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..THREADS)
            .map(|t| {
                let ids = &ids;
                scope.spawn(move || {
                    (0..PER_THREAD)
                        .flat_map(|i| {
                            // Every thread also takes numbers of a second agent type.
                            let mut out = vec![ids.next("worker_agent").unwrap()];
                            if (i + t) % 2 == 0 {
                                out.push(ids.next("other_agent").unwrap());
                            }
                            out
                        })
                        .collect()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let all: Vec<&ContextId> = per_thread.iter().flatten().collect();
    for agent in ["worker_agent", "other_agent"] {
        let mut sequences: Vec<u64> = all
            .iter()
            .filter(|id| id.agent_type() == agent)
            .map(|id| id.sequence())
            .collect();
        sequences.sort_unstable();
        let n = sequences.len() as u64;
        assert_eq!(
            sequences,
            (1..=n).collect::<Vec<_>>(),
            "{agent}: unique, no gaps"
        );
        assert_eq!(ids.issued(agent), n);
    }
    assert_eq!(ids.issued("worker_agent"), THREADS * PER_THREAD);
    // Within one thread, numbers only grow.
    for ids in &per_thread {
        let worker: Vec<u64> = ids
            .iter()
            .filter(|id| id.agent_type() == "worker_agent")
            .map(ContextId::sequence)
            .collect();
        assert!(worker.windows(2).all(|w| w[0] < w[1]));
    }
    let texts: BTreeSet<String> = all.iter().map(ToString::to_string).collect();
    assert_eq!(texts.len(), all.len());
}

#[test]
fn generators_are_shared_across_threads() {
    fn shareable<T: Send + Sync>() {}
    shareable::<ContextIdGenerator>();
    shareable::<ContextId>();
    shareable::<UpstreamContext>();
}

// ---- bad input ----------------------------------------------------------------------------

#[test]
fn each_bad_segment_is_named() {
    let ts = "2026-01-19T10:15:00.123Z";
    let cases: Vec<(String, Segment)> = vec![
        (format!("run 1/a/1/{ts}"), Segment::WorkflowRunId),
        (format!("run%1/a/1/{ts}"), Segment::WorkflowRunId),
        (
            format!("{}/a/1/{ts}", "r".repeat(129)),
            Segment::WorkflowRunId,
        ),
        (format!("run-1/agent type/1/{ts}"), Segment::AgentType),
        (format!("run-1/agent\u{e9}/1/{ts}"), Segment::AgentType),
        (format!("run-1//1/{ts}"), Segment::AgentType),
        (format!("run-1/a//{ts}"), Segment::SequenceNumber),
        (format!("run-1/a/0/{ts}"), Segment::SequenceNumber),
        (format!("run-1/a/007/{ts}"), Segment::SequenceNumber),
        (format!("run-1/a/-1/{ts}"), Segment::SequenceNumber),
        (format!("run-1/a/+1/{ts}"), Segment::SequenceNumber),
        (format!("run-1/a/1.5/{ts}"), Segment::SequenceNumber),
        (format!("run-1/a/twelve/{ts}"), Segment::SequenceNumber),
        (
            format!("run-1/a/18446744073709551616/{ts}"),
            Segment::SequenceNumber,
        ),
        ("run-1/a/1/".to_owned(), Segment::Timestamp),
        ("run-1/a/1/2026-01-19".to_owned(), Segment::Timestamp),
        (
            "run-1/a/1/2026-01-19T10:15:00Z".to_owned(),
            Segment::Timestamp,
        ),
        (
            "run-1/a/1/2026-01-19T10:15:00.123".to_owned(),
            Segment::Timestamp,
        ),
        (
            "run-1/a/1/2026-01-19T10:15:00.123+00:00".to_owned(),
            Segment::Timestamp,
        ),
        (
            "run-1/a/1/2026-01-19 10:15:00.123Z".to_owned(),
            Segment::Timestamp,
        ),
        (
            "run-1/a/1/2026-13-19T10:15:00.123Z".to_owned(),
            Segment::Timestamp,
        ),
        (
            "run-1/a/1/2026-00-19T10:15:00.123Z".to_owned(),
            Segment::Timestamp,
        ),
        (
            "run-1/a/1/2023-02-29T10:15:00.123Z".to_owned(),
            Segment::Timestamp,
        ),
        (
            "run-1/a/1/1900-02-29T10:15:00.123Z".to_owned(),
            Segment::Timestamp,
        ),
        (
            "run-1/a/1/2026-04-31T10:15:00.123Z".to_owned(),
            Segment::Timestamp,
        ),
        (
            "run-1/a/1/2026-01-19T24:00:00.000Z".to_owned(),
            Segment::Timestamp,
        ),
        (
            "run-1/a/1/2026-01-19T10:60:00.000Z".to_owned(),
            Segment::Timestamp,
        ),
        (
            "run-1/a/1/2026-01-19T10:15:60.000Z".to_owned(),
            Segment::Timestamp,
        ),
        (
            "run-1/a/1/２026-01-19T10:15:00.123Z".to_owned(),
            Segment::Timestamp,
        ),
    ];
    for (text, at) in cases {
        let error = text.parse::<ContextId>().unwrap_err();
        assert_eq!(segment(&error), Some(at), "{text}: {error}");
        let message = error.to_string();
        assert!(
            message.starts_with(&format!("bad {at} segment `")),
            "{text}: {message}"
        );
    }
}

#[test]
fn the_error_carries_the_bad_text() {
    let error = "run-1/a/007/2026-01-19T10:15:00.123Z"
        .parse::<ContextId>()
        .unwrap_err();
    let ContextIdError::BadSegment { segment, text, .. } = &error else {
        panic!("{error:?}");
    };
    assert_eq!((*segment, text.as_str()), (Segment::SequenceNumber, "007"));
    assert_eq!(
        error.to_string(),
        "bad sequenceNumber segment `007` in context id: it must be a positive integer without \
         leading zeros (sequence numbers start at 1)"
    );
    // Long bad text is cut in the message.
    let long = format!("run-1/{}/1/2026-01-19T10:15:00.123Z", "x".repeat(10_000));
    let message = long.parse::<ContextId>().unwrap_err().to_string();
    assert!(message.len() < 400, "{}", message.len());
}

#[test]
fn empty_extra_slashes_and_too_few_segments() {
    assert_eq!("".parse::<ContextId>().unwrap_err(), ContextIdError::Empty);
    assert_eq!(
        "".parse::<ContextId>().unwrap_err().to_string(),
        "context id is empty"
    );
    for (text, found) in [
        ("run-1", 1),
        ("run-1/a", 2),
        ("run-1/a/1", 3),
        ("/", 2),
        ("///", 4),
        ("run-1/a/1/2026-01-19T10:15:00.123Z/", 5),
        ("/run-1/a/1/2026-01-19T10:15:00.123Z", 5),
        ("run-1//a/1/2026-01-19T10:15:00.123Z", 5),
        ("run-1/a/1/2026-01-19T10:15:00.123Z/extra", 5),
        ("a/b/c/d/e/f/g/h", 8),
    ] {
        let error = text.parse::<ContextId>().unwrap_err();
        if found == 4 {
            // Four empty segments: the first is named.
            assert_eq!(segment(&error), Some(Segment::WorkflowRunId), "{text}");
            continue;
        }
        assert_eq!(
            error,
            ContextIdError::SegmentCount {
                found,
                text: text.to_owned()
            },
            "{text}"
        );
        assert!(error.to_string().contains("expected 4"), "{error}");
    }
}

#[test]
fn serde_rejects_bad_ids_with_the_segment() {
    let error = serde_json::from_value::<ContextId>(json!("run-1/a/x/2026-01-19T10:15:00.123Z"))
        .unwrap_err();
    assert!(
        error.to_string().contains("bad sequenceNumber segment `x`"),
        "{error}"
    );
    assert!(serde_json::from_value::<ContextId>(json!(12)).is_err());
}

#[test]
fn generators_reject_bad_names_without_using_a_number() {
    assert_eq!(
        segment(&ContextIdGenerator::new("run/1").unwrap_err()),
        Some(Segment::WorkflowRunId)
    );
    assert!(ContextIdGenerator::new("").is_err());
    let ids = ContextIdGenerator::new("run-1").unwrap();
    assert_eq!(
        segment(&ids.next("main agent").unwrap_err()),
        Some(Segment::AgentType)
    );
    assert_eq!(
        segment(&ids.next("a/b").unwrap_err()),
        Some(Segment::AgentType)
    );
    assert_eq!(ids.issued("main agent"), 0);
    assert_eq!(ids.next("main_agent").unwrap().sequence(), 1);
}

#[test]
fn fresh_runs_get_distinct_valid_ids() {
    let runs: BTreeSet<String> = (0..100)
        .map(|_| ContextIdGenerator::default().run_id().to_owned())
        .collect();
    assert_eq!(runs.len(), 100);
    for run in &runs {
        assert!(run.starts_with("run-"), "{run}");
        assert!(ContextIdGenerator::new(run.as_str()).is_ok(), "{run}");
    }
}

// ---- the runtime --------------------------------------------------------------------------

const SCAN: &str = r#"{"task": "Scan", "target_url": "https://a.example"}"#;
const PAGE: &str = r#"{"page_title": "A", "discovered_elements": []}"#;

fn tool_results(messages: &[Message]) -> Vec<Value> {
    messages
        .iter()
        .filter(|m| m.role == Role::Tool)
        .map(|m| serde_json::from_str(&m.content).unwrap())
        .collect()
}

fn keys(value: &Value) -> Vec<&str> {
    value
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect()
}

#[test]
fn every_call_of_a_run_gets_an_id_and_results_carry_it() {
    let model = Arc::new(
        ScriptedModel::default()
            .script(
                "main_agent",
                [
                    tool_calls([("run_discovery_agent", r#"{"task": "Scan"}"#)]),
                    tool_calls([("run_discovery_agent", SCAN), ("run_nothing", "{}")]),
                    Message::assistant("done"),
                ],
            )
            .script("discovery_agent", [Message::assistant(PAGE)]),
    );
    let ids = Arc::new(ContextIdGenerator::new("run-7").unwrap());
    let runtime = Runtime::new(model.clone()).with_context_ids(ids.clone());
    let tools: [&dyn agent_contracts::DynAgent; 1] = [&DiscoveryAgent];
    let outcome = block_on(runtime.run_loop("main_agent", "system", "user", &tools)).unwrap();

    // The loop is a call too.
    assert_eq!(outcome.context_id.run_id(), "run-7");
    assert_eq!(outcome.context_id.agent_type(), "main_agent");
    assert_eq!(outcome.context_id.sequence(), 1);

    let results = tool_results(&outcome.messages);
    assert_eq!(results.len(), 3);
    // A call that broke the input contract: the retry error's keys and the id (sorted, as
    // a `Value` holds them).
    assert_eq!(
        keys(&results[0]),
        [
            "context_id",
            "error",
            "errors",
            "hint",
            "missing_fields",
            "path",
            "provided_fields",
            "required_fields",
            "success",
            "validation_message",
        ]
    );
    let rejected = id(results[0]["context_id"].as_str().unwrap());
    assert_eq!(
        (rejected.agent_type(), rejected.sequence()),
        ("discovery_agent", 1)
    );
    // The successful call: a new number (keys sorted, as the parsed `Value` holds them).
    assert_eq!(
        keys(&results[1]),
        ["agent", "context_id", "output", "success"]
    );
    let called = id(results[1]["context_id"].as_str().unwrap());
    assert_eq!(
        (called.run_id(), called.agent_type(), called.sequence()),
        ("run-7", "discovery_agent", 2)
    );
    assert_eq!(results[1]["output"]["page_title"], "A");
    // An unknown tool has no callee: the error names the caller's call.
    assert_eq!(results[2]["error"], "Unknown tool");
    assert_eq!(
        id(results[2]["context_id"].as_str().unwrap()),
        outcome.context_id
    );

    // The transcript records each call with its id.
    let calls: Vec<(String, ContextId, u32)> = runtime
        .transcript()
        .events()
        .into_iter()
        .filter_map(|e| match e {
            Event::AgentCall {
                agent,
                context_id,
                attempt,
            } => Some((agent, context_id, attempt)),
            _ => None,
        })
        .collect();
    assert_eq!(
        calls,
        [
            ("main_agent".to_owned(), outcome.context_id.clone(), 1),
            ("discovery_agent".to_owned(), called.clone(), 1)
        ]
    );
    let text = runtime.transcript().to_string();
    assert!(text.contains(&format!(
        "=== [discovery_agent] agent call {called} (attempt 1) ==="
    )));
    assert!(
        text.contains("\"context_id\": \"run-7/discovery_agent/1/"),
        "{text}"
    );
    assert_eq!(ids.issued("discovery_agent"), 2);
}

#[test]
fn output_retry_errors_carry_the_call_id_after_their_keys() {
    let model = Arc::new(ScriptedModel::default().script(
        "discovery_agent",
        [
            Message::assistant(r#"{"page_title": 5, "discovered_elements": []}"#),
            Message::assistant(PAGE),
        ],
    ));
    let ids = Arc::new(ContextIdGenerator::new("run-9").unwrap());
    let runtime = Runtime::new(model.clone()).with_context_ids(ids);
    let output =
        block_on(runtime.call_sub_agent(&DiscoveryAgent, SCAN, Default::default())).unwrap();
    assert_eq!(output.context_id.agent_type(), "discovery_agent");
    assert_eq!(output.context_id.run_id(), "run-9");
    assert_eq!(output.attempt, 2);
    let retry = runtime
        .transcript()
        .events()
        .into_iter()
        .find_map(|e| match e {
            Event::OutputRetry { error, .. } => Some(error),
            _ => None,
        })
        .unwrap();
    assert_eq!(keys(&retry).first(), Some(&"context_id"));
    assert_eq!(keys(&retry)[2], "errors");
    assert_eq!(retry["context_id"], output.context_id.to_string());
    // The message the sub-agent got holds the same JSON.
    let requests = model.requests_of("discovery_agent");
    let content = &requests[1].messages[3].content;
    assert!(
        content.contains(&format!("\"context_id\": \"{}\"", output.context_id)),
        "{content}"
    );
}

#[test]
fn the_plain_contract_retry_error_keeps_its_nine_keys() {
    let error = agent_contracts::DynAgent::prepare(
        &DiscoveryAgent,
        r#"{"task": "Scan"}"#,
        &Default::default(),
    )
    .unwrap_err();
    let agent_contracts::contract::PrepareError::Retry(error) = error else {
        panic!("expected a retry error");
    };
    assert_eq!(keys(&error.to_json()).len(), 9);
    let traced = serde_json::to_value(error.with_context_id(&id(ID))).unwrap_or_default();
    assert_eq!(keys(&traced).len(), 10);
    assert_eq!(traced["context_id"], ID);
}

// ---- typed upstream context ---------------------------------------------------------------

#[derive(Debug, Deserialize, PartialEq)]
struct Page {
    page_title: String,
}

#[derive(Debug, serde::Serialize, Deserialize, PartialEq)]
struct Selectors {
    strategy: String,
}

#[test]
fn upstream_parts_are_typed_and_name_their_call() {
    let ids = ContextIdGenerator::new("run-1").unwrap();
    let discovery = ids.next("discovery_agent").unwrap();
    let selector = ids.next("selector_agent").unwrap();
    let mut upstream = UpstreamContext::default();
    upstream.push(
        "discovery_agent",
        discovery.clone(),
        json!({"page_title": "Login"}),
    );
    let selectors = Selectors {
        strategy: "id-first".into(),
    };
    upstream.push(
        "selector_agent",
        selector.clone(),
        serde_json::to_value(&selectors).unwrap(),
    );

    let page: Upstream<Page> = upstream.get("discovery_agent").unwrap();
    assert_eq!(page.producer, "discovery_agent");
    assert_eq!(page.context_id, discovery);
    assert_eq!(page.value.page_title, "Login");
    let selectors: Upstream<Selectors> = upstream.get("selector_agent").unwrap();
    assert_eq!(selectors.value.strategy, "id-first");
    let chain: Vec<&ContextId> = upstream.entries().iter().map(|p| &p.context_id).collect();
    assert_eq!(chain, [&discovery, &selector]);

    // Missing, or of another shape: the error names the producer (and the call).
    let missing = upstream.get::<Page>("accessibility_agent").unwrap_err();
    assert!(
        matches!(&missing, UpstreamError::Missing { producer } if producer == "accessibility_agent")
    );
    let wrong = upstream.get::<Page>("selector_agent").unwrap_err();
    let message = wrong.to_string();
    assert!(
        message.starts_with(
            "upstream output of `selector_agent` (context id `run-1/selector_agent/1/"
        ),
        "{message}"
    );
}

#[test]
fn the_context_map_has_one_output_key_per_producer_latest_wins() {
    let ids = ContextIdGenerator::new("run-1").unwrap();
    let mut upstream = UpstreamContext::default();
    upstream
        .push(
            "discovery_agent",
            ids.next("discovery_agent").unwrap(),
            json!({"page_title": "Old"}),
        )
        .push(
            "selector_agent",
            ids.next("selector_agent").unwrap(),
            json!({"strategy": "s"}),
        )
        .push(
            "discovery_agent",
            ids.next("discovery_agent").unwrap(),
            json!({"page_title": "New"}),
        );
    let map = upstream.to_context_map();
    assert_eq!(
        Value::Object(map),
        json!({"discovery_agent_output": {"page_title": "New"}, "selector_agent_output": {"strategy": "s"}})
    );
    assert_eq!(
        upstream
            .get::<Page>("discovery_agent")
            .unwrap()
            .context_id
            .sequence(),
        2
    );
    let all: Vec<Upstream<Page>> = upstream.all("discovery_agent").unwrap();
    assert_eq!(
        all.iter()
            .map(|p| p.value.page_title.as_str())
            .collect::<Vec<_>>(),
        ["Old", "New"]
    );
    assert_eq!(upstream.entries().len(), 3);

    // It serializes as the list of parts, and back.
    let json = serde_json::to_value(&upstream).unwrap();
    assert_eq!(json[0]["producer"], "discovery_agent");
    assert_eq!(
        json[0]["context_id"],
        upstream.entries()[0].context_id.to_string()
    );
    assert_eq!(
        serde_json::from_value::<UpstreamContext>(json).unwrap(),
        upstream
    );
}

#[test]
fn the_context_map_goes_through_the_contract_path() {
    let ids = ContextIdGenerator::new("run-1").unwrap();
    let mut upstream = UpstreamContext::default();
    upstream.push(
        "scout",
        ids.next("scout").unwrap(),
        json!("https://a.example"),
    );
    let mut context = upstream.to_context_map();
    // The consumer's contract names the keys it needs; the caller maps parts onto them.
    context.insert("target_url".into(), context["scout_output"].clone());
    context.remove("scout_output");
    let call = agent_contracts::contract::ToolCall::new("Scan", context);
    let prepared = agent_contracts::DynAgent::prepare_call(
        &DiscoveryAgent,
        call,
        &agent_contracts::Limits::default(),
    )
    .unwrap();
    assert!(prepared.user_prompt.contains("https://a.example"));
}
