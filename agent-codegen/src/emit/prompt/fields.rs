//! Checks the field chains a template reads (`{{ topic.title }}`, `{{ s.titel }}` inside
//! `{% for s in steps %}`) against the contract's schema, below the top level.
//!
//! The shapes come from the schema, named the way typify names fields. A field read through
//! an optional value (an `Option`) is refused with the `if let` that reads it. Like the
//! top-level check, this one errs on the side of silence: a value whose Rust type it cannot
//! predict (a union, a map) ends the check of its chain, and rustc still reports what is left.

use serde_json::{Map, Value};

use super::template::Reads;

/// What a template value is, as far as field access goes.
enum Shape<'s> {
    /// A struct: its fields by Rust name, with their schemas and whether they always exist.
    Object(Vec<(String, &'s Value, bool)>),
    /// A `Vec` of the item schema.
    List(&'s Value),
    /// A string, number, boolean or enum: no fields.
    Scalar(&'static str),
    /// An optional field of one of the shapes above (an `Option`): no fields until unwrapped.
    Optional,
    /// Anything else: the check stops here.
    Unknown,
}

/// A field chain that reads a field its value does not have.
pub(crate) struct BadChain {
    /// Byte offset of the chain in the template.
    pub offset: usize,
    pub message: String,
    /// The field names the value has, for a did-you-mean.
    pub candidates: Vec<String>,
    /// The field read.
    pub field: String,
}

/// Every chain of `reads` that names a field its value lacks. `root` is the input schema.
pub(crate) fn bad_chains(root: &Value, reads: &Reads<'_>) -> Vec<BadChain> {
    let top = shape(root, root, true);
    let mut out = Vec::new();
    for (names, offset) in &reads.chains {
        let Some(start) = start(root, &top, reads, names[0], 0) else {
            continue;
        };
        if let Some(bad) = walk(root, start, names, *offset) {
            out.push(bad);
        }
    }
    out
}

/// The shape of a chain's first name: a top-level field, a loop variable bound once to the
/// items of a list, or an `if let Some(..)` binding bound once to the value of an optional
/// field. `depth` counts the bindings followed (`{% for a in b %}{% for b in a %}` binds in a
/// circle).
fn start<'s>(
    root: &'s Value,
    top: &Shape<'s>,
    reads: &Reads<'_>,
    name: &str,
    depth: usize,
) -> Option<Shape<'s>> {
    if depth > 16 {
        return None;
    }
    match reads.bound.get(name) {
        None => member(top, name).map(|(schema, present)| shape(root, schema, present)),
        Some(1) => {
            if let Some((_, iter)) = reads.loops.iter().find(|(var, _)| *var == name) {
                let mut current = start(root, top, reads, iter[0], depth + 1)?;
                for field in &iter[1..] {
                    let (schema, present) = member(&current, field)?;
                    current = shape(root, schema, present);
                }
                return match current {
                    Shape::List(items) => Some(shape(root, items, true)),
                    _ => None,
                };
            }
            let (_, option) = reads.somes.iter().find(|(var, _)| *var == name)?;
            let (last, parents) = option.split_last()?;
            // The value the option's field sits in: the template's fields, or a chain of them.
            let parent = match parents {
                [] => {
                    return member(top, last)
                        .and_then(|(schema, present)| some(root, schema, present));
                }
                [first, rest @ ..] => {
                    let mut current = start(root, top, reads, first, depth + 1)?;
                    for field in rest {
                        let (schema, present) = member(&current, field)?;
                        current = shape(root, schema, present);
                    }
                    current
                }
            };
            let (schema, present) = member(&parent, last)?;
            some(root, schema, present)
        }
        Some(_) => None,
    }
}

/// The value inside an optional field, for `if let Some(..)`.
fn some<'s>(root: &'s Value, schema: &'s Value, present: bool) -> Option<Shape<'s>> {
    // Only an optional field is an `Option`: anything else is rustc's to report.
    (!present && !is_list(root, schema)).then(|| shape(root, schema, true))
}

/// Whether `schema` is an array (typify types an optional one as a `Vec`, not an `Option`).
fn is_list(root: &Value, schema: &Value) -> bool {
    resolve(root, schema).and_then(|s| s.get("type")) == Some(&Value::from("array"))
}

fn member<'s>(shape: &Shape<'s>, field: &str) -> Option<(&'s Value, bool)> {
    match shape {
        Shape::Object(fields) => fields
            .iter()
            .find(|(name, _, _)| name == field)
            .map(|(_, schema, present)| (*schema, *present)),
        _ => None,
    }
}

