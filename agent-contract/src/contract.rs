//! A contract: an agent's JSON Schema, compiled once, that turns a context (or an answer) into
//! either `Ok` or the structured retry error a caller can act on.

use crate::instance::{Context, TapeJson};
use crate::kwargs::ToolCall;
use crate::limits::Limits;
use crate::retry::{ErrorKind, PathSegment, RetryDetails, RetryError, Violation};
use crate::truncate::truncate;
use agent_contracts_schema::{validator_options, validator_options_for};
use jsonschema::error::ValidationErrorKind;
use jsonschema::{ValidationError, Validator};
use serde_json::Value;
use std::io::Write;

/// Which side of an agent a contract guards; decides the retry error's `error` text. Defined
/// in `agent-schema`, which the code generator shares.
pub use agent_contracts_schema::ContractKind;

/// A type generated from a contract schema (each agent's input and output type): the
/// fingerprint of the schema it was generated from. A derive that uses another agent's type
/// for a contract it refers to (`#[agent(types = { "../budget_agent/output.schema.json" =
/// ... })]`) asserts at compile time that the type's fingerprint is that file's, so a type
/// generated from another schema, or an older version of it, does not compile there.
#[doc(hidden)]
pub trait ContractType {
    /// FNV-1a (64 bits) of the schema's JSON, re-serialized so that whitespace does not
    /// count, after sibling `$ref`s are bundled.
    const FINGERPRINT: u64;
}

fn error_kind(kind: ContractKind) -> ErrorKind {
    match kind {
        ContractKind::Input => ErrorKind::InputContract,
        ContractKind::Output => ErrorKind::OutputContract,
    }
}

/// Why a schema could not become a contract. Schemas are developer files, so this is a
/// start-up or build-time error, never something an LLM can trigger.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ContractError {
    /// The schema text is not JSON.
    #[error("contract `{name}`: schema is not valid JSON: {source}")]
    Json {
        /// The contract's name.
        name: String,
        /// The parser's error, with line and column.
        source: serde_json::Error,
    },
    /// The validator refused the schema (invalid schema, or an external `$ref`, which is never
    /// fetched).
    #[error("contract `{name}`: {message}")]
    Schema {
        /// The contract's name.
        name: String,
        /// The validator's message.
        message: String,
    },
}

/// A compiled JSON Schema contract.
///
/// Building one compiles the schema; keep it (generated code holds it in a `static`) and call
/// [`Contract::check`] per call.
#[derive(Debug)]
pub struct Contract {
    name: String,
    kind: ContractKind,
    schema: Value,
    /// The schema's text as written, when it was given as text: its keys in the author's
    /// order, for the prompts that show it to a model.
    text: Option<crate::json::RawJson>,
    validator: Validator,
    required: Vec<String>,
    /// The forms providers' strict modes take, as the code generator computed them at build
    /// time; `None` for a contract built at run time.
    strict: Option<Box<agent_contracts_schema::strict::StrictForms>>,
    /// The schema compiled for checking answers as they stream, on first use.
    prefix: std::sync::OnceLock<crate::prefix::PrefixSchema>,
    /// The schema compiled for calls read on their tape ([`crate::instance`]), on first use;
    /// `None` for a contract of several documents, whose calls are checked as `Value`s.
    tape: std::sync::OnceLock<Option<Validator<TapeJson>>>,
    /// Whether the schema refers to documents given beside it ([`Contract::with_documents`]).
    documents: bool,
    /// The root's properties marked `"x-source": "user"`, read once when the contract is
    /// built.
    user_fields: Vec<UserField>,
}

/// A field of an input contract only a person can give (`"x-source": "user"` on a property
/// of the root): a call that omits it is asked of a person, never of the calling model.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct UserField {
    /// The property's name.
    pub name: String,
    /// The property's `description`, for the question.
    pub description: Option<String>,
    /// The property's schema, the contract a person's answer is checked against (within
    /// the whole contract).
    pub schema: Value,
}

/// The annotation that marks a field only a person can give, and its one value.
const SOURCE: &str = "x-source";

