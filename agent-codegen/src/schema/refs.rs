//! Local `$ref`s (`#` and `#/$defs/<name>`, `#/definitions/<name>`) resolved within one
//! schema document: the rejection rules and the preparation of typify's copy both follow them.

use serde_json::Value;

use crate::schema::walk::decode_token;

/// `(map, name)` of `#/$defs/<name>` or `#/definitions/<name>`.
pub(crate) fn definition_name(target: &str) -> Option<(&'static str, String)> {
    ["$defs", "definitions"].into_iter().find_map(|map| {
        let token = target
            .strip_prefix("#/")?
            .strip_prefix(map)?
            .strip_prefix('/')?;
        (!token.contains('/')).then(|| (map, decode_token(token)))
    })
}

/// The schema a local `$ref` points at (`#` or a definition).
pub(crate) fn resolve<'a>(root: &'a Value, target: &str) -> Option<&'a Value> {
    if target == "#" {
        return Some(root);
    }
    let (map, name) = definition_name(target)?;
    root.get(map)?.get(name)
}

/// Follows `$ref`s of a branch (a few hops, cycles give up).
pub(crate) fn resolve_branch<'a>(root: &'a Value, branch: &'a Value) -> Option<&'a Value> {
    let mut current = branch;
    for _ in 0..8 {
        match current.get("$ref").and_then(Value::as_str) {
            Some(target) => current = resolve(root, target)?,
            None => return Some(current),
        }
    }
    None
}
