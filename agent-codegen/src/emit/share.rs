//! What the two front ends need to give a contract that another contract bundles one Rust
//! type: which generated items belong to which type, and which of a consumer's types are the
//! same code as a producer's.
//!
//! A sibling `$ref` is bundled into the consumer's `$defs` (`schema/bundle.rs`), so typify
//! types the producer's contract again in the consumer's module, under names of its own: the
//! root keeps the producer's name (`budget_agent/output.schema.json` is the definition
//! `budget_agent_output`, typed `BudgetAgentOutput`), the types under it follow from it
//! (`BudgetAgentOutputSummary`), but a type of the producer's `$defs` (`Area`) is named after
//! the bundled definition (`BudgetAgentOutputArea`). So types are matched by their code with
//! the contract's own type names left out, from the root down: two types are the same when
//! their code is, and the types they name, in order, are the same in turn.
//!
//! An item belongs to the type it defines, or to the type it implements a trait for; an impl
//! for a type of another crate (`impl From<BudgetAgentOutputSummary> for String`, which typify
//! writes for a newtype) belongs to the generated type in its trait's arguments.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::hash::Hasher;

use proc_macro2::{Ident, Span, TokenStream, TokenTree};
use quote::ToTokens;
use syn::visit_mut::VisitMut;

/// One generated type as the matching sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TypeShape {
    /// The hash of the code of every item that belongs to the type (doc comments and the
    /// partial forms left out), each name of a type of the contract replaced by one
    /// placeholder.
    pub hash: u64,
    /// The names of the contract's types that code names, in order.
    pub refs: Vec<String>,
}

/// The types of one contract side (its module's items), by name.
pub(crate) type Side = BTreeMap<String, TypeShape>;

/// The names of the types `items` define (structs, enums, type aliases).
pub(crate) fn local_types(items: &[syn::Item]) -> BTreeSet<String> {
    items
        .iter()
        .filter_map(|item| match item {
            syn::Item::Struct(s) => Some(s.ident.to_string()),
            syn::Item::Enum(e) => Some(e.ident.to_string()),
            syn::Item::Type(t) => Some(t.ident.to_string()),
            _ => None,
        })
        .collect()
}

/// The type of `local` that `item` defines or implements a trait for, if any.
pub(crate) fn owner(item: &syn::Item, local: &BTreeSet<String>) -> Option<String> {
    let defined = match item {
        syn::Item::Struct(s) => Some(s.ident.to_string()),
        syn::Item::Enum(e) => Some(e.ident.to_string()),
        syn::Item::Type(t) => Some(t.ident.to_string()),
        _ => None,
    };
    if defined.is_some() {
        return defined;
    }
    let syn::Item::Impl(imp) = item else {
        return None;
    };
    if let Some(name) = last_ident(&imp.self_ty).filter(|n| local.contains(n)) {
        return Some(name);
    }
    // `impl From<Local> for String`: the trait's arguments name the type.
    let (path, _) = imp.trait_.as_ref()?;
    let last = path.segments.last()?;
    let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    args.args.iter().find_map(|arg| match arg {
        syn::GenericArgument::Type(ty) => mentioned(ty, local),
        _ => None,
    })
}

/// The last segment of a plain type path (`Foo` of `self::Foo`), through one reference.
fn last_ident(ty: &syn::Type) -> Option<String> {
    match ty {
        syn::Type::Path(p) if p.qself.is_none() => {
            p.path.segments.last().map(|s| s.ident.to_string())
        }
        syn::Type::Reference(r) => last_ident(&r.elem),
        _ => None,
    }
}

/// The first type of `local` that `ty` names.
fn mentioned(ty: &syn::Type, local: &BTreeSet<String>) -> Option<String> {
    idents(ty.to_token_stream())
        .into_iter()
        .map(|i| i.to_string())
        .find(|name| local.contains(name))
}

fn idents(tokens: TokenStream) -> Vec<Ident> {
    let mut out = Vec::new();
    for tree in tokens {
        match tree {
            TokenTree::Ident(ident) => out.push(ident),
            TokenTree::Group(group) => out.extend(idents(group.stream())),
            _ => {}
        }
    }
    out
}