/// The root properties of `schema` marked `"x-source": "user"`, in the schema's order.
fn user_fields_of(schema: &Value) -> Vec<UserField> {
    let Some(Value::Object(properties)) = schema.get("properties") else {
        return Vec::new();
    };
    properties
        .iter()
        .filter(|(_, property)| property.get(SOURCE).and_then(Value::as_str) == Some("user"))
        .map(|(name, property)| UserField {
            name: name.clone(),
            description: property
                .get("description")
                .and_then(Value::as_str)
                .map(str::to_owned),
            schema: property.clone(),
        })
        .collect()
}

impl Contract {
    /// Compiles `schema`. No remote or file `$ref` is ever fetched: the validator has no
    /// resolver features and an offline retriever, so such a schema is an error here. Patterns
    /// run on the linear-time `regex` engine, so no input can make a pattern backtrack.
    pub fn new(
        name: impl Into<String>,
        kind: ContractKind,
        schema: Value,
    ) -> Result<Self, ContractError> {
        let name = name.into();
        agent_contracts_schema::shape::check_schema(&schema).map_err(|e| {
            ContractError::Schema {
                name: name.clone(),
                message: e.to_string(),
            }
        })?;
        let validator = validator_options()
            .build(&schema)
            .map_err(|e| ContractError::Schema {
                name: name.clone(),
                message: e.to_string(),
            })?;
        Ok(Self::from_validator(name, kind, schema, validator))
    }

    /// Compiles `schema` together with the documents it refers to, held in memory by URI (a
    /// contract split over several files that the caller has loaded). Still nothing is
    /// fetched: a `$ref` to a URI that is not among `documents` is an error, as with
    /// [`Contract::new`]. Generated contracts are single, self-contained documents; this is
    /// for contracts assembled at run time.
    pub fn with_documents<I, U>(
        name: impl Into<String>,
        kind: ContractKind,
        schema: Value,
        documents: I,
    ) -> Result<Self, ContractError>
    where
        I: IntoIterator<Item = (U, Value)>,
        U: AsRef<str>,
    {
        let name = name.into();
        let error = |e: &dyn std::fmt::Display| ContractError::Schema {
            name: name.clone(),
            message: e.to_string(),
        };
        agent_contracts_schema::shape::check_schema(&schema).map_err(|e| error(&e))?;
        let registry = jsonschema::Registry::new()
            .retriever(NoFetch)
            .extend(documents)
            .and_then(|builder| builder.prepare())
            .map_err(|e| error(&e))?;
        let validator = validator_options()
            .with_registry(&registry)
            .build(&schema)
            .map_err(|e| error(&e))?;
        Ok(Self {
            documents: true,
            ..Self::from_validator(name, kind, schema, validator)
        })
    }

    fn from_validator(
        name: String,
        kind: ContractKind,
        schema: Value,
        validator: Validator,
    ) -> Self {
        let required = required_of(&schema);
        let user_fields = match kind {
            ContractKind::Input => user_fields_of(&schema),
            ContractKind::Output => Vec::new(),
        };
        Self {
            user_fields,
            name,
            kind,
            schema,
            text: None,
            validator,
            required,
            strict: None,
            prefix: std::sync::OnceLock::new(),
            tape: std::sync::OnceLock::new(),
            documents: false,
        }
    }

    /// The validator of calls read on their tape, compiled on first use with the one
    /// configuration; `None` for a contract of several documents.
    fn tape_validator(&self) -> Option<&Validator<TapeJson>> {
        self.tape
            .get_or_init(|| {
                (!self.documents)
                    .then(|| validator_options_for::<TapeJson>().build(&self.schema).ok())
                    .flatten()
            })
            .as_ref()
    }

    /// Compiles a schema given as JSON text.
    pub fn from_json_str(
        name: impl Into<String>,
        kind: ContractKind,
        text: &str,
    ) -> Result<Self, ContractError> {
        let name = name.into();
        let json = |source| ContractError::Json {
            name: name.clone(),
            source,
        };
        let schema = serde_json::from_str(text).map_err(json)?;
        let raw: Box<serde_json::value::RawValue> = serde_json::from_str(text).map_err(json)?;
        let mut contract = Self::new(name.clone(), kind, schema)?;
        contract.text = Some(crate::json::RawJson::from(raw));
        Ok(contract)
    }

