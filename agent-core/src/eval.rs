//! Evals: datasets of cases run through an agent on a model, each answer's typed output
//! asserted on. A dataset is JSON Lines, one case a line:
//! `{"name": ..., "kwargs": {...}, "expect": [assertions]}`, or `"expect_retry": [fields]`
//! beside an empty `expect` for a case whose input must be refused.
//!
//! The code generator checks a dataset against the agent's contracts when the crate builds
//! (the derive's `evals = "..."`, the build script's `Builder::evals`, `agent-contract check
//! --evals`): a path the output contract cannot produce, or a value its schema refuses, never
//! reaches a run. Here the cases run: [`run_case`] gives each run a [`Verdict`] (`pass`,
//! `fail` with the failed assertions, `error` when the agent failed), and [`CaseModel`]
//! records the model's answers keyed by their prompt's hash, or replays them offline and says
//! which prompts changed since the recording.
//!
//! ```
//! use agent_contracts::eval::{Case, CaseModel, Verdict, case_runtime, run_case};
//! use agent_contracts::{Agent, Message, ScriptedModel};
//! use std::sync::Arc;
//!
//! /// Writes crawl plans.
//! #[derive(Agent)]
//! #[agent(
//!     name = "plan_generator_agent",
//!     input = "../schemas/plan_generator_agent/input.schema.json",
//!     output = "../schemas/plan_generator_agent/output.schema.json",
//! )]
//! struct PlanGeneratorAgent;
//!
//! let case = Case::parse(r#"{"name": "login", "kwargs": {"task": "Plan it",
//!     "target_url": "https://myapp.com/login", "task_name": "login", "collected_information": [
//!     {"agent_name": "discovery_agent", "description": "Found the form",
//!      "output": {"page_title": "Login", "discovered_elements": []}},
//!     {"agent_name": "selector_agent", "description": "Chose the selectors",
//!      "output": {"selectors": {}, "strategy": "id-first"}}]},
//!     "expect": [{"path": "/status", "equals": "success"}, {"path": "/plan_file_path", "matches": "^plans/"}]}"#)?;
//! let model = ScriptedModel::default().script("plan_generator_agent", [Message::assistant(
//!     r#"{"plan_file_path": "plans/login.md", "status": "partial", "agent_response_content": "..."}"#,
//! )]);
//! let model = CaseModel::live(Arc::new(model), "plan_generator_agent/login", 1);
//! let runtime = case_runtime(model);
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let run = run_case(&runtime, &PlanGeneratorAgent, &case, None).await;
//! assert_eq!(run.verdict, Verdict::Fail);
//! assert_eq!(run.failures[0].path, "/status");
//! assert_eq!(run.failures[0].seen, Some("partial".into()));
//! # });
//! # Ok::<(), String>(())
//! ```

use crate::chat::{ChatModel, ChatRequest, ChatResponse, Message, ModelError, Usage};
use crate::engine::{CallOptions, Runtime};
use crate::error::Error;
use agent_contracts_contract::{Contract, ContractKind, DynAgent, Limits, extract_json};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

/// Most cases [`Case::parse_dataset`] reads from one dataset.
pub const MAX_CASES: usize = 100_000;

/// One case of a dataset.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    /// Its name, unique in its dataset.
    pub name: String,
    /// The tool call's arguments.
    pub kwargs: Map<String, Value>,
    /// What the output must hold.
    pub expect: Vec<Assertion>,
    /// For a case whose input must be refused: the missing or invalid input fields.
    pub expect_retry: Option<Vec<String>>,
    /// Its line in the dataset, from 1 (0 when parsed alone).
    pub line: usize,
}

/// One assertion on an output.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq)]
pub enum Assertion {
    /// A check of the value at a JSON pointer.
    Check {
        /// The JSON pointer into the output.
        path: String,
        /// The check.
        check: Check,
    },
    /// A rubric a judge model decides on.
    Judge {
        /// What the judge reads.
        rubric: String,
    },
}

