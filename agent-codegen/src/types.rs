//! Schema text -> Rust types, through typify.

use std::panic::{AssertUnwindSafe, catch_unwind};

use proc_macro2::TokenStream;
use quote::ToTokens;
use schemars08::schema::RootSchema;
use serde_json::Value;
use typify_impl::{TypeDetails, TypeId, TypeSpace, TypeSpaceSettings};

use crate::ContractKind;
use crate::error::SchemaError;
use crate::locate::locate;
use crate::loosen::{self, quietly};
use crate::raw;
use crate::reject;
use crate::rewrite;
use crate::{fixup, prepare};

/// Options of [`generate_types_with`].
#[derive(Clone, Debug)]
pub struct TypeOptions {
    /// Input contracts reserve the tool call's own top-level keys.
    pub kind: ContractKind,
    /// Path of the runtime crate whose `__private` module re-exports serde,
    /// serde_json and regress (`::agent_core` unless `#[agent(crate = ..)]`).
    pub runtime: syn::Path,
}

impl Default for TypeOptions {
    /// An input contract using `::agent_core`.
    fn default() -> Self {
        Self {
            kind: ContractKind::Input,
            runtime: syn::parse_quote!(::agent_core),
        }
    }
}

/// One contract's Rust types, as the stages after typify and the front ends use them.
///
/// typify's output is parsed once into this syntax tree; the rewrites that follow and the
/// front ends (the template check, the contract module, the build script's printing) all work
/// on it, and it becomes tokens or text once, when the front end expands or prints it.
pub(crate) struct Types {
    /// All generated items: the root type, the types it uses, and typify's
    /// helper modules (`error`, sometimes `defaults`) that the items name
    /// through `self::`, so they must all land in the same module.
    file: syn::File,
    /// The root type's name (the `root_name` given).
    pub(crate) root_ident: syn::Ident,
    /// The root object's top-level properties, in schema order.
    properties: Vec<Property>,
    /// What was dropped to type the schema (a `default` its own schema refuses), located
    /// like errors: build scripts print them as `cargo:warning`.
    pub(crate) warnings: Vec<SchemaError>,
    /// The schema nodes the generated checks leave to the validator (`checks.rs`).
    pub(crate) unchecked: Vec<String>,
}

impl Types {
    /// The generated items, to place in a module.
    pub(crate) fn into_items(self) -> Vec<syn::Item> {
        self.file.items
    }

    /// The root type, when it is a struct.
    pub(crate) fn root_struct(&self) -> Option<&syn::ItemStruct> {
        root_struct(&self.file, &self.root_ident)
    }
}

/// The Rust types generated for one contract schema, printed: what [`generate_types_with`]
/// gives tests and tools. (Syntax trees cannot leave the thread that built them, and the
/// types are built on a thread of their own.)
#[derive(Clone, Debug)]
pub struct GeneratedTypes {
    /// The root type's name (the `root_name` given).
    pub root_name: String,
    /// The root object's top-level properties, in schema order.
    pub properties: Vec<Property>,
    /// What was dropped to type the schema (a `default` its own schema refuses), located
    /// like errors.
    pub warnings: Vec<SchemaError>,
    /// The schema nodes the generated `ContractChecks` leave to the validator, each with
    /// why; empty when the contract's checks are fully compiled.
    pub unchecked: Vec<String>,
    code: String,
}

impl GeneratedTypes {
    /// The generated items as formatted Rust source: deterministic, the same input gives the
    /// same text.
    pub fn pretty(&self) -> &str {
        &self.code
    }
}

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

/// [`generate_types_with`] for an input contract using `::agent_core`.
pub fn generate_types(
    schema_text: &str,
    origin: &str,
    root_name: &str,
) -> Result<GeneratedTypes, Vec<SchemaError>> {
    generate_types_with(schema_text, origin, root_name, &TypeOptions::default())
}