    /// Keeps the strict forms the code generator computed for this contract.
    pub(crate) fn with_strict(
        mut self,
        forms: agent_contracts_schema::strict::StrictForms,
    ) -> Self {
        self.strict = Some(Box::new(forms));
        self
    }

    /// The schema to send to a provider's strict mode (`dialect`), when the build found the
    /// contract fits it as written or after a lossless rewrite; `None` otherwise, and for a
    /// contract built at run time.
    #[doc(hidden)]
    pub fn strict_schema(&self, dialect: crate::Dialect) -> Option<&Value> {
        self.strict.as_ref()?.schema(dialect)
    }

    /// Removes from `answer` the `null`s a strict rewrite of this contract let stand for
    /// absent optional properties; whether it removed any. Runs before the contract check,
    /// so the answer a strict model writes passes the contract as written.
    #[doc(hidden)]
    pub fn remove_strict_nulls(&self, answer: &mut Value) -> bool {
        match &self.strict {
            Some(forms) => agent_contracts_schema::strict::remove_nulls(answer, &forms.nulls),
            None => false,
        }
    }

    /// The schema compiled for prefixes ([`crate::stream`]), once per contract, on first use.
    pub(crate) fn prefix_schema(&self) -> &crate::prefix::PrefixSchema {
        self.prefix.get_or_init(|| {
            // A strict provider's `null` for an absent property is removed before the check:
            // under those keys a `null` is never called broken.
            let null_keys = self
                .strict
                .iter()
                .flat_map(|forms| &forms.nulls)
                .filter_map(|path| match path.0.last() {
                    Some(agent_contracts_schema::strict::Step::Key(key)) => Some(key.clone()),
                    _ => None,
                })
                .collect();
            crate::prefix::PrefixSchema::new(&self.schema, null_keys)
        })
    }

    /// The contract's name (the agent's name).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Input or output.
    pub fn kind(&self) -> ContractKind {
        self.kind
    }

    /// The schema as written.
    pub fn schema(&self) -> &Value {
        &self.schema
    }

    /// The schema as pretty JSON (2-space indent), its keys in the author's order when the
    /// contract was built from text; for prompts that show the schema to a model.
    #[doc(hidden)]
    pub fn schema_pretty(&self) -> String {
        match &self.text {
            Some(text) => serde_json::to_string_pretty(text),
            None => serde_json::to_string_pretty(&self.schema),
        }
        .unwrap_or_default()
    }

    /// The root's `required` fields, in schema order.
    pub fn required_fields(&self) -> &[String] {
        &self.required
    }

    /// The fields only a person can give (`"x-source": "user"` on a root property of an
    /// input contract), in the schema's order; none for an output contract.
    pub fn user_fields(&self) -> &[UserField] {
        &self.user_fields
    }

    /// The field only a person can give named `name`.
    pub fn user_field(&self, name: &str) -> Option<&UserField> {
        self.user_fields.iter().find(|f| f.name == name)
    }

    /// The fields only a person can give that a call omitted, when that is all `error` (this
    /// contract's retry error) is about: every missing field is one of them, and every
    /// violation is one of those `required` misses at the root (so a call with any other
    /// fault, or an error cut short at [`Limits::max_errors`], is `None`). Such a call is
    /// asked of a person instead of sent back to its caller's model, which would invent
    /// the values.
    pub fn omitted_user_fields(&self, error: &RetryError) -> Option<Vec<&UserField>> {
        if self.user_fields.is_empty()
            || error.kind != ErrorKind::InputContract
            || error.missing_fields.is_empty()
            || error.errors.len() != error.missing_fields.len()
            || error.errors.iter().any(|v| !v.path.is_empty())
        {
            return None;
        }
        error
            .missing_fields
            .iter()
            .map(|name| self.user_field(name))
            .collect()
    }

