//! The root object's top-level properties as the front ends list them: JSON name, the Rust
//! field typify chose for it, whether it is required, its description.

use serde_json::Value;

use crate::typify::model::{Field, Item, Model};

/// One top-level property of the root object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Property {
    /// Name in the JSON document.
    pub json_name: String,
    /// Name of the Rust field typify chose (e.g. `type_` for `type`).
    pub rust_name: String,
    /// Whether the schema's `required` lists it. A property with a `default`
    /// is not required even though typify then types it without `Option`.
    pub required: bool,
    /// The property schema's `description`.
    pub description: Option<String>,
}

/// The root's properties in schema order: names and descriptions come from
/// typify's struct details, the JSON-name mapping from the emitted
/// `#[serde(rename)]` as the model read it (typify keeps it private), `required` from the schema.
pub(crate) fn properties(
    schema: &Value,
    fields: &[(String, Option<String>)],
    model: &Model,
    root: &syn::Ident,
) -> Result<Vec<Property>, String> {
    if !matches!(model.items.get(&root.to_string()), Some(Item::Struct(_))) {
        return Err(format!(
            "internal error: no struct `{root}` in typify output"
        ));
    }
    let renames = json_names(model.fields(root).unwrap_or_default());
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let declared = schema.get("properties").and_then(Value::as_object);
    // Required names without a schema are fields too; typify drops `false`.
    let names = declared
        .into_iter()
        .flatten()
        .filter(|(_, s)| **s != Value::Bool(false))
        .map(|(name, _)| name.as_str())
        .chain(
            required
                .iter()
                .copied()
                .filter(|r| !declared.is_some_and(|d| d.contains_key(*r))),
        );
    names
        .map(|json_name| {
            let (rust_name, description) = renames
                .iter()
                .find(|(_, json)| json == json_name)
                .and_then(|(rust, _)| fields.iter().find(|(name, _)| name == rust))
                .ok_or_else(|| format!("internal error: no field for property `{json_name}`"))?;
            Ok(Property {
                json_name: json_name.to_string(),
                rust_name: rust_name.clone(),
                required: required.contains(&json_name),
                description: description.clone(),
            })
        })
        .collect()
}

/// `(rust_name, json_name)` of the struct's non-flattened fields.
fn json_names(fields: &[Field]) -> Vec<(String, String)> {
    fields
        .iter()
        .filter(|field| !field.flatten)
        .map(|field| {
            let rust = syn::ext::IdentExt::unraw(&field.ident).to_string();
            (rust, field.json.clone())
        })
        .collect()
}
