//! `#[derive(Agent)]` and `#[derive(AgentInput)]`: parse the attributes into a model that
//! keeps each token's span, validate, then expand through `emit/agent.rs`, the same code path
//! build scripts use. Every problem of one derive is reported in one compile.

use crate::derive::ctxt::Ctxt;
use crate::derive::keys::Keys;
use crate::emit::agent::{AgentDef, PromptSource, SchemaSource, agent_impl, contract_module};
use crate::emit::prompt::prompt_errors;
use crate::{ContractKind, TypeOptions};
use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote};
use std::path::{Path, PathBuf};
use syn::spanned::Spanned;
use syn::{DeriveInput, LitStr};

/// The `#[agent(...)]` keys as written, each with its literal (and so its span).
#[derive(Default)]
struct Attrs {
    name: Option<LitStr>,
    description: Option<LitStr>,
    input: Option<LitStr>,
    output: Option<LitStr>,
    user_prompt: Option<LitStr>,
    krate: Option<LitStr>,
    /// `evals = "evals/x.jsonl"`: the agent's eval dataset, checked against its contracts.
    evals: Option<LitStr>,
    /// `types = { "file" = path }`: producers' types to use instead of bundled copies.
    types: Vec<crate::derive::mapping::Mapping>,
    /// Span of the first `#[agent]` attribute's `agent`, for "missing key" errors.
    span: Option<Span>,
}

const KEYS: [&str; 8] = [
    "name",
    "description",
    "input",
    "output",
    "user_prompt",
    "crate",
    "types",
    "evals",
];

fn parse_attrs(input: &DeriveInput, errors: &mut Ctxt) -> Attrs {
    let keys = Keys::parse(&input.attrs, "agent", &KEYS, errors);
    Attrs {
        name: keys.str("name", errors),
        description: keys.str("description", errors),
        input: keys.str("input", errors),
        output: keys.str("output", errors),
        user_prompt: keys.str("user_prompt", errors),
        krate: keys.str("crate", errors),
        evals: keys.str("evals", errors),
        types: keys
            .value("types")
            .map(|v| crate::derive::mapping::parse(v, errors))
            .unwrap_or_default(),
        span: keys.span,
    }
}