/// Follows `names[1..]` from `current`; the first field the value does not have.
fn walk<'s>(
    root: &'s Value,
    mut current: Shape<'s>,
    names: &[&str],
    offset: usize,
) -> Option<BadChain> {
    for (i, field) in names.iter().enumerate().skip(1) {
        let so_far = names[..i].join(".");
        let bad = |message: String, candidates: Vec<String>| BadChain {
            offset,
            message,
            candidates,
            field: (*field).to_owned(),
        };
        current = match &current {
            Shape::Object(fields) => match fields.iter().find(|(name, _, _)| name == field) {
                Some((_, schema, present)) => shape(root, schema, *present),
                None => {
                    let candidates: Vec<String> =
                        fields.iter().map(|(name, _, _)| name.clone()).collect();
                    let expected = candidates
                        .iter()
                        .map(|c| format!("`{c}`"))
                        .collect::<Vec<_>>()
                        .join(", ");
                    let message = format!(
                        "template uses `{so_far}.{field}`, but `{so_far}` has no field `{field}`: expected one of {expected}"
                    );
                    return Some(bad(message, candidates));
                }
            },
            Shape::List(_) => {
                let message = format!(
                    "template uses `{so_far}.{field}`, but `{so_far}` is a list, which has no fields: loop over it with `{{% for item in {so_far} %}}`"
                );
                return Some(bad(message, Vec::new()));
            }
            Shape::Scalar(kind) => {
                let message = format!(
                    "template uses `{so_far}.{field}`, but `{so_far}` is {kind}, which has no fields: use `{{{{ {so_far} }}}}`"
                );
                return Some(bad(message, Vec::new()));
            }
            Shape::Optional => {
                let message = optional(&so_far, &names[i..]);
                return Some(bad(message, Vec::new()));
            }
            Shape::Unknown => return None,
        };
    }
    None
}

/// The message for reading `rest` (`id`, or `id.len`) through the optional value `so_far`
/// (`order`, or `ticket.order`): it may be absent, and the `if let` that reads it.
fn optional(so_far: &str, rest: &[&str]) -> String {
    let last = so_far.rsplit('.').next().unwrap_or(so_far);
    let binding = match last.chars().next() {
        Some(c) if c.is_ascii_lowercase() => c.to_string(),
        _ => "value".to_owned(),
    };
    format!(
        "template uses `{so_far}.{}`, but `{so_far}` may be absent (the contract does not require it), and an absent value has no fields: read it inside `{{% if let Some({binding}) = {so_far} %}}{{{{ {binding}.{} }}}}{{% endif %}}`",
        rest.join("."),
        rest.join(".")
    )
}

/// The shape of `schema`; `present` says whether the field always exists (required, with a
/// default, or a list, which typify defaults to empty): an optional one is an `Option`.
fn shape<'s>(root: &'s Value, schema: &'s Value, present: bool) -> Shape<'s> {
    let written = schema;
    let Some(schema) = resolve(root, schema).and_then(Value::as_object) else {
        return Shape::Unknown;
    };
    if ["anyOf", "oneOf", "allOf", "not"]
        .iter()
        .any(|k| schema.contains_key(*k))
    {
        return Shape::Unknown;
    }
    let kind = schema.get("type").and_then(Value::as_str);
    if kind == Some("array") {
        return match schema.get("items") {
            Some(items) if items.is_object() => Shape::List(items),
            _ => Shape::Unknown,
        };
    }
    if !present {
        // typify types an optional field without a default as an `Option` (a list or a map
        // has an empty default instead); only the shapes the check knows count.
        return match shape(root, written, true) {
            Shape::Object(_) | Shape::Scalar(_) => Shape::Optional,
            _ => Shape::Unknown,
        };
    }
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        return Shape::Object(fields(schema, props));
    }
    match kind {
        Some("string") => Shape::Scalar("a string"),
        Some("integer" | "number") => Shape::Scalar("a number"),
        Some("boolean") => Shape::Scalar("a boolean"),
        _ if schema.contains_key("enum") => Shape::Scalar("an enum"),
        _ => Shape::Unknown,
    }
}

fn fields<'s>(
    schema: &'s Map<String, Value>,
    props: &'s Map<String, Value>,
) -> Vec<(String, &'s Value, bool)> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    props
        .iter()
        .filter(|(_, s)| **s != Value::Bool(false))
        .map(|(name, s)| {
            let present = required.contains(&name.as_str()) || s.get("default").is_some();
            (crate::naming::field_name(name), s, present)
        })
        .collect()
}

