//! Fields only a person can give (`"x-source": "user"`), asked of the MCP client when a call
//! of an agent omitted them, before the agent's model is asked anything:
//!
//! - a client on protocol `2026-07-28` or later that declares elicitation gets the
//!   specification's `input_required` result: one `elicitation/create` form with a property
//!   for each omitted field (its type, description and the bounds a form can carry), and
//!   `requestState` naming the fields; its retry of the same call carries the answers, which
//!   are merged into the call's arguments and checked with them against the whole input
//!   contract. A refused answer is asked again, the form's message saying why;
//! - a client on an earlier protocol that declares elicitation is asked the same form by
//!   `elicitation/create` while the call waits (at most [`MAX_ELICITATIONS`] rounds, each
//!   within [`ELICITATION_TIMEOUT`]);
//! - any other client gets an `isError` result with `status: "input_required"`, the question,
//!   the fields and their schemas: it asks its user and calls again with the fields given.
//!   An agent call keeps nothing on the server until its input is whole, so there is nothing
//!   to resume and no handle: the next call is the whole call.

use agent_contracts_runtime::contract::UserField;
use agent_contracts_runtime::runtime::UserAsk;
use agent_contracts_runtime::{DynAgent, RetryError, contract::PathSegment};
use rmcp::model::{
    CallToolResponse, CallToolResult, ElicitRequest, ElicitRequestParams, ElicitResult,
    ElicitationAction, ElicitationSchema, InputRequest, InputRequests, InputRequiredResult,
    InputResponses,
};
use serde_json::{Map, Value, json};

/// The separator of the field names in an `input_required` result's `requestState`.
const FIELDS_SEPARATOR: char = ',';

/// The key of the input request that asks for the fields (and of its response).
const FIELDS_KEY: &str = "fields";

/// The fields a call of `agent` is asked for, given the error its arguments got: the omitted
/// user fields, or (`answered`: the fields the call's last answers gave) the answered fields
/// an answer of which broke its schema, with why. `None`: the error goes to the client as is.
pub(crate) fn asked<'a>(
    agent: &'a dyn DynAgent,
    error: &RetryError,
    answered: &[String],
) -> Option<(Vec<&'a UserField>, Option<String>)> {
    let contract = agent.input_contract();
    if let Some(omitted) = contract.omitted_user_fields(error) {
        return Some((omitted, None));
    }
    if answered.is_empty() || !error.missing_fields.is_empty() || error.errors.is_empty() {
        return None;
    }
    let field_of = |path: &[PathSegment]| match path.first() {
        Some(PathSegment::Key(key)) => answered.iter().find(|a| *a == key),
        _ => None,
    };
    let mut fields = Vec::new();
    for violation in &error.errors {
        let name = field_of(&violation.path)?;
        let field = contract.user_field(name)?;
        if !fields.contains(&field) {
            fields.push(field);
        }
    }
    let reason = error.errors.first().map(|v| v.message.clone());
    Some((fields, reason))
}

/// The question for `fields` of `agent` (the first field's, with the others named).
fn question(agent: &dyn DynAgent, fields: &[&UserField], reason: Option<&str>) -> String {
    let first = fields
        .first()
        .and_then(|f| UserAsk::field_of(agent, &f.name));
    let mut question = first.map(|ask| ask.question).unwrap_or_default();
    if let Some(reason) = reason {
        question = format!("That answer was refused: {reason}. {question}");
    }
    for field in fields.iter().skip(1) {
        if let Some(ask) = UserAsk::field_of(agent, &field.name) {
            question.push(' ');
            question.push_str(&ask.question);
        }
    }
    question
}

/// What the client is told: the elicitation round, or the result that says what is needed.
pub(crate) fn ask(
    agent: &dyn DynAgent,
    fields: &[&UserField],
    reason: Option<&str>,
    elicit: bool,
) -> CallToolResponse {
    let question = question(agent, fields, reason);
    let names: Vec<&str> = fields.iter().map(|f| f.name.as_str()).collect();
    if elicit {
        let params = ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: question,
            requested_schema: form(fields),
        };
        let mut requests = InputRequests::new();
        requests.insert(
            FIELDS_KEY.to_owned(),
            InputRequest::Elicitation(ElicitRequest::new(params)),
        );
        let state = names.join(&FIELDS_SEPARATOR.to_string());
        return InputRequiredResult::new(Some(requests), Some(state)).into();
    }
    let schemas: Map<String, Value> = fields
        .iter()
        .map(|f| (f.name.clone(), f.schema.clone()))
        .collect();
    CallToolResult::structured_error(json!({
        "success": false,
        "status": "input_required",
        "question": question,
        "fields": names,
        "schemas": schemas,
        "hint": format!(
            "Ask your user for {}, then call `run_{}` again with the same arguments and {} given; do not make up a value",
            names.join(", "),
            agent.name(),
            if names.len() == 1 { "that field" } else { "those fields" },
        ),
    }))
    .into()
}

/// The elicitation form for `fields`: each a property of the type its schema says, with its
/// description and the bounds a form carries; a field a form cannot hold (an object, an
/// array) is asked as JSON text.
fn form(fields: &[&UserField]) -> ElicitationSchema {
    let properties: Map<String, Value> = fields
        .iter()
        .map(|f| (f.name.clone(), property(f)))
        .collect();
    let names: Vec<&str> = fields.iter().map(|f| f.name.as_str()).collect();
    let schema = json!({"type": "object", "properties": properties, "required": names});
    serde_json::from_value(schema).unwrap_or_else(|_| {
        let text = fields.iter().fold(json!({}), |mut all, f| {
            all[&f.name] = json!({"type": "string", "description": description(f)});
            all
        });
        serde_json::from_value(json!({"type": "object", "properties": text, "required": names}))
            .unwrap_or_else(|_| ElicitationSchema::new(Default::default()))
    })
}

