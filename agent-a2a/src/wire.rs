//! The A2A v1.0 shapes this crate reads and writes, in their JSON form (the protobuf JSON
//! mapping: camelCase fields, enums by their full names such as `TASK_STATE_COMPLETED`), and
//! the JSON-RPC envelope around them.

use serde_json::{Map, Value, json};

/// The URI of the agent card's extension that carries each skill's contracts
/// (`params.skills.<id>.input_schema` and `output_schema`, the schemas as written).
pub const CONTRACTS_EXTENSION: &str = "urn:agent-contracts:contracts:v1";

/// The A2A protocol version this crate speaks.
pub const PROTOCOL_VERSION: &str = "1.0";

/// The state of a task.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskState {
    /// Received, not yet running.
    Submitted,
    /// Running.
    Working,
    /// Done: the output is an artifact.
    Completed,
    /// Ended by an error the caller did not cause.
    Failed,
    /// Ended by the caller.
    Canceled,
    /// Paused on a question: the next message on the task answers it.
    InputRequired,
    /// Refused: the call broke the skill's input contract (the retry error says how).
    Rejected,
}

impl TaskState {
    /// The protobuf JSON name (`TASK_STATE_COMPLETED`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Submitted => "TASK_STATE_SUBMITTED",
            Self::Working => "TASK_STATE_WORKING",
            Self::Completed => "TASK_STATE_COMPLETED",
            Self::Failed => "TASK_STATE_FAILED",
            Self::Canceled => "TASK_STATE_CANCELED",
            Self::InputRequired => "TASK_STATE_INPUT_REQUIRED",
            Self::Rejected => "TASK_STATE_REJECTED",
        }
    }

    /// The state its protobuf JSON name (or the 0.3 kebab-case name) names.
    pub fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "TASK_STATE_SUBMITTED" | "submitted" => Self::Submitted,
            "TASK_STATE_WORKING" | "working" => Self::Working,
            "TASK_STATE_COMPLETED" | "completed" => Self::Completed,
            "TASK_STATE_FAILED" | "failed" => Self::Failed,
            "TASK_STATE_CANCELED" | "canceled" => Self::Canceled,
            "TASK_STATE_INPUT_REQUIRED" | "input-required" => Self::InputRequired,
            "TASK_STATE_REJECTED" | "rejected" => Self::Rejected,
            _ => return None,
        })
    }

    /// The task can go on no more.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            Self::Completed | Self::Failed | Self::Canceled | Self::Rejected
        )
    }

    /// The task waits for nothing of the server: it ended, or it waits for the caller.
    pub fn is_settled(self) -> bool {
        self.is_terminal() || self == Self::InputRequired
    }
}

/// A text part.
pub(crate) fn text_part(text: &str) -> Value {
    json!({"text": text})
}

/// A data part (a JSON value).
pub(crate) fn data_part(data: Value) -> Value {
    json!({"data": data, "mediaType": "application/json"})
}

/// A new message ID.
pub(crate) fn new_id(prefix: &str) -> String {
    format!("{prefix}-{}", uuid::Uuid::now_v7())
}

/// A message of the agent on a task.
pub(crate) fn agent_message(task_id: &str, context_id: &str, parts: Vec<Value>) -> Value {
    json!({
        "messageId": new_id("msg"),
        "role": "ROLE_AGENT",
        "taskId": task_id,
        "contextId": context_id,
        "parts": parts,
    })
}

/// What the server reads of a message: its task and context, the skill its metadata names,
/// its text and its data.
#[derive(Debug, Default)]
pub(crate) struct Incoming {
    pub(crate) task_id: Option<String>,
    pub(crate) context_id: Option<String>,
    pub(crate) skill: Option<String>,
    /// The text parts, joined by blank lines.
    pub(crate) text: Option<String>,
    /// The data part, if any.
    pub(crate) data: Option<Value>,
    /// The file parts, each as the argument it fills: a media field's value (`raw` bytes as
    /// a base64 `data:` URL of the part's `mediaType`, or the part's `url`).
    pub(crate) files: Vec<(String, String)>,
    /// The message as received, for the task's history.
    pub(crate) message: Value,
    /// `configuration.returnImmediately`.
    pub(crate) return_immediately: bool,
}

