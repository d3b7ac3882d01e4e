//! Retries as a layer over any model: full-jitter exponential backoff that honours the
//! server's `retry-after-ms` and `Retry-After` up to a ceiling and its `x-should-retry`,
//! bounded in attempts and total time, on an injectable [`Clock`] so tests assert the delays
//! without sleeping.

use agent_contracts_runtime::{
    ChatModel, model::BoxFuture, model::ChatRequest, model::ChatResponse, model::ModelError,
    model::StreamDelta, model::StreamSink,
};
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

/// Time, for the retry loop: what time it is (for `Retry-After` dates and the total-time
/// bound) and how to wait.
pub trait Clock: Send + Sync + fmt::Debug {
    /// The current time.
    fn now(&self) -> SystemTime;
    /// Waits `duration`.
    fn sleep(&self, duration: Duration) -> BoxFuture<'static, ()>;
}

/// The real clock: the system time and tokio's timer.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> SystemTime {
        SystemTime::now()
    }
    fn sleep(&self, duration: Duration) -> BoxFuture<'static, ()> {
        Box::pin(tokio::time::sleep(duration))
    }
}

/// A clock for tests: sleeping returns at once, moves the time forward and records the
/// delay.
///
/// ```
/// use agent_contracts_llm::{Clock, ManualClock};
/// use std::time::Duration;
/// let clock = ManualClock::new();
/// let before = clock.now();
/// drop(clock.sleep(Duration::from_secs(2)));
/// assert_eq!(clock.sleeps(), [Duration::from_secs(2)]);
/// assert_eq!(clock.now().duration_since(before).ok(), Some(Duration::from_secs(2)));
/// ```
#[derive(Debug)]
pub struct ManualClock {
    now: Mutex<SystemTime>,
    sleeps: Mutex<Vec<Duration>>,
}

impl ManualClock {
    /// A clock at a fixed date (2026-01-01T00:00:00Z).
    pub fn new() -> Self {
        Self::at(SystemTime::UNIX_EPOCH + Duration::from_secs(1_767_225_600))
    }

    /// A clock at `now`.
    pub fn at(now: SystemTime) -> Self {
        Self {
            now: Mutex::new(now),
            sleeps: Mutex::new(Vec::new()),
        }
    }

    /// Every delay slept so far, in order.
    pub fn sleeps(&self) -> Vec<Duration> {
        lock(&self.sleeps).clone()
    }
}

impl Default for ManualClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for ManualClock {
    fn now(&self) -> SystemTime {
        *lock(&self.now)
    }
    fn sleep(&self, duration: Duration) -> BoxFuture<'static, ()> {
        lock(&self.sleeps).push(duration);
        let mut now = lock(&self.now);
        *now += duration;
        Box::pin(std::future::ready(()))
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// How often and how long to retry a failed model call, the way the official SDKs do.
///
/// Only errors with [`ModelError::is_retryable`] are retried (a provider's `x-should-retry`
/// decides that first). The wait before retry `n` (from 0) is what the server asked for
/// (`retry-after-ms`, `Retry-After`) up to `max_retry_after`, or else a random time up to
/// `min(max_delay, base_delay * 2^n)` ("full jitter"): a server asking for longer than the
/// ceiling gets the backoff, not the end of the run.
#[non_exhaustive]
#[derive(Debug, Clone, Copy)]
pub struct RetryPolicy {
    /// Attempts in all, the first included (1: never retry).
    pub max_attempts: u32,
    /// The backoff before the first retry, before jitter.
    pub base_delay: Duration,
    /// The longest backoff.
    pub max_delay: Duration,
    /// The longest server-asked wait honoured (default 60 s); above it, the backoff.
    pub max_retry_after: Duration,
    /// The total time budget: the longest time from the first attempt to the start of the
    /// last.
    pub max_elapsed: Duration,
    /// A random number in `[0, 1)` scaling each backoff; a constant makes delays exact.
    pub jitter: fn() -> f64,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_attempts: 4,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(30),
            max_retry_after: Duration::from_secs(60),
            max_elapsed: Duration::from_secs(300),
            jitter: fastrand::f64,
        }
    }
}

