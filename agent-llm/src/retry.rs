//! Retries: full-jitter exponential backoff that honours the server's `retry-after-ms` and
//! `Retry-After`, bounded in attempts and total time, on an injectable [`Clock`] so tests
//! assert the delays without sleeping.

use agent_core::BoxFuture;
use agent_core::ModelError;
use std::fmt;
use std::sync::Mutex;
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
/// use agent_llm::{Clock, ManualClock};
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

/// How often and how long to retry a failed model call.
///
/// Only errors with [`ModelError::is_retryable`] are retried. The wait before retry `n`
/// (from 0) is what the server asked for, or else a random time up to
/// `min(max_delay, base_delay * 2^n)` ("full jitter").
#[derive(Debug, Clone, Copy)]
pub struct RetryPolicy {
    /// Attempts in all, the first included (1: never retry).
    pub max_attempts: u32,
    /// The backoff before the first retry, before jitter.
    pub base_delay: Duration,
    /// The longest wait; a server asking for more ends the retries.
    pub max_delay: Duration,
    /// The longest time from the first attempt to the start of the last.
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
            max_elapsed: Duration::from_secs(120),
            jitter: fastrand::f64,
        }
    }
}

impl RetryPolicy {
    /// One attempt, no retry.
    pub fn never() -> Self {
        Self {
            max_attempts: 1,
            ..Self::default()
        }
    }

    /// The wait before retry `retry` (from 0), or `None` when the retries should stop:
    /// the error is final, the attempts or the time are used up, or the server asks for a
    /// longer wait than `max_delay`.
    pub fn delay(
        &self,
        retry: u32,
        error: &ModelError,
        hint: Option<Duration>,
        elapsed: Duration,
    ) -> Option<Duration> {
        if !error.is_retryable() || retry.saturating_add(1) >= self.max_attempts {
            return None;
        }
        let delay = match hint {
            Some(hint) if hint > self.max_delay => return None,
            Some(hint) => hint,
            None => self.backoff(retry),
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

/// The wait a response asks for: `retry-after-ms` (OpenAI), else `Retry-After` in seconds or
/// as an HTTP date.
pub fn retry_after(headers: &reqwest::header::HeaderMap, now: SystemTime) -> Option<Duration> {
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

/// Runs `attempt` until it succeeds, fails for good, or the policy says stop; sleeps on
/// `clock` between attempts. `attempt` returns the error with the server's wait, if any.
pub(crate) async fn with_retries<T, F, Fut>(
    policy: &RetryPolicy,
    clock: &dyn Clock,
    mut attempt: F,
) -> Result<T, ModelError>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, (ModelError, Option<Duration>)>>,
{
    let start = clock.now();
    let mut retry = 0;
    loop {
        let (error, hint) = match attempt().await {
            Ok(value) => return Ok(value),
            Err(failure) => failure,
        };
        let elapsed = clock.now().duration_since(start).unwrap_or_default();
        let Some(delay) = policy.delay(retry, &error, hint, elapsed) else {
            return Err(error);
        };
        tracing::warn!(
            error.type = crate::model_error::error_type(&error),
            error = %error,
            retry = retry + 1,
            delay_ms = delay.as_millis() as u64,
            "model call failed, retrying"
        );
        clock.sleep(delay).await;
        retry += 1;
    }
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
            .map(|n| policy.delay(n, &error, None, Duration::ZERO))
            .collect();
        let ms = |m| Some(Duration::from_millis(m));
        assert_eq!(delays, [ms(500), ms(1000), ms(2000), ms(3000)]);
        let half = RetryPolicy {
            jitter: || 0.5,
            ..policy
        };
        assert_eq!(half.delay(1, &error, None, Duration::ZERO), ms(500));
    }

    #[test]
    fn retries_stop_at_each_bound() {
        let policy = RetryPolicy {
            jitter: || 1.0,
            ..RetryPolicy::default()
        };
        let busy = crate::model_error::status_error(503, "");
        assert_eq!(
            policy.delay(3, &busy, None, Duration::ZERO),
            None,
            "attempts"
        );
        let late = Duration::from_millis(119_600);
        assert_eq!(policy.delay(0, &busy, None, late), None, "total time");
        let long = Some(Duration::from_secs(31));
        assert_eq!(
            policy.delay(0, &busy, long, Duration::ZERO),
            None,
            "server wait"
        );
        let bad = crate::model_error::status_error(400, "");
        assert_eq!(
            policy.delay(0, &bad, None, Duration::ZERO),
            None,
            "final error"
        );
    }
}