/// Follows `$ref`s to root definitions (a few hops).
fn resolve<'s>(root: &'s Value, schema: &'s Value) -> Option<&'s Value> {
    let mut current = schema;
    for _ in 0..8 {
        let Some(target) = current.get("$ref").and_then(Value::as_str) else {
            return Some(current);
        };
        current = root.pointer(target.strip_prefix('#')?)?;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn messages(template: &str) -> Vec<String> {
        let schema = json!({
            "type": "object",
            "required": ["topic", "steps", "plan"],
            "properties": {
                "topic": { "type": "string" },
                "steps": { "type": "array", "items": { "$ref": "#/$defs/Step" } },
                "plan": {
                    "type": "object",
                    "required": ["owner"],
                    "properties": { "owner": { "type": "string" }, "due-date": { "type": "string" } }
                },
                "extra": { "type": "object", "properties": { "a": { "type": "string" } } }
            },
            "$defs": {
                "Step": {
                    "type": "object",
                    "required": ["title"],
                    "properties": { "title": { "type": "string" }, "done": { "type": "boolean" } }
                }
            }
        });
        let reads = super::super::template::reads(template).expect("template parses");
        bad_chains(&schema, &reads)
            .into_iter()
            .map(|b| b.message)
            .collect()
    }

    #[test]
    fn nested_fields_and_loop_variables_are_checked() {
        assert_eq!(
            messages(
                "{{ topic.title }}{% for s in steps %}{{ s.titel }}{{ s.title.len() }}{% endfor %}{{ plan.due_date }}{{ plan.owner.x }}"
            ),
            [
                "template uses `topic.title`, but `topic` is a string, which has no fields: use `{{ topic }}`",
                "template uses `s.titel`, but `s` has no field `titel`: expected one of `done`, `title`",
                "template uses `plan.owner.x`, but `plan.owner` is a string, which has no fields: use `{{ plan.owner }}`",
            ]
        );
    }

    #[test]
    fn if_let_bindings_are_checked_like_the_field_they_unwrap() {
        // `extra` is optional: `if let Some(e) = extra` binds its object, at every depth.
        assert_eq!(
            messages(
                "{% if let Some(e) = extra %}{{ e.a }}{{ e.b }}{% endif %}{% if let Some(d) = plan.due_date %}{{ d.x }}{% endif %}"
            ),
            [
                "template uses `e.b`, but `e` has no field `b`: expected one of `a`",
                "template uses `d.x`, but `d` is a string, which has no fields: use `{{ d }}`",
            ]
        );
        // In a loop, through an `else if`, and in a `when`-less `if let` inside an expression.
        assert_eq!(
            messages(
                "{% for s in steps %}{% if s.done %}{% else if let Some(x) = extra %}{{ x.aa }}{% endif %}{% endfor %}"
            ),
            ["template uses `x.aa`, but `x` has no field `aa`: expected one of `a`"]
        );
        // Not an `Option` (required, a list) or not `Some(name)`: left to rustc.
        for silent in [
            "{% if let Some(p) = plan %}{{ p.nope }}{% endif %}",
            "{% if let Some(s) = steps %}{{ s.nope }}{% endif %}",
            "{% if let Ok(e) = extra %}{{ e.nope }}{% endif %}",
            "{% if let Some(e) = extra %}{% endif %}{% let e = 1 %}{{ e.nope }}",
            "{% for a in b %}{% for b in a %}{{ a.x }}{% endfor %}{% endfor %}",
            "{% if let Some(a) = a.x %}{{ a.y }}{% endif %}",
        ] {
            assert!(messages(silent).is_empty(), "{silent}");
        }
    }

    #[test]
    fn a_field_of_an_optional_value_is_refused_with_the_if_let_that_reads_it() {
        assert_eq!(
            messages("{{ extra.a }}\n{% for s in steps %}{{ plan.due_date.x }}{% endfor %}"),
            [
                "template uses `extra.a`, but `extra` may be absent (the contract does not require it), and an absent value has no fields: read it inside `{% if let Some(e) = extra %}{{ e.a }}{% endif %}`",
                "template uses `plan.due_date.x`, but `plan.due_date` may be absent (the contract does not require it), and an absent value has no fields: read it inside `{% if let Some(d) = plan.due_date %}{{ d.x }}{% endif %}`",
            ]
        );
        // Unwrapped, printed whole, or a list (an empty `Vec` when absent): fine.
        for fine in [
            "{% if let Some(e) = extra %}{{ e.a }}{% endif %}",
            "{{ plan.due_date }}",
            "{% if let Some(d) = plan.due_date %}{{ d }}{% endif %}",
        ] {
            assert!(messages(fine).is_empty(), "{fine}");
        }
    }

    #[test]
    fn what_it_cannot_type_is_left_alone() {
        // `s` is bound twice; `steps.len()` and `extra.is_some()` are methods.
        let template = "{% for s in steps %}{% endfor %}{% let s = 1 %}{{ s.x }}{{ steps.len() }}{{ extra.is_some() }}";
        assert!(messages(template).is_empty());
        assert_eq!(
            messages("{{ steps.title }}"),
            [
                "template uses `steps.title`, but `steps` is a list, which has no fields: loop over it with `{% for item in steps %}`"
            ]
        );
    }
}