    /// `error` (this contract's retry error) as a calling model should see it when the call
    /// also has faults of its own: the fields only a person can give taken out of its
    /// required, missing and violated fields, so the model fixes its part and invents none of
    /// them (its next call, without them, is asked of a person). Unchanged when the contract
    /// has no such field, when the error is not about a call's input, or when the omitted
    /// person's fields are all it says ([`Contract::omitted_user_fields`] is for that case).
    pub fn for_calling_model(&self, mut error: RetryError) -> RetryError {
        let is_user = |name: &str| self.user_field(name).is_some();
        if self.user_fields.is_empty()
            || error.kind != ErrorKind::InputContract
            || !error.missing_fields.iter().any(|f| is_user(f))
        {
            return error;
        }
        // A `required` miss at the root names its property as the validator writes it.
        let says_missing = |v: &Violation| {
            v.path.is_empty()
                && error.missing_fields.iter().any(|f| {
                    is_user(f)
                        && v.message
                            == format!("{} is a required property", Value::from(f.as_str()))
                })
        };
        let errors: Vec<Violation> = error
            .errors
            .iter()
            .filter(|v| !says_missing(v))
            .cloned()
            .collect();
        let missing: Vec<String> = error
            .missing_fields
            .iter()
            .filter(|f| !is_user(f))
            .cloned()
            .collect();
        if errors.is_empty() && missing.is_empty() {
            return error;
        }
        let mut stripped =
            self.error_of(std::mem::take(&mut error.provided_fields), missing, errors);
        stripped.required_fields.retain(|f| !is_user(f));
        stripped
    }

    /// Validates `instance`, building any retry error within `limits` (errors listed, bytes
    /// echoed, fields listed). The valid path is one `is_valid` pass; only an invalid instance
    /// pays for collecting errors, and at most `max_errors` of them, so building the retry
    /// error takes bounded time.
    pub fn check(&self, instance: &Value, limits: &Limits) -> Result<(), RetryError> {
        if self.validator.is_valid(instance) {
            return Ok(());
        }
        let full = at_most_values(instance, FULL_REPORT_VALUES);
        let violations = self.violations(&self.validator, instance, full, limits);
        let object = instance.as_object();
        Err(self.retry_error(
            object
                .into_iter()
                .flat_map(|o| o.keys().map(String::as_str)),
            |key| object.is_some_and(|o| o.contains_key(key)),
            violations,
            limits,
        ))
    }

    /// [`Contract::check`] of the JSON `text`, validated on its tape where it has one (as a
    /// call's context is): the same verdict and the same retry error, for the tests that show
    /// it. `None` when `text` is not one JSON value.
    #[doc(hidden)]
    pub fn check_text(&self, text: &str, limits: &Limits) -> Option<Result<(), RetryError>> {
        let value: Value = serde_json::from_str(text).ok()?;
        let (Some(tape), Some(validator)) = (crate::json::Tape::read(text), self.tape_validator())
        else {
            return Some(self.check(&value, limits));
        };
        let root = crate::json::TapeValue::on(text, &tape, 0);
        let instance = crate::instance::Instance::Tape(root);
        if validator.is_valid(instance) {
            return Some(Ok(()));
        }
        let violations = self.violations(
            validator,
            instance,
            root.count() <= FULL_REPORT_VALUES,
            limits,
        );
        let keys: Vec<&str> = {
            let mut keys: Vec<&str> = root.parts().filter_map(|(key, _)| key).collect();
            keys.sort_unstable();
            keys
        };
        Some(Err(self.retry_error(
            keys.iter().copied(),
            |key| keys.contains(&key),
            violations,
            limits,
        )))
    }

    /// What [`Contract::check`] says of a call's context read on its tape, without building
    /// its `Value`.
    fn check_context(
        &self,
        validator: &Validator<TapeJson>,
        context: &Context<'_>,
        limits: &Limits,
    ) -> Result<(), RetryError> {
        let instance = crate::instance::Instance::Context(context);
        if validator.is_valid(instance) {
            return Ok(());
        }
        let full = context.values() <= FULL_REPORT_VALUES;
        let violations = self.violations(validator, instance, full, limits);
        Err(self.retry_error(
            context.keys(),
            |key| context.keys().any(|k| k == key),
            violations,
            limits,
        ))
    }