impl RetryPolicy {
    /// This policy with [`max_attempts`](Self::max_attempts) set.
    pub fn with_max_attempts(mut self, max_attempts: u32) -> Self {
        self.max_attempts = max_attempts;
        self
    }

    /// This policy with [`base_delay`](Self::base_delay) set.
    pub fn with_base_delay(mut self, base_delay: Duration) -> Self {
        self.base_delay = base_delay;
        self
    }

    /// This policy with [`max_delay`](Self::max_delay) set.
    pub fn with_max_delay(mut self, max_delay: Duration) -> Self {
        self.max_delay = max_delay;
        self
    }

    /// This policy with [`max_retry_after`](Self::max_retry_after) set.
    pub fn with_max_retry_after(mut self, max_retry_after: Duration) -> Self {
        self.max_retry_after = max_retry_after;
        self
    }

    /// This policy with [`max_elapsed`](Self::max_elapsed) set.
    pub fn with_max_elapsed(mut self, max_elapsed: Duration) -> Self {
        self.max_elapsed = max_elapsed;
        self
    }

    /// This policy with its [`jitter`](Self::jitter) source set.
    pub fn with_jitter(mut self, jitter: fn() -> f64) -> Self {
        self.jitter = jitter;
        self
    }
    /// One attempt, no retry.
    pub fn never() -> Self {
        Self {
            max_attempts: 1,
            ..Self::default()
        }
    }

    /// The wait before retry `retry` (from 0) after `error`, `elapsed` after the first
    /// attempt began; `None` when the retries should stop: the error is final, or the
    /// attempts or the time budget are used up.
    pub fn delay(&self, retry: u32, error: &ModelError, elapsed: Duration) -> Option<Duration> {
        if !error.is_retryable() || retry.saturating_add(1) >= self.max_attempts {
            return None;
        }
        let delay = match server_wait(error) {
            Some(wait) if wait <= self.max_retry_after => wait,
            _ => self.backoff(retry),
        };
        (elapsed.saturating_add(delay) <= self.max_elapsed).then_some(delay)
    }

    fn backoff(&self, retry: u32) -> Duration {
        let exp = self
            .base_delay
            .saturating_mul(2u32.saturating_pow(retry.min(31)))
            .min(self.max_delay);
        exp.mul_f64((self.jitter)().clamp(0.0, 1.0))
    }
}

/// The wait the provider asked for with its error, if any.
fn server_wait(error: &ModelError) -> Option<Duration> {
    match error {
        ModelError::RateLimited { retry_after, .. } | ModelError::Status { retry_after, .. } => {
            *retry_after
        }
        _ => None,
    }
}

/// The wait a response asks for: `retry-after-ms` (OpenAI), else `Retry-After` in seconds or
/// as an HTTP date.
pub(crate) fn retry_after(
    headers: &reqwest::header::HeaderMap,
    now: SystemTime,
) -> Option<Duration> {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    if let Some(ms) = header("retry-after-ms").and_then(|v| v.trim().parse::<f64>().ok()) {
        return Duration::try_from_secs_f64(ms / 1000.0).ok();
    }
    let value = header("retry-after")?.trim();
    if let Ok(secs) = value.parse::<f64>() {
        return Duration::try_from_secs_f64(secs).ok();
    }
    let date = httpdate::parse_http_date(value).ok()?;
    Some(date.duration_since(now).unwrap_or_default())
}

/// Any [`ChatModel`] with retries: a layer, so it wraps a provider, a [`Router`](crate::Router),
/// a [`Fallback`](crate::Fallback) or a scripted model alike.
///
/// ```
/// use agent_contracts_runtime::{ChatModel, model::ChatRequest, ScriptedModel};
/// use agent_contracts_llm::{ManualClock, RetryPolicy, Retrying};
/// use std::sync::Arc;
/// let clock = Arc::new(ManualClock::new());
/// let model = Retrying::new(ScriptedModel::default(), RetryPolicy::default()).clock(clock.clone());
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// // An exhausted script is final: no retry, no wait.
/// assert!(model.complete(&ChatRequest::new("a", vec![], vec![])).await.is_err());
/// assert!(clock.sleeps().is_empty());
/// # });
/// ```
#[derive(Debug, Clone)]
pub struct Retrying<M> {
    model: M,
    policy: RetryPolicy,
    clock: Arc<dyn Clock>,
}

