//! Lossless repair: a model's answer or a parent's kwargs fixed before any retry, only where
//! the fix cannot change what the value means under its contract, each fix recorded.
//!
//! Two passes, both run only after the strict read or the contract refused the text, so the
//! valid path pays nothing:
//! - `syntax`: a tolerant reader of one JSON value that writes strict JSON, dropping
//!   trailing commas and comments, writing single-quoted strings in double quotes and quoting
//!   keys written as bare identifiers. Anything else it copies as written, and serde_json then
//!   reads the result as any JSON: a fix that would be a guess (`True`, `NaN`, a missing
//!   quote) is never made.
//! - `schema`: the parsed value walked beside its contract's schema: a string that is exactly
//!   a JSON number or boolean where the schema wants that type and no string, a string that
//!   matches exactly one of an enum's strings ignoring case, a single value where the schema
//!   wants an array and not that value's type. It descends only where the schema names one
//!   subschema (properties, items, `allOf`, a `$ref`, a nullable `anyOf`): under alternatives
//!   a fix would choose among them. The repaired value must then pass the contract, or
//!   nothing is repaired.
//!
//! Never made: rounding or truncating a number or a string, choosing among candidates,
//! filling a missing field, dropping an unknown one.

mod record;
mod schema;
mod syntax;

pub use record::{Repair, RepairKind, Repairs};

use crate::contract::Contract;
use crate::extract::extract_json_text;
use crate::kwargs::ToolCall;
use crate::limits::Limits;
use crate::retry::ErrorKind;
use serde::Serialize;
use serde_json::Value;

/// A value made acceptable by lossless repairs.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Repaired {
    /// The repaired value: an answer, or a call's merged context.
    pub value: Value,
    /// The repaired JSON text to read instead of the original: the answer's object, or the
    /// whole kwargs of a call.
    pub text: String,
    /// Every fix, in the order made: syntax first, in the text's order, then the values
    /// (object members in key order).
    pub repairs: Vec<Repair>,
}

/// Repairs a model's `answer` (the text around its JSON is already taken care of by
/// [`extract_json`](crate::extract_json)) for `contract`, or for no contract (syntax fixes
/// only). `None` when no allowed fix makes it one JSON object that passes the contract: the
/// retry error of the original answer stands.
///
/// Runs after the answer was refused; on an answer that needed no fix it returns `None`.
///
/// ```
/// use agent_contracts_contract::{Contract, ContractKind, Limits, RepairKind, Repairs, repair_answer};
///
/// let contract = Contract::from_json_str("probe", ContractKind::Output, r#"{
///     "type": "object", "required": ["status", "count"],
///     "properties": {"status": {"enum": ["success", "failed"]}, "count": {"type": "integer"}}
/// }"#).unwrap();
/// let answer = "Done: {'status': 'Success', count: \"3\",}";
/// let repaired = repair_answer(answer, Some(&contract), Repairs::default(), &Limits::default())
///     .unwrap();
/// assert_eq!(repaired.value, serde_json::json!({"status": "success", "count": 3}));
/// let kinds: Vec<RepairKind> = repaired.repairs.iter().map(|r| r.kind).collect();
/// assert!(kinds.contains(&RepairKind::EnumCase) && kinds.contains(&RepairKind::TrailingComma));
/// // A fraction where the contract wants an integer would be a guess: not repaired.
/// let answer = r#"{"status": "success", "count": "2.5"}"#;
/// assert!(repair_answer(answer, Some(&contract), Repairs::default(), &Limits::default()).is_none());
/// ```
pub fn repair_answer(
    answer: &str,
    contract: Option<&Contract>,
    repairs: Repairs,
    limits: &Limits,
) -> Option<Repaired> {
    if repairs.is_none() || answer.len() > limits.max_bytes {
        return None;
    }
    let (mut value, mut text, mut fixes) = match extract_json_text(answer, limits) {
        Ok((value, text)) => (value, text.to_owned(), Vec::new()),
        // No object parses: the same places, read by the tolerant reader.
        Err(e) if e.kind == ErrorKind::OutputNotJson => syntax_object(answer, repairs, limits)?,
        Err(_) => return None,
    };
    if let Some(contract) = contract
        && contract.check(&value, limits).is_err()
    {
        let (fixed, more) = schema::repair(contract, &value, repairs, limits, fixes.len())?;
        value = fixed;
        fixes.extend(more);
        text = serde_json::to_string(&value).ok()?;
    }
    (!fixes.is_empty()).then_some(Repaired {
        value,
        text,
        repairs: fixes,
    })
}

