//! What the API says of a stored run: a row of the runs list, and a run's detail (its record,
//! history, transcript events and the question it waits on). Every stored value is
//! untrusted: a state or an event that does not parse is shown as unreadable, never trusted.

use agent_contracts_runtime::store::{HistoryEntry, RunRecord, RunStatus, StoredEvent};
use serde_json::{Value, json};

/// A status as the listings say it (`--list --json`): `completed` for a finished run, as
/// stored otherwise (`queued`, `running`, `paused`, `answered`, `failed`).
pub fn status_word(status: RunStatus) -> &'static str {
    match status {
        RunStatus::Queued => "queued",
        RunStatus::Running => "running",
        RunStatus::Paused => "paused",
        RunStatus::Answered => "answered",
        RunStatus::Finished => "completed",
        RunStatus::Failed => "failed",
    }
}

/// The status of a listing's word ([`status_word`]; `finished` is read as `completed`).
pub fn parse_status(word: &str) -> Option<RunStatus> {
    Some(match word {
        "queued" => RunStatus::Queued,
        "running" => RunStatus::Running,
        "paused" => RunStatus::Paused,
        "answered" => RunStatus::Answered,
        "completed" | "finished" => RunStatus::Finished,
        "failed" => RunStatus::Failed,
        _ => return None,
    })
}

/// The run's state as JSON, if it parses.
fn state(record: &RunRecord) -> Option<Value> {
    serde_json::from_str(&record.state).ok()
}

/// One row of the runs list: `id`, `status`, `kind` (`runtime` for a recorded runtime run,
/// `workflow` otherwise), `workflow` (a runtime run's first agent), `owner`, `takeovers`,
/// `attempts`, `created_ms`, `updated_ms`, `tokens` and `cost` (a recorded runtime run's;
/// null when the record holds none), `error`.
pub fn summary(record: &RunRecord) -> Value {
    let state = state(record);
    let runtime = state.as_ref().and_then(|s| s.get("runtime"));
    let tokens = runtime.and_then(|r| r.get("usage")).map(|usage| {
        let count = |key: &str| usage.get(key).and_then(Value::as_u64).unwrap_or(0);
        count("input_tokens").saturating_add(count("output_tokens"))
    });
    let cost = runtime.and_then(|r| r.get("cost")).and_then(Value::as_f64);
    json!({
        "id": record.run_id,
        "status": status_word(record.status),
        "kind": if runtime.is_some() { "runtime" } else { "workflow" },
        "workflow": record.workflow,
        "owner": record.owner,
        "takeovers": record.takeovers,
        "attempts": record.attempts,
        "created_ms": record.created_ms,
        "updated_ms": record.updated_ms,
        "sequence": record.sequence,
        "tokens": tokens,
        "cost": cost,
        "error": record.error,
    })
}

/// A stored event as the page reads it: `seq`, `at_ms`, and the event's JSON, or
/// `{"kind": "unreadable", "text": ...}` (its first 2 000 characters) when it does not parse.
pub fn event(event: &StoredEvent) -> Value {
    let parsed = serde_json::from_str::<Value>(&event.event)
        .ok()
        .filter(|v| v.get("kind").is_some_and(Value::is_string))
        .unwrap_or_else(|| {
            json!({"kind": "unreadable", "text": event.event.chars().take(2_000).collect::<String>()})
        });
    json!({"seq": event.seq, "at_ms": event.at_ms, "event": parsed})
}

/// A history entry: `at_ms`, `event`, `owner`, `step`.
pub fn history_entry(entry: &HistoryEntry) -> Value {
    json!({
        "at_ms": entry.at_ms,
        "event": entry.event.as_str(),
        "owner": entry.owner,
        "step": entry.step,
    })
}

/// What a paused run asks: `{prompt, agent, approval}` from its state's pending request
/// (`approval`: it waits for a decision on an output, not an answer); `None` when it asks
/// nothing or its state does not say.
pub fn question(record: &RunRecord) -> Option<Value> {
    let state = state(record)?;
    let pending = state.get("pending").filter(|p| p.is_object())?;
    Some(json!({
        "prompt": pending.get("prompt").and_then(Value::as_str).unwrap_or_default(),
        "agent": pending.get("requesting_agent").and_then(Value::as_str).unwrap_or_default(),
        "approval": pending.get("approval").is_some_and(|a| !a.is_null()),
    }))
}

/// A workflow run's conversation and its completed steps' outputs from its state, or a
/// runtime run's summary: `{conversation, steps, runtime}`, each null when the state has none.
pub fn stored_state(record: &RunRecord) -> Value {
    let Some(state) = state(record) else {
        return json!({"unreadable": true});
    };
    json!({
        "conversation": state.get("conversation"),
        "steps": state.get("upstream"),
        "runtime": state.get("runtime"),
        "input": state.get("input"),
    })
}