impl<M> Retrying<M> {
    /// `model`, retried as `policy` says, waiting on the system clock.
    pub fn new(model: M, policy: RetryPolicy) -> Self {
        Self {
            model,
            policy,
            clock: Arc::new(SystemClock),
        }
    }

    /// Waits on `clock` instead (tests pass a [`ManualClock`]).
    #[must_use]
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// The wrapped model.
    pub fn inner(&self) -> &M {
        &self.model
    }
}

impl<M: ChatModel> ChatModel for Retrying<M> {
    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        Box::pin(async move {
            let start = self.clock.now();
            let mut retry = 0;
            loop {
                let error = match self.model.complete(request).await {
                    Ok(response) => return Ok(response),
                    Err(error) => error,
                };
                match self.next_wait(start, retry, error) {
                    Ok(delay) => self.clock.sleep(delay).await,
                    Err(error) => return Err(error),
                }
                retry += 1;
            }
        })
    }

    /// Retries a stream like a whole answer, within the same attempts: before any delta
    /// reached the sink, or after some when the sink can start over
    /// ([`StreamSink::restart`]: it discards the partial answer, so a cut stream is asked
    /// again from the start). A sink that cannot start over gets the failure (with the
    /// attempts made) once it has seen text.
    fn stream<'a>(
        &'a self,
        request: &'a ChatRequest,
        sink: &'a mut dyn StreamSink,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        Box::pin(async move {
            let start = self.clock.now();
            let mut retry = 0;
            loop {
                let mut watched = Watched::new(&mut *sink);
                let error = match self.model.stream(request, &mut watched).await {
                    Ok(response) => return Ok(response),
                    Err(error) => error,
                };
                let delivered = watched.delivered;
                let elapsed = self.clock.now().duration_since(start).unwrap_or_default();
                let Some(delay) = self.policy.delay(retry, &error, elapsed) else {
                    return Err(gave_up(error, retry + 1));
                };
                // The sink starts over only for an attempt that will be made.
                if delivered && !sink.restart() {
                    return Err(gave_up(error, retry + 1));
                }
                warn_retry(&error, retry + 1, delay, &self.policy);
                self.clock.sleep(delay).await;
                retry += 1;
            }
        })
    }
}

impl<M> Retrying<M> {
    /// The wait before the next attempt after `error` (warned about), or the error to end
    /// with: `error` itself after one attempt, [`ModelError::GaveUp`] after more.
    fn next_wait(
        &self,
        start: SystemTime,
        retry: u32,
        error: ModelError,
    ) -> Result<Duration, ModelError> {
        let elapsed = self.clock.now().duration_since(start).unwrap_or_default();
        let Some(delay) = self.policy.delay(retry, &error, elapsed) else {
            return Err(gave_up(error, retry + 1));
        };
        warn_retry(&error, retry + 1, delay, &self.policy);
        Ok(delay)
    }
}

/// `error` after `attempts` attempts: itself after one, wrapped with the count after more.
fn gave_up(error: ModelError, attempts: u32) -> ModelError {
    if attempts <= 1 || matches!(error, ModelError::Stopped { .. }) {
        return error;
    }
    ModelError::GaveUp {
        attempts,
        last: Box::new(error),
    }
}

/// A sink that notes whether a delta went through: after one, a layer does not try again.
pub(crate) struct Watched<'s> {
    sink: &'s mut dyn StreamSink,
    pub delivered: bool,
}

impl<'s> Watched<'s> {
    pub fn new(sink: &'s mut dyn StreamSink) -> Self {
        Self {
            sink,
            delivered: false,
        }
    }
}

impl StreamSink for Watched<'_> {
    fn delta(&mut self, delta: StreamDelta<'_>) -> std::ops::ControlFlow<()> {
        self.delivered = true;
        self.sink.delta(delta)
    }

    /// An inner retrying layer starts its reader over: this attempt has delivered nothing
    /// the reader still holds.
    fn restart(&mut self) -> bool {
        let restarted = self.sink.restart();
        if restarted {
            self.delivered = false;
        }
        restarted
    }
}

