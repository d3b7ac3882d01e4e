//! Context IDs: one per agent call, `{workflowRunId}/{agentType}/{sequenceNumber}/{timestamp}`.
//!
//! - `workflowRunId` groups every call of one run;
//! - `agentType` is the agent's name, so calls can be filtered by agent;
//! - `sequenceNumber` counts the calls of that agent type in that run, from 1, with an atomic
//!   counter per agent type: concurrent calls get unique, gapless numbers;
//! - `timestamp` is when the ID was issued, ISO-8601 UTC with milliseconds
//!   (`2026-01-19T10:15:00.123Z`).
//!
//! ```
//! use agent_contracts::{transcript::ContextId, transcript::ContextIdGenerator};
//!
//! let ids = ContextIdGenerator::new("run-42").unwrap();
//! let first = ids.next("discovery_agent").unwrap();
//! let second = ids.next("discovery_agent").unwrap();
//! assert_eq!((first.sequence(), second.sequence()), (1, 2));
//! assert!(first < second);
//!
//! let text = first.to_string();
//! assert!(text.starts_with("run-42/discovery_agent/1/"));
//! assert_eq!(text.parse::<ContextId>().unwrap(), first);
//! ```

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, PoisonError, RwLock};
use std::time::{SystemTime, UNIX_EPOCH};

/// Longest run ID or agent type, in bytes.
pub(crate) const MAX_NAME_LEN: usize = 128;

/// Bytes of a bad segment that an error message echoes.
const MAX_ECHO: usize = 100;

/// One of the four segments of a context ID.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Segment {
    /// The first: the workflow run.
    WorkflowRunId,
    /// The second: the agent's name.
    AgentType,
    /// The third: the call's number among that agent's calls in the run.
    SequenceNumber,
    /// The fourth: when the ID was issued.
    Timestamp,
}

impl fmt::Display for Segment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::WorkflowRunId => "workflowRunId",
            Self::AgentType => "agentType",
            Self::SequenceNumber => "sequenceNumber",
            Self::Timestamp => "timestamp",
        })
    }
}

/// A context ID, or one of its parts, that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ContextIdError {
    /// The text was empty.
    #[error("context id is empty")]
    Empty,
    /// The text did not split into exactly four `/`-separated segments.
    #[error(
        "context id `{text}` has {found} segments, expected 4: `{{workflowRunId}}/{{agentType}}/{{sequenceNumber}}/{{timestamp}}`"
    )]
    SegmentCount {
        /// Segments found.
        found: usize,
        /// The text (at most 100 bytes of it).
        text: String,
    },
    /// One segment is malformed.
    #[error("bad {segment} segment `{text}` in context id: {reason}")]
    BadSegment {
        /// Which segment.
        segment: Segment,
        /// Its text (at most 100 bytes of it).
        text: String,
        /// What is wrong with it.
        reason: &'static str,
    },
}

impl ContextIdError {
    fn bad(segment: Segment, text: &str, reason: &'static str) -> Self {
        Self::BadSegment {
            segment,
            text: echo(text),
            reason,
        }
    }

    /// The segment at fault, if the error is about one.
    #[cfg(test)]
    fn segment(&self) -> Option<Segment> {
        match self {
            Self::BadSegment { segment, .. } => Some(*segment),
            _ => None,
        }
    }
}

fn echo(text: &str) -> String {
    agent_contracts_contract::__private::truncate(text, MAX_ECHO).into_owned()
}

/// An instant in UTC with millisecond precision, between years 0000 and 9999: the last
/// segment of a [`ContextId`].
///
/// Formats and parses as ISO-8601 `YYYY-MM-DDTHH:MM:SS.sssZ` (exactly that form, so text
/// round-trips unchanged); serializes as that string. Text of another form is a
/// [`ContextIdError::BadSegment`] of the `timestamp` segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Timestamp {
    unix_millis: i64,
}

const MILLIS_PER_DAY: i64 = 86_400_000;

impl Timestamp {
    /// The current time (clamped to the representable years).
    pub(crate) fn now() -> Self {
        let millis = match SystemTime::now().duration_since(UNIX_EPOCH) {
            Ok(after) => i64::try_from(after.as_millis()).unwrap_or(i64::MAX),
            Err(before) => i64::try_from(before.duration().as_millis()).map_or(i64::MIN, |m| -m),
        };
        Self {
            unix_millis: millis.clamp(Self::MIN.unix_millis, Self::MAX.unix_millis),
        }
    }

    /// 0000-01-01T00:00:00.000Z.
    pub(crate) const MIN: Self = Self {
        unix_millis: days_from_civil(0, 1, 1) * MILLIS_PER_DAY,
    };

    /// 9999-12-31T23:59:59.999Z.
    pub(crate) const MAX: Self = Self {
        unix_millis: days_from_civil(10_000, 1, 1) * MILLIS_PER_DAY - 1,
    };