/// What an assertion checks of the value at its path.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq)]
pub enum Check {
    /// The value is this one.
    Equals(Value),
    /// The value is a string matching this regular expression.
    Matches(Pattern),
    /// The value is one of these.
    OneOf(Vec<Value>),
    /// The value (a number; an array's or a string's length) lies within the bounds.
    Range {
        /// The least allowed, if any.
        min: Option<f64>,
        /// The most allowed, if any.
        max: Option<f64>,
    },
    /// The value, an array, has an item equal to this; or, a string, holds this substring.
    Contains(Value),
    /// The path is in the output (`true`) or not (`false`).
    Exists(bool),
}

impl Check {
    /// Its name in a dataset (`min`/`max` for a range, by the bounds it has).
    pub fn name(&self) -> &'static str {
        match self {
            Self::Equals(_) => "equals",
            Self::Matches(_) => "matches",
            Self::OneOf(_) => "one_of",
            Self::Range {
                min: Some(_),
                max: Some(_),
            } => "min/max",
            Self::Range { min: Some(_), .. } => "min",
            Self::Range { .. } => "max",
            Self::Contains(_) => "contains",
            Self::Exists(_) => "exists",
        }
    }

    /// What it expects, as JSON.
    pub fn expected(&self) -> Value {
        match self {
            Self::Equals(v) | Self::Contains(v) => v.clone(),
            Self::Matches(p) => Value::String(p.as_str().to_owned()),
            Self::OneOf(values) => Value::Array(values.clone()),
            Self::Range { min, max } => {
                let mut map = Map::new();
                if let Some(min) = min {
                    map.insert("min".into(), (*min).into());
                }
                if let Some(max) = max {
                    map.insert("max".into(), (*max).into());
                }
                Value::Object(map)
            }
            Self::Exists(e) => Value::Bool(*e),
        }
    }

    /// Whether `seen` (the value at the path, `None` when absent) passes.
    fn holds(&self, seen: Option<&Value>) -> bool {
        let Some(seen) = seen else {
            return matches!(self, Self::Exists(false));
        };
        match self {
            Self::Equals(v) => same(seen, v),
            Self::Matches(pattern) => seen.as_str().is_some_and(|s| pattern.regex.is_match(s)),
            Self::OneOf(values) => values.iter().any(|v| same(seen, v)),
            Self::Range { min, max } => {
                let n = match seen {
                    Value::Number(n) => n.as_f64(),
                    Value::Array(a) => Some(a.len() as f64),
                    Value::String(s) => Some(s.chars().count() as f64),
                    _ => None,
                };
                n.is_some_and(|n| min.is_none_or(|m| n >= m) && max.is_none_or(|m| n <= m))
            }
            Self::Contains(v) => match (seen, v) {
                (Value::Array(items), _) => items.iter().any(|item| same(item, v)),
                (Value::String(s), Value::String(part)) => s.contains(part.as_str()),
                _ => false,
            },
            Self::Exists(e) => *e,
        }
    }
}

/// The regular expression of a `matches` check, compiled once when its case is read (a
/// dataset of a thousand cases must not compile it a thousand times).
#[derive(Clone)]
pub struct Pattern {
    regex: regex::Regex,
}

impl Pattern {
    /// `pattern` compiled, or why it is not a regular expression.
    pub fn new(pattern: &str) -> Result<Self, String> {
        regex::Regex::new(pattern)
            .map(|regex| Self { regex })
            .map_err(|e| e.to_string())
    }

    /// The expression as written.
    pub fn as_str(&self) -> &str {
        self.regex.as_str()
    }
}

impl PartialEq for Pattern {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl std::fmt::Debug for Pattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Pattern").field(&self.as_str()).finish()
    }
}

/// Equal as JSON values, numbers by value (`5` equals `5.0`).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x == y || x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

