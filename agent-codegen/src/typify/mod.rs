//! Stage 2, typify: the prepared copy of the schema typed by typify, and its output fixed up
//! until it is the code the contract needs.
//!
//! In reading order: `input.rs` makes the copy typify sees (with the fallbacks that type
//! looser and leave the rest to the validator); `run.rs` runs typify and parses its output
//! once into a syntax tree, and `any_value.rs` types what typify cannot as any JSON value.
//! [`fix_up`] then rewrites that tree in place: `raw_json.rs` (untyped parts keep their
//! text), `reroute.rs` (paths through the runtime crate), `string_display.rs`,
//! `variant_names.rs` and `lenient_integers.rs`; `media.rs` types an input's media fields
//! as the runtime's `MediaInput`. The fixed-up output is read once into
//! `model.rs` (each type with what its serde attributes say), which `properties.rs` (the
//! root's fields) and the later stages read instead of parsing the attributes again.
//!
//! May import: `schema` and the crate's leaf modules (`error`, `naming`, `suggest`). Nothing
//! here knows about checks, agents or front ends.

pub(crate) mod any_value;
pub(crate) mod input;
pub(crate) mod lenient_integers;
pub(crate) mod media;
pub(crate) mod model;
pub(crate) mod prelude;
pub(crate) mod properties;
pub(crate) mod raw_json;
pub(crate) mod reroute;
pub(crate) mod run;
pub(crate) mod string_display;
pub(crate) mod syntax;
pub(crate) mod variant_names;

/// Fixes typify's output in place, then catches what would only fail when the user's crate
/// compiles.
pub(crate) fn fix_up(file: &mut syn::File, runtime: &syn::Path) -> Result<(), String> {
    raw_json::keep_raw_json(file, runtime);
    reroute::reroute(file, runtime);
    string_display::display_string_newtypes(file);
    string_display::markdown_types(file, runtime);
    variant_names::camel_case_variants(file);
    lenient_integers::lenient_integers(file, runtime);
    prelude::absolute_prelude_paths(file);
    check_items(file)
}

/// The rerouted code names no crate directly, and no type twice.
fn check_items(file: &mut syn::File) -> Result<(), String> {
    let direct = reroute::direct_crate_uses(file);
    if !direct.is_empty() {
        return Err(format!(
            "internal error: generated code still names `{}` directly",
            direct.join("`, `")
        ));
    }
    let mut names = std::collections::BTreeSet::new();
    for item in &file.items {
        let ident = match item {
            syn::Item::Struct(s) => &s.ident,
            syn::Item::Enum(e) => &e.ident,
            syn::Item::Mod(m) => &m.ident,
            _ => continue,
        };
        if !names.insert(ident.to_string()) {
            return Err(format!(
                "the Rust type `{ident}` would be generated twice: rename a `$defs` entry or `title`"
            ));
        }
    }
    Ok(())
}