/// Parses a contract schema, rejects what typify cannot type faithfully
/// (reporting every problem at once), and generates its Rust types with the
/// root type named `root_name`, printed.
///
/// `origin` is the schema file's display path, used in error messages. Any thread can call
/// this: the work runs on a thread with the stack it needs.
pub fn generate_types_with(
    schema_text: &str,
    origin: &str,
    root_name: &str,
    options: &TypeOptions,
) -> Result<GeneratedTypes, Vec<SchemaError>> {
    let kind = options.kind;
    // A path cannot leave its thread either: it crosses as text.
    let runtime = options.runtime.to_token_stream().to_string();
    let printed = on_big_stack(|| {
        let runtime = syn::parse_str(&runtime).expect("a printed path parses");
        let types = types(
            schema_text,
            origin,
            root_name,
            &TypeOptions { kind, runtime },
        )?;
        Ok(GeneratedTypes {
            root_name: types.root_ident.to_string(),
            code: prettyplease::unparse(&types.file),
            properties: types.properties,
            warnings: types.warnings,
            unchecked: types.unchecked,
        })
    });
    printed.unwrap_or_else(|message| Err(vec![SchemaError::new(origin, "", message)]))
}

/// [`generate_types_with`] on the current thread, unprinted: the pipeline itself. The thread
/// needs the stack [`on_big_stack`] gives.
pub(crate) fn types(
    schema_text: &str,
    origin: &str,
    root_name: &str,
    options: &TypeOptions,
) -> Result<Types, Vec<SchemaError>> {
    let error = |pointer: &str, message: String| {
        SchemaError::new(origin, pointer, message).at(locate(schema_text, pointer))
    };
    let schema = parse(schema_text, origin).map_err(|e| vec![e])?;
    // First the runtime's own shape check (agent-schema): a `$ref` cycle would overflow the
    // stack in the rules below and in typify, and a contract it refuses could never be built
    // at run time. It is iterative, so no schema exhausts the stack here.
    let shape: Vec<SchemaError> = agent_schema::check::schema_problems(&schema)
        .iter()
        .map(|problem| error(&problem.location(), problem.to_string()))
        .collect();
    if !shape.is_empty() {
        return Err(shape);
    }
    // Conditions (`if`, `contains`, ...) only narrow values the rest of a node shapes: the
    // type is built without them and the validator enforces them.
    let typed = crate::conditions::typed_view(&schema);
    let mut problems: Vec<SchemaError> = reject::check(&typed, options.kind, root_name)
        .into_iter()
        .chain(crate::conditions::check(&schema))
        .map(|p| error(&p.pointer, p.message))
        .collect();
    if !is_type_name(root_name) {
        let message = format!("root type name `{root_name}` is not a PascalCase Rust identifier");
        problems.insert(0, SchemaError::new(origin, "", message));
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    // The runtime compiles the same text with the same configuration (agent-core's
    // `Contract::new`); refusing what the rules above let through keeps that first use from
    // failing.
    if let Err(e) = agent_schema::validator_options().build(&schema) {
        let message = format!("the validator refuses this schema: {e}");
        return Err(vec![SchemaError::new(origin, "", message)]);
    }
    let (input, notes) = prepare::typify_input(&typed, root_name);
    let mut warnings: Vec<SchemaError> = notes
        .into_iter()
        .map(|note| error(&note.pointer, note.message))
        .collect();
    let (mut file, typified) = match run_typify(input, root_name) {
        Ok(typified) => typified,
        Err(failure) => return Err(vec![located_failure(&schema, failure, &error)]),
    };
    warnings.extend(typified.loosened.iter().map(|pointer| {
        let pointer = schema_pointer(&schema, pointer);
        let message = format!(
            "typify cannot type the schema at `{}`: it is typed as any JSON value (`RawJson`) and checked by the validator only (simplify it, or give it a plain `type`, to type it)",
            crate::problem::display(&pointer)
        );
        error(&pointer, message)
    }));
    let root_ident = syn::Ident::new(root_name, proc_macro2::Span::call_site());
    let properties = finish(&mut file, &typified, &schema, &root_ident, &options.runtime)
        .map_err(|message| vec![error("", message)])?;
    let unchecked = crate::checks::add_checks(&mut file, &schema, &root_ident, &options.runtime);
    Ok(Types {
        file,
        root_ident,
        properties,
        warnings,
        unchecked,
    })
}

/// A typify-stage failure as an error at the schema node typify cannot type, saying what to
/// change.
fn located_failure(
    schema: &Value,
    failure: Failure,
    error: &dyn Fn(&str, String) -> SchemaError,
) -> SchemaError {
    let Some(pointer) = failure.pointer else {
        return error("", failure.message);
    };
    let pointer = schema_pointer(schema, &pointer);
    let at = crate::problem::display(&pointer);
    let reason = [
        "typify failed on this schema: ",
        "typify cannot type this schema: ",
    ]
    .iter()
    .find_map(|prefix| failure.message.strip_prefix(prefix))
    .unwrap_or(&failure.message);
    let message = format!(
        "typify cannot type the schema at `{at}` ({reason}): simplify it, or give it a plain `type` and let the validator check the rest"
    );
    error(&pointer, message)
}

/// A pointer into the typify input as a pointer into the schema: the typify input keeps
/// `$defs` under `definitions`.
fn schema_pointer(schema: &Value, pointer: &str) -> String {
    match pointer.strip_prefix("/definitions/") {
        Some(rest) if schema.pointer(pointer).is_none() => format!("/$defs/{rest}"),
        _ => pointer.to_owned(),
    }
}

/// Renders tokens as formatted Rust source, for tests that read a derive's output.
///
/// # Panics
///
/// Panics if `tokens` is not a sequence of Rust items.
#[doc(hidden)]
pub fn pretty(tokens: &TokenStream) -> String {
    let file: syn::File = syn::parse2(tokens.clone()).expect("tokens are Rust items");
    prettyplease::unparse(&file)
}

/// Parses the schema text, reporting errors as `origin:line:col`.
fn parse(text: &str, origin: &str) -> Result<Value, SchemaError> {
    serde_json::from_str(text).map_err(|e| {
        let full = e.to_string();
        // serde_json appends " at line L column C", which we show as a prefix.
        let message = full
            .rsplit_once(" at line ")
            .map_or(full.as_str(), |(m, _)| m);
        let excerpt = excerpt(text, e.line());
        let message = format!("invalid JSON: {message}{excerpt}");
        SchemaError::new(origin, "", message).at(Some((e.line(), e.column())))
    })
}

/// ` (near `<line>`)` for a 1-based line, trimmed and shortened; empty if
/// the line is blank or missing.
fn excerpt(text: &str, line: usize) -> String {
    const MAX: usize = 60;
    let Some(content) = text.lines().nth(line.saturating_sub(1)).map(str::trim) else {
        return String::new();
    };
    if content.is_empty() {
        return String::new();
    }
    let short: String = content.chars().take(MAX).collect();
    let ellipsis = if content.chars().count() > MAX {
        "..."
    } else {
        ""
    };
    format!(" (near `{short}{ellipsis}`)")
}

/// Whether typify will name the root type exactly `name`.
fn is_type_name(name: &str) -> bool {
    syn::parse_str::<syn::Ident>(name).is_ok() && crate::naming::type_name(name) == name
}

/// `(rust_name, description)` of the root struct's fields, if the root is a struct.
type RootFields = Option<Vec<(String, Option<String>)>>;

/// What later stages need from typify's type space, beside its code.
struct Typified {
    fields: RootFields,
    /// Pointers (into the typify input) of the nodes typed as any value.
    loosened: Vec<String>,
}

/// Stack of the thread that runs the pipeline outside proc macros.
const BUILD_STACK: usize = 64 << 20;

/// Runs `job` where the pipeline has the stack it needs; `Err` says why it could not finish.
///
/// typify and syn recurse once per schema level with large frames (about 55 KiB per level in
/// debug builds, which is how proc-macro dependencies are built). Inside a proc macro, tokens
/// can only be made on the macro's own thread, which rustc gives 8 MiB: `walk::MAX_DEPTH` is
/// set to fit, and the job runs there. Elsewhere (build scripts, tools, tests on 2 MiB
/// threads) it runs on a thread of its own with a generous stack, and a panic becomes a
/// message. What it returns must be `Send`: syntax trees stay on that thread, and what leaves
/// it is text.
pub(crate) fn on_big_stack<T: Send>(job: impl FnOnce() -> T + Send) -> Result<T, String> {
    if proc_macro::is_available() {
        return Ok(job());
    }
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("agent-codegen".into())
            .stack_size(BUILD_STACK)
            .spawn_scoped(scope, job)
            .map_err(|e| format!("cannot start the code generation thread: {e}"))?
            .join()
            .map_err(|panic| {
                format!(
                    "internal error: code generation panicked: {}",
                    panic_message(&*panic)
                )
            })
    })
}