impl Case {
    /// One case from its JSON line. The code generator's check says more (it knows the
    /// contracts); this only reads the shape.
    pub fn parse(line: &str) -> Result<Self, String> {
        let value: Value = serde_json::from_str(line).map_err(|e| format!("not JSON: {e}"))?;
        let Value::Object(mut map) = value else {
            return Err("a case is a JSON object".into());
        };
        let name = match map.remove("name") {
            Some(Value::String(name)) if !name.is_empty() => name,
            _ => return Err("a case needs a `name`, a non-empty string".into()),
        };
        let kwargs = match map.remove("kwargs") {
            Some(Value::Object(kwargs)) => kwargs,
            _ => return Err(format!("case `{name}`: `kwargs` is a JSON object")),
        };
        let expect_retry = match map.remove("expect_retry") {
            None => None,
            Some(Value::Array(fields)) => Some(
                fields
                    .into_iter()
                    .map(|f| match f {
                        Value::String(f) => Ok(f),
                        _ => Err(format!("case `{name}`: `expect_retry` lists strings")),
                    })
                    .collect::<Result<_, _>>()?,
            ),
            Some(_) => return Err(format!("case `{name}`: `expect_retry` is an array")),
        };
        let expect = match map.remove("expect") {
            Some(Value::Array(items)) => items
                .iter()
                .map(Assertion::parse)
                .collect::<Result<_, _>>()
                .map_err(|e| format!("case `{name}`: {e}"))?,
            _ => return Err(format!("case `{name}`: `expect` is an array")),
        };
        if let Some(key) = map.keys().next() {
            return Err(format!("case `{name}`: unknown key `{key}`"));
        }
        Ok(Self {
            name,
            kwargs,
            expect,
            expect_retry,
            line: 0,
        })
    }

    /// Every case of a dataset's text (blank lines skipped), each with its line; the error
    /// names the line. Case names are unique.
    pub fn parse_dataset(text: &str) -> Result<Vec<Self>, String> {
        let mut cases: Vec<Self> = Vec::new();
        for (index, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            if cases.len() == MAX_CASES {
                return Err(format!("a dataset holds at most {MAX_CASES} cases"));
            }
            let mut case = Self::parse(line).map_err(|e| format!("line {}: {e}", index + 1))?;
            case.line = index + 1;
            if cases.iter().any(|c| c.name == case.name) {
                return Err(format!(
                    "line {}: a case named `{}` is already in the dataset",
                    index + 1,
                    case.name
                ));
            }
            cases.push(case);
        }
        Ok(cases)
    }

    /// The kwargs as the tool call's text.
    pub fn kwargs_text(&self) -> String {
        Value::Object(self.kwargs.clone()).to_string()
    }
}

impl Assertion {
    /// One assertion from its JSON.
    pub fn parse(value: &Value) -> Result<Self, String> {
        let Some(map) = value.as_object() else {
            return Err("an assertion is a JSON object".into());
        };
        if let Some(rubric) = map.get("judge") {
            return match rubric.as_str() {
                Some(rubric) if map.len() == 1 => Ok(Self::Judge {
                    rubric: rubric.to_owned(),
                }),
                _ => Err("a judge assertion is `{\"judge\": \"a rubric\"}`".into()),
            };
        }
        let path = map
            .get("path")
            .and_then(Value::as_str)
            .filter(|p| p.is_empty() || p.starts_with('/'))
            .ok_or("an assertion needs a `path`, a JSON pointer")?
            .to_owned();
        let number = |key: &str| -> Result<Option<f64>, String> {
            match map.get(key) {
                None => Ok(None),
                Some(v) => v
                    .as_f64()
                    .map(Some)
                    .ok_or_else(|| format!("`{key}` is a number")),
            }
        };
        let mut checks = Vec::new();
        for (key, v) in map {
            let check = match key.as_str() {
                "path" | "min" | "max" => continue,
                "equals" => Check::Equals(v.clone()),
                "matches" => {
                    let pattern = v.as_str().ok_or("`matches` is a string")?;
                    Check::Matches(Pattern::new(pattern).map_err(|e| format!("`matches`: {e}"))?)
                }
                "one_of" => Check::OneOf(v.as_array().ok_or("`one_of` is an array")?.clone()),
                "contains" => Check::Contains(v.clone()),
                "exists" => Check::Exists(v.as_bool().ok_or("`exists` is a boolean")?),
                other => return Err(format!("unknown key `{other}` in an assertion")),
            };
            checks.push(check);
        }
        let (min, max) = (number("min")?, number("max")?);
        if min.is_some() || max.is_some() {
            checks.push(Check::Range { min, max });
        }
        match <[Check; 1]>::try_from(checks) {
            Ok([check]) => Ok(Self::Check { path, check }),
            Err(checks) => Err(format!(
                "an assertion makes one check, this one makes {}",
                checks.len()
            )),
        }
    }
}