/// Expands `#[derive(Agent)]`.
pub fn derive_agent(input: &DeriveInput) -> TokenStream {
    let mut errors = Ctxt::default();
    check_shape(input, &mut errors);
    let attrs = parse_attrs(input, &mut errors);
    let runtime = runtime_path(attrs.krate.as_ref(), &mut errors);
    let mut tracked = Vec::new();
    let module = match model(input, &attrs, runtime.clone(), &mut tracked, &mut errors) {
        Some(def) => match expand(input, &def, &attrs, &mut errors) {
            Ok(expanded) => return quote! { #expanded #(#tracked)* },
            Err(module) => module,
        },
        None => None,
    };
    let mut expanded = errors.into_compile_errors();
    expanded.extend(tracked);
    expanded.extend(module);
    if let Some(runtime) = runtime.filter(|_| input.generics.params.is_empty()) {
        expanded.extend(fallback(input, &agent_name(input, &attrs), &runtime));
    }
    expanded
}

fn check_shape(input: &DeriveInput, errors: &mut Ctxt) {
    if !matches!(&input.data, syn::Data::Struct(_)) {
        errors.at(
            input.ident.span(),
            "`Agent` can only be derived for a struct",
        );
    }
    if !input.generics.params.is_empty() {
        // The compiled contract lives in one `static`, which generic impls would share.
        errors.at(
            input.generics.span(),
            "`Agent` cannot be derived for a generic type",
        );
    }
}

/// The contract module and the `Agent` impl, if no error was found; else the contract
/// module if it could be generated (only the prompt is wrong), so code naming the typed
/// input still compiles.
fn expand(
    input: &DeriveInput,
    def: &AgentDef,
    attrs: &Attrs,
    errors: &mut Ctxt,
) -> Result<TokenStream, Option<TokenStream>> {
    let mut code = contract_module(def).map_err(|located| {
        for (span, e) in located {
            errors.at(span, e);
        }
        None
    })?;
    // Mapped files are named against the input contract's folder, as its `$ref`s are.
    let dir = attrs
        .input
        .as_ref()
        .and_then(|lit| {
            manifest_dir()
                .join(lit.value())
                .parent()
                .map(Path::to_path_buf)
        })
        .unwrap_or_else(manifest_dir);
    let mapped =
        crate::derive::mapping::apply(&mut code.module, &attrs.types, &dir, &def.runtime, errors);
    for (span, e) in prompt_errors(def, code.input_fields.as_deref(), &manifest_dir()) {
        errors.at(span, e);
    }
    let dataset = attrs
        .evals
        .as_ref()
        .map(|lit| check_evals(def, lit, errors));
    if errors.has_errors() {
        return Err(Some(code.module.into_token_stream()));
    }
    let ident = &input.ident;
    let module = &code.module;
    let agent_impl = agent_impl(def, &code, &quote!(#ident));
    let warnings = code.warnings.iter().map(|w| {
        let source = match &def.output {
            Some(output) if output.origin == w.origin => output,
            _ => &def.input,
        };
        warning(source.span, &w.to_string())
    });
    Ok(quote! { #module #agent_impl #mapped #(#warnings)* #dataset })
}

/// Checks the eval dataset `lit` names (relative to the crate) against the agent's contracts,
/// each problem an error at the literal that reads `path:line:col: ...`; tracks the file.
fn check_evals(def: &AgentDef, lit: &LitStr, errors: &mut Ctxt) -> TokenStream {
    let path = manifest_dir().join(lit.value());
    let parse =
        |source: &SchemaSource| serde_json::from_str::<serde_json::Value>(&source.text).ok();
    let Some(input) = parse(&def.input) else {
        return TokenStream::new();
    };
    let output = def.output.as_ref().and_then(parse);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) => {
            errors.at(
                lit.span(),
                format!("cannot read the eval dataset {}: {e}", path.display()),
            );
            return TokenStream::new();
        }
    };
    let contracts = crate::evals::Contracts {
        agent: &def.name,
        input: &input,
        output: output.as_ref(),
    };
    let (_, problems) = crate::evals::check_dataset_text(&text, &lit.value(), &contracts);
    for problem in problems {
        errors.at(lit.span(), problem.to_string());
    }
    crate::schema::bundle::track(&path)
}

/// A warning from the derive, on stable Rust, which has no API for one: the use of a
/// deprecated item whose note is the message. Both carry `span` (the schema's string literal
/// in the attribute), so rustc reports the warning there, as user code, and `#![deny(warnings)]`
/// or `#![deny(deprecated)]` turns it into an error like any other warning.
fn warning(span: Span, message: &str) -> TokenStream {
    let item = syn::Ident::new("agent_contract_warning", span);
    quote::quote_spanned! {span=>
        const _: () = {
            #[deprecated(note = #message)]
            #[allow(non_camel_case_types)]
            struct #item;
            let _ = #item;
        };
    }
}

/// After an error, an `Agent` impl that compiles, so that code using the agent does not
/// pile up errors of its own (thiserror's `fallback.rs`). Its input type is uninhabited.
fn fallback(input: &DeriveInput, name: &str, runtime: &syn::Path) -> TokenStream {
    let ident = &input.ident;
    quote! {
        const _: () = {
            #[automatically_derived]
            impl #runtime::Agent for #ident {
                const NAME: &'static str = #name;
                const DESCRIPTION: &'static str = "";
                type Input = #runtime::__private::Unusable;
                type Output = #runtime::__private::serde_json::Value;

                fn output_contract() -> ::core::option::Option<&'static #runtime::__private::Contract> {
                    ::core::option::Option::None
                }

                fn render_user_prompt(
                    _: &#runtime::__private::ToolCall,
                    input: &Self::Input,
                ) -> ::core::result::Result<::std::string::String, #runtime::__private::PromptError> {
                    match *input {}
                }
            }
        };
    }
}

