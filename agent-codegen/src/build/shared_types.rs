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

use crate::naming::agent_type;
use quote::format_ident;
use std::collections::{BTreeMap, BTreeSet};
use syn::visit_mut::VisitMut;

/// The contract modules of one generated file: `(agent, side)` -> the side's items.
type Sides = BTreeMap<(String, String), Vec<syn::Item>>;

/// Per consumer `(agent, side)`: each producer `(agent, side)` and the names taken from it.
type Plan = BTreeMap<(String, String), Vec<(String, String, BTreeSet<String>)>>;

/// Replaces, in `file` (the build script's whole file), every bundled copy of another
/// agent's contract type by a `pub use` of that agent's own type.
pub(crate) fn share(file: &mut syn::File) {
    let sides = collect(file);
    let mut plan = Plan::new();
    for ((consumer, side), consumer_items) in &sides {
        for ((producer, producer_side), producer_items) in &sides {
            if producer == consumer {
                continue;
            }
            let root = format!("{}{}", agent_type(producer), capitalized(producer_side));
            let shared = identical(consumer_items, producer_items, &root);
            if !shared.is_empty() {
                plan.entry((consumer.clone(), side.clone()))
                    .or_default()
                    .push((producer.clone(), producer_side.clone(), shared));
            }
        }
    }
    for item in &mut file.items {
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
            let key = (agent.ident.to_string(), side.ident.to_string());
            let (Some(uses), Some((_, side_items))) = (plan.get(&key), &mut side.content) else {
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

/// `pub mod <agent> { pub mod input {..} pub mod output {..} }` of the file.
fn collect(file: &syn::File) -> Sides {
    let mut sides = Sides::new();
    for item in &file.items {
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
                sides.insert(
                    (agent.ident.to_string(), side.ident.to_string()),
                    side_items.clone(),
                );
            }
        }
    }
    sides
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
fn identical(consumer: &[syn::Item], producer: &[syn::Item], root: &str) -> BTreeSet<String> {
    let code = |items: &[syn::Item]| -> BTreeMap<String, Vec<syn::Item>> {
        let mut by_name: BTreeMap<String, Vec<syn::Item>> = BTreeMap::new();
        for item in items.iter().filter(|item| !is_partial(item)) {
            if let Some(name) = named(item).filter(|n| n.starts_with(root)) {
                by_name.entry(name).or_default().push(undocumented(item));
            }
        }
        by_name
    };
    let (ours, theirs) = (code(consumer), code(producer));
    if !ours.contains_key(root) || ours.get(root) != theirs.get(root) {
        return BTreeSet::new();
    }
    ours.into_iter()
        .filter(|(name, text)| theirs.get(name) == Some(text))
        .map(|(name, _)| name)
        .collect()
}

/// Whether `item` is part of an output contract's partial form (`emit/partial.rs`), which an
/// input's copy of the same type lacks: the producer keeps it, so it is not compared.
fn is_partial(item: &syn::Item) -> bool {
    let text = quote::ToTokens::to_token_stream(item).to_string();
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