/// The warning each retry shows as it happens: the error, the wait, and the server's ask
/// when it was above the ceiling.
fn warn_retry(error: &ModelError, retry: u32, delay: Duration, policy: &RetryPolicy) {
    let asked = server_wait(error).filter(|wait| *wait > policy.max_retry_after);
    tracing::warn!(
        error.type = crate::model_error::error_type(error),
        error = %error,
        retry,
        delay_ms = delay.as_millis() as u64,
        server_wait_ms = asked.map(|d| d.as_millis() as u64),
        "model call failed, retrying"
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::{HeaderMap, HeaderValue};

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (k, v) in pairs {
            map.insert(
                *k,
                HeaderValue::from_str(v).unwrap_or(HeaderValue::from_static("")),
            );
        }
        map
    }

    #[test]
    fn retry_after_reads_milliseconds_seconds_and_dates() {
        let now = ManualClock::new().now();
        let ms = headers(&[("retry-after-ms", "1500"), ("retry-after", "9")]);
        assert_eq!(retry_after(&ms, now), Some(Duration::from_millis(1500)));
        let secs = headers(&[("retry-after", "2")]);
        assert_eq!(retry_after(&secs, now), Some(Duration::from_secs(2)));
        let date = httpdate::fmt_http_date(now + Duration::from_secs(7));
        let dated = headers(&[("retry-after", &date)]);
        assert_eq!(retry_after(&dated, now), Some(Duration::from_secs(7)));
        let past = httpdate::fmt_http_date(now - Duration::from_secs(7));
        assert_eq!(
            retry_after(&headers(&[("retry-after", &past)]), now),
            Some(Duration::ZERO)
        );
        assert_eq!(retry_after(&headers(&[("retry-after", "soon")]), now), None);
    }

    #[test]
    fn backoff_doubles_up_to_the_cap_with_full_jitter() {
        let policy = RetryPolicy {
            max_attempts: 10,
            jitter: || 1.0,
            max_delay: Duration::from_secs(3),
            ..RetryPolicy::default()
        };
        let error = crate::model_error::status_error(503, "");
        let delays: Vec<_> = (0..4)
            .map(|n| policy.delay(n, &error, Duration::ZERO))
            .collect();
        let ms = |m| Some(Duration::from_millis(m));
        assert_eq!(delays, [ms(500), ms(1000), ms(2000), ms(3000)]);
        let half = RetryPolicy {
            jitter: || 0.5,
            ..policy
        };
        assert_eq!(half.delay(1, &error, Duration::ZERO), ms(500));
    }

    #[test]
    fn retries_stop_at_each_bound() {
        let policy = RetryPolicy {
            jitter: || 1.0,
            ..RetryPolicy::default()
        };
        let busy = crate::model_error::status_error(503, "");
        assert_eq!(policy.delay(3, &busy, Duration::ZERO), None, "attempts");
        let late = Duration::from_millis(299_600);
        assert_eq!(policy.delay(0, &busy, late), None, "total time");
        let bad = crate::model_error::status_error(400, "");
        assert_eq!(policy.delay(0, &bad, Duration::ZERO), None, "final error");
        let refused = crate::model_error::told_status_error(503, "", None, Some(false));
        assert_eq!(
            policy.delay(0, &refused, Duration::ZERO),
            None,
            "x-should-retry"
        );
    }

    #[test]
    fn a_server_wait_is_honoured_up_to_the_ceiling_then_backed_off() {
        let policy = RetryPolicy {
            jitter: || 1.0,
            ..RetryPolicy::default()
        };
        let limited = |secs| ModelError::RateLimited {
            retry_after: Some(Duration::from_secs(secs)),
            message: None,
        };
        let wait = |error: &ModelError| policy.delay(1, error, Duration::ZERO);
        assert_eq!(wait(&limited(35)), Some(Duration::from_secs(35)));
        assert_eq!(wait(&limited(60)), Some(Duration::from_secs(60)));
        assert_eq!(wait(&limited(61)), Some(Duration::from_secs(1)), "backoff");
        let two = Some(Duration::from_secs(2));
        let told = crate::model_error::told_status_error(400, "", two, Some(true));
        assert_eq!(wait(&told), Some(Duration::from_secs(2)));
    }
}