/// An assertion that did not hold.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AssertionFailure {
    /// Its JSON pointer (`""` for a judge or a refusal expected).
    pub path: String,
    /// The check (`equals`, ..., `judge`, `expect_retry`).
    pub check: String,
    /// What it expected.
    pub expected: Value,
    /// The value seen there, `None` when the path is not in the output.
    pub seen: Option<Value>,
}

/// The assertions of `expect` (judges aside) that `output` breaks.
pub fn check_output(expect: &[Assertion], output: &Value) -> Vec<AssertionFailure> {
    expect
        .iter()
        .filter_map(|assertion| match assertion {
            Assertion::Check { path, check } => {
                let seen = output.pointer(path);
                (!check.holds(seen)).then(|| AssertionFailure {
                    path: path.clone(),
                    check: check.name().into(),
                    expected: check.expected(),
                    seen: seen.cloned(),
                })
            }
            Assertion::Judge { .. } => None,
        })
        .collect()
}

/// What became of a case: worst last, so a case's verdict over repeats is the largest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Every assertion held.
    Pass,
    /// An assertion did not hold.
    Fail,
    /// The agent failed: its retries exhausted, a model error, a refused input not expected.
    Error,
}

impl Verdict {
    /// `pass`, `fail` or `error`.
    pub fn word(self) -> &'static str {
        match self {
            Self::Pass => "pass",
            Self::Fail => "fail",
            Self::Error => "error",
        }
    }
}

/// A judge's decision on one rubric.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Judgement {
    /// The rubric.
    pub rubric: String,
    /// Whether the answer meets it.
    pub pass: bool,
    /// Why, in the judge's words.
    pub reason: String,
}

/// One run of one case.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq)]
pub struct CaseRun {
    /// Its verdict.
    pub verdict: Verdict,
    /// The assertions that did not hold (for [`Verdict::Fail`]).
    pub failures: Vec<AssertionFailure>,
    /// Why the agent failed (for [`Verdict::Error`]).
    pub error: Option<String>,
    /// The checked output, when the agent gave one.
    pub output: Option<Value>,
    /// The judges' decisions, one per judge assertion asked.
    pub judged: Vec<Judgement>,
    /// Judge assertions not asked (no judge model).
    pub judges_skipped: usize,
}

/// A judge: a model that decides whether an answer meets a rubric, its answer held to the
/// judge's own output contract, `{"pass": bool, "reason": string}`.
#[derive(Clone)]
pub struct Judge {
    model: Arc<dyn ChatModel>,
    contract: Arc<Contract>,
    retries: u32,
}

/// The judge's output contract.
const JUDGE_OUTPUT: &str = r#"{"type": "object", "required": ["pass", "reason"],
  "properties": {"pass": {"type": "boolean"}, "reason": {"type": "string"}},
  "additionalProperties": false}"#;