    /// The violations of an instance the validator refused: every error when `full`, else
    /// the first.
    fn violations<'i, F: jsonschema::json::Json>(
        &self,
        validator: &'i Validator<F>,
        instance: F::Node<'i>,
        full: bool,
        limits: &Limits,
    ) -> Vec<Violation> {
        // The validator gathers every error before handing out the first, which on a large
        // instance (a million failing items) costs far more than the call: past a bound, the
        // report holds the first error only, found by a pass that stops there.
        if !full {
            return validator
                .validate(instance)
                .err()
                .map(|e| self.violation(&e, limits))
                .into_iter()
                .collect();
        }
        let mut violations: Vec<Violation> = Vec::new();
        // A value can fail the same way twice (a field's own `type` and the `type` of the
        // contract a condition ties it to): the caller hears it once, described.
        for e in validator.iter_errors(instance) {
            let v = self.violation(&e, limits);
            let full = violations.len() >= limits.max_errors;
            match violations
                .iter_mut()
                .find(|seen| seen.path == v.path && seen.message == v.message)
            {
                Some(seen) => {
                    if seen.description.is_none() {
                        seen.description = v.description;
                    }
                }
                None if full => break,
                None => violations.push(v),
            }
        }
        violations
    }

    /// Validates a call's context, reporting in the caller's order: the validator reads the
    /// context as a `Value`, whose keys are sorted, so the retry error's `provided_fields`, its
    /// violations (by their top-level field) and its hint are put back in the order the caller
    /// wrote the fields.
    pub fn check_call(&self, call: &ToolCall, limits: &Limits) -> Result<(), RetryError> {
        // A call whose entries all stand on its tape is validated there: its `Value` is never
        // built, unless an error's message needs the whole context.
        let checked = match (call.tape_entries(), self.tape_validator()) {
            (Some(entries), Some(validator)) => {
                self.check_context(validator, &Context::new(entries), limits)
            }
            _ => self.check(call.context(), limits),
        };
        checked.map_err(|e| self.in_call_order(e, call, limits))
    }

    /// A retry error about `call`'s context, its lists in the caller's order.
    pub(crate) fn in_call_order(
        &self,
        mut error: RetryError,
        call: &ToolCall,
        limits: &Limits,
    ) -> RetryError {
        error.provided_fields = call
            .entries()
            .take(limits.max_listed_fields)
            .map(|(key, _)| truncate(key, limits.max_echo_bytes).into_owned())
            .collect();
        let position: std::collections::HashMap<&str, usize> = call
            .entries()
            .enumerate()
            .map(|(i, (key, _))| (key, i))
            .collect();
        // Errors about the whole context first, then by the field they are under (a stable
        // sort keeps the validator's order within a field).
        error.errors.sort_by_key(|v| match v.path.first() {
            Some(PathSegment::Key(key)) => position.get(key.as_str()).map_or(usize::MAX, |i| i + 1),
            _ => 0,
        });
        let first = error
            .errors
            .first()
            .map(|v| (v.message.clone(), v.path.clone()));
        if let Some((message, path)) = first {
            error.validation_message = message;
            error.path = path;
        }
        error.hint = hint(&error.missing_fields, &error.errors);
        error
    }

    /// The retry error for a value that passed the schema but not the typed deserialization
    /// (a schema/type disagreement), in the same shape, within `limits`.
    #[doc(hidden)]
    pub fn deserialize_error(
        &self,
        instance: &Value,
        error: &serde_json::Error,
        limits: &Limits,
    ) -> RetryError {
        let message =
            truncate(&error.to_string(), limits.max_echo_bytes.saturating_mul(2)).into_owned();
        // The one known disagreement: an integer the schema accepts but no 64-bit type holds.
        let path = beyond_64_bits(instance)
            .map(|path| truncated(path, limits))
            .unwrap_or_default();
        let violation = Violation {
            path,
            message,
            description: None,
        };
        let object = instance.as_object();
        self.retry_error(
            object
                .into_iter()
                .flat_map(|o| o.keys().map(String::as_str)),
            |key| object.is_some_and(|o| o.contains_key(key)),
            vec![violation],
            limits,
        )
    }

    fn retry_error<'k>(
        &self,
        keys: impl Iterator<Item = &'k str>,
        has: impl Fn(&str) -> bool,
        violations: Vec<Violation>,
        limits: &Limits,
    ) -> RetryError {
        // Keys are caller text too: each is cut to the echo bound.
        let provided: Vec<String> = keys
            .take(limits.max_listed_fields)
            .map(|k| truncate(k, limits.max_echo_bytes).into_owned())
            .collect();
        let missing: Vec<String> = self.required.iter().filter(|f| !has(f)).cloned().collect();
        self.error_of(provided, missing, violations)
    }

    /// The retry error about an answer still arriving: the root's keys received so far
    /// (`provided`, cut to the bounds), the required ones it closed without, and the
    /// violation found.
    pub(crate) fn prefix_error(
        &self,
        provided: Vec<String>,
        missing: Vec<String>,
        violation: Violation,
    ) -> RetryError {
        self.error_of(provided, missing, vec![violation])
    }

    fn error_of(
        &self,
        provided: Vec<String>,
        missing: Vec<String>,
        violations: Vec<Violation>,
    ) -> RetryError {
        let hint = hint(&missing, &violations);
        let first = violations.first();
        RetryDetails {
            success: false,
            error: error_kind(self.kind).to_string(),
            validation_message: first.map(|v| v.message.clone()).unwrap_or_default(),
            path: first.map(|v| v.path.clone()).unwrap_or_default(),
            required_fields: self.required.clone(),
            missing_fields: missing,
            provided_fields: provided,
            hint,
            errors: violations,
            kind: error_kind(self.kind),
        }
        .into()
    }

    fn violation(&self, error: &ValidationError<'_>, limits: &Limits) -> Violation {
        // Keys in the path are caller text (under `additionalProperties` or
        // `patternProperties`): each is cut to the echo bound like any echoed value.
        let path = error
            .instance_path()
            .iter()
            .map(|s| match s {
                jsonschema::paths::LocationSegment::Property(p) => {
                    PathSegment::Key(truncate(&p, limits.max_echo_bytes).into_owned())
                }
                jsonschema::paths::LocationSegment::Index(i) => PathSegment::Index(i),
            })
            .collect();
        Violation {
            path,
            message: self.message(error, limits),
            description: self.description(error),
        }
    }

    /// The validator's message, with the offending value cut to `max_echo_bytes`.
    fn message(&self, error: &ValidationError<'_>, limits: &Limits) -> String {
        let max = limits.max_echo_bytes;
        match error.kind() {
            // Unexpected keys are caller text the validator writes out whole: list them within
            // the echo bound, and keep the message's end.
            ValidationErrorKind::AdditionalProperties { unexpected } => {
                return unexpected_message("Additional", unexpected, max);
            }
            ValidationErrorKind::UnevaluatedProperties { unexpected } => {
                return unexpected_message("Unevaluated", unexpected, max);
            }
            // The inner error is about the key as a value: mask it like any value.
            ValidationErrorKind::PropertyNames { error } => return self.message(error, limits),
            // Names the schema's property, never the instance: nothing to mask, and no need to
            // serialize the instance (often the whole context) to find that out.
            ValidationErrorKind::Required { .. } => {
                return truncate(&error.to_string(), max.saturating_mul(2)).into_owned();
            }
            // The validator's text is the whole array ("None of [...] are valid"); the caller
            // needs what is missing, which the `contains` schema's description says.
            ValidationErrorKind::Contains => {
                let wanted = self
                    .keyword_schema(error)
                    .and_then(|s| s.get("description"))
                    .and_then(Value::as_str);
                let message = match wanted {
                    Some(wanted) => format!("No item is {wanted}"),
                    None => "No item is valid under the `contains` schema".to_owned(),
                };
                return truncate(&message, max.saturating_mul(2)).into_owned();
            }
            _ => {}
        }
        let (prefix, complete) = bounded_json(error.instance(), max);
        let message = if complete {
            error.to_string()
        } else {
            error.masked_with(truncate(&prefix, max)).to_string()
        };
        // Keys named in a message (an unexpected property) are caller text too.
        truncate(&message, max.saturating_mul(2)).into_owned()
    }

    /// The value of the failing keyword in the schema (for `contains`, its schema).
    fn keyword_schema(&self, error: &ValidationError<'_>) -> Option<&Value> {
        let path: Vec<String> = error
            .evaluation_path()
            .iter()
            .map(|s| s.to_string())
            .collect();
        resolve(&self.schema, &path)
    }

    /// The `description` of the schema node the error is about: the missing property for
    /// `required`, else the node that holds the failing keyword, or, when that node is an
    /// undescribed member of an `allOf` (a condition added to a field), the field.
    fn description(&self, error: &ValidationError<'_>) -> Option<String> {
        let path: Vec<String> = error
            .evaluation_path()
            .iter()
            .map(|s| s.to_string())
            .collect();
        let (_keyword, mut node_path) = path.split_last()?;
        if let [holder @ .., all_of, _index] = node_path
            && all_of == "allOf"
            && resolve(&self.schema, node_path)?
                .get("description")
                .is_none()
            && !matches!(error.kind(), ValidationErrorKind::Required { .. })
        {
            node_path = holder;
        }
        let node = resolve(&self.schema, node_path)?;
        let node = match error.kind() {
            ValidationErrorKind::Required { property } => {
                node.get("properties")?.get(property.as_str()?)?
            }
            _ => node,
        };
        let described = match node.get("$ref") {
            Some(Value::String(r)) if node.get("description").is_none() => {
                local_ref(&self.schema, r).unwrap_or(node)
            }
            _ => node,
        };
        described
            .get("description")
            .and_then(Value::as_str)
            .map(str::to_owned)
    }
}

