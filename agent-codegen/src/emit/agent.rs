//! The glue around the generated types: the contract module of one agent (types, embedded
//! schemas, `AgentInput` impl) and its `Agent` impl (prompt template, output contract).
//!
//! Both front ends call these, so the derive and build scripts produce the same code.

use crate::emit::types::{Types, types};
use crate::error::SchemaError;
use crate::{ContractKind, TypeOptions};
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use std::path::PathBuf;

/// One agent's declaration, from `#[agent(...)]` or from a `schemas/<agent>/` folder.
#[derive(Debug, Clone)]
pub struct AgentDef {
    /// The agent's name (`plan_generator_agent`); names its tool and its module.
    pub name: String,
    /// What the agent does, for the tool description.
    pub description: String,
    /// The input contract.
    pub input: SchemaSource,
    /// The output contract, if any.
    pub output: Option<SchemaSource>,
    /// The user prompt template, relative to askama's template folders; the default prompt
    /// when `None`.
    pub user_prompt: Option<PromptSource>,
    /// Path of the runtime crate (`::agent_contracts`, or what `#[agent(crate = "...")]` says).
    pub runtime: syn::Path,
}

/// A schema file's text and how generated code embeds it.
#[derive(Debug, Clone)]
pub struct SchemaSource {
    /// The schema text.
    pub text: String,
    /// Where it came from, for messages (`schemas/x/input.schema.json`).
    pub origin: String,
    /// Absolute path to embed with `include_str!`, so editing the file rebuilds the crate
    /// that names it (the derive); `None` embeds the text as a literal (build scripts, which
    /// track files with `rerun-if-changed` instead).
    pub include: Option<PathBuf>,
    /// Span that errors about this schema point at (the attribute's string literal).
    pub span: Span,
    /// Where the definitions bundled from sibling contract files came from: a problem inside
    /// one is reported in that file.
    pub(crate) sources: Vec<crate::schema::bundle::DefSource>,
}

/// A user prompt template path and the token errors about it point at.
#[derive(Debug, Clone)]
pub struct PromptSource {
    /// Path relative to askama's template folders.
    pub path: String,
    /// Span of the attribute's string literal.
    pub span: Span,
}

/// Generated code of one agent's contracts, in pieces the front ends arrange.
pub struct AgentCode {
    /// `pub mod <name> { input, output, schemas, AgentInput impl }`.
    pub module: syn::ItemMod,
    /// The module's identifier.
    pub module_ident: syn::Ident,
    /// Paths of the typed input and output, relative to where the module sits.
    input_ty: TokenStream,
    output_ty: Option<TokenStream>,
    /// Fields of the typed input, if it is a struct with named fields.
    pub(crate) input_fields: Option<Vec<String>>,
    /// Whether the input contract has media fields (the default prompt places them).
    has_media: bool,
    /// What the schemas' typing dropped (a `default` its schema refuses), located.
    pub warnings: Vec<SchemaError>,
}

/// An error about one agent, and the span it belongs to.
pub type Located = (Span, SchemaError);

/// Why `name` cannot name an agent, if it cannot: it becomes a module name, a tool name
/// (`run_<name>`) and the agent-type segment of every context ID.
pub fn check_agent_name(name: &str) -> Result<(), String> {
    let well_formed = name.len() <= 64
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if !well_formed {
        return Err(format!(
            "agent name `{name}` must be 1 to 64 of `a-z`, `0-9` and `_`, starting with a letter"
        ));
    }
    if syn::parse_str::<syn::Ident>(name).is_err() {
        return Err(format!(
            "agent name `{name}` is a Rust keyword and cannot name its module"
        ));
    }
    Ok(())
}