impl std::fmt::Debug for Judge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Judge")
            .field("retries", &self.retries)
            .finish_non_exhaustive()
    }
}

impl Judge {
    /// A judge on `model`, asked again (with the contract's error) at most twice.
    pub fn new(model: Arc<dyn ChatModel>) -> Self {
        let contract = Contract::from_json_str("eval_judge", ContractKind::Output, JUDGE_OUTPUT)
            .expect("the judge's contract compiles");
        Self {
            model,
            contract: Arc::new(contract),
            retries: 2,
        }
    }

    /// Decides whether `answer`, `agent`'s output, meets `rubric`.
    pub async fn judge(
        &self,
        agent: &str,
        rubric: &str,
        answer: &Value,
    ) -> Result<Judgement, String> {
        let pretty = serde_json::to_string_pretty(answer).unwrap_or_default();
        let mut messages = vec![
            Message::system(crate::texts::judge_system()),
            Message::user(crate::texts::judge_user(agent, rubric, &pretty)),
        ];
        let limits = Limits::default();
        for _ in 0..=self.retries {
            let request = ChatRequest::new("eval_judge", messages.clone(), Vec::new());
            let response = self
                .model
                .complete(&request)
                .await
                .map_err(|e| format!("the judge's model: {e}"))?;
            let text = response.message.content.clone();
            let checked = extract_json(&text, &limits)
                .and_then(|v| self.contract.check(&v, &limits).map(|()| v));
            match checked {
                Ok(v) => {
                    return Ok(Judgement {
                        rubric: rubric.to_owned(),
                        pass: v["pass"].as_bool().unwrap_or(false),
                        reason: v["reason"].as_str().unwrap_or_default().to_owned(),
                    });
                }
                Err(e) => {
                    messages.push(Message::assistant(text));
                    messages.push(Message::user(crate::texts::output_retry(
                        &e.to_json().to_string(),
                        "",
                    )));
                }
            }
        }
        Err(format!(
            "the judge broke its output contract {} times",
            self.retries + 1
        ))
    }
}

/// Runs `case` once through `agent` on `runtime`'s model: its kwargs through the input
/// contract (a case with `expect_retry` passes when they are refused for those fields), the
/// answer through the output contract with the runtime's retries, then the assertions on the
/// checked output, and each judge assertion on `judge` (skipped without one).
pub async fn run_case(
    runtime: &Runtime,
    agent: &dyn DynAgent,
    case: &Case,
    judge: Option<&Judge>,
) -> CaseRun {
    let mut run = CaseRun {
        verdict: Verdict::Pass,
        failures: Vec::new(),
        error: None,
        output: None,
        judged: Vec::new(),
        judges_skipped: 0,
    };
    let result = runtime
        .call_sub_agent(agent, &case.kwargs_text(), CallOptions::default())
        .await;
    match (result, &case.expect_retry) {
        (Err(Error::Retry { error, .. }), Some(fields)) => {
            let mut refused: Vec<String> = error.missing_fields.clone();
            for violation in &error.errors {
                if let Some(first) = violation.path.first() {
                    refused.push(first.to_string());
                }
            }
            let missing: Vec<&String> = fields.iter().filter(|f| !refused.contains(f)).collect();
            if !missing.is_empty() {
                run.verdict = Verdict::Fail;
                run.failures.push(AssertionFailure {
                    path: String::new(),
                    check: "expect_retry".into(),
                    expected: fields.clone().into(),
                    seen: Some(refused.into()),
                });
            }
        }
        (Ok(output), Some(fields)) => {
            run.verdict = Verdict::Fail;
            run.failures.push(AssertionFailure {
                path: String::new(),
                check: "expect_retry".into(),
                expected: fields.clone().into(),
                seen: Some(output.output.value().clone()),
            });
            run.output = Some(output.output.value().clone());
        }
        (Err(e), _) => {
            run.verdict = Verdict::Error;
            run.error = Some(e.to_string());
        }
        (Ok(output), None) => {
            let value = output.output.value().clone();
            run.failures = check_output(&case.expect, &value);
            for assertion in &case.expect {
                let Assertion::Judge { rubric } = assertion else {
                    continue;
                };
                let Some(judge) = judge else {
                    run.judges_skipped += 1;
                    continue;
                };
                match judge.judge(agent.name(), rubric, &value).await {
                    Ok(judgement) => {
                        if !judgement.pass {
                            run.failures.push(AssertionFailure {
                                path: String::new(),
                                check: "judge".into(),
                                expected: Value::String(rubric.clone()),
                                seen: Some(Value::String(judgement.reason.clone())),
                            });
                        }
                        run.judged.push(judgement);
                    }
                    Err(e) => {
                        run.verdict = Verdict::Error;
                        run.error = Some(e);
                    }
                }
            }
            if run.verdict == Verdict::Pass && !run.failures.is_empty() {
                run.verdict = Verdict::Fail;
            }
            run.output = Some(value);
        }
    }
    run
}