/// The object of an answer no strict read found, read by the tolerant reader at the places
/// [`extract_json`](crate::extract_json) looks (the answer's start, its first fence, each `{`
/// in its prose), and checked as extraction checks (a key once, within the limits).
fn syntax_object(
    answer: &str,
    repairs: Repairs,
    limits: &Limits,
) -> Option<(Value, String, Vec<Repair>)> {
    for at in crate::extract::candidates(answer) {
        let Some(fixed) = syntax::strict(&answer[at..], repairs, limits) else {
            continue;
        };
        if fixed.fixes.is_empty() {
            continue;
        }
        if let Ok((value, _)) = extract_json_text(&fixed.text, limits) {
            return Some((value, fixed.text, fixed.fixes));
        }
    }
    None
}

/// Repairs a parent's `kwargs` for the input `contract`: syntax fixes on the whole text, then
/// value fixes on the merged context (paths relative to it). `None` when no allowed fix makes
/// the call's context pass the contract. The repaired text keeps the reserved keys and the
/// parent's order; a value that was fixed is written anew, every other as the parent wrote it.
///
/// ```
/// use agent_contracts_contract::{Contract, ContractKind, Limits, Repairs, repair_kwargs};
///
/// let contract = Contract::from_json_str("probe", ContractKind::Input, r#"{
///     "type": "object", "required": ["tags"],
///     "properties": {"tags": {"type": "array", "items": {"type": "string"}}}
/// }"#).unwrap();
/// let kwargs = r#"{"task": "t", "tags": "urgent"}"#;
/// let repaired = repair_kwargs(kwargs, &contract, Repairs::default(), &Limits::default()).unwrap();
/// assert_eq!(repaired.text, r#"{"task":"t","tags":["urgent"]}"#);
/// assert_eq!(repaired.repairs[0].path, "/tags");
/// ```
pub fn repair_kwargs(
    kwargs: &str,
    contract: &Contract,
    repairs: Repairs,
    limits: &Limits,
) -> Option<Repaired> {
    if repairs.is_none() || kwargs.len() > limits.max_bytes {
        return None;
    }
    let (call, text, mut fixes) = match ToolCall::from_json_str(kwargs, limits) {
        Ok(call) => (call, kwargs.to_owned(), Vec::new()),
        Err(e) if e.kind == ErrorKind::NotJson => {
            let fixed = syntax::strict(kwargs, repairs, limits)?;
            if fixed.fixes.is_empty() || !only_space(&kwargs[fixed.end..]) {
                return None;
            }
            let call = ToolCall::from_json_str(&fixed.text, limits).ok()?;
            (call, fixed.text, fixed.fixes)
        }
        Err(_) => return None,
    };
    let context = call.context();
    let (value, text) = match contract.check(context, limits) {
        Ok(()) => (context.clone(), text),
        Err(_) => {
            let (fixed, more) = schema::repair(contract, context, repairs, limits, fixes.len())?;
            fixes.extend(more);
            let text = rewrite(&call, &fixed)?;
            (fixed, text)
        }
    };
    (!fixes.is_empty()).then_some(Repaired {
        value,
        text,
        repairs: fixes,
    })
}

fn only_space(text: &str) -> bool {
    text.bytes()
        .all(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
}

/// The kwargs of `call` with its context's values replaced by `fixed`'s where they differ:
/// the reserved keys first, then the context flat, in the parent's order.
fn rewrite(call: &ToolCall, fixed: &Value) -> Option<String> {
    use std::fmt::Write as _;
    let mut out = String::with_capacity(call.text_len() + 16);
    out.push_str("{\"task\":");
    out.push_str(&json(&call.task)?);
    if let Some(id) = &call.run_identifier {
        let _ = write!(out, ",\"run_identifier\":{}", json(id)?);
    }
    if let Some(expected) = &call.expected_outputs {
        let _ = write!(out, ",\"expected_outputs\":{}", json(expected)?);
    }
    if let Some(schema) = &call.output_contract_schema {
        let _ = write!(out, ",\"output_contract_schema\":{}", json(schema)?);
    }
    let original = call.context();
    for (key, text) in call.entries() {
        out.push(',');
        out.push_str(&json(key)?);
        out.push(':');
        match (fixed.get(key), original.get(key)) {
            (Some(new), Some(old)) if new != old => out.push_str(&json(new)?),
            _ => out.push_str(text),
        }
    }
    out.push('}');
    Some(out)
}

fn json<T: Serialize + ?Sized>(value: &T) -> Option<String> {
    serde_json::to_string(value).ok()
}

#[cfg(test)]
mod tests;
