//! Runs typify on the prepared copy of the schema, off the panics it may raise, and parses
//! its output once into the syntax tree every later stage works on. When typify fails, the
//! nodes it cannot type are found and typed as any value (`any_value.rs`).

use std::panic::{AssertUnwindSafe, catch_unwind};

use proc_macro2::TokenStream;
use schemars08::schema::RootSchema;
use serde_json::Value;
use typify_impl::{TypeDetails, TypeId, TypeSpace, TypeSpaceSettings};

use crate::typify::any_value::{self, quietly};

/// `(rust_name, description)` of the root struct's fields, if the root is a struct.
pub(crate) type RootFields = Option<Vec<(String, Option<String>)>>;

/// What later stages need from typify's type space, beside its code.
pub(crate) struct Typified {
    pub(crate) fields: RootFields,
    /// Pointers (into the typify input) of the nodes typed as any value.
    pub(crate) loosened: Vec<String>,
}

/// Runs typify, with the fallback that types what it cannot as any value, and parses its
/// output: the one parse of the generated code.
pub(crate) fn run_typify(input: Value, root_name: &str) -> Result<(syn::File, Typified), Failure> {
    let (tokens, typified) = typify_loosening(input, root_name)?;
    let file = syn::parse2(tokens).map_err(|e| {
        Failure::internal(format!("internal error: typify output does not parse: {e}"))
    })?;
    Ok((file, typified))
}

/// Why the typify stage failed, and where in the typify input, when known.
pub(crate) struct Failure {
    /// Pointer into the typify input of the smallest schema typify fails on.
    pub(crate) pointer: Option<String>,
    pub(crate) message: String,
}

impl Failure {
    fn internal(message: String) -> Self {
        Self {
            pointer: None,
            message,
        }
    }
}

/// typify's code and what later stages need; when typify fails, the nodes it cannot type are
/// found and typed as any value.
fn typify_loosening(input: Value, root_name: &str) -> Result<(TokenStream, Typified), Failure> {
    match quietly(|| typify(input.clone(), root_name)) {
        Ok((tokens, fields)) => Ok((
            tokens,
            Typified {
                fields,
                loosened: Vec::new(),
            },
        )),
        Err(message) => {
            let typifies = |doc: &Value| typify(doc.clone(), root_name).is_ok();
            let Some(loosened) = quietly(|| any_value::culprits(&input, &typifies)) else {
                return Err(Failure {
                    pointer: Some(String::new()),
                    message,
                });
            };
            let doc = any_value::loosened(&input, &loosened);
            let (tokens, fields) =
                quietly(|| typify(doc, root_name)).map_err(|message| Failure {
                    pointer: Some(String::new()),
                    message,
                })?;
            Ok((tokens, Typified { fields, loosened }))
        }
    }
}

/// Runs typify on the current thread.
fn typify(input: Value, root_name: &str) -> Result<(TokenStream, RootFields), String> {
    let root: RootSchema = serde_json::from_value(input)
        .map_err(|e| format!("schema does not have the shape of a JSON Schema: {e}"))?;
    let mut settings = TypeSpaceSettings::default();
    settings
        .with_struct_builder(false)
        .with_derive("PartialEq".into())
        // Sorted maps serialize deterministically (rendered prompts, goldens).
        .with_map_type("::std::collections::BTreeMap");
    // typify still panics on some schemas the rules do not foresee; a panic
    // must not take down the proc macro.
    catch_unwind(AssertUnwindSafe(|| {
        let mut space = TypeSpace::new(&settings);
        let root_id = space
            .add_root_schema(root)
            .map_err(|e| {
                format!(
                    "typify cannot type this schema: {}",
                    first_line(&e.to_string())
                )
            })?
            .ok_or_else(|| "typify produced no root type".to_string())?;
        describe(&space, &root_id, root_name)
    }))
    .unwrap_or_else(|panic| {
        Err(format!(
            "typify failed on this schema: {}",
            panic_message(&*panic)
        ))
    })
}

/// The type space's code and the root's fields.
fn describe(
    space: &TypeSpace,
    root_id: &TypeId,
    root_name: &str,
) -> Result<(TokenStream, RootFields), String> {
    if space.uses_chrono() || space.uses_uuid() {
        return Err("internal error: generated types need chrono or uuid".into());
    }
    let root = space
        .get_type(root_id)
        .map_err(|e| format!("internal error: {e}"))?;
    let fields = match root.details() {
        TypeDetails::Struct(details) => Some(
            details
                .properties_info()
                .map(|p| (p.name.to_string(), p.description.map(str::to_string)))
                .collect(),
        ),
        _ => None,
    };
    let name = root.name();
    if name != root_name {
        return Err(format!(
            "typify named the root type `{name}` instead of `{root_name}`"
        ));
    }
    Ok((space.to_stream(), fields))
}

fn first_line(text: &str) -> &str {
    text.lines()
        .next()
        .unwrap_or_default()
        .trim_end_matches(':')
}

pub(crate) fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    let text = panic
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("unknown panic");
    let line = first_line(text);
    // typify's `todo!`s end in a dump of the schema (`... Object(`): the part before says it.
    let line = match line.rsplit_once(' ') {
        Some((head, tail)) if tail.ends_with(['(', '{', '[']) => head,
        _ => line,
    };
    line.chars().take(200).collect()
}