/// The run ID of every context ID an eval's runtime issues ([`case_runtime`]): a prompt that
/// shows one (an output retry does) is the same in every run.
pub const EVAL_RUN_ID: &str = "eval";

/// The runtime one run of a case goes through: on `model`, its context IDs under
/// [`EVAL_RUN_ID`], so that its prompts differ only where the case or the agent does.
pub fn case_runtime(model: CaseModel) -> Runtime {
    let ids = crate::transcript::ContextIdGenerator::new(EVAL_RUN_ID).expect("a valid run ID");
    Runtime::new(model).with_context_ids(Arc::new(ids))
}

/// A call's time as the runtime writes it (`2026-01-02T03:04:05.678Z`, in a context ID and a
/// previous attempt's header): the one part of a prompt that differs between two runs of the
/// same case. (A time of that form in a case's kwargs is left out of the hash too.)
static CONTEXT_TIME: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    regex::Regex::new(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z")
        .expect("a valid pattern")
});

/// FNV-1a (64 bits) of a request's agent and messages, as 16 hex digits, the call times
/// they show left out: the same prompt has the same hash in every run, build and
/// platform.
pub fn prompt_hash(request: &ChatRequest) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut feed = |bytes: &[u8]| {
        for byte in bytes {
            hash ^= u64::from(*byte);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    };
    feed(request.agent.as_bytes());
    feed(&[0]);
    let messages = serde_json::to_string(&request.messages).unwrap_or_default();
    feed(CONTEXT_TIME.replace_all(&messages, "time").as_bytes());
    format!("{hash:016x}")
}

/// One model answer of a recording: which case, run and call it answered, the hash of the
/// prompt it answered, and the response.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordedAnswer {
    /// The case's name.
    pub case: String,
    /// The run of the case, from 1 (`--repeat`).
    pub run: u32,
    /// The model call within the run, from 1 (output retries count up).
    pub call: u32,
    /// [`prompt_hash`] of the request answered.
    pub prompt_hash: String,
    /// The model's response.
    pub response: ChatResponse,
}

/// The answers of a recording, by case, run and call.
#[derive(Debug, Default)]
pub struct Recording {
    answers: Mutex<BTreeMap<(String, u32, u32), RecordedAnswer>>,
}

impl Recording {
    /// A recording read from its JSON (an array of [`RecordedAnswer`]s, or an object with
    /// `answers`).
    pub fn from_json(text: &str) -> Result<Self, String> {
        #[derive(Deserialize)]
        struct File {
            answers: Vec<RecordedAnswer>,
        }
        let file: File = serde_json::from_str(text).map_err(|e| e.to_string())?;
        let recording = Self::default();
        for answer in file.answers {
            recording.insert(answer);
        }
        Ok(recording)
    }