    /// The instant `millis` milliseconds after 1970-01-01T00:00:00Z, if it lies in years
    /// 0000 to 9999.
    pub(crate) fn from_unix_millis(millis: i64) -> Option<Self> {
        (Self::MIN.unix_millis..=Self::MAX.unix_millis)
            .contains(&millis)
            .then_some(Self {
                unix_millis: millis,
            })
    }

    /// Milliseconds since 1970-01-01T00:00:00Z.
    #[cfg(test)]
    pub(crate) fn unix_millis(self) -> i64 {
        self.unix_millis
    }

    fn parts(self) -> (i64, u32, u32, i64, i64, i64, i64) {
        let days = self.unix_millis.div_euclid(MILLIS_PER_DAY);
        let in_day = self.unix_millis.rem_euclid(MILLIS_PER_DAY);
        let (y, m, d) = civil_from_days(days);
        let (secs, millis) = (in_day / 1000, in_day % 1000);
        (y, m, d, secs / 3600, secs / 60 % 60, secs % 60, millis)
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (y, mo, d, h, mi, s, ms) = self.parts();
        write!(f, "{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{ms:03}Z")
    }
}

impl FromStr for Timestamp {
    type Err = ContextIdError;

    fn from_str(text: &str) -> Result<Self, ContextIdError> {
        let bad = |reason| ContextIdError::bad(Segment::Timestamp, text, reason);
        let b = text.as_bytes();
        // YYYY-MM-DDTHH:MM:SS.sssZ
        const SHAPE: &[u8; 24] = b"dddd-dd-ddTdd:dd:dd.dddZ";
        let shaped = b.len() == SHAPE.len()
            && b.iter().zip(SHAPE).all(|(&c, &s)| match s {
                b'd' => c.is_ascii_digit(),
                _ => c == s,
            });
        if !shaped {
            return Err(bad("expected ISO-8601 UTC `YYYY-MM-DDTHH:MM:SS.sssZ`"));
        }
        let num = |from: usize, to: usize| {
            b[from..to]
                .iter()
                .fold(0i64, |n, c| n * 10 + i64::from(c - b'0'))
        };
        let (year, month, day) = (num(0, 4), num(5, 7), num(8, 10));
        let (hour, minute, second, millis) = (num(11, 13), num(14, 16), num(17, 19), num(20, 23));
        if !(1..=12).contains(&month) {
            return Err(bad("month is not between 01 and 12"));
        }
        // The month was checked, so it fits.
        let month = month as u32;
        if day < 1 || day > i64::from(days_in_month(year, month)) {
            return Err(bad("day does not exist in that month"));
        }
        if hour > 23 || minute > 59 || second > 59 {
            return Err(bad("time of day is out of range"));
        }
        let days = days_from_civil(year, month, day as u32);
        let unix_millis =
            days * MILLIS_PER_DAY + ((hour * 60 + minute) * 60 + second) * 1000 + millis;
        Ok(Self { unix_millis })
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

fn is_leap(year: i64) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
const fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let (m, d) = (month as i64, day as i64);
    let y = if m <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = if m > 2 { m - 3 } else { m + 9 };
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date of a day count since 1970-01-01.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    // Both are small and positive by construction.
    (year, month as u32, day as u32)
}

/// The ID of one agent call.
///
/// Ordered by run, then agent type, then sequence number (numerically), then timestamp, so
/// the calls of one agent in one run sort in the order they were issued.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ContextId {
    run_id: String,
    agent_type: String,
    sequence: u64,
    timestamp: Timestamp,
}

impl ContextId {
    /// An ID from its parts, each checked as [`FromStr`] would.
    #[cfg(test)]
    fn new(
        run_id: &str,
        agent_type: &str,
        sequence: u64,
        timestamp: Timestamp,
    ) -> Result<Self, ContextIdError> {
        check_name(Segment::WorkflowRunId, run_id)?;
        check_name(Segment::AgentType, agent_type)?;
        if sequence == 0 {
            return Err(ContextIdError::bad(
                Segment::SequenceNumber,
                "0",
                "sequence numbers start at 1",
            ));
        }
        Ok(Self {
            run_id: run_id.to_owned(),
            agent_type: agent_type.to_owned(),
            sequence,
            timestamp,
        })
    }

    /// The workflow run the call belongs to.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// The agent that was called.
    pub fn agent_type(&self) -> &str {
        &self.agent_type
    }

    /// The call's number among this agent's calls in the run, from 1.
    pub fn sequence(&self) -> u64 {
        self.sequence
    }

    /// When the ID was issued.
    pub fn timestamp(&self) -> Timestamp {
        self.timestamp
    }
}

