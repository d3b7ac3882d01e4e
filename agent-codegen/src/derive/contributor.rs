//! `#[derive(PromptContributor)]`: a struct whose system-prompt part is an askama template.
//!
//! ```ignore
//! #[derive(PromptContributor)]
//! #[contributor(template = "contributors/style.md", name = "style", priority = 40,
//!               agents = ["planner", "reviewer"])]
//! struct Style { tone: &'static str }
//! ```
//! The template sees the struct's fields (the template struct derefs to it, as agent prompts
//! deref to their input) and `ctx`, the call's `PromptContext`. A part that renders to blank
//! text adds nothing.

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::spanned::Spanned;
use syn::{DeriveInput, LitInt, LitStr};

use crate::derive::ctxt::Ctxt;
use crate::derive::keys::Keys;

/// The `#[contributor(...)]` keys as written.
#[derive(Default)]
struct Attrs {
    template: Option<LitStr>,
    name: Option<LitStr>,
    priority: Option<LitInt>,
    agents: Option<Vec<LitStr>>,
    krate: Option<LitStr>,
}

const KEYS: [&str; 5] = ["template", "name", "priority", "agents", "crate"];

fn parse(input: &DeriveInput, errors: &mut Ctxt) -> Attrs {
    let keys = Keys::parse(&input.attrs, "contributor", &KEYS, errors);
    Attrs {
        template: keys.str("template", errors),
        name: keys.str("name", errors),
        priority: keys.int("priority", errors),
        agents: keys.str_list("agents", errors),
        krate: keys.str("crate", errors),
    }
}

/// Expands `#[derive(PromptContributor)]`.
pub fn derive_prompt_contributor(input: &DeriveInput) -> TokenStream {
    let mut errors = Ctxt::default();
    let attrs = parse(input, &mut errors);
    if !input.generics.params.is_empty() {
        errors.at(
            input.generics.span(),
            "`PromptContributor` cannot be derived for a generic type",
        );
    }
    if attrs.template.is_none() {
        errors.at(
            Span::call_site(),
            "missing `#[contributor(template = \"path/to/template.md\")]`",
        );
    }
    let runtime = match &attrs.krate {
        Some(lit) => errors.ok(lit.parse()),
        None => Some(syn::parse_quote!(::agent_contracts)),
    };
    let runtime = runtime.unwrap_or_else(|| syn::parse_quote!(::agent_contracts));
    match &attrs.template {
        Some(template) if !errors.has_errors() => expand(input, &attrs, template, &runtime),
        _ => {
            let fallback = fallback(input, &attrs, &runtime);
            let errors = errors.into_compile_errors();
            quote! { #errors #fallback }
        }
    }
}

/// After an error, an impl that compiles and contributes nothing, so that code using the
/// contributor does not pile up errors of its own (thiserror's `fallback.rs`). A generic type
/// gets none.
fn fallback(input: &DeriveInput, attrs: &Attrs, runtime: &syn::Path) -> Option<TokenStream> {
    if !input.generics.params.is_empty() {
        return None;
    }
    let ident = &input.ident;
    let name = contributor_name(input, attrs);
    Some(quote! {
        const _: () = {
            #[automatically_derived]
            impl #runtime::PromptContributor for #ident {
                fn name(&self) -> &str {
                    #name
                }
                fn priority(&self) -> i32 {
                    0
                }
                fn contribute(
                    &self,
                    _: &#runtime::__private::PromptContext<'_>,
                ) -> ::core::result::Result<
                    ::core::option::Option<::std::string::String>,
                    #runtime::__private::ContributorError,
                > {
                    ::core::unreachable!("the `PromptContributor` derive failed")
                }
            }
        };
    })
}

fn contributor_name(input: &DeriveInput, attrs: &Attrs) -> String {
    attrs.name.as_ref().map_or_else(
        || crate::naming::agent_name(&input.ident.to_string()),
        LitStr::value,
    )
}

fn expand(
    input: &DeriveInput,
    attrs: &Attrs,
    template: &LitStr,
    runtime: &syn::Path,
) -> TokenStream {
    let ident = &input.ident;
    let name = contributor_name(input, attrs);
    let priority = attrs
        .priority
        .as_ref()
        .map_or_else(|| quote!(0), |p| quote!(#p));
    // Without `agents`, the trait's default: every agent.
    let applies = attrs.agents.as_ref().map(|names| {
        quote! {
            fn applies_to(&self, agent: &str) -> bool {
                [#(#names),*].contains(&agent)
            }
        }
    });
    let askama = quote!(#runtime::__private::askama);
    quote! {
        const _: () = {
            mod filters {
                pub use #runtime::__private::filters::*;
            }

            #[derive(#askama::Template)]
            #[template(path = #template, escape = "none", askama = #askama)]
            struct ContributorTemplate<'a> {
                this: &'a #ident,
                ctx: &'a #runtime::__private::PromptContext<'a>,
            }

            impl ::core::ops::Deref for ContributorTemplate<'_> {
                type Target = #ident;
                fn deref(&self) -> &#ident {
                    self.this
                }
            }

            #[automatically_derived]
            impl #runtime::PromptContributor for #ident {
                fn name(&self) -> &str {
                    #name
                }
                #applies
                fn priority(&self) -> i32 {
                    #priority
                }
                fn contribute(
                    &self,
                    ctx: &#runtime::__private::PromptContext<'_>,
                ) -> ::core::result::Result<
                    ::core::option::Option<::std::string::String>,
                    #runtime::__private::ContributorError,
                > {
                    let text = #askama::Template::render(&ContributorTemplate { this: self, ctx })?;
                    ::core::result::Result::Ok((!text.trim().is_empty()).then_some(text))
                }
            }
        };
    }
}