/// Keys of a path are caller text: each is cut to the echo bound.
fn truncated(path: Vec<PathSegment>, limits: &Limits) -> Vec<PathSegment> {
    path.into_iter()
        .map(|s| match s {
            PathSegment::Key(k) => {
                PathSegment::Key(truncate(&k, limits.max_echo_bytes).into_owned())
            }
            index => index,
        })
        .collect()
}

/// Instances of at most this many values get every error (up to `max_errors`) in their retry
/// error; larger ones get the first.
const FULL_REPORT_VALUES: usize = 10_000;

/// Whether `value` holds at most `max` values; stops counting past it.
fn at_most_values(value: &Value, max: usize) -> bool {
    let mut stack = vec![value];
    let mut count = 0usize;
    while let Some(v) = stack.pop() {
        count += 1;
        if count > max {
            return false;
        }
        match v {
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => stack.extend(map.values()),
            _ => {}
        }
    }
    true
}

/// The path of the first integral number in `instance` (document order) that neither `i64`
/// nor `u64` can hold.
fn beyond_64_bits(instance: &Value) -> Option<Vec<PathSegment>> {
    let mut stack = vec![(Vec::new(), instance)];
    while let Some((path, value)) = stack.pop() {
        match value {
            Value::Number(n) if n.as_i64().is_none() && n.as_u64().is_none() => {
                let beyond = n.as_f64().is_none_or(|f| {
                    f.fract() == 0.0
                        && !(-9_223_372_036_854_775_808.0..18_446_744_073_709_551_616.0)
                            .contains(&f)
                });
                if beyond {
                    return Some(path);
                }
            }
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate().rev() {
                    let mut here = path.clone();
                    here.push(PathSegment::Index(i));
                    stack.push((here, item));
                }
            }
            Value::Object(map) => {
                for (key, item) in map.iter().rev() {
                    let mut here = path.clone();
                    here.push(PathSegment::Key(key.clone()));
                    stack.push((here, item));
                }
            }
            _ => {}
        }
    }
    None
}

