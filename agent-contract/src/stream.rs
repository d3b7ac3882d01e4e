//! The contract checked while an answer streams: [`PrefixCheck`], fed the answer delta by
//! delta, says as soon as the text received so far can no longer become an answer that
//! passes the contract, with the retry error the full check would have written about it.
//!
//! What it decides on a prefix: a value of the wrong type (at its first character), an
//! `enum` or `const` string no member starts with (at the first character that rules them
//! all out), a string past its `maxLength` (in characters), an array past `maxItems` (at the
//! extra item's first character), a key `additionalProperties: false` forbids, and once a
//! value is complete: `enum`/`const` of numbers, booleans and null, `minLength`, `minimum`
//! and `maximum`, `integer`; once an object or array closes: `required`, `minItems`. Through
//! nested objects, arrays, `$ref`, `allOf`, `anyOf` and `oneOf`. The answer's own limits
//! (size, depth, value count, numbers out of range), a key written twice and text that is
//! not JSON end it too. Everything else waits for the full check at the end.
//!
//! Sound: a prefix it calls broken has no continuation the runtime would accept (the answer's
//! object is found as [`crate::extract_json`] finds it, whose rule commits to the first object
//! of an answer that opens with `{` or a JSON fence). An answer that opens with prose and no
//! fence is only checked at the end: a later fence could still hold its object.

use crate::contract::Contract;
use crate::extract::Locate;
use crate::limits::Limits;
use crate::prefix::{Additional, Alternatives, LocalId, PrefixSchema, types};
use crate::retry::{ErrorKind, PathSegment, RetryError, Violation};
use crate::tokens::{Event, Scalar, Sink, Stopped, Syntax, Tokens};
use crate::truncate::truncate;
use serde_json::Value;

/// Why an answer that is still arriving can no longer pass its contract.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Broken {
    /// The byte offset in the answer at which it became certain: the byte that decided.
    pub at: usize,
    /// The retry error the full check would give, built from what was received.
    pub error: RetryError,
}

/// An output contract checked on an answer as it streams; see the module docs.
///
/// ```
/// use agent_contracts_contract::{Contract, ContractKind, Limits, PathSegment};
///
/// let contract = Contract::new("plan", ContractKind::Output, serde_json::json!({
///     "type": "object",
///     "properties": {"status": {"enum": ["success", "failed"]}},
/// })).unwrap();
/// let mut check = contract.prefix_check(&Limits::default());
/// assert!(check.feed("Here it is:\n```json\n{\"status\": \"su").is_ok());
/// let broken = check.feed("re\"}").unwrap_err();
/// assert_eq!(broken.at, 34); // the `r` of "sure": no member starts with "sur"
/// assert_eq!(broken.error.path, [PathSegment::Key("status".into())]);
/// assert_eq!(
///     broken.error.validation_message,
///     r#""sur…" is not one of "success" or "failed""#
/// );
/// ```
#[derive(Debug)]
pub struct PrefixCheck<'c> {
    contract: &'c Contract,
    schema: &'c PrefixSchema,
    limits: Limits,
    locate: Locate,
    tokens: Tokens,
    state: State,
    received: usize,
    /// Where the answer's object starts, once found.
    json_start: Option<usize>,
    broken: Option<Broken>,
}

impl Contract {
    /// A check of an answer that is still arriving, within `limits`: see [`PrefixCheck`]. The
    /// schema is compiled for it once per contract, on first use.
    pub fn prefix_check(&self, limits: &Limits) -> PrefixCheck<'_> {
        PrefixCheck::new(self, limits)
    }
}

impl<'c> PrefixCheck<'c> {
    fn new(contract: &'c Contract, limits: &Limits) -> Self {
        Self {
            contract,
            schema: contract.prefix_schema(),
            limits: *limits,
            locate: Locate::default(),
            tokens: Tokens::default(),
            state: State::default(),
            received: 0,
            json_start: None,
            broken: None,
        }
    }