/// Runs typify, with the fallback that types what it cannot as any value, and parses its
/// output: the one parse of the generated code.
fn run_typify(input: Value, root_name: &str) -> Result<(syn::File, Typified), Failure> {
    let (tokens, typified) = typify_loosening(input, root_name)?;
    let file = syn::parse2(tokens).map_err(|e| {
        Failure::internal(format!("internal error: typify output does not parse: {e}"))
    })?;
    Ok((file, typified))
}

/// Why the typify stage failed, and where in the typify input, when known.
struct Failure {
    /// Pointer into the typify input of the smallest schema typify fails on.
    pointer: Option<String>,
    message: String,
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
            let Some(loosened) = quietly(|| loosen::culprits(&input, &typifies)) else {
                return Err(Failure {
                    pointer: Some(String::new()),
                    message,
                });
            };
            let doc = loosen::loosened(&input, &loosened);
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

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
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

/// Reroutes crate paths and fixes the code in place, checks the result and lists the root
/// properties.
fn finish(
    file: &mut syn::File,
    typified: &Typified,
    schema: &Value,
    root_ident: &syn::Ident,
    runtime: &syn::Path,
) -> Result<Vec<Property>, String> {
    raw::keep_raw_json(file, runtime);
    rewrite::reroute(file, runtime);
    rewrite::display_string_newtypes(file);
    fixup::camel_case_variants(file);
    fixup::lenient_integers(file, runtime);
    check_items(file)?;
    match &typified.fields {
        Some(fields) => {
            let root = root_struct(file, root_ident).ok_or_else(|| {
                format!("internal error: no struct `{root_ident}` in typify output")
            })?;
            properties(schema, fields, root)
        }
        None => Ok(Vec::new()),
    }
}

/// Catches what would only fail when the user's crate compiles.
fn check_items(file: &mut syn::File) -> Result<(), String> {
    let direct = rewrite::direct_crate_uses(file);
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

fn root_struct<'a>(file: &'a syn::File, ident: &syn::Ident) -> Option<&'a syn::ItemStruct> {
    file.items.iter().find_map(|item| match item {
        syn::Item::Struct(s) if s.ident == *ident => Some(s),
        _ => None,
    })
}