/// The retriever of in-memory registries: like the validator's own offline retriever, it
/// fetches nothing.
struct NoFetch;

impl jsonschema::Retrieve for NoFetch {
    fn retrieve(
        &self,
        uri: &jsonschema::Uri<String>,
    ) -> Result<Value, Box<dyn std::error::Error + Send + Sync>> {
        Err(format!("Retrieval is disabled, cannot fetch {uri}").into())
    }
}

fn required_of(schema: &Value) -> Vec<String> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

fn hint(missing: &[String], violations: &[Violation]) -> String {
    if !missing.is_empty() {
        return format!("Please provide all required fields: {}", missing.join(", "));
    }
    let mut fields: Vec<String> = Vec::new();
    for v in violations {
        if let Some(first) = v.path.first().map(ToString::to_string)
            && !fields.contains(&first)
        {
            fields.push(first);
        }
    }
    if fields.is_empty() {
        "Please fix the call so that it matches the contract; see `errors`".to_owned()
    } else {
        format!("Please fix the invalid fields: {}", fields.join(", "))
    }
}

/// "Additional properties are not allowed ('a', 'b' were unexpected)", echoing at most `max`
/// bytes of the keys.
pub(crate) fn unexpected_message(what: &str, unexpected: &[String], max: usize) -> String {
    let mut list = String::new();
    for key in unexpected {
        if list.len() > max {
            break;
        }
        if !list.is_empty() {
            list.push_str(", ");
        }
        list.push('\'');
        list.push_str(&truncate(key, max));
        list.push('\'');
    }
    let verb = if unexpected.len() == 1 { "was" } else { "were" };
    format!(
        "{what} properties are not allowed ({} {verb} unexpected)",
        truncate(&list, max)
    )
}