    /// Reads the next piece of the answer. `Err` once the answer can no longer pass (and on
    /// every call after it); `Ok` while it still can.
    pub fn feed(&mut self, delta: &str) -> Result<(), Broken> {
        if let Some(broken) = &self.broken {
            return Err(broken.clone());
        }
        let start = self.received;
        self.received += delta.len();
        if self.received > self.limits.max_bytes {
            let kind = ErrorKind::TooLarge {
                size: self.received,
                limit: self.limits.max_bytes,
            };
            let message = kind.to_string();
            let error = RetryError::call(kind, message, "Answer with a shorter JSON object");
            return Err(self.stop(self.limits.max_bytes.max(start), error));
        }
        if self.tokens.done() {
            return Ok(());
        }
        let Some((at, json)) = self.locate.json(delta) else {
            return Ok(());
        };
        // The tokenizer counts from the object's `{`.
        let offset = *self.json_start.get_or_insert(at);
        let mut sink = Checker {
            schema: self.schema,
            limits: &self.limits,
            state: &mut self.state,
            offset,
        };
        let stopped = match self.tokens.feed(json, &mut sink) {
            Ok(_) => return Ok(()),
            Err(stopped) => stopped,
        };
        let (at, error) = match stopped {
            Stopped::Syntax(Syntax(at)) => (offset + at, not_json(offset + at)),
            Stopped::Sink(Stop::Answer(at, error)) => (at, error),
            Stopped::Sink(Stop::Violation(at, violation)) => (at, self.contract_error(violation)),
        };
        Err(self.stop(at, error))
    }

    /// Bytes of the answer received so far.
    pub fn received(&self) -> usize {
        self.received
    }

    fn stop(&mut self, at: usize, error: RetryError) -> Broken {
        let broken = Broken { at, error };
        self.broken = Some(broken.clone());
        broken
    }

    fn contract_error(&self, found: Found) -> RetryError {
        let provided: Vec<String> = self
            .state
            .root_keys
            .iter()
            .take(self.limits.max_listed_fields)
            .map(|k| truncate(k, self.limits.max_echo_bytes).into_owned())
            .collect();
        let missing = if found.root_closed {
            self.contract
                .required_fields()
                .iter()
                .filter(|f| !self.state.root_keys.contains(f))
                .cloned()
                .collect()
        } else {
            Vec::new()
        };
        self.contract
            .prefix_error(provided, missing, found.violation)
    }
}

fn not_json(at: usize) -> RetryError {
    RetryError::call(
        ErrorKind::OutputNotJson,
        format!("the answer's JSON object stops being JSON at byte {at}"),
        "Answer with one JSON object that matches your output contract",
    )
}

/// The checker's place in the object, kept between deltas.
#[derive(Debug, Default)]
struct State {
    /// Open values, outermost first.
    frames: Vec<Frame>,
    /// Keys of the root object, in order.
    root_keys: Vec<String>,
    /// Values read, as `Limits::max_values` counts them.
    values: usize,
}

/// One open value: the alternatives of the schema that still allow it.
#[derive(Debug)]
struct Frame {
    alts: Vec<Alt>,
    kind: Kind,
    /// Where the value sits in its parent.
    segment: Option<PathSegment>,
}

#[derive(Debug)]
struct Alt {
    /// The parent frame's alternative this one checks the value for.
    parent: usize,
    locals: Vec<LocalId>,
    alive: bool,
}

#[derive(Debug)]
enum Kind {
    Object {
        /// Keys read (a set: an answer may hold many).
        keys: std::collections::HashSet<String>,
        /// The key whose value comes next.
        key: Option<String>,
    },
    Array {
        items: usize,
    },
    String {
        text: String,
        chars: u64,
    },
    Scalar,
}

/// A contract violation, and whether the root object had closed.
#[derive(Debug)]
struct Found {
    violation: Violation,
    root_closed: bool,
}

enum Stop {
    /// Not the contract: the answer as a whole (limits, a key twice).
    Answer(usize, RetryError),
    Violation(usize, Found),
}

struct Checker<'a> {
    schema: &'a PrefixSchema,
    limits: &'a Limits,
    state: &'a mut State,
    /// The answer offset of the object's `{`.
    offset: usize,
}

