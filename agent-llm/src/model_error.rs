//! The model errors the HTTP models make, and the stable names tracing gives them.

use agent_contracts_runtime::{model::ChatResponse, model::ModelError};

/// Most bytes of a response body kept in a [`ModelError::Status`].
const ERROR_BODY_BYTES: usize = 1024;

/// An error status with the body cut to its first 1 KiB, and no word from the server on
/// retrying.
#[cfg(test)]
pub(crate) fn status_error(status: u16, body: &str) -> ModelError {
    told_status_error(status, body, None, None)
}

/// An error status with what the server said on retrying: its wait and `x-should-retry`.
pub(crate) fn told_status_error(
    status: u16,
    body: &str,
    retry_after: Option<std::time::Duration>,
    should_retry: Option<bool>,
) -> ModelError {
    ModelError::Status {
        status,
        body: agent_contracts_runtime::__private::truncate(body, ERROR_BODY_BYTES).into_owned(),
        retry_after,
        should_retry,
    }
}

/// What an error body says: its `error.message` (OpenAI's and Anthropic's error format), or
/// else the start of the body.
pub(crate) fn provider_message(body: &str) -> String {
    let parsed = serde_json::from_str::<serde_json::Value>(body).ok();
    let message = parsed
        .as_ref()
        .and_then(|v| v.pointer("/error/message"))
        .and_then(serde_json::Value::as_str)
        .unwrap_or(body);
    agent_contracts_runtime::__private::truncate(message.trim(), ERROR_BODY_BYTES).into_owned()
}

/// An error the provider sent in the middle of a stream, as the status it stands for: a rate
/// limit, or an error status with the provider's message.
pub(crate) fn stream_error(status: u16, message: String) -> ModelError {
    if status == 429 {
        return ModelError::RateLimited {
            retry_after: None,
            message: Some(message),
        };
    }
    told_status_error(status, &message, None, None)
}

/// The error of a stream its reader stopped, with what was received.
pub(crate) fn stopped(partial: ChatResponse) -> ModelError {
    ModelError::Stopped {
        partial: Box::new(partial),
    }
}

/// The error for an answer cut off at its token limit, with the tokens it took.
pub(crate) fn cut_off(usage: Option<&agent_contracts_runtime::model::Usage>) -> ModelError {
    ModelError::MaxTokens {
        output_tokens: usage.map(|u| u.output_tokens),
    }
}

/// A short, stable name of the kind of error, for the `error.type` tracing field (the
/// runtime's names, so a trace names one error alike wherever it is recorded).
pub(crate) fn error_type(error: &ModelError) -> &'static str {
    error.error_type()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_status_error_keeps_a_bounded_excerpt() {
        let ModelError::Status { body, .. } = status_error(500, &"é".repeat(2000)) else {
            unreachable!()
        };
        assert!(body.len() <= ERROR_BODY_BYTES + "…".len());
        assert!(body.starts_with("éé"));
    }

    #[test]
    fn a_provider_message_is_the_error_message_or_the_body() {
        let openai = r#"{"error":{"message":"Rate limit reached","type":"requests"}}"#;
        assert_eq!(provider_message(openai), "Rate limit reached");
        assert_eq!(provider_message(" busy \n"), "busy");
    }

    #[test]
    fn error_types_name_their_kind() {
        assert_eq!(error_type(&status_error(500, "")), "http_status");
        assert_eq!(error_type(&ModelError::Timeout), "timeout");
        assert_eq!(error_type(&ModelError::Other("x".into())), "other");
        assert_eq!(
            error_type(&ModelError::Malformed("x".into())),
            "malformed_response"
        );
    }
}