fn agent_name(input: &DeriveInput, attrs: &Attrs) -> String {
    attrs.name.as_ref().map_or_else(
        || crate::naming::agent_name(&input.ident.to_string()),
        LitStr::value,
    )
}

/// The agent's model; `None` after any error, once every file it names has been read and
/// every schema that could be read has been checked.
fn model(
    input: &DeriveInput,
    attrs: &Attrs,
    runtime: Option<syn::Path>,
    tracked: &mut Vec<TokenStream>,
    errors: &mut Ctxt,
) -> Option<AgentDef> {
    let root = manifest_dir();
    let name = agent_name(input, attrs);
    let name_ok = match crate::emit::agent::check_agent_name(&name) {
        Ok(()) => true,
        Err(message) => {
            let span = attrs
                .name
                .as_ref()
                .map_or_else(|| input.ident.span(), LitStr::span);
            errors.at(span, message);
            false
        }
    };
    let description = attrs
        .description
        .as_ref()
        .map_or_else(|| doc_comment(input), LitStr::value);
    if attrs.input.is_none() {
        match attrs.span {
            Some(span) => errors.at(
                span,
                "missing `input = \"path/to/input.schema.json\"` in `#[agent(...)]`",
            ),
            None => errors.at(
                Span::call_site(),
                "`#[derive(Agent)]` needs `#[agent(input = \"path/to/input.schema.json\")]`",
            ),
        }
    }
    let input_schema = attrs
        .input
        .as_ref()
        .map(|i| read_schema(&root, i, tracked, errors));
    let output = attrs
        .output
        .as_ref()
        .map(|o| read_schema(&root, o, tracked, errors));
    let user_prompt = attrs.user_prompt.as_ref().map(|p| PromptSource {
        path: p.value(),
        span: p.span(),
    });
    match (input_schema, output, runtime) {
        (Some(Some(input)), output @ (None | Some(Some(_))), Some(runtime)) if name_ok => {
            Some(AgentDef {
                name,
                description,
                input,
                output: output.flatten(),
                user_prompt,
                runtime,
            })
        }
        (input, output, runtime) => {
            // The agent cannot be generated, but its schemas can still be checked.
            let runtime = runtime.unwrap_or_else(|| syn::parse_quote!(::agent_contracts));
            let stem = crate::naming::agent_type(&name);
            let schemas = [
                (input.flatten(), ContractKind::Input, format!("{stem}Input")),
                (
                    output.flatten(),
                    ContractKind::Output,
                    format!("{stem}Output"),
                ),
            ];
            for (source, kind, root_name) in schemas {
                if let Some(source) = source {
                    check_schema(&source, kind, &root_name, &runtime, errors);
                }
            }
            None
        }
    }
}

fn check_schema(
    source: &SchemaSource,
    kind: ContractKind,
    root_name: &str,
    runtime: &syn::Path,
    errors: &mut Ctxt,
) {
    let options = TypeOptions {
        kind,
        runtime: runtime.clone(),
    };
    if let Err(problems) =
        crate::emit::types::types(&source.text, &source.origin, root_name, &options)
    {
        for problem in problems {
            errors.at(
                source.span,
                crate::schema::bundle::relocate(problem, &source.sources),
            );
        }
    }
}

