#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

#[cfg(feature = "anthropic")]
pub mod anthropic;
mod fallback;
mod http;
mod model_error;
#[cfg(feature = "openai")]
pub mod openai;
mod retry;
mod router;
mod secret;
mod spec;
mod strict;
mod trace;

#[cfg(feature = "anthropic")]
pub use anthropic::{AnthropicBuilder, AnthropicModel, PromptCaching};
pub use fallback::Fallback;
pub use http::ConfigError;
#[cfg(feature = "openai")]
pub use openai::{OpenAiBuilder, OpenAiModel, ReasoningEffort};
/// Header names and values, for the builders' `header` (re-exported from reqwest).
pub use reqwest::header::{HeaderName, HeaderValue};
pub use retry::{Clock, ManualClock, RetryPolicy, Retrying, SystemClock, retry_after};
pub use router::Router;
pub use secret::ApiKey;
pub use spec::{REQUEST_TIMEOUT_ENV, from_spec, from_spec_with};
pub use strict::{StructuredOutput, is_strict_compatible};