/// Follows a schema evaluation path, resolving `$ref` segments through local pointers.
fn resolve<'s>(root: &'s Value, path: &[String]) -> Option<&'s Value> {
    let mut node = root;
    for segment in path {
        node = if segment == "$ref" {
            local_ref(root, node.get("$ref")?.as_str()?)?
        } else {
            match node {
                Value::Object(o) => o.get(segment)?,
                Value::Array(a) => a.get(segment.parse::<usize>().ok()?)?,
                _ => return None,
            }
        };
    }
    Some(node)
}

fn local_ref<'s>(root: &'s Value, reference: &str) -> Option<&'s Value> {
    root.pointer(reference.strip_prefix('#')?)
}

/// The first `max + 1` bytes of `value` as JSON, and whether that was all of it; stops
/// serializing once past the bound, so a huge value is never fully written out.
fn bounded_json(value: &Value, max: usize) -> (String, bool) {
    struct Capped {
        buf: Vec<u8>,
        cap: usize,
    }
    impl Write for Capped {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            let room = self.cap.saturating_sub(self.buf.len());
            if room == 0 {
                return Err(std::io::Error::other("full"));
            }
            let n = room.min(bytes.len());
            self.buf.extend_from_slice(&bytes[..n]);
            Ok(n)
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut out = Capped {
        buf: Vec::new(),
        cap: max.saturating_add(1),
    };
    let complete = serde_json::to_writer(&mut out, value).is_ok() && out.buf.len() <= max;
    (String::from_utf8_lossy(&out.buf).into_owned(), complete)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each value on a tape has an identity of its own: the validator's cycle guard and its
    /// cache of recursive references key on it, so a fault deep in a recursive schema is found
    /// on the tape as on a `Value`, wherever it stands.
    #[test]
    fn a_recursive_schema_finds_a_deep_fault_on_the_tape() {
        let schema = serde_json::json!({
            "$defs": {"node": {"type": "object", "properties": {
                "v": {"type": "integer"},
                "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}
            }}},
            "$ref": "#/$defs/node"
        });
        let contract = Contract::new("tree", ContractKind::Input, schema).unwrap();
        let limits = Limits::default();
        for (text, valid) in [
            (
                r#"{"v": 1, "children": [{"v": 2, "children": [{"v": 3}]}]}"#,
                true,
            ),
            (
                r#"{"v": 1, "children": [{"v": 2, "children": [{"v": "x"}]}]}"#,
                false,
            ),
            (r#"{"v": 1, "children": [{"v": 2}, {"v": "x"}]}"#, false),
            (r#"{"v": 1, "children": [{"v": "x"}, {"v": 2}]}"#, false),
            (
                r#"{"v": 1, "children": [{"children": []}, {"children": [{"v": []}]}]}"#,
                false,
            ),
        ] {
            let value: serde_json::Value = serde_json::from_str(text).unwrap();
            assert_eq!(contract.check(&value, &limits).is_ok(), valid, "{text}");
            let on_tape = contract.check_text(text, &limits).unwrap();
            assert_eq!(on_tape.is_ok(), valid, "{text}");
        }
    }
}