/// The shapes of one side's types. `partial` tells the items of an output contract's
/// partial form (which an input's copy of the same type lacks), left out.
pub(crate) fn side(items: &[syn::Item]) -> Side {
    let local = local_types(items);
    let mut by_name: BTreeMap<String, (fnv::FnvHasher, Vec<String>)> = BTreeMap::new();
    for item in items {
        let Some(name) = owner(item, &local) else {
            continue;
        };
        let item = undocumented(item);
        if is_partial(&item) {
            continue;
        }
        let (text, refs) = abstracted(item.to_token_stream(), &local);
        let (hasher, all) = by_name.entry(name).or_default();
        hasher.write_usize(text.len());
        hasher.write(text.as_bytes());
        all.extend(refs);
    }
    by_name
        .into_iter()
        .map(|(name, (hasher, refs))| {
            let hash = hasher.finish();
            (name, TypeShape { hash, refs })
        })
        .collect()
}

/// The code as text with every name of `local` replaced by one placeholder, and those names
/// in order.
///
/// The generated checks name their variables by a counter that runs over the whole contract
/// (`v3`), so a copy walked after other types numbers them differently: they are numbered
/// again, in order of first use in the item.
fn abstracted(tokens: TokenStream, local: &BTreeSet<String>) -> (String, Vec<String>) {
    struct Names<'a> {
        local: &'a BTreeSet<String>,
        refs: Vec<String>,
        variables: BTreeMap<String, usize>,
    }
    fn is_variable(name: &str) -> bool {
        name.strip_prefix('v')
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    }
    fn replace(tokens: TokenStream, names: &mut Names<'_>) -> TokenStream {
        tokens
            .into_iter()
            .map(|tree| match tree {
                TokenTree::Ident(ident) if names.local.contains(&ident.to_string()) => {
                    names.refs.push(ident.to_string());
                    TokenTree::Ident(Ident::new("__Local", Span::call_site()))
                }
                TokenTree::Ident(ident) if is_variable(&ident.to_string()) => {
                    let next = names.variables.len();
                    let n = *names.variables.entry(ident.to_string()).or_insert(next);
                    TokenTree::Ident(Ident::new(&format!("__v{n}"), Span::call_site()))
                }
                TokenTree::Group(group) => {
                    let inner = replace(group.stream(), names);
                    TokenTree::Group(proc_macro2::Group::new(group.delimiter(), inner))
                }
                other => other,
            })
            .collect()
    }
    let mut names = Names {
        local,
        refs: Vec::new(),
        variables: BTreeMap::new(),
    };
    let text = replace(tokens, &mut names).to_string();
    (text, names.refs)
}

/// Whether `item` is part of an output contract's partial form (`emit/partial.rs`).
fn is_partial(item: &syn::Item) -> bool {
    match item {
        syn::Item::Impl(imp) => imp
            .trait_
            .as_ref()
            .and_then(|(path, _)| path.segments.last())
            .is_some_and(|s| s.ident == "PartialOutput"),
        syn::Item::Struct(s) => s
            .to_token_stream()
            .to_string()
            .contains("__private :: partial ::"),
        _ => false,
    }
}

/// The item without its doc comments (which name the schema each copy came from).
fn undocumented(item: &syn::Item) -> syn::Item {
    struct Strip;
    impl VisitMut for Strip {
        fn visit_attributes_mut(&mut self, attrs: &mut Vec<syn::Attribute>) {
            attrs.retain(|a| !a.path().is_ident("doc"));
            for attr in attrs {
                self.visit_attribute_mut(attr);
            }
        }
    }
    let mut item = item.clone();
    Strip.visit_item_mut(&mut item);
    item
}

/// The types reachable from `root` in `side` (`root` included, when `side` has it).
pub(crate) fn closure(side: &Side, root: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut queue = VecDeque::from([root.to_owned()]);
    while let Some(name) = queue.pop_front() {
        let Some(shape) = side.get(&name) else {
            continue;
        };
        if seen.insert(name) {
            queue.extend(shape.refs.iter().cloned());
        }
    }
    seen
}

/// When the consumer's type `consumer_root` is the same code as the producer's
/// `producer_root`, every type of the consumer reachable from it with the producer's type it
/// is (consumer name -> producer name); `None` when they differ anywhere.
pub(crate) fn correspond(
    consumer: &Side,
    consumer_root: &str,
    producer: &Side,
    producer_root: &str,
) -> Option<BTreeMap<String, String>> {
    let mut map = BTreeMap::<String, String>::new();
    let mut back = BTreeMap::<String, String>::new();
    let mut queue = VecDeque::from([(consumer_root.to_owned(), producer_root.to_owned())]);
    while let Some((c, p)) = queue.pop_front() {
        match (map.get(&c), back.get(&p)) {
            (Some(known), _) if *known == p => continue,
            (None, None) => {}
            _ => return None,
        }
        let (cs, ps) = (consumer.get(&c)?, producer.get(&p)?);
        if cs.hash != ps.hash || cs.refs.len() != ps.refs.len() {
            return None;
        }
        map.insert(c.clone(), p.clone());
        back.insert(p, c);
        queue.extend(cs.refs.iter().cloned().zip(ps.refs.iter().cloned()));
    }
    Some(map)
}