/// Reads `SendMessage`'s params. Untrusted: every shape the server does not read is an
/// invalid-params error naming what is wrong.
pub(crate) fn read_send(params: &Value) -> Result<Incoming, String> {
    let Some(message) = params.get("message").filter(|m| m.is_object()) else {
        return Err("`params.message` must be a message object".into());
    };
    let string = |value: Option<&Value>, what: &str| -> Result<Option<String>, String> {
        match value {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) if s.is_empty() => Ok(None),
            Some(Value::String(s)) if s.len() <= 256 => Ok(Some(s.clone())),
            Some(_) => Err(format!("`{what}` must be a string of at most 256 bytes")),
        }
    };
    let task_id = string(message.get("taskId"), "message.taskId")?;
    let context_id = string(message.get("contextId"), "message.contextId")?;
    let skill = match string(message.pointer("/metadata/skill"), "message.metadata.skill")? {
        Some(skill) => Some(skill),
        None => string(params.pointer("/metadata/skill"), "metadata.skill")?,
    };
    let Some(parts) = message.get("parts").and_then(Value::as_array) else {
        return Err("`message.parts` must be a list of parts".into());
    };
    let mut texts = Vec::new();
    let mut data = None;
    let mut files = Vec::new();
    for (index, part) in parts.iter().enumerate() {
        if let Some(text) = part.get("text").and_then(Value::as_str) {
            texts.push(text.to_owned());
        } else if let Some(value) = part.get("data") {
            if data.is_some() {
                return Err(format!(
                    "`message.parts[{index}]`: one data part per message (the skill's arguments)"
                ));
            }
            data = Some(value.clone());
        } else if part.get("raw").is_some() || part.get("url").is_some() {
            files.push(file_argument(part).map_err(|e| format!("`message.parts[{index}]`: {e}"))?);
        } else {
            return Err(format!(
                "`message.parts[{index}]`: only text, data and file parts are read"
            ));
        }
    }
    let text = (!texts.is_empty()).then(|| texts.join("\n\n"));
    let return_immediately = params
        .pointer("/configuration/returnImmediately")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    Ok(Incoming {
        task_id,
        context_id,
        skill,
        text,
        data,
        files,
        message: message.clone(),
        return_immediately,
    })
}

/// A file part as the media argument it fills: the field its `metadata.field` names (else its
/// `filename`), and the value a media field takes (the input contract checks it).
fn file_argument(part: &Value) -> Result<(String, String), String> {
    let field = part
        .pointer("/metadata/field")
        .or_else(|| part.get("filename"))
        .and_then(Value::as_str)
        .filter(|f| !f.is_empty() && f.len() <= 256)
        .ok_or("a file part names the argument it fills in `metadata.field` or `filename`")?;
    let value = match (part.get("raw"), part.get("url")) {
        (Some(Value::String(raw)), None) => match part.get("mediaType").and_then(Value::as_str) {
            Some(media_type) => format!("data:{media_type};base64,{raw}"),
            None => raw.clone(),
        },
        (None, Some(Value::String(url))) => url.clone(),
        _ => return Err("a file part holds one `raw` (base64) or one `url` string".into()),
    };
    Ok((field.to_owned(), value))
}

impl Incoming {
    /// The skill's arguments as JSON text: the data part (an object), with the text parts as
    /// its `task` when it has none, and each file part as the media argument it names; text
    /// alone is `{"task": text}`.
    pub(crate) fn kwargs(&self) -> Result<String, String> {
        let mut object = match &self.data {
            Some(Value::Object(map)) => map.clone(),
            Some(_) => {
                return Err(
                    "the data part must be a JSON object: the skill's arguments by name".into(),
                );
            }
            None => Map::new(),
        };
        for (field, value) in &self.files {
            object.insert(field.clone(), Value::String(value.clone()));
        }
        if let Some(text) = &self.text
            && !object.contains_key("task")
        {
            object.insert("task".into(), Value::String(text.clone()));
        }
        if object.is_empty() {
            return Err("the message has neither a data part nor text".into());
        }
        Ok(Value::Object(object).to_string())
    }
}