    /// Its JSON: `{"answers": [...]}` in case, run and call order.
    pub fn to_json(&self) -> String {
        let answers: Vec<RecordedAnswer> = self.lock().values().cloned().collect();
        serde_json::to_string_pretty(&serde_json::json!({ "answers": answers })).unwrap_or_default()
    }

    /// How many answers it holds.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn insert(&self, answer: RecordedAnswer) {
        let key = (answer.case.clone(), answer.run, answer.call);
        self.lock().insert(key, answer);
    }

    fn get(&self, case: &str, run: u32, call: u32) -> Option<RecordedAnswer> {
        self.lock().get(&(case.to_owned(), run, call)).cloned()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<(String, u32, u32), RecordedAnswer>> {
        self.answers.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Where a [`CaseModel`]'s answers come from.
#[derive(Clone)]
enum Source {
    Live(Arc<dyn ChatModel>),
    Record(Arc<dyn ChatModel>, Arc<Recording>),
    Replay(Arc<Recording>),
}

/// The model of one run of one case: a live model, one whose answers are recorded, or a
/// recording replayed (no model asked). It counts the run's calls and the tokens they used,
/// and, replaying, whether a prompt differs from the one recorded.
#[derive(Clone)]
pub struct CaseModel {
    source: Source,
    case: Arc<str>,
    run: u32,
    state: Arc<CaseState>,
}

/// The tokens a run used: in all, and per call with the model that answered.
type Used = (Usage, Vec<(Option<String>, Usage)>);

#[derive(Default)]
struct CaseState {
    calls: AtomicU32,
    changed: AtomicBool,
    usage: Mutex<Used>,
}

impl std::fmt::Debug for CaseModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CaseModel")
            .field("case", &self.case)
            .field("run", &self.run)
            .finish_non_exhaustive()
    }
}

impl CaseModel {
    fn new(source: Source, case: &str, run: u32) -> Self {
        Self {
            source,
            case: case.into(),
            run,
            state: Arc::default(),
        }
    }

    /// Run `run` of `case` on `model`.
    pub fn live(model: Arc<dyn ChatModel>, case: &str, run: u32) -> Self {
        Self::new(Source::Live(model), case, run)
    }

    /// Run `run` of `case` on `model`, each answer kept in `recording`.
    pub fn record(
        model: Arc<dyn ChatModel>,
        recording: Arc<Recording>,
        case: &str,
        run: u32,
    ) -> Self {
        Self::new(Source::Record(model, recording), case, run)
    }

    /// Run `run` of `case` answered from `recording` (an answer it lacks is a model error).
    pub fn replay(recording: Arc<Recording>, case: &str, run: u32) -> Self {
        Self::new(Source::Replay(recording), case, run)
    }

    /// Whether a prompt of the run differed from the one its recorded answer answered.
    pub fn prompt_changed(&self) -> bool {
        self.state.changed.load(Ordering::Relaxed)
    }

    /// The tokens the run's calls used, in all.
    pub fn usage(&self) -> Usage {
        self.lock_usage().0
    }

    /// The tokens each call used, with the model that answered it (for prices).
    pub fn usage_by_model(&self) -> Vec<(Option<String>, Usage)> {
        self.lock_usage().1.clone()
    }

    fn lock_usage(&self) -> std::sync::MutexGuard<'_, Used> {
        self.state.usage.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn count(&self, response: &ChatResponse) {
        if let Some(usage) = response.usage {
            let mut kept = self.lock_usage();
            kept.0 += usage;
            kept.1.push((response.model.clone(), usage));
        }
    }
}

