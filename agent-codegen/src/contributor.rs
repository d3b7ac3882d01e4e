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

/// The `#[contributor(...)]` keys as written.
#[derive(Default)]
struct Attrs {
    template: Option<LitStr>,
    name: Option<LitStr>,
    priority: Option<LitInt>,
    agents: Option<Vec<LitStr>>,
    krate: Option<LitStr>,
}

const KEYS: &str = "`template`, `name`, `priority`, `agents`, `crate`";

fn parse(input: &DeriveInput, errors: &mut Option<syn::Error>) -> Attrs {
    let mut attrs = Attrs::default();
    let push = |e: syn::Error, errors: &mut Option<syn::Error>| match errors {
        Some(all) => all.combine(e),
        None => *errors = Some(e),
    };
    for attr in input
        .attrs
        .iter()
        .filter(|a| a.path().is_ident("contributor"))
    {
        let mut local = Vec::new();
        let result = attr.parse_nested_meta(|meta| {
            let key = meta
                .path
                .get_ident()
                .map(ToString::to_string)
                .unwrap_or_default();
            let duplicate = match key.as_str() {
                "template" => attrs.template.replace(meta.value()?.parse()?).is_some(),
                "name" => attrs.name.replace(meta.value()?.parse()?).is_some(),
                "priority" => attrs.priority.replace(meta.value()?.parse()?).is_some(),
                "crate" => attrs.krate.replace(meta.value()?.parse()?).is_some(),
                "agents" => {
                    let list: syn::ExprArray = meta.value()?.parse()?;
                    let names = list
                        .elems
                        .iter()
                        .map(|e| match e {
                            syn::Expr::Lit(syn::ExprLit {
                                lit: syn::Lit::Str(s),
                                ..
                            }) => Ok(s.clone()),
                            other => Err(syn::Error::new(
                                other.span(),
                                "expected an agent name string",
                            )),
                        })
                        .collect::<syn::Result<Vec<_>>>()?;
                    attrs.agents.replace(names).is_some()
                }
                _ => {
                    local.push(syn::Error::new(
                        meta.path.span(),
                        format!(
                            "unknown `contributor` attribute key `{key}`, expected one of {KEYS}"
                        ),
                    ));
                    if meta.input.peek(syn::Token![=]) {
                        let _: syn::Expr = meta.value()?.parse()?;
                    }
                    false
                }
            };
            if duplicate {
                local.push(syn::Error::new(
                    meta.path.span(),
                    format!("duplicate `contributor` attribute key `{key}`"),
                ));
            }
            Ok(())
        });
        local.into_iter().for_each(|e| push(e, errors));
        if let Err(e) = result {
            push(e, errors);
        }
    }
    attrs
}

/// Expands `#[derive(PromptContributor)]`.
pub fn derive_prompt_contributor(input: &DeriveInput) -> TokenStream {
    let mut errors = None;
    let attrs = parse(input, &mut errors);
    if !input.generics.params.is_empty() {
        let e = syn::Error::new(
            input.generics.span(),
            "`PromptContributor` cannot be derived for a generic type",
        );
        match &mut errors {
            Some(all) => all.combine(e),
            None => errors = Some(e),
        }
    }
    let template = attrs.template.clone().ok_or_else(|| {
        syn::Error::new(
            Span::call_site(),
            "missing `#[contributor(template = \"path/to/template.md\")]`",
        )
    });
    let runtime: Result<syn::Path, syn::Error> = match &attrs.krate {
        Some(lit) => lit.parse(),
        None => Ok(syn::parse_quote!(::agent_core)),
    };
    let (template, runtime) = match (template, runtime, errors) {
        (Ok(t), Ok(r), None) => (t, r),
        (t, r, errors) => {
            let mut all = errors;
            for e in [t.err(), r.err()].into_iter().flatten() {
                match &mut all {
                    Some(a) => a.combine(e),
                    None => all = Some(e),
                }
            }
            return all.map(|e| e.to_compile_error()).unwrap_or_default();
        }
    };
    expand(input, &attrs, &template, &runtime)
}

fn expand(
    input: &DeriveInput,
    attrs: &Attrs,
    template: &LitStr,
    runtime: &syn::Path,
) -> TokenStream {
    let ident = &input.ident;
    let name = attrs.name.as_ref().map_or_else(
        || crate::derive::snake_case(&ident.to_string()),
        LitStr::value,
    );
    let priority = attrs
        .priority
        .as_ref()
        .map_or_else(|| quote!(0), |p| quote!(#p));
    let applies = match &attrs.agents {
        None => quote!(#runtime::contributor::AppliesTo::All),
        Some(names) => quote!(#runtime::contributor::AppliesTo::Agents(&[#(#names),*])),
    };
    let askama = quote!(#runtime::__private::askama);
    quote! {
        const _: () = {
            mod filters {
                pub use #runtime::prompt::filters::*;
            }

            #[derive(#askama::Template)]
            #[template(path = #template, escape = "none", askama = #askama)]
            struct ContributorTemplate<'a> {
                this: &'a #ident,
                ctx: &'a #runtime::contributor::PromptContext<'a>,
            }

            impl ::core::ops::Deref for ContributorTemplate<'_> {
                type Target = #ident;
                fn deref(&self) -> &#ident {
                    self.this
                }
            }

            #[automatically_derived]
            impl #runtime::contributor::PromptContributor for #ident {
                fn name(&self) -> &str {
                    #name
                }
                fn applies_to(&self) -> #runtime::contributor::AppliesTo<'_> {
                    #applies
                }
                fn priority(&self) -> i32 {
                    #priority
                }
                fn contribute(
                    &self,
                    ctx: &#runtime::contributor::PromptContext<'_>,
                ) -> ::core::result::Result<
                    ::core::option::Option<::std::string::String>,
                    #runtime::contributor::ContributorError,
                > {
                    let text = #askama::Template::render(&ContributorTemplate { this: self, ctx })?;
                    ::core::result::Result::Ok((!text.trim().is_empty()).then_some(text))
                }
            }
        };
    }
}
