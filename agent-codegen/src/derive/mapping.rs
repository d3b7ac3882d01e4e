//! One Rust type for a contract two derives use: `#[agent(types = { "../budget_agent/output.schema.json"
//! = crate::agents::budget_agent::output::BudgetAgentOutput })]` makes the consumer use the
//! producer's type where its contract bundles that file, instead of a copy of its own.
//!
//! A derive cannot see another derive's output, so the mapping is checked when the crate
//! compiles: every generated contract type implements `contract::ContractType`, whose
//! `FINGERPRINT` is a hash of the schema it was generated from, and the consumer asserts, in a
//! constant, that the mapped type's fingerprint is the one of the file it bundles. A type
//! generated from another schema (or another version of it) does not compile, with the error
//! at the mapping.

use crate::derive::ctxt::Ctxt;
use crate::emit::fingerprint::fingerprint;
use crate::emit::share;
use proc_macro2::TokenStream;
use quote::{format_ident, quote_spanned};
use std::collections::BTreeSet;
use std::path::Path;
use syn::spanned::Spanned;
use syn::{Expr, LitStr};

/// One `"file" = path` of `types = { ... }`.
pub(crate) struct Mapping {
    lit: LitStr,
    path: syn::Path,
}

/// Parses `{ "file" = path; ... }`.
pub(crate) fn parse(value: &Expr, errors: &mut Ctxt) -> Vec<Mapping> {
    const SHAPE: &str = "expected `types = { \"../producer/output.schema.json\" = path::to::ProducerOutput }` (several separated by `;`)";
    let Expr::Block(block) = value else {
        errors.at(value.span(), SHAPE);
        return Vec::new();
    };
    let mut out = Vec::new();
    for stmt in &block.block.stmts {
        let syn::Stmt::Expr(Expr::Assign(assign), _) = stmt else {
            errors.at(stmt.span(), SHAPE);
            continue;
        };
        let (
            Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(lit),
                ..
            }),
            Expr::Path(path),
        ) = (&*assign.left, &*assign.right)
        else {
            errors.at(assign.span(), SHAPE);
            continue;
        };
        out.push(Mapping {
            lit: lit.clone(),
            path: path.path.clone(),
        });
    }
    out
}

/// Replaces, in the contract module, each mapped file's bundled copy by a `use` of the
/// mapped type, and returns the assertions that the mapped type was generated from that file.
/// `dir` is the folder of the consumer's schema, against which the files are named.
pub(crate) fn apply(
    module: &mut syn::ItemMod,
    mappings: &[Mapping],
    dir: &Path,
    runtime: &syn::Path,
    errors: &mut Ctxt,
) -> TokenStream {
    let mut checks = TokenStream::new();
    for mapping in mappings {
        let file = dir.join(mapping.lit.value());
        let shown: Vec<String> = file
            .iter()
            .rev()
            .take(2)
            .map(|p| p.to_string_lossy().into_owned())
            .collect();
        let shown = format!("{}/{}", shown[1..].join("/"), shown[0]);
        let text = std::fs::read_to_string(&file)
            .map_err(|e| e.to_string())
            .and_then(|text| {
                match crate::schema::bundle::bundle(&text, &file, &mapping.lit.value()) {
                    Ok(Some(bundled)) => Ok(bundled.text),
                    Ok(None) => Ok(text),
                    Err(problems) => Err(problems
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join("; ")),
                }
            });
        let text = match text {
            Ok(text) => text,
            Err(e) => {
                errors.at(
                    mapping.lit.span(),
                    format!("cannot read `{}`: {e}", mapping.lit.value()),
                );
                continue;
            }
        };
        let root = crate::naming::type_name(&crate::schema::bundle::def_key(&shown));
        match replace(module, &root, &mapping.path) {
            Ok(true) => {}
            Ok(false) => {
                errors.at(
                    mapping.lit.span(),
                    format!(
                        "the contract does not refer to `{}` (it has no type `{root}`): map only a sibling `$ref` of this contract",
                        mapping.lit.value()
                    ),
                );
                continue;
            }
            Err(inner) => {
                let inner = inner
                    .iter()
                    .map(|n| format!("`{n}`"))
                    .collect::<Vec<_>>()
                    .join(", ");
                errors.at(
                    mapping.lit.span(),
                    format!(
                        "the contract names {inner}, a type inside `{}` other than its root `{root}`, which a mapping cannot reach: refer to the whole file (a `$ref` without a fragment), or generate both agents with the build script, which shares every type",
                        mapping.lit.value()
                    ),
                );
                continue;
            }
        }
        let Some(fingerprint) = fingerprint(&text) else {
            continue;
        };
        let path = &mapping.path;
        let message = format!(
            "the type mapped to `{}` was not generated from that schema as it is now: map the type generated from it, or regenerate the producer",
            mapping.lit.value()
        );
        checks.extend(quote_spanned! {mapping.path.span()=>
            const _: () = ::core::assert!(
                <#path as #runtime::__private::ContractType>::FINGERPRINT == #fingerprint,
                #message
            );
        });
    }
    checks
}

/// In the `input` and `output` modules: drops the bundled copy of the mapped file (`root`
/// and every type under it, with their impls) and uses `path` as `root`. Whether a module had
/// the type; `Err` with the names of the copy that the rest of the module still names.
fn replace(module: &mut syn::ItemMod, root: &str, path: &syn::Path) -> Result<bool, Vec<String>> {
    let mut found = false;
    let Some((_, items)) = &mut module.content else {
        return Ok(false);
    };
    for item in items {
        let syn::Item::Mod(side) = item else { continue };
        let Some((_, side_items)) = &mut side.content else {
            continue;
        };
        let shapes = share::side(side_items);
        if !shapes.contains_key(root) {
            continue;
        }
        found = true;
        let copy = share::closure(&shapes, root);
        share::drop_types(side_items, &copy);
        share::prune_defaults(side_items, &copy);
        let inner: BTreeSet<String> = copy.iter().filter(|n| *n != root).cloned().collect();
        let named = share::named_types(side_items, &inner, &BTreeSet::new());
        if !named.is_empty() {
            return Err(named.into_iter().collect());
        }
        let ident = format_ident!("{root}");
        side_items.push(syn::parse_quote!(pub use #path as #ident;));
    }
    Ok(found)
}