impl Sink for Checker<'_> {
    type Stop = Stop;

    fn event(&mut self, event: Event<'_>, at: usize) -> Result<(), Stop> {
        let at = self.offset + at;
        match event {
            Event::BeginObject => self.begin(
                at,
                Kind::Object {
                    keys: Default::default(),
                    key: None,
                },
                types::OBJECT,
            ),
            Event::BeginArray => self.begin(at, Kind::Array { items: 0 }, types::ARRAY),
            Event::BeginString => self.begin(
                at,
                Kind::String {
                    text: String::new(),
                    chars: 0,
                },
                types::STRING,
            ),
            Event::BeginScalar(Scalar::Number) => {
                self.begin(at, Kind::Scalar, types::NUMBER | types::INTEGER)
            }
            Event::BeginScalar(Scalar::Bool) => self.begin(at, Kind::Scalar, types::BOOLEAN),
            Event::BeginScalar(Scalar::Null) => self.begin(at, Kind::Scalar, types::NULL),
            Event::Key(key) => self.key(at, key),
            Event::Char(c) => self.char(at, c),
            Event::EndString => self.end_string(at),
            Event::EndScalar(kind, text) => self.end_scalar(at, kind, text),
            Event::EndObject => self.end_object(at),
            Event::EndArray => self.end_array(at),
        }
    }
}