/// Run IDs and agent types: 1 to 128 of `A-Z a-z 0-9 _ . -`.
fn check_name(segment: Segment, text: &str) -> Result<(), ContextIdError> {
    if text.is_empty() {
        return Err(ContextIdError::bad(segment, text, "it is empty"));
    }
    if text.len() > MAX_NAME_LEN {
        return Err(ContextIdError::bad(
            segment,
            text,
            "it is longer than 128 bytes",
        ));
    }
    if !text
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
    {
        return Err(ContextIdError::bad(
            segment,
            text,
            "only ASCII letters, digits, `_`, `.` and `-` are allowed",
        ));
    }
    Ok(())
}

fn parse_sequence(text: &str) -> Result<u64, ContextIdError> {
    let bad = |reason| ContextIdError::bad(Segment::SequenceNumber, text, reason);
    if text.is_empty() {
        return Err(bad("it is empty"));
    }
    if !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad("it must be a positive decimal integer"));
    }
    if text.starts_with('0') {
        return Err(bad(
            "it must be a positive integer without leading zeros (sequence numbers start at 1)",
        ));
    }
    text.parse().map_err(|_| bad("it does not fit in 64 bits"))
}

impl fmt::Display for ContextId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}/{}/{}/{}",
            self.run_id, self.agent_type, self.sequence, self.timestamp
        )
    }
}

impl FromStr for ContextId {
    type Err = ContextIdError;

    fn from_str(text: &str) -> Result<Self, ContextIdError> {
        if text.is_empty() {
            return Err(ContextIdError::Empty);
        }
        let parts: Vec<&str> = text.split('/').collect();
        let [run_id, agent_type, sequence, timestamp] = parts[..] else {
            return Err(ContextIdError::SegmentCount {
                found: parts.len(),
                text: echo(text),
            });
        };
        check_name(Segment::WorkflowRunId, run_id)?;
        check_name(Segment::AgentType, agent_type)?;
        let sequence = parse_sequence(sequence)?;
        let timestamp: Timestamp = timestamp.parse()?;
        Ok(Self {
            run_id: run_id.to_owned(),
            agent_type: agent_type.to_owned(),
            sequence,
            timestamp,
        })
    }
}

impl Serialize for ContextId {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for ContextId {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// Issues the context IDs of one workflow run: one atomic counter per agent type.
///
/// Share it (`Arc`) between a runtime and the workflows of the same run, so every call of
/// the run is numbered by one counter per agent type.
#[derive(Debug)]
pub struct ContextIdGenerator {
    run_id: String,
    counters: RwLock<HashMap<String, Arc<AtomicU64>>>,
}

impl ContextIdGenerator {
    /// A generator for the run `run_id` (1 to 128 of `A-Z a-z 0-9 _ . -`).
    pub fn new(run_id: impl Into<String>) -> Result<Self, ContextIdError> {
        let run_id = run_id.into();
        check_name(Segment::WorkflowRunId, &run_id)?;
        Ok(Self {
            run_id,
            counters: RwLock::default(),
        })
    }

    /// A generator for a new run, with a fresh run ID (`run-<UUID v7>`).
    pub(crate) fn fresh() -> Self {
        Self {
            run_id: new_run_id(),
            counters: RwLock::default(),
        }
    }

    /// A generator that continues a run whose calls were counted in `issued` (agent type to
    /// IDs issued), so a workflow resumed in another process keeps numbering densely.
    pub(crate) fn resume(
        run_id: impl Into<String>,
        issued: impl IntoIterator<Item = (String, u64)>,
    ) -> Result<Self, ContextIdError> {
        let generator = Self::new(run_id)?;
        {
            let mut counters = generator
                .counters
                .write()
                .unwrap_or_else(PoisonError::into_inner);
            for (agent_type, count) in issued {
                check_name(Segment::AgentType, &agent_type)?;
                counters.insert(agent_type, Arc::new(AtomicU64::new(count)));
            }
        }
        Ok(generator)
    }

    /// The run's ID.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// The next ID for a call of `agent_type`. A bad agent type consumes no number.
    pub fn next(&self, agent_type: &str) -> Result<ContextId, ContextIdError> {
        check_name(Segment::AgentType, agent_type)?;
        // `fetch_update` refuses to wrap: a counter restored from a resume state at
        // `u64::MAX` is an error, not a sequence 0 that no context id can parse.
        let previous = self
            .counter(agent_type)
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_add(1))
            .map_err(|_| {
                ContextIdError::bad(
                    Segment::SequenceNumber,
                    agent_type,
                    "the sequence counter is exhausted",
                )
            })?;
        let sequence = previous + 1;
        Ok(ContextId {
            run_id: self.run_id.clone(),
            agent_type: agent_type.to_owned(),
            sequence,
            timestamp: Timestamp::now(),
        })
    }