impl ChatModel for CaseModel {
    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest,
    ) -> crate::chat::BoxFuture<'a, Result<ChatResponse, ModelError>> {
        Box::pin(async move {
            let call = self.state.calls.fetch_add(1, Ordering::Relaxed) + 1;
            let response = match &self.source {
                Source::Live(model) => model.complete(request).await?,
                Source::Record(model, recording) => {
                    let response = model.complete(request).await?;
                    recording.insert(RecordedAnswer {
                        case: self.case.to_string(),
                        run: self.run,
                        call,
                        prompt_hash: prompt_hash(request),
                        response: response.clone(),
                    });
                    response
                }
                Source::Replay(recording) => {
                    let Some(answer) = recording.get(&self.case, self.run, call) else {
                        return Err(ModelError::ScriptExhausted {
                            agent: format!(
                                "{} (case `{}`, run {})",
                                request.agent, self.case, self.run
                            ),
                            request: call as usize,
                        });
                    };
                    if answer.prompt_hash != prompt_hash(request) {
                        self.state.changed.store(true, Ordering::Relaxed);
                    }
                    answer.response
                }
            };
            self.count(&response);
            Ok(response)
        })
    }
}

/// What each test of `eval_tests!` runs: the case `name` of `dataset` (its text) through
/// `agent` on the model `model` makes for it (from its key, `<agent>/<case>`, and run 1), panicking unless it passes, with the
/// failed assertions or the error. A replayed prompt that changed since its recording is said
/// on stderr.
///
/// # Panics
///
/// When the case does not pass, or the dataset has no such case.
pub fn assert_case<M>(agent: &dyn DynAgent, dataset: &str, name: &str, model: &M)
where
    M: Fn(&str, u32) -> CaseModel,
{
    let cases = Case::parse_dataset(dataset).unwrap_or_else(|e| panic!("the dataset: {e}"));
    let Some(case) = cases.iter().find(|c| c.name == name) else {
        panic!("the dataset has no case `{name}`");
    };
    let model = model(&format!("{}/{name}", agent.name()), 1);
    let runtime = case_runtime(model.clone());
    let threads = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a current-thread runtime");
    let run = threads.block_on(run_case(&runtime, agent, case, None));
    if model.prompt_changed() {
        eprintln!("case `{name}`: the prompt changed since the recording");
    }
    match run.verdict {
        Verdict::Pass => {}
        Verdict::Fail => {
            let failures: Vec<String> = run
                .failures
                .iter()
                .map(|f| {
                    let seen = f.seen.as_ref().map_or("nothing".into(), Value::to_string);
                    format!("  `{}` {} {}, seen {seen}", f.path, f.check, f.expected)
                })
                .collect();
            panic!(
                "case `{name}` (line {}) failed:\n{}",
                case.line,
                failures.join("\n")
            );
        }
        Verdict::Error => panic!(
            "case `{name}` (line {}) errored: {}",
            case.line,
            run.error.unwrap_or_default()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_matches_check_is_compiled_when_read_and_decides_each_output() {
        let assertion =
            Assertion::parse(&serde_json::json!({"path": "/strategy", "matches": "^id-first"}))
                .unwrap();
        let Assertion::Check {
            check: Check::Matches(pattern),
            ..
        } = &assertion
        else {
            panic!("{assertion:?}");
        };
        assert_eq!(pattern.as_str(), "^id-first");
        let expect = [assertion.clone()];
        assert!(
            check_output(
                &expect,
                &serde_json::json!({"strategy": "id-first, then text"})
            )
            .is_empty()
        );
        let failed = check_output(&expect, &serde_json::json!({"strategy": "text first"}));
        assert_eq!(failed.len(), 1);
        assert_eq!(
            (failed[0].check.as_str(), &failed[0].expected),
            ("matches", &Value::from("^id-first"))
        );
        // Not a string: no match.
        assert_eq!(
            check_output(&expect, &serde_json::json!({"strategy": 3})).len(),
            1
        );
        // A pattern that does not compile is refused with the dataset, not at each run.
        let refused = Assertion::parse(&serde_json::json!({"path": "/s", "matches": "(unclosed"}))
            .unwrap_err();
        assert!(
            refused.starts_with("`matches`: regex parse error"),
            "{refused}"
        );
    }
}