/// Drops from `items` every item that belongs to one of `names`.
pub(crate) fn drop_types(items: &mut Vec<syn::Item>, names: &BTreeSet<String>) {
    let local = local_types(items);
    items.retain(|item| !owner(item, &local).is_some_and(|n| names.contains(&n)));
}

/// Drops the functions of typify's `defaults` module that make a value of one of `dropped`
/// and that no remaining item names (the dropped types' fields used them).
pub(crate) fn prune_defaults(items: &mut [syn::Item], dropped: &BTreeSet<String>) {
    let used: String = items
        .iter()
        .filter(|item| !matches!(item, syn::Item::Mod(m) if m.ident == "defaults"))
        .map(|item| item.to_token_stream().to_string())
        .collect();
    for item in items.iter_mut() {
        let syn::Item::Mod(module) = item else {
            continue;
        };
        let (true, Some((_, functions))) = (module.ident == "defaults", &mut module.content) else {
            continue;
        };
        functions.retain(|f| {
            let syn::Item::Fn(function) = f else {
                return true;
            };
            let makes_dropped = idents(f.to_token_stream())
                .iter()
                .any(|i| dropped.contains(&i.to_string()));
            !makes_dropped || used.contains(&format!("\"defaults::{}\"", function.sig.ident))
        });
    }
}

/// The names of `local` that `items` name (outside the items that belong to `except`).
pub(crate) fn named_types(
    items: &[syn::Item],
    local: &BTreeSet<String>,
    except: &BTreeSet<String>,
) -> BTreeSet<String> {
    let own = local_types(items);
    items
        .iter()
        .filter(|item| !owner(item, &own).is_some_and(|n| except.contains(&n)))
        .flat_map(|item| idents(item.to_token_stream()))
        .map(|i| i.to_string())
        .filter(|name| local.contains(name))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn items(code: &str) -> Vec<syn::Item> {
        syn::parse_str::<syn::File>(code).unwrap().items
    }

    const PRODUCER: &str = "
        pub struct Out { pub summary: OutSummary, pub area: Option<Area>, pub kind: Kind }
        pub struct OutSummary(String);
        impl From<OutSummary> for String { fn from(v: OutSummary) -> Self { v.0 } }
        pub struct Area { pub street: String }
        pub enum Kind { A, B }
        impl std::str::FromStr for Kind { type Err = (); fn from_str(_: &str) -> Result<Self, ()> { Err(()) } }
    ";

    #[test]
    fn an_impl_for_a_foreign_type_belongs_to_the_type_in_its_trait() {
        let items = items(PRODUCER);
        let local = local_types(&items);
        let owners: Vec<Option<String>> = items.iter().map(|i| owner(i, &local)).collect();
        assert_eq!(
            owners,
            ["Out", "OutSummary", "OutSummary", "Area", "Kind", "Kind"].map(|s| Some(s.into()))
        );
    }

    #[test]
    fn types_renamed_by_bundling_still_correspond() {
        let producer = side(&items(PRODUCER));
        let consumer = side(&items(&format!(
            "pub struct In {{ pub out: Out }} {}",
            PRODUCER.replace("Area", "OutArea")
        )));
        let map = correspond(&consumer, "Out", &producer, "Out").unwrap();
        assert_eq!(
            map.into_iter().collect::<Vec<_>>(),
            [
                ("Kind", "Kind"),
                ("Out", "Out"),
                ("OutArea", "Area"),
                ("OutSummary", "OutSummary")
            ]
            .map(|(a, b)| (a.to_owned(), b.to_owned()))
        );
        assert_eq!(
            closure(&consumer, "In"),
            ["In", "Kind", "Out", "OutArea", "OutSummary"]
                .map(str::to_owned)
                .into()
        );
        // A field of another type: not the same code.
        let other = side(&items(
            &PRODUCER.replace("pub street: String", "pub street: i64"),
        ));
        assert_eq!(correspond(&other, "Out", &producer, "Out"), None);
        let mut left = items(PRODUCER);
        drop_types(&mut left, &["OutSummary".to_owned()].into());
        assert_eq!(left.len(), 4);
    }
}
