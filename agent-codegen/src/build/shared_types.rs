//! One Rust type for a contract that another contract refers to.
//!
//! A sibling `$ref` is bundled into the consumer's `$defs` (`schema/bundle.rs`), so typify types it
//! in the consumer's module too, under the name the producer's own type has
//! (`budget_agent/output.schema.json` is the definition `budget_agent_output`, typed
//! `BudgetAgentOutput`, as the budget agent's output is). When the build script generates
//! both agents into one file, the consumer's copy is dropped and the producer's type used in
//! its place, so `catering_agent::input::CateringAgentInput::budget_agent_output` *is* a
//! `budget_agent::output::BudgetAgentOutput`. Only items whose code is the same in both
//! modules (doc comments aside) are shared, so sharing never changes what a type accepts.
//!
//! The decision is made on each side's signature (a hash of each type's code, computed once
//! per agent, not once per pair of agents), which the build script keeps for agents it does
//! not generate again (`cache.rs`): an agent's own code never changes by sharing, only a
//! consumer's copies are replaced.

use crate::naming::agent_type;
use quote::format_ident;
use std::collections::{BTreeMap, BTreeSet};
use std::hash::Hasher;
use syn::visit_mut::VisitMut;

/// One contract side of an agent (`input` or `output`): each type it defines or implements,
/// by name, and the hash of that code (doc comments aside, the partial forms left out).
pub(crate) type Side = BTreeMap<String, u64>;

/// An agent's sides, by side (`input`, `output`).
pub(crate) type Signature = BTreeMap<String, Side>;

/// What one consumer takes from its producers, by its side: each producer's agent, side,
/// and the names taken from it.
pub(crate) type Uses = BTreeMap<String, Vec<(String, String, BTreeSet<String>)>>;

/// The signature of one agent's items (`pub mod <agent> { pub mod input {..} .. }` and the
/// items beside it).
pub(crate) fn signature(items: &[syn::Item]) -> Signature {
    let mut signature = Signature::new();
    for item in items {
        let syn::Item::Mod(agent) = item else {
            continue;
        };
        let Some((_, items)) = &agent.content else {
            continue;
        };
        for item in items {
            let syn::Item::Mod(side) = item else { continue };
            if side.ident != "input" && side.ident != "output" {
                continue;
            }
            if let Some((_, side_items)) = &side.content {
                signature.insert(side.ident.to_string(), side_of(side_items));
            }
        }
    }
    signature
}

/// Per consumer agent (by module name), what it takes from the others, given every agent's
/// signature.
pub(crate) fn plan(agents: &BTreeMap<String, Signature>) -> BTreeMap<String, Uses> {
    let mut plan = BTreeMap::<String, Uses>::new();
    for (consumer, consumer_sides) in agents {
        for (side, consumer_side) in consumer_sides {
            for (producer, producer_sides) in agents {
                if producer == consumer {
                    continue;
                }
                for (producer_side, producer_items) in producer_sides {
                    let root = format!("{}{}", agent_type(producer), capitalized(producer_side));
                    let shared = identical(consumer_side, producer_items, &root);
                    if !shared.is_empty() {
                        plan.entry(consumer.clone())
                            .or_default()
                            .entry(side.clone())
                            .or_default()
                            .push((producer.clone(), producer_side.clone(), shared));
                    }
                }
            }
        }
    }
    plan
}

/// Replaces, in one consumer's items, every bundled copy of another agent's contract type
/// that `uses` names by a `pub use` of that agent's own type.
pub(crate) fn apply(items: &mut [syn::Item], uses: &Uses) {
    for item in items {
        let syn::Item::Mod(agent) = item else {
            continue;
        };
        let Some((_, agent_items)) = &mut agent.content else {
            continue;
        };
        for inner in agent_items.iter_mut() {
            let syn::Item::Mod(side) = inner else {
                continue;
            };
            let (Some(uses), Some((_, side_items))) =
                (uses.get(&side.ident.to_string()), &mut side.content)
            else {
                continue;
            };
            for (producer, producer_side, names) in uses {
                side_items.retain(|item| !defines(item, names));
                let module = format_ident!("{producer}");
                let producer_side = format_ident!("{producer_side}");
                let names = names.iter().map(|n| format_ident!("{n}"));
                side_items.push(syn::parse_quote! {
                    pub use super::super::#module::#producer_side::{#(#names),*};
                });
            }
        }
    }
}

/// The types of one side, by name: the hash of their code (every item defining or
/// implementing the name, in order).
fn side_of(items: &[syn::Item]) -> Side {
    let mut by_name: BTreeMap<String, fnv::FnvHasher> = BTreeMap::new();
    for item in items {
        let Some(name) = named(item) else { continue };
        let text = quote::ToTokens::to_token_stream(&undocumented(item)).to_string();
        if is_partial(item, &text) {
            continue;
        }
        let hasher = by_name.entry(name).or_default();
        hasher.write_usize(text.len());
        hasher.write(text.as_bytes());
    }
    by_name
        .into_iter()
        .map(|(name, hasher)| (name, hasher.finish()))
        .collect()
}

fn capitalized(side: &str) -> String {
    let mut chars = side.chars();
    chars
        .next()
        .map(|c| c.to_ascii_uppercase().to_string() + chars.as_str())
        .unwrap_or_default()
}

/// Names starting with `root` that both sides define with the same code (their impls
/// included), if `root` itself is one of them.
fn identical(consumer: &Side, producer: &Side, root: &str) -> BTreeSet<String> {
    if !consumer.contains_key(root) || consumer.get(root) != producer.get(root) {
        return BTreeSet::new();
    }
    consumer
        .iter()
        .filter(|(name, code)| name.starts_with(root) && producer.get(*name) == Some(code))
        .map(|(name, _)| name.clone())
        .collect()
}

/// Whether `item` (whose code is `text`) is part of an output contract's partial form
/// (`emit/partial.rs`), which an input's copy of the same type lacks: the producer keeps it,
/// so it is not compared.
fn is_partial(item: &syn::Item, text: &str) -> bool {
    match item {
        syn::Item::Impl(_) => text.contains("PartialOutput for"),
        syn::Item::Struct(_) => text.contains("__private :: partial ::"),
        _ => false,
    }
}

/// The type an item defines or implements, by name.
fn named(item: &syn::Item) -> Option<String> {
    match item {
        syn::Item::Struct(s) => Some(s.ident.to_string()),
        syn::Item::Enum(e) => Some(e.ident.to_string()),
        syn::Item::Type(t) => Some(t.ident.to_string()),
        syn::Item::Impl(i) => match &*i.self_ty {
            syn::Type::Path(p) if p.qself.is_none() => {
                p.path.segments.last().map(|s| s.ident.to_string())
            }
            _ => None,
        },
        _ => None,
    }
}

fn defines(item: &syn::Item, names: &BTreeSet<String>) -> bool {
    named(item).is_some_and(|n| names.contains(&n))
}

/// The item without its doc comments (which name the schema each copy came from); syntax
/// trees compare by their code, spans aside.
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