fn description(field: &UserField) -> String {
    field
        .description
        .clone()
        .unwrap_or_else(|| field.name.clone())
}

/// One form property for `field`.
fn property(field: &UserField) -> Value {
    let schema = &field.schema;
    let kind = schema.get("type").and_then(Value::as_str);
    let mut property = Map::new();
    let keep: &[&str] = match kind {
        Some("string") => &["minLength", "maxLength", "format", "enum"],
        Some("number" | "integer") => &["minimum", "maximum"],
        Some("boolean") => &[],
        _ => {
            property.insert("type".into(), "string".into());
            property.insert(
                "description".into(),
                format!("{} (as JSON)", description(field)).into(),
            );
            return Value::Object(property);
        }
    };
    property.insert("type".into(), kind.unwrap_or("string").into());
    property.insert("description".into(), description(field).into());
    for key in keep {
        if let Some(value) = schema.get(*key) {
            property.insert((*key).into(), value.clone());
        }
    }
    Value::Object(property)
}

/// How long a person has to answer an `elicitation/create` form: the call is open meanwhile.
pub(crate) const ELICITATION_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(600);

/// Rounds of `elicitation/create` one call asks at most (a person's refused answers, or the
/// next field); past it the client is told what is needed.
pub(crate) const MAX_ELICITATIONS: usize = 8;

/// Asks a client on a protocol before `2026-07-28` that declares elicitation for `fields`,
/// by `elicitation/create`, within [`ELICITATION_TIMEOUT`] (or until the call is cancelled):
/// the call's arguments with the answers merged in, and the fields they gave; or why not.
pub(crate) async fn elicit(
    peer: &rmcp::Peer<rmcp::service::RoleServer>,
    cancel: &tokio_util::sync::CancellationToken,
    agent: &dyn DynAgent,
    fields: &[&UserField],
    reason: Option<&str>,
    arguments: &str,
) -> Result<(String, Vec<String>), String> {
    let params = ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: question(agent, fields, reason),
        requested_schema: form(fields),
    };
    let asked = peer.create_elicitation_with_timeout(params, Some(ELICITATION_TIMEOUT));
    let result = tokio::select! {
        result = asked => result.map_err(|e| format!("could not ask the client for {}: {e}", names(fields)))?,
        () = cancel.cancelled() => return Err("the call was cancelled".into()),
    };
    let names: Vec<&str> = fields.iter().map(|f| f.name.as_str()).collect();
    merge(agent, arguments, &names, result)
}

fn names(fields: &[&UserField]) -> String {
    let names: Vec<String> = fields.iter().map(|f| format!("`{}`", f.name)).collect();
    names.join(", ")
}

/// The arguments text of a call whose `input_required` round's answers (`responses`) give
/// the fields its `state` names, merged in; or why the round cannot be used.
pub(crate) fn answered(
    agent: &dyn DynAgent,
    arguments: &str,
    state: &str,
    responses: Option<&InputResponses>,
) -> Result<(String, Vec<String>), String> {
    let Some(response) = responses.and_then(|r| r.get(FIELDS_KEY)) else {
        return Err(format!(
            "the call carries a `requestState` but no `inputResponses.{FIELDS_KEY}`: answer the elicitation request"
        ));
    };
    let result: ElicitResult = serde_json::from_value(response.clone())
        .map_err(|e| format!("`inputResponses.{FIELDS_KEY}` is not an elicitation result: {e}"))?;
    let names: Vec<&str> = state.split(FIELDS_SEPARATOR).collect();
    merge(agent, arguments, &names, result)
}

/// `arguments` with the fields `names` the elicitation `result` gives, merged in (the others
/// stay omitted, and are asked again).
fn merge(
    agent: &dyn DynAgent,
    arguments: &str,
    names: &[&str],
    result: ElicitResult,
) -> Result<(String, Vec<String>), String> {
    if result.action != ElicitationAction::Accept {
        return Err(format!(
            "the user did not answer, so `{}` did not run; call again to be asked again",
            agent.name()
        ));
    }
    let content = result.content.unwrap_or(Value::Null);
    let mut arguments = arguments.to_owned();
    let mut given = Vec::new();
    for &name in names {
        let Some(ask) = UserAsk::field_of(agent, name) else {
            return Err(format!(
                "the answers name `{}`, which is no field of `{}` a person gives",
                agent_contracts_runtime::__private::truncate(name, 100),
                agent.name()
            ));
        };
        let value = match (content.get(name), ask.field.schema.get("type")) {
            (None, _) => continue,
            // A field a form cannot hold was asked as JSON text.
            (Some(Value::String(text)), Some(kind)) if kind != "string" => ask.value_of_text(text),
            (Some(value), _) => value.clone(),
        };
        arguments = ask.with_answer(&arguments, value).ok_or_else(|| {
            format!("the call's arguments are not a JSON object, so `{name}` cannot be given")
        })?;
        given.push(name.to_owned());
    }
    Ok((arguments, given))
}