impl Checker<'_> {
    /// A value starts: its frame, its alternatives from the parent's, its type checked.
    fn begin(&mut self, at: usize, kind: Kind, found: u8) -> Result<(), Stop> {
        self.state.values += 1;
        if self.state.values > self.limits.max_values {
            return Err(Stop::Answer(
                at,
                crate::limits::too_many_values(self.limits),
            ));
        }
        let container = matches!(kind, Kind::Object { .. } | Kind::Array { .. });
        if container && self.state.frames.len() + 1 > self.limits.max_depth {
            return Err(Stop::Answer(at, crate::limits::too_deep(self.limits)));
        }
        let (alts, segment, lenient_null) = self.child_alternatives(at)?;
        self.state.frames.push(Frame {
            alts,
            kind,
            segment,
        });
        if lenient_null && found == types::NULL {
            // A strict provider's `null` for an absent property: removed before the check.
            self.top().alts.iter_mut().for_each(|a| a.locals.clear());
            return Ok(());
        }
        let schema = self.schema;
        self.each_local(at, |local| {
            let l = &schema.locals[local];
            if l.never {
                return Some("no value is allowed here".to_owned());
            }
            (l.types & found == 0).then(|| {
                let what = match found {
                    types::OBJECT => "an object",
                    types::ARRAY => "an array",
                    types::STRING => "a string",
                    types::BOOLEAN => "a boolean",
                    types::NULL => "null",
                    _ => "a number",
                };
                format!("{what} is not of type {}", l.type_text)
            })
        })
    }

    /// The new value's alternatives (one list per alive alternative of its parent), where
    /// it sits, and whether a `null` there is a strict provider's absent property. Counts an
    /// array's item, which `maxItems` may refuse.
    fn child_alternatives(
        &mut self,
        at: usize,
    ) -> Result<(Vec<Alt>, Option<PathSegment>, bool), Stop> {
        let schema = self.schema;
        let Some(parent) = self.state.frames.last_mut() else {
            let alts = schema
                .root
                .iter()
                .map(|locals| Alt {
                    parent: 0,
                    locals: locals.clone(),
                    alive: true,
                })
                .collect();
            return Ok((alts, None, false));
        };
        let (segment, lenient) = match &mut parent.kind {
            Kind::Object { key, .. } => {
                let key = key.clone().unwrap_or_default();
                let lenient = schema.null_keys.contains(&key);
                (PathSegment::Key(key), lenient)
            }
            Kind::Array { items } => {
                *items += 1;
                (PathSegment::Index(*items - 1), false)
            }
            _ => (PathSegment::Index(0), false),
        };
        let mut alts = Vec::new();
        for (p, alt) in parent.alts.iter().enumerate().filter(|(_, a)| a.alive) {
            let mut joined: Alternatives = vec![Vec::new()];
            for &local in &alt.locals {
                let l = &schema.locals[local];
                let of: &Alternatives = match &segment {
                    PathSegment::Key(key) => match (l.properties.get(key), &l.additional) {
                        (Some(alternatives), _) => alternatives,
                        (None, Additional::Schema(alternatives)) => alternatives,
                        _ => continue,
                    },
                    PathSegment::Index(i) => match (l.prefix_items.get(*i), &l.items) {
                        (Some(alternatives), _) => alternatives,
                        (None, Some(alternatives)) => alternatives,
                        _ => continue,
                    },
                };
                joined = join(&joined, of);
            }
            alts.extend(joined.into_iter().map(|locals| Alt {
                parent: p,
                locals,
                alive: true,
            }));
        }
        if let PathSegment::Index(i) = segment {
            let count = i as u64 + 1;
            self.each_local(at, |local| {
                let max = schema.locals[local].max_items?;
                (count > max).then(|| format!("[…] has more than {max} item{}", plural(max)))
            })?;
        }
        Ok((alts, Some(segment), lenient))
    }

    fn top(&mut self) -> &mut Frame {
        let last = self.state.frames.len() - 1;
        &mut self.state.frames[last]
    }

    /// Runs `rule` on every local of every alive alternative of the top frame; a local it
    /// refuses (with a message) kills its alternative, and a frame without one left kills
    /// its parent's alternative, up to the root.
    fn each_local(
        &mut self,
        at: usize,
        mut rule: impl FnMut(LocalId) -> Option<String>,
    ) -> Result<(), Stop> {
        let depth = self.state.frames.len() - 1;
        let mut failed: Option<(String, LocalId)> = None;
        let mut killed = false;
        for alt in self.state.frames[depth].alts.iter_mut().filter(|a| a.alive) {
            for &local in &alt.locals {
                if let Some(message) = rule(local) {
                    alt.alive = false;
                    killed = true;
                    failed.get_or_insert((message, local));
                    break;
                }
            }
        }
        match failed {
            Some((message, local)) if killed => self.propagate(at, depth, message, local),
            _ => Ok(()),
        }
    }

    /// After alternatives of frame `depth` died: if none is left for some parent
    /// alternative, that one dies too; the root with none left is the verdict.
    fn propagate(
        &mut self,
        at: usize,
        mut depth: usize,
        message: String,
        local: LocalId,
    ) -> Result<(), Stop> {
        loop {
            let frame = &self.state.frames[depth];
            if depth == 0 {
                if frame.alts.iter().any(|a| a.alive) {
                    return Ok(());
                }
                return Err(self.violation(at, message, local, false));
            }
            let dead: Vec<usize> = {
                let parents: std::collections::BTreeSet<usize> =
                    frame.alts.iter().map(|a| a.parent).collect();
                parents
                    .into_iter()
                    .filter(|p| !frame.alts.iter().any(|a| a.parent == *p && a.alive))
                    .collect()
            };
            let parent = &mut self.state.frames[depth - 1];
            let mut changed = false;
            for p in dead {
                if let Some(alt) = parent.alts.get_mut(p)
                    && alt.alive
                {
                    alt.alive = false;
                    changed = true;
                }
            }
            if !changed {
                return Ok(());
            }
            depth -= 1;
        }
    }

    fn violation(&self, at: usize, message: String, local: LocalId, root_closed: bool) -> Stop {
        let max = self.limits.max_echo_bytes;
        let path = self
            .state
            .frames
            .iter()
            .filter_map(|f| f.segment.clone())
            .map(|s| match s {
                PathSegment::Key(k) => PathSegment::Key(truncate(&k, max).into_owned()),
                index => index,
            })
            .collect();
        let violation = Violation {
            path,
            message: truncate(&message, max.saturating_mul(2)).into_owned(),
            description: self.schema.locals[local].description.clone(),
        };
        Stop::Violation(
            at,
            Found {
                violation,
                root_closed,
            },
        )
    }

    fn key(&mut self, at: usize, key: &str) -> Result<(), Stop> {
        let is_root = self.state.frames.len() == 1;
        let Some(Frame {
            kind: Kind::Object { keys, key: next },
            ..
        }) = self.state.frames.last_mut()
        else {
            return Ok(());
        };
        if !keys.insert(key.to_owned()) {
            let error = crate::extract::duplicate_key(key, self.limits);
            return Err(Stop::Answer(at, error));
        }
        *next = Some(key.to_owned());
        if is_root {
            self.state.root_keys.push(key.to_owned());
        }
        let schema = self.schema;
        let max = self.limits.max_echo_bytes;
        self.each_local(at, |local| {
            let l = &schema.locals[local];
            let forbidden =
                matches!(l.additional, Additional::Forbidden) && !l.properties.contains_key(key);
            forbidden
                .then(|| crate::contract::unexpected_message("Additional", &[key.to_owned()], max))
        })
    }

    fn char(&mut self, at: usize, c: char) -> Result<(), Stop> {
        let Some(Frame {
            kind: Kind::String { text, chars },
            ..
        }) = self.state.frames.last_mut()
        else {
            return Ok(());
        };
        text.push(c);
        *chars += 1;
        // Taken out while the rules read it (they borrow the frames), put back after: a long
        // string is never copied per character.
        let (text, chars) = (std::mem::take(text), *chars);
        let schema = self.schema;
        let max = self.limits.max_echo_bytes;
        let result = self.each_local(at, |local| {
            let l = &schema.locals[local];
            if let Some(limit) = l.max_length
                && chars > limit
            {
                let shown = truncate(&text, max);
                return Some(format!(
                    "\"{shown}…\" is longer than {limit} character{}",
                    plural(limit)
                ));
            }
            l.one_of_values
                .iter()
                .find(|members| {
                    !members
                        .iter()
                        .any(|m| m.as_str().is_some_and(|m| m.starts_with(text.as_str())))
                })
                .map(|members| {
                    let shown = truncate(&text, max);
                    not_one_of(&format!("\"{shown}…\""), members, max)
                })
        });
        if let Some(Frame {
            kind: Kind::String { text: slot, .. },
            ..
        }) = self.state.frames.last_mut()
        {
            *slot = text;
        }
        result
    }

    fn end_string(&mut self, at: usize) -> Result<(), Stop> {
        let Some(Frame {
            kind: Kind::String { text, chars },
            ..
        }) = self.state.frames.last()
        else {
            return Ok(());
        };
        let (text, chars) = (text.clone(), *chars);
        let schema = self.schema;
        let max = self.limits.max_echo_bytes;
        let shown = Value::String(truncate(&text, max).into_owned()).to_string();
        self.each_local(at, |local| {
            let l = &schema.locals[local];
            if let Some(limit) = l.min_length
                && chars < limit
            {
                return Some(format!(
                    "{shown} is shorter than {limit} character{}",
                    plural(limit)
                ));
            }
            l.one_of_values
                .iter()
                .find(|members| !members.iter().any(|m| m.as_str() == Some(text.as_str())))
                .map(|members| not_one_of(&shown, members, max))
        })?;
        self.state.frames.pop();
        Ok(())
    }

    fn end_scalar(&mut self, at: usize, kind: Scalar, text: &str) -> Result<(), Stop> {
        let value = match kind {
            Scalar::Number => {
                let number: f64 = text.parse().unwrap_or(f64::INFINITY);
                if !number.is_finite() {
                    let path = self.path();
                    let error = crate::limits::out_of_range_error(path, self.limits);
                    return Err(Stop::Answer(at, error));
                }
                Some(number)
            }
            _ => None,
        };
        let schema = self.schema;
        let shown = truncate(text, self.limits.max_echo_bytes).into_owned();
        let max = self.limits.max_echo_bytes;
        self.each_local(at, |local| {
            let l = &schema.locals[local];
            if let Some(n) = value {
                if l.types & types::NUMBER == 0 && n.fract() != 0.0 {
                    return Some(format!("{shown} is not of type \"integer\""));
                }
                if let Some((min, exclusive)) = l.minimum
                    && (n < min || (exclusive && n == min))
                {
                    let or_equal = if exclusive { " or equal to" } else { "" };
                    return Some(format!(
                        "{shown} is less than{or_equal} the minimum of {min}"
                    ));
                }
                if let Some((limit, exclusive)) = l.maximum
                    && (n > limit || (exclusive && n == limit))
                {
                    let or_equal = if exclusive { " or equal to" } else { "" };
                    return Some(format!(
                        "{shown} is greater than{or_equal} the maximum of {limit}"
                    ));
                }
            }
            l.one_of_values
                .iter()
                .find(|members| !members.iter().any(|m| scalar_equals(m, kind, text, value)))
                .map(|members| not_one_of(&shown, members, max))
        })?;
        self.state.frames.pop();
        Ok(())
    }

    fn end_object(&mut self, at: usize) -> Result<(), Stop> {
        let Some(Frame {
            kind: Kind::Object { keys, .. },
            ..
        }) = self.state.frames.last_mut()
        else {
            return Ok(());
        };
        // The frame is popped below: its keys are not needed back.
        let keys = std::mem::take(keys);
        let schema = self.schema;
        let mut missing_local = None;
        let result = self.each_local(at, |local| {
            let l = &schema.locals[local];
            let missing = l.required.iter().find(|r| !keys.contains(r.as_str()))?;
            missing_local = l
                .properties
                .get(missing)
                .and_then(|a| a.first()?.first().copied());
            Some(format!("\"{missing}\" is a required property"))
        });
        let root = self.state.frames.len() == 1;
        self.state.frames.pop();
        match result {
            Err(Stop::Violation(at, mut found)) => {
                found.root_closed = root;
                // The description is the missing property's, as the full check gives it.
                found.violation.description =
                    missing_local.and_then(|l| schema.locals[l].description.clone());
                Err(Stop::Violation(at, found))
            }
            other => other,
        }
    }

    fn end_array(&mut self, at: usize) -> Result<(), Stop> {
        let Some(Frame {
            kind: Kind::Array { items },
            ..
        }) = self.state.frames.last()
        else {
            return Ok(());
        };
        let items = *items as u64;
        let schema = self.schema;
        self.each_local(at, |local| {
            let min = schema.locals[local].min_items?;
            (items < min).then(|| format!("[…] has less than {min} item{}", plural(min)))
        })?;
        self.state.frames.pop();
        Ok(())
    }

    fn path(&self) -> Vec<PathSegment> {
        self.state
            .frames
            .iter()
            .filter_map(|f| f.segment.clone())
            .collect()
    }
}

