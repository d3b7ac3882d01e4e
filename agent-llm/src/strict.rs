//! Native structured output: which schema a provider's strict mode is sent.
//!
//! An agent's output contract comes with the strict forms the code generator decided at build
//! time ([`OutputSchema::strict`]): the contract as written, or its lossless rewrite (optional
//! properties required and nullable, objects closed, keywords the provider refuses dropped),
//! whose `null`s the runtime removes before the contract check. A contract built at run time,
//! and a tool's parameters, are sent strict only when they fit as written. The rules live in
//! `agent_contracts_schema::strict`, shared with the code generator.

use agent_contracts_runtime::{contract::ToolDefinition, model::OutputSchema};
use agent_contracts_schema::strict::{Dialect, Strictness, strict_form};
use serde_json::Value;

/// Whether a request with an output schema asks the server for native structured output, and
/// tools whose parameters fit the provider's strict subset are marked `strict: true`.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StructuredOutput {
    /// The strict form when the contract has one (as written or rewritten), and strict
    /// tools: OpenAI's `response_format` with `strict: true` (`strict: false` with the schema
    /// as written when there is none); Anthropic's `output_config.format` (nothing when there
    /// is none: it has no non-strict mode).
    #[default]
    Auto,
    /// OpenAI: `response_format` with the schema as written and `strict: false`, no strict
    /// tools. Anthropic: as [`StructuredOutput::Off`].
    NonStrict,
    /// Neither: the output contract alone checks the answer (servers and models without
    /// structured output).
    Off,
}

/// Whether `schema` meets OpenAI's strict subset as written.
///
/// ```
/// let schema = serde_json::json!({"type": "object", "properties": {"a": {"type": "string"}},
///     "required": ["a"], "additionalProperties": false});
/// assert!(agent_contracts_llm::is_strict_compatible(&schema));
/// ```
pub fn is_strict_compatible(schema: &Value) -> bool {
    fits_as_written(schema, Dialect::OpenAi)
}

fn fits_as_written(schema: &Value, dialect: Dialect) -> bool {
    strict_form(schema, dialect) == Strictness::AsWritten
}

/// The schema `dialect`'s strict mode is sent for `output`, if any.
pub(crate) fn output_schema(output: &OutputSchema, dialect: Dialect) -> Option<&Value> {
    let decided = output.strict.iter().find(|(d, _)| *d == dialect);
    match decided {
        Some((_, schema)) => Some(schema),
        None => fits_as_written(&output.schema, dialect).then_some(&output.schema),
    }
}

/// Whether `tool` is sent with `strict: true`: its parameters fit as written (its arguments
/// reach the input contract as the model wrote them, so no rewrite can be undone there).
pub(crate) fn tool_is_strict(tool: &ToolDefinition, dialect: Dialect) -> bool {
    fits_as_written(&tool.parameters, dialect)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn optional_properties_open_objects_and_other_keywords_are_not_strict_as_written() {
        let optional = json!({"type": "object", "properties": {"a": {"type": "string"}},
            "required": [], "additionalProperties": false});
        let open = json!({"type": "object", "properties": {"a": {"type": "string"}},
            "required": ["a"]});
        let one_of = json!({"type": "object", "properties": {"a": {"allOf": [{"type": "string"}]}},
            "required": ["a"], "additionalProperties": false});
        let nested_open = json!({"type": "object", "properties": {"a": {"type": "object"}},
            "required": ["a"], "additionalProperties": false});
        let not_object = json!({"type": "array"});
        for schema in [optional, open, one_of, nested_open, not_object] {
            assert!(!is_strict_compatible(&schema), "{schema}");
        }
    }
}
