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
use std::collections::{BTreeMap, BTreeSet};
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
        let producer = Producer {
            text: &text,
            origin: &shown,
            root: &root,
            path: &mapping.path,
            runtime,
        };
        match replace(module, &producer) {
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
                        "the contract names {inner}, a type inside `{}` other than its root `{root}`, which this mapping cannot reach: map the type where it was generated (`path::to::producer::output::{root}`, or the agent module's `path::to::producer::{root}`)",
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

/// The producer's contract of one mapping: its bundled text, where it came from, its root
/// type's name, and the path the mapping gives it.
struct Producer<'a> {
    text: &'a str,
    origin: &'a str,
    root: &'a str,
    path: &'a syn::Path,
    runtime: &'a syn::Path,
}

impl Producer<'_> {
    /// Which side of its agent the contract is (`output` for `output.schema.json`).
    fn side(&self) -> &'static str {
        if self.origin.ends_with("output.schema.json") {
            "output"
        } else {
            "input"
        }
    }

    /// For each of the consumer's types under `root` (`consumer`, the copy's types), the
    /// producer's type it is: the producer's contract typed as its own derive types it.
    fn names(&self, consumer: &share::Side) -> Option<BTreeMap<String, String>> {
        let kind = match self.side() {
            "output" => crate::ContractKind::Output,
            _ => crate::ContractKind::Input,
        };
        let options = crate::TypeOptions {
            kind,
            runtime: self.runtime.clone(),
        };
        let types = crate::emit::types::types(self.text, self.origin, self.root, &options).ok()?;
        let producer = share::side(&types.into_items());
        share::correspond(consumer, self.root, &producer, self.root)
    }

    /// The module of the producer's types: the mapped path's module when it names the
    /// generated `input` or `output` module's type, else (the agent module's re-export of
    /// the root) that module's side module.
    fn module(&self) -> syn::Path {
        let mut module = self.path.clone();
        module.segments.pop();
        module.segments.pop_punct();
        let in_side = module
            .segments
            .last()
            .is_some_and(|s| s.ident == "input" || s.ident == "output");
        if !in_side {
            module
                .segments
                .push(format_ident!("{}", self.side()).into());
        }
        module
    }
}

/// In the `input` and `output` modules: drops the bundled copy of the mapped file (its root
/// and every type under it, with their impls) and uses the producer's types in its place:
/// the root by the mapped path, and a type under it that the consumer names itself (through a
/// `$ref` to a fragment of the file) from the producer's module. Whether a module had the
/// root; `Err` with the names the consumer still needs when they cannot be matched.
fn replace(module: &mut syn::ItemMod, producer: &Producer<'_>) -> Result<bool, Vec<String>> {
    let root = producer.root;
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
        let ident = format_ident!("{root}");
        let path = producer.path;
        side_items.push(syn::parse_quote!(pub use #path as #ident;));
        if named.is_empty() {
            continue;
        }
        let names = producer
            .names(&shapes)
            .ok_or_else(|| named.iter().cloned().collect::<Vec<_>>())?;
        let at = producer.module();
        for mine in &named {
            let theirs = names.get(mine).ok_or_else(|| vec![mine.clone()])?;
            let (mine, theirs) = (format_ident!("{mine}"), format_ident!("{theirs}"));
            side_items.push(syn::parse_quote!(pub use #at::#theirs as #mine;));
        }
    }
    Ok(found)
}