/// Every way of picking one alternative of `a` and one of `b`, joined; past the bound, one
/// that allows anything.
fn join(a: &Alternatives, b: &Alternatives) -> Alternatives {
    if a.len() * b.len() > 32 {
        return vec![Vec::new()];
    }
    a.iter()
        .flat_map(|left| {
            b.iter().map(move |right| {
                let mut joined = left.clone();
                joined.extend(right);
                joined
            })
        })
        .collect()
}

/// Whether `member` (of an `enum`/`const`) is the scalar written as `text`. Numbers compare
/// as `f64`: equal numbers are equal there, so no valid answer is refused.
fn scalar_equals(member: &Value, kind: Scalar, text: &str, number: Option<f64>) -> bool {
    match (member, kind) {
        (Value::Number(m), Scalar::Number) => m.as_f64() == number,
        (Value::Bool(b), Scalar::Bool) => (text == "true") == *b,
        (Value::Null, Scalar::Null) => true,
        _ => false,
    }
}

/// `"x" is not one of "a", "b" or "c"` (`"1.0.0" was expected` for a `const`).
fn not_one_of(shown: &str, members: &[Value], max: usize) -> String {
    let listed: Vec<String> = members
        .iter()
        .map(|m| truncate(&m.to_string(), max).into_owned())
        .collect();
    match listed.as_slice() {
        [only] => format!("{only} was expected, not {shown}"),
        [init @ .., last] => format!("{shown} is not one of {} or {last}", init.join(", ")),
        [] => format!("{shown} is not one of an empty list"),
    }
}

fn plural(n: u64) -> &'static str {
    if n == 1 { "" } else { "s" }
}
