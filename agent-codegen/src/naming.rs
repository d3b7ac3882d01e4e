//! Case conversion, in one place and on `heck`: the names typify 0.8 derives from schema
//! names, and the names of agents, their modules and types.
//!
//! typify keeps its `sanitize` private; the rejection rules need the same
//! mapping to spot two schema names that would become one Rust name (typify
//! then silently merges the types or emits duplicate fields). This mirrors
//! `typify_impl::util::sanitize` of typify-impl 0.8.0.

use heck::{ToPascalCase, ToSnakeCase};
use unicode_ident::{is_xid_continue, is_xid_start};

/// The type name typify picks for a `$defs` key or a `title`.
pub(crate) fn type_name(name: &str) -> String {
    sanitize(name, |s| s.to_pascal_case())
}

/// The field name typify picks for a property name.
pub(crate) fn field_name(name: &str) -> String {
    sanitize(name, |s| s.to_snake_case())
}

fn sanitize(input: &str, to_case: fn(&str) -> String) -> String {
    let out = match input {
        "+1" => "plus1".to_string(),
        "-1" => "minus1".to_string(),
        _ => to_case(
            &input
                .replace('\'', "")
                .replace(|c| !is_xid_continue(c), "-"),
        ),
    };
    let out = match out.chars().next() {
        Some(c) if is_xid_start(c) => out,
        Some(_) => format!("{}{out}", to_case("x")),
        None => to_case("x"),
    };
    if typify_impl::accept_as_ident(&out) {
        out
    } else {
        format!("{out}_")
    }
}

/// The variant names typify gives the string values of an `enum`, or `None` when they
/// collide even after its second try (typify then panics). Mirrors
/// `TypeEntryEnum::from_metadata` of typify-impl 0.8.0.
pub(crate) fn variant_names(values: &[&str]) -> Option<Vec<String>> {
    let first: Vec<String> = values.iter().map(|v| type_name(v)).collect();
    if unique(&first) {
        return Some(first);
    }
    let second: Vec<String> = values
        .iter()
        .map(|v| type_name(&v.replace(|c| c == '_' || !is_xid_continue(c), "X")))
        .collect();
    unique(&second).then_some(second)
}

fn unique(names: &[String]) -> bool {
    let mut seen = std::collections::BTreeSet::new();
    names.iter().all(|n| seen.insert(n))
}

/// The agent name derived from a type name: `PlanGeneratorAgent` -> `plan_generator_agent`.
pub(crate) fn agent_name(type_name: &str) -> String {
    type_name.to_snake_case()
}

/// The type name of an agent: `plan_generator_agent` -> `PlanGeneratorAgent`.
pub(crate) fn agent_type(agent_name: &str) -> String {
    use heck::ToUpperCamelCase;
    agent_name.to_upper_camel_case()
}
