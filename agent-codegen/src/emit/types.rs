//! One contract's Rust types: the pipeline from schema text through the schema stage's rules,
//! typify and its fix-ups, to the items with their generated checks. The front ends call it
//! through [`types`] (on their own thread) or [`generate_types_with`] (on a thread of its own).

use proc_macro2::TokenStream;
use quote::ToTokens;
use serde_json::Value;

use crate::ContractKind;
use crate::error::SchemaError;
use crate::schema::locate::locate;
use crate::schema::parse::parse;
use crate::schema::problem::display;
use crate::schema::{conditions, reject};
use crate::typify;
use crate::typify::input::typify_input;
use crate::typify::model::Model;
use crate::typify::properties::{Property, properties};
use crate::typify::run::{Failure, panic_message, run_typify};

/// Options of [`generate_types_with`].
#[derive(Clone, Debug)]
pub struct TypeOptions {
    /// Input contracts reserve the tool call's own top-level keys.
    pub kind: ContractKind,
    /// Path of the runtime crate whose `__private` module re-exports serde,
    /// serde_json and regress (`::agent_contracts` unless `#[agent(crate = ..)]`).
    pub runtime: syn::Path,
}

impl Default for TypeOptions {
    /// An input contract using `::agent_contracts`.
    fn default() -> Self {
        Self {
            kind: ContractKind::Input,
            runtime: syn::parse_quote!(::agent_contracts),
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
    /// The partial types (output contracts only), also among the items: printed apart for
    /// their golden files.
    partial: Vec<syn::Item>,
    /// The root's media fields (input contracts only), typed `MediaInput`.
    pub(crate) media: Vec<crate::typify::media::MediaField>,
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
    partial: String,
}

impl GeneratedTypes {
    /// The generated items as formatted Rust source: deterministic, the same input gives the
    /// same text.
    pub fn pretty(&self) -> &str {
        &self.code
    }

    /// The partial types alone (an output contract's; empty for an input contract), as
    /// formatted Rust source: they are also in [`GeneratedTypes::pretty`].
    pub fn pretty_partial(&self) -> &str {
        &self.partial
    }
}

/// [`generate_types_with`] for an input contract using `::agent_contracts`.
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
        let mut partial: syn::File = syn::parse_quote!();
        partial.items.clone_from(&types.partial);
        Ok(GeneratedTypes {
            root_name: types.root_ident.to_string(),
            code: prettyplease::unparse(&types.file),
            partial: prettyplease::unparse(&partial),
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
    let shape: Vec<SchemaError> = agent_contracts_schema::shape::schema_problems(&schema)
        .iter()
        .map(|problem| error(&problem.location(), problem.to_string()))
        .collect();
    if !shape.is_empty() {
        return Err(shape);
    }
    // Conditions (`if`, `contains`, ...) only narrow values the rest of a node shapes: the
    // type is built without them and the validator enforces them.
    let typed = conditions::typed_view(&schema);
    let mut problems: Vec<SchemaError> = reject::check(&typed, options.kind, root_name)
        .into_iter()
        .chain(conditions::check(&schema))
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
    if let Err(e) = agent_contracts_schema::validator_options().build(&schema) {
        // The validator names where in the schema it refused (the keyword's pointer).
        let problem =
            crate::schema::lints::meta_refusal(&schema, e.instance_path().as_str(), &e.to_string());
        return Err(vec![error(&problem.pointer, problem.message)]);
    }
    let (input, notes) = typify_input(&typed, root_name);
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
            display(&pointer)
        );
        error(&pointer, message)
    }));
    let root_ident = syn::Ident::new(root_name, proc_macro2::Span::call_site());
    // typify's output is fixed up in place, then read once: the root's properties and the
    // checks both work from that reading.
    typify::fix_up(&mut file, &options.runtime).map_err(|message| vec![error("", message)])?;
    let model = Model::read(&file);
    let properties = match &typified.fields {
        Some(fields) => properties(&schema, fields, &model, &root_ident),
        None => Ok(Vec::new()),
    }
    .map_err(|message| vec![error("", message)])?;
    let unchecked =
        crate::emit::checks::add_checks(&mut file, &model, &schema, &root_ident, &options.runtime);
    // An input's media fields become the runtime's media value (their checks read it as the
    // string it derefs to).
    let mut media = match options.kind {
        ContractKind::Input => crate::typify::media::media_fields(&schema, &properties),
        ContractKind::Output => Vec::new(),
    };
    // In the order the contract writes them (the parsed schema's keys are sorted).
    media.sort_by_key(|field| {
        let pointer = format!(
            "/properties/{}",
            field.json_name.replace('~', "~0").replace('/', "~1")
        );
        locate(schema_text, &pointer)
    });
    let untyped = crate::typify::media::type_media_fields(
        &mut file,
        &root_ident,
        &mut media,
        &options.runtime,
    );
    if !untyped.is_empty() {
        return Err(untyped
            .iter()
            .map(|name| {
                let pointer = format!(
                    "/properties/{}",
                    name.replace('~', "~0").replace('/', "~1")
                );
                error(
                    &pointer,
                    format!("the media field `{name}` must be a plain string beside its `contentMediaType` (no `pattern`, length, `enum` or `const`): its bytes are checked by their signature"),
                )
            })
            .collect());
    }
    // An output contract's answer streams: its partial form, to show it while it arrives.
    let partial = match options.kind {
        ContractKind::Output => {
            crate::emit::partial::partial_items(&model, &root_ident, &options.runtime)
                .map_err(|message| vec![error("", message)])?
        }
        ContractKind::Input => Vec::new(),
    };
    file.items.extend(partial.iter().cloned());
    Ok(Types {
        file,
        root_ident,
        properties,
        warnings,
        unchecked,
        partial,
        media,
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
    let at = display(&pointer);
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

/// Whether typify will name the root type exactly `name`.
fn is_type_name(name: &str) -> bool {
    syn::parse_str::<syn::Ident>(name).is_ok() && crate::naming::type_name(name) == name
}

/// Stack of the thread that runs the pipeline outside proc macros.
const BUILD_STACK: usize = 64 << 20;

/// Runs `job` where the pipeline has the stack it needs; `Err` says why it could not finish.
///
/// typify and syn recurse once per schema level with large frames (about 55 KiB per level in
/// debug builds, which is how proc-macro dependencies are built). Inside a proc macro, tokens
/// can only be made on the macro's own thread, which rustc gives 8 MiB: `schema::walk::MAX_DEPTH` is
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

/// The struct named `ident` among the items, if there is one.
fn root_struct<'a>(file: &'a syn::File, ident: &syn::Ident) -> Option<&'a syn::ItemStruct> {
    file.items.iter().find_map(|item| match item {
        syn::Item::Struct(s) if s.ident == *ident => Some(s),
        _ => None,
    })
}