/// The root's properties in schema order: names and descriptions come from
/// typify's struct details, the JSON-name mapping from the emitted
/// `#[serde(rename)]` (typify keeps it private), `required` from the schema.
fn properties(
    schema: &Value,
    fields: &[(String, Option<String>)],
    root: &syn::ItemStruct,
) -> Result<Vec<Property>, String> {
    let renames = json_names(root);
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
fn json_names(root: &syn::ItemStruct) -> Vec<(String, String)> {
    root.fields
        .iter()
        .filter_map(|field| {
            let rust = syn::ext::IdentExt::unraw(field.ident.as_ref()?).to_string();
            let mut json = Some(rust.clone());
            for attr in field.attrs.iter().filter(|a| a.path().is_ident("serde")) {
                // Unknown keys are skipped, not errors: only two matter here.
                let _ = attr.parse_nested_meta(|meta| {
                    if meta.path.is_ident("rename") {
                        json = Some(meta.value()?.parse::<syn::LitStr>()?.value());
                    } else if meta.path.is_ident("flatten") {
                        json = None;
                    } else if meta.input.peek(syn::Token![=]) {
                        meta.value()?.parse::<syn::Expr>()?;
                    }
                    Ok(())
                });
            }
            Some((rust, json?))
        })
        .collect()
}
