#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod anthropic;
mod fallback;
mod http;
mod model;
mod model_error;
pub mod openai;
mod retry;
mod router;
mod secret;
mod spec;
mod sse;
mod strict;
mod trace;

pub use anthropic::PromptCaching;
pub use fallback::Fallback;
pub use http::ConfigError;
pub use model::{HttpModel, HttpModelBuilder, Provider};
pub use openai::ReasoningEffort;
pub use retry::{Clock, ManualClock, RetryPolicy, Retrying, SystemClock};
pub use router::Router;
pub use secret::ApiKey;
pub use spec::{REQUEST_TIMEOUT_ENV, from_spec, from_spec_with};
pub use strict::{StructuredOutput, is_strict_compatible};
pub use trace::Traced;