/// JSON-RPC and A2A error codes.
pub(crate) mod code {
    pub(crate) const PARSE: i64 = -32700;
    pub(crate) const INVALID_REQUEST: i64 = -32600;
    pub(crate) const METHOD_NOT_FOUND: i64 = -32601;
    pub(crate) const INVALID_PARAMS: i64 = -32602;
    pub(crate) const INTERNAL: i64 = -32603;
    pub(crate) const TASK_NOT_FOUND: i64 = -32001;
    pub(crate) const TASK_NOT_CANCELABLE: i64 = -32002;
    pub(crate) const UNSUPPORTED: i64 = -32004;
}

/// A JSON-RPC error.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RpcError {
    pub(crate) code: i64,
    pub(crate) message: String,
}

impl RpcError {
    pub(crate) fn new(code: i64, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }

    /// The response object for request `id`.
    pub(crate) fn response(&self, id: &Value) -> Value {
        json!({"jsonrpc": "2.0", "id": id, "error": {"code": self.code, "message": self.message}})
    }
}

/// The success response object for request `id`.
pub(crate) fn result(id: &Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_reads_as_kwargs_with_its_text_as_the_task() {
        let params = json!({"message": {"messageId": "m", "role": "ROLE_USER",
            "parts": [{"text": "Plan it"}, {"data": {"n": 234.0}}], "metadata": {"skill": "s"}}});
        let incoming = read_send(&params).unwrap();
        assert_eq!(incoming.skill.as_deref(), Some("s"));
        assert_eq!(
            incoming.kwargs().unwrap(),
            r#"{"n":234.0,"task":"Plan it"}"#
        );
        let text_only = json!({"message": {"parts": [{"text": "hi"}]}});
        assert_eq!(
            read_send(&text_only).unwrap().kwargs().unwrap(),
            r#"{"task":"hi"}"#
        );
        for bad in [
            json!({}),
            json!({"message": {"parts": [{"raw": "AA=="}]}}),
            json!({"message": {"parts": [{"data": {}}, {"data": {}}]}}),
            json!({"message": {"parts": [], "taskId": 5}}),
        ] {
            assert!(read_send(&bad).is_err(), "{bad}");
        }
        let list = json!({"message": {"parts": [{"data": [1]}]}});
        assert!(read_send(&list).unwrap().kwargs().is_err());
    }

    #[test]
    fn file_parts_fill_the_media_arguments_they_name() {
        let params = json!({"message": {"parts": [
            {"text": "Which total?"},
            {"raw": "iVBORw0KGgo=", "mediaType": "image/png", "metadata": {"field": "screenshot"}},
            {"url": "https://example.com/a.pdf", "filename": "invoice"},
        ]}});
        let kwargs: Value =
            serde_json::from_str(&read_send(&params).unwrap().kwargs().unwrap()).unwrap();
        assert_eq!(
            kwargs,
            json!({"task": "Which total?", "screenshot": "data:image/png;base64,iVBORw0KGgo=",
                "invoice": "https://example.com/a.pdf"})
        );
        let both =
            json!({"message": {"parts": [{"raw": "AA==", "url": "https://a", "filename": "f"}]}});
        assert!(read_send(&both).is_err());
    }

    #[test]
    fn states_name_themselves_both_ways() {
        for state in [
            TaskState::Submitted,
            TaskState::Working,
            TaskState::Completed,
            TaskState::Failed,
            TaskState::Canceled,
            TaskState::InputRequired,
            TaskState::Rejected,
        ] {
            assert_eq!(TaskState::parse(state.as_str()), Some(state));
        }
        assert!(TaskState::InputRequired.is_settled() && !TaskState::InputRequired.is_terminal());
    }
}