/// Generates the contract module; every schema problem is returned, not just the first. Runs
/// on the calling thread, which needs the stack of `emit::types::on_big_stack`.
pub fn contract_module(def: &AgentDef) -> Result<AgentCode, Vec<Located>> {
    let stem = crate::naming::agent_type(&def.name);
    let input = types_for(
        def,
        &def.input,
        &format!("{stem}Input"),
        ContractKind::Input,
    );
    let output = def
        .output
        .as_ref()
        .map(|o| types_for(def, o, &format!("{stem}Output"), ContractKind::Output));
    let (input, output) = match (input, output.transpose()) {
        (Ok(i), Ok(o)) => (i, o),
        (i, o) => {
            let mut errors = i.err().unwrap_or_default();
            errors.extend(o.err().unwrap_or_default());
            return Err(errors);
        }
    };
    let runtime = &def.runtime;
    let module_ident = format_ident!("{}", snake_ident(&def.name));
    let name = &def.name;
    let input_ident = input.root_ident.clone();
    let input_fields = struct_fields(&input);
    let media = input.media.clone();
    let input_schema = embed(&def.input);
    let input_doc = format!(
        "Typed input of `{name}`, generated from `{}`.",
        def.input.origin
    );
    let warnings = input
        .warnings
        .iter()
        .chain(output.iter().flat_map(|o| &o.warnings))
        .cloned()
        .collect();
    // The generated types join the module as syntax: only the glue around them is parsed here.
    let input_fingerprint = crate::emit::fingerprint::contract_type_impl(
        runtime,
        &quote!(self::input::#input_ident),
        &def.input.text,
    );
    let mut items = vec![types_module(runtime, "input", input)];
    items.extend(glue(quote! {
        pub use self::input::#input_ident;
        #input_fingerprint
        /// The input contract's schema, as written.
        pub const INPUT_SCHEMA: &str = #input_schema;
        /// The agent's name.
        pub const NAME: &str = #name;
    }));
    let output_ty = output.map(|o| {
        let ident = o.root_ident.clone();
        let schema = embed(
            def.output
                .as_ref()
                .expect("output types come from an output"),
        );
        let fingerprint = crate::emit::fingerprint::contract_type_impl(
            runtime,
            &quote!(self::output::#ident),
            def.output
                .as_ref()
                .map(|o| o.text.as_str())
                .unwrap_or_default(),
        );
        let strict = crate::emit::strict::forms_text(
            def.output
                .as_ref()
                .map(|o| o.text.as_str())
                .unwrap_or_default(),
        );
        items.push(types_module(runtime, "output", o));
        items.extend(glue(quote! {
            pub use self::output::#ident;
            #fingerprint
            /// The output contract's schema, as written.
            pub const OUTPUT_SCHEMA: &str = #schema;
            /// The schemas providers' strict modes are sent, decided at build time.
            pub const OUTPUT_STRICT: &str = #strict;
        }));
        quote!(#module_ident::#ident)
    });
    items.extend(glue(agent_input_impl(
        runtime,
        &input_ident,
        quote!({
            #runtime::__private::contract(NAME, #runtime::__private::ContractKind::Input, INPUT_SCHEMA)
        }),
        true,
        &media,
    )));
    let mut module: syn::ItemMod = syn::parse_quote! {
        #[doc = #input_doc]
        #[allow(clippy::all, reason = "generated by typify")]
        #[allow(dead_code, reason = "a crate uses what it needs of its contracts' types")]
        pub mod #module_ident {}
    };
    if let Some((_, content)) = &mut module.content {
        *content = items;
    }
    Ok(AgentCode {
        warnings,
        input_fields,
        has_media: !media.is_empty(),
        input_ty: quote!(#module_ident::#input_ident),
        output_ty,
        module,
        module_ident,
    })
}

/// The `AgentInput` impl for `ident`, whose contract `contract` (an expression) compiles once.
///
/// `compiled_checks`: the type has a generated `ContractChecks` impl, which then decides
/// whether a call needs the validator. `media`: its media fields, listed in the impl.
pub(crate) fn agent_input_impl(
    runtime: &syn::Path,
    ident: &syn::Ident,
    contract: TokenStream,
    compiled_checks: bool,
    media: &[crate::typify::media::MediaField],
) -> TokenStream {
    let media = media_items(runtime, media);
    let checks = compiled_checks.then(|| {
        quote! {
            const COMPILED_CHECKS: bool = true;
            fn satisfies_contract(&self) -> ::core::option::Option<bool> {
                ::core::option::Option::Some(
                    #runtime::__private::ContractChecks::satisfies_contract(self),
                )
            }
        }
    });
    quote! {
        const _: () = {
            #[automatically_derived]
            impl #runtime::AgentInput for #ident {
                fn input_contract() -> &'static #runtime::__private::Contract {
                    static CONTRACT: #runtime::__private::OnceLock<#runtime::__private::Contract> =
                        #runtime::__private::OnceLock::new();
                    CONTRACT.get_or_init(|| #contract)
                }
                #checks
                #media
            }
        };
    }
}

/// The `AgentInput` items of an input with media fields: `MEDIA`, and the fields' values in
/// its order; nothing without.
fn media_items(runtime: &syn::Path, media: &[crate::typify::media::MediaField]) -> TokenStream {
    if media.is_empty() {
        return TokenStream::new();
    }
    let specs = media.iter().map(|field| {
        let (name, accepts) = (&field.json_name, &field.accepts);
        let form = match field.base64 {
            true => quote!(#runtime::__private::MediaForm::Base64),
            false => quote!(#runtime::__private::MediaForm::Uri),
        };
        quote!(#runtime::__private::MediaSpec::new(#name, #accepts, #form))
    });
    let field = |mutable: bool| {
        media
            .iter()
            .map(move |field| {
                let ident = syn::parse_str::<syn::Ident>(&field.rust_name)
                    .unwrap_or_else(|_| syn::Ident::new_raw(&field.rust_name, Span::call_site()));
                match (field.optional, mutable) {
                    (true, false) => quote!(self.#ident.as_ref()),
                    (true, true) => quote!(self.#ident.as_mut()),
                    (false, false) => quote!(::core::option::Option::Some(&self.#ident)),
                    (false, true) => quote!(::core::option::Option::Some(&mut self.#ident)),
                }
            })
            .collect::<Vec<_>>()
    };
    let (shared, unique) = (field(false), field(true));
    quote! {
        const MEDIA: &'static [#runtime::__private::MediaSpec] = &[#(#specs),*];
        fn media_inputs(&self) -> ::std::vec::Vec<::core::option::Option<&#runtime::__private::MediaInput>> {
            ::std::vec![#(#shared),*]
        }
        fn media_inputs_mut(&mut self) -> ::std::vec::Vec<::core::option::Option<&mut #runtime::__private::MediaInput>> {
            ::std::vec![#(#unique),*]
        }
    }
}

/// `pub mod <name> { .. }` holding one contract's types.
fn types_module(runtime: &syn::Path, name: &str, types: Types) -> syn::Item {
    let ident = format_ident!("{name}");
    let doc = format!(" Types of the {name} contract.");
    let mut module: syn::ItemMod = syn::parse_quote! {
        #[doc = #doc]
        // The doc comments inside are the schema's `description`s: prose a schema author
        // wrote for JSON Schema readers (bare URLs, `[brackets]`, `<tags>`), not rustdoc.
        #[allow(rustdoc::all)]
        pub mod #ident {
            #[allow(unused_imports)]
            use ::std::prelude::rust_2021::*;
            // typify's code calls `String::deserialize` and the like.
            #[allow(unused_imports)]
            use #runtime::__private::serde::{Deserialize as _, Serialize as _};
        }
    };
    if let Some((_, content)) = &mut module.content {
        let mut items = types.into_items();
        with_prelude(&mut items);
        content.extend(items);
    }
    syn::Item::Mod(module)
}

/// Items the front end writes around the generated types, as syntax.
fn glue(tokens: TokenStream) -> Vec<syn::Item> {
    syn::parse2::<syn::File>(tokens)
        .expect("the glue around generated types is Rust items")
        .items
}

/// The `Agent` impl for `agent` (a path to a unit struct), placed beside the contract module.
pub fn agent_impl(def: &AgentDef, code: &AgentCode, agent: &TokenStream) -> TokenStream {
    let runtime = &def.runtime;
    let (name, description) = (&def.name, &def.description);
    let input_ty = &code.input_ty;
    let module = &code.module_ident;
    let (output_ty, output_contract) = match &code.output_ty {
        Some(ty) => (
            ty.clone(),
            quote! {
                static CONTRACT: #runtime::__private::OnceLock<#runtime::__private::Contract> =
                    #runtime::__private::OnceLock::new();
                ::core::option::Option::Some(CONTRACT.get_or_init(|| {
                    #runtime::__private::output_contract(#name, #module::OUTPUT_SCHEMA, #module::OUTPUT_STRICT)
                }))
            },
        ),
        None => (
            quote!(#runtime::__private::serde_json::Value),
            quote!(::core::option::Option::None),
        ),
    };
    let (prompt_items, render) = match &def.user_prompt {
        Some(prompt) => prompt_template(runtime, prompt, input_ty),
        None if code.has_media => (
            TokenStream::new(),
            quote! {
                ::core::result::Result::Ok(#runtime::__private::default_media_prompt(
                    call,
                    <Self::Input as #runtime::AgentInput>::MEDIA,
                    &#runtime::AgentInput::media_inputs(input),
                ))
            },
        ),
        None => (
            TokenStream::new(),
            quote! {
                let _ = input;
                ::core::result::Result::Ok(#runtime::__private::default_prompt(call))
            },
        ),
    };
    quote! {
        const _: () = {
            #prompt_items

            #[automatically_derived]
            impl #runtime::Agent for #agent {
                const NAME: &'static str = #name;
                const DESCRIPTION: &'static str = #description;
                type Input = #input_ty;
                type Output = #output_ty;

                fn output_contract() -> ::core::option::Option<&'static #runtime::__private::Contract> {
                    #output_contract
                }

                fn render_user_prompt(
                    call: &#runtime::__private::ToolCall,
                    input: &Self::Input,
                ) -> ::core::result::Result<::std::string::String, #runtime::__private::PromptError> {
                    #render
                }
            }
        };
    }
}

/// The askama template struct of a custom prompt. It holds `task` and derefs to the typed
/// input, so the template names the contract's fields directly (`{{ target_url }}`) and a
/// field the contract lacks is a compile error. The template path literal carries the
/// attribute's span, so askama's errors point at the user's `user_prompt = "..."`.
fn prompt_template(
    runtime: &syn::Path,
    prompt: &PromptSource,
    input_ty: &TokenStream,
) -> (TokenStream, TokenStream) {
    let path = syn::LitStr::new(&prompt.path, prompt.span);
    let askama = quote!(#runtime::__private::askama);
    let askama_at = respan(askama.clone(), prompt.span);
    let items = quote_spanned! {prompt.span=>
        // askama's code calls trait methods (`into_iter`, `T::default`) that a module with
        // `#![no_implicit_prelude]` lacks; `as _` brings the traits in without names that
        // could clash with the user's items.
        #[allow(unused_imports)]
        use ::std::prelude::rust_2021::{
            AsMut as _, AsRef as _, Clone as _, Default as _, DoubleEndedIterator as _,
            ExactSizeIterator as _, Extend as _, From as _, FromIterator as _, Into as _,
            IntoIterator as _, Iterator as _, Ord as _, PartialEq as _, PartialOrd as _,
            ToOwned as _, ToString as _, TryFrom as _, TryInto as _,
        };

        mod filters {
            // A template that calls no filter leaves them unused.
            #[allow(unused_imports)]
            pub use #runtime::__private::filters::*;
        }

        #[derive(#askama_at::Template)]
        #[template(path = #path, escape = "none", askama = #askama)]
        struct UserPrompt<'a> {
            // A template need not print the task.
            #[allow(dead_code)]
            task: &'a str,
            // Named so that it cannot hide a contract property: the template reads the
            // input's fields through `Deref`.
            __agent_input: &'a #input_ty,
        }

        impl ::core::ops::Deref for UserPrompt<'_> {
            type Target = #input_ty;
            fn deref(&self) -> &Self::Target {
                self.__agent_input
            }
        }
    };
    let render = quote! {
        let task = #runtime::__private::prompt_task(call);
        let prompt = UserPrompt { task: &task, __agent_input: input };
        let mut out = ::std::string::String::with_capacity(#runtime::__private::prompt_capacity(
            call,
            <UserPrompt<'_> as #askama::Template>::SIZE_HINT,
        ));
        #askama::Template::render_into(&prompt, &mut out)
            .map(|()| out)
            .map_err(|e| #runtime::__private::prompt_error(<Self as #runtime::Agent>::NAME, e))
    };
    (items, render)
}

/// Named fields of the generated root struct, as the template names them.
fn struct_fields(types: &Types) -> Option<Vec<String>> {
    match &types.root_struct()?.fields {
        syn::Fields::Named(named) => Some(
            named
                .named
                .iter()
                .filter_map(|f| f.ident.as_ref())
                .map(|i| syn::ext::IdentExt::unraw(i).to_string())
                .collect(),
        ),
        _ => None,
    }
}

fn types_for(
    def: &AgentDef,
    source: &SchemaSource,
    root: &str,
    kind: ContractKind,
) -> Result<Types, Vec<Located>> {
    let options = TypeOptions {
        kind,
        runtime: def.runtime.clone(),
    };
    let relocate = |e| crate::schema::bundle::relocate(e, &source.sources);
    match types(&source.text, &source.origin, root, &options) {
        Ok(mut types) => {
            types.warnings = types.warnings.into_iter().map(relocate).collect();
            Ok(types)
        }
        Err(errors) => Err(errors
            .into_iter()
            .map(|e| (source.span, relocate(e)))
            .collect()),
    }
}

/// typify's code names prelude items (`Clone`, `Ok`, `From`, `String`) unqualified, and
/// `#![no_implicit_prelude]` on the user's module reaches the generated modules too: each
/// module of the types (`error`, `defaults`) imports the prelude explicitly. Items the user
/// defines never reach these modules, so shadowing needs nothing more.
fn with_prelude(items: &mut [syn::Item]) {
    for item in items {
        if let syn::Item::Mod(syn::ItemMod {
            content: Some((_, items)),
            ..
        }) = item
        {
            with_prelude(items);
            items.insert(
                0,
                syn::parse_quote! {
                    #[allow(unused_imports)]
                    use ::std::prelude::rust_2021::*;
                },
            );
        }
    }
}

fn embed(source: &SchemaSource) -> TokenStream {
    match &source.include {
        Some(path) => {
            let path = path.to_string_lossy();
            quote!(::core::include_str!(#path))
        }
        None => {
            let text = &source.text;
            quote!(#text)
        }
    }
}

/// A name usable as a module identifier: non-alphanumerics become `_`, a leading digit gets
/// a `_` before it.
pub fn snake_ident(name: &str) -> String {
    let mut s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() || s.starts_with(|c: char| c.is_ascii_digit()) {
        s.insert(0, '_');
    }
    s
}

/// `tokens` with every span set to `span`. rustc reports errors in askama's generated code
/// (which uses the call site's span) at the `#[derive(..)]` path that invoked askama; giving
/// that path the literal's span puts them at `user_prompt = "..."`, not at `Agent`.
fn respan(tokens: TokenStream, span: Span) -> TokenStream {
    tokens
        .into_iter()
        .map(|mut tree| {
            if let proc_macro2::TokenTree::Group(group) = &tree {
                let mut g =
                    proc_macro2::Group::new(group.delimiter(), respan(group.stream(), span));
                g.set_span(span);
                tree = g.into();
            } else {
                tree.set_span(span);
            }
            tree
        })
        .collect()
}