    /// How many IDs were issued for `agent_type` so far.
    pub fn issued(&self, agent_type: &str) -> u64 {
        let counters = self.counters.read().unwrap_or_else(PoisonError::into_inner);
        counters
            .get(agent_type)
            .map_or(0, |c| c.load(Ordering::Relaxed))
    }

    /// How many IDs were issued per agent type so far, for a state that resumes the run.
    pub(crate) fn snapshot(&self) -> std::collections::BTreeMap<String, u64> {
        let counters = self.counters.read().unwrap_or_else(PoisonError::into_inner);
        counters
            .iter()
            .map(|(agent, c)| (agent.clone(), c.load(Ordering::Relaxed)))
            .collect()
    }

    /// Moves each counter of `issued` forward to at least its count, so a generator shared
    /// with a resumed run never issues an ID the run already used.
    pub(crate) fn catch_up<'a>(
        &self,
        issued: impl IntoIterator<Item = (&'a String, &'a u64)>,
    ) -> Result<(), ContextIdError> {
        for (agent_type, count) in issued {
            check_name(Segment::AgentType, agent_type)?;
            self.counter(agent_type)
                .fetch_max(*count, Ordering::Relaxed);
        }
        Ok(())
    }

    fn counter(&self, agent_type: &str) -> Arc<AtomicU64> {
        if let Some(counter) = self
            .counters
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(agent_type)
        {
            return counter.clone();
        }
        self.counters
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(agent_type.to_owned())
            .or_default()
            .clone()
    }
}

impl Default for ContextIdGenerator {
    /// A generator for a new run, with a fresh run ID (`run-<UUID v7>`).
    fn default() -> Self {
        Self::fresh()
    }
}

/// `run-<UUID v7>` (`run-019a5c3e-7b1d-7c2a-9f3e-1b2c3d4e5f60`).
pub(crate) fn new_run_id() -> String {
    // UUID v7: time-ordered (a millisecond timestamp first), then 74 random bits, so IDs of
    // a fleet's runs do not collide and sort by creation.
    format!("run-{}", uuid::Uuid::now_v7())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_checks_its_parts_like_parsing_does() {
        let at: Timestamp = "2026-01-19T10:15:00.123Z".parse().unwrap();
        let text = "run-20260119T101500Z-1a2b3c4d/discovery_agent/12/2026-01-19T10:15:00.123Z";
        assert_eq!(
            ContextId::new("run-20260119T101500Z-1a2b3c4d", "discovery_agent", 12, at).unwrap(),
            text.parse().unwrap()
        );
        let bad = ContextId::new("run 1", "discovery_agent", 1, at).unwrap_err();
        assert_eq!(bad.segment(), Some(Segment::WorkflowRunId));
        let bad = ContextId::new("run-1", "", 1, at).unwrap_err();
        assert_eq!(bad.segment(), Some(Segment::AgentType));
        let bad = ContextId::new("run-1", "a", 0, at).unwrap_err();
        assert_eq!(bad.segment(), Some(Segment::SequenceNumber));
    }

    #[test]
    fn timestamps_count_milliseconds_from_the_unix_epoch() {
        for (text, millis) in [
            ("1970-01-01T00:00:00.000Z", 0),
            ("1969-12-31T23:59:59.999Z", -1),
            ("2000-02-29T12:00:00.500Z", 951_825_600_500),
            ("2024-02-29T00:00:00.000Z", 1_709_164_800_000),
        ] {
            let parsed: Timestamp = text.parse().unwrap();
            assert_eq!(parsed.unix_millis(), millis, "{text}");
            assert_eq!(parsed.to_string(), text);
            assert_eq!(Timestamp::from_unix_millis(millis), Some(parsed));
        }
        assert_eq!(
            serde_json::to_string(&Timestamp::from_unix_millis(0).unwrap()).unwrap(),
            "\"1970-01-01T00:00:00.000Z\""
        );
        let now = Timestamp::now();
        assert_eq!(now.to_string().parse::<Timestamp>().unwrap(), now);
    }

    #[test]
    fn civil_conversion_round_trips_over_the_range() {
        for days in (days_from_civil(0, 1, 1)..days_from_civil(10_000, 1, 1)).step_by(97) {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days);
        }
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
    }

    #[test]
    fn bounds_format() {
        assert_eq!(Timestamp::MIN.to_string(), "0000-01-01T00:00:00.000Z");
        assert_eq!(Timestamp::MAX.to_string(), "9999-12-31T23:59:59.999Z");
        assert_eq!(
            Timestamp::from_unix_millis(0).unwrap().to_string(),
            "1970-01-01T00:00:00.000Z"
        );
        assert!(Timestamp::from_unix_millis(Timestamp::MAX.unix_millis() + 1).is_none());
    }
}