/// Reads a schema file named in an attribute, relative to the crate's manifest directory,
/// with the sibling contracts it names bundled (see `schema/bundle.rs`); a bundled schema is
/// embedded as text, and its files are tracked through `tracked`.
fn read_schema(
    root: &Path,
    lit: &LitStr,
    tracked: &mut Vec<TokenStream>,
    errors: &mut Ctxt,
) -> Option<SchemaSource> {
    let rel = lit.value();
    let path = root.join(&rel);
    match std::fs::read_to_string(&path) {
        Ok(text) => match crate::schema::bundle::bundle(&text, &path, &rel) {
            Ok(None) => Some(SchemaSource {
                text,
                origin: rel,
                include: Some(path),
                span: lit.span(),
                sources: Vec::new(),
            }),
            Ok(Some(bundled)) => {
                tracked.extend(
                    std::iter::once(path)
                        .chain(bundled.files)
                        .map(|file| crate::schema::bundle::track(&file)),
                );
                Some(SchemaSource {
                    text: bundled.text,
                    origin: rel,
                    include: None,
                    span: lit.span(),
                    sources: bundled.sources,
                })
            }
            Err(problems) => {
                for problem in problems {
                    errors.at(lit.span(), problem);
                }
                None
            }
        },
        Err(e) => {
            errors.at(lit.span(), format!("cannot read schema file `{rel}`: {e}"));
            None
        }
    }
}

fn runtime_path(krate: Option<&LitStr>, errors: &mut Ctxt) -> Option<syn::Path> {
    match krate {
        None => Some(syn::parse_quote!(::agent_contracts)),
        Some(lit) => match lit.parse() {
            Ok(path) => Some(path),
            Err(_) => {
                errors.at(
                    lit.span(),
                    "`crate` must be a path, such as `::my_crate::agents`",
                );
                None
            }
        },
    }
}

fn manifest_dir() -> PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR").map_or_else(|| PathBuf::from("."), PathBuf::from)
}

fn doc_comment(input: &DeriveInput) -> String {
    let lines: Vec<String> = input
        .attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .filter_map(|a| match &a.meta {
            syn::Meta::NameValue(nv) => match &nv.value {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(s),
                    ..
                }) => Some(s.value().trim().to_owned()),
                _ => None,
            },
            _ => None,
        })
        .collect();
    lines.join(" ").trim().to_owned()
}

/// Expands `#[derive(AgentInput)]`: the contract is the schema schemars derives for the type.
pub fn derive_agent_input(input: &DeriveInput) -> TokenStream {
    let mut errors = Ctxt::default();
    let keys = Keys::parse(&input.attrs, "agent", &["name", "crate"], &mut errors);
    let krate = keys.str("crate", &mut errors);
    let name = keys.str("name", &mut errors);
    let runtime = runtime_path(krate.as_ref(), &mut errors);
    if !input.generics.params.is_empty() {
        errors.at(
            input.generics.span(),
            "`AgentInput` cannot be derived for a generic type",
        );
    }
    // A field named like a reserved tool-call key could never be sent: `split` takes the
    // key out of every call before the contract sees it.
    if let syn::Data::Struct(data) = &input.data {
        for field in data.fields.iter().filter_map(|f| f.ident.as_ref()) {
            let name = field.to_string();
            if crate::RESERVED_INPUT_KEYS.contains(&name.trim_start_matches("r#")) {
                errors.at(
                    field.span(),
                    format!("field `{name}` is a reserved tool-call key, so no call can provide it: rename it"),
                );
            }
        }
    }
    let runtime = runtime.unwrap_or_else(|| syn::parse_quote!(::agent_contracts));
    let ident = &input.ident;
    if errors.has_errors() {
        // After an error, an impl that compiles, so that code using the type does not pile up
        // errors of its own (thiserror's `fallback.rs`); a generic type gets none.
        let fallback = input.generics.params.is_empty().then(|| {
            quote! {
                const _: () = {
                    #[automatically_derived]
                    impl #runtime::AgentInput for #ident {
                        fn input_contract() -> &'static #runtime::__private::Contract {
                            ::core::unreachable!("the `AgentInput` derive failed")
                        }
                    }
                };
            }
        });
        let errors = errors.into_compile_errors();
        return quote! { #errors #fallback };
    }
    let name = name.map_or_else(
        || crate::naming::agent_name(&ident.to_string()),
        |n| n.value(),
    );
    crate::emit::agent::agent_input_impl(
        &runtime,
        ident,
        quote!(#runtime::__private::schemars_contract::<Self>(#name)),
        false,
        &[],
    )
}
