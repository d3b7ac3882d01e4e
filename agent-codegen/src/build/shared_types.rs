//! One Rust type for a contract that another contract refers to.
//!
//! A sibling `$ref` is bundled into the consumer's `$defs` (`schema/bundle.rs`), so typify types it
//! in the consumer's module too. When the build script generates both agents into one file,
//! the consumer's copy is dropped and the producer's types used in its place, so
//! `catering_agent::input::CateringAgentInput::budget_agent_output` *is* a
//! `budget_agent::output::BudgetAgentOutput`, and every type under it (a bounded string's
//! newtype, an enum, a nested object, a type of the producer's `$defs`) is the producer's.
//! Types are matched by their code from the root down (`emit/share.rs`), so sharing never
//! changes what a type accepts; a copy that cannot be shared is a warning, never silent.
//!
//! The decision is made on each side's signature (the shape of each type, computed once per
//! agent, not once per pair of agents), which the build script keeps for agents it does not
//! generate again (`cache.rs`): an agent's own code never changes by sharing, only a
//! consumer's copies are replaced.

use crate::emit::share::{self, Side};
use crate::naming::agent_type;
use quote::format_ident;
use std::collections::{BTreeMap, BTreeSet};

/// An agent's sides, by side (`input`, `output`).
pub(crate) type Signature = BTreeMap<String, Side>;

/// What one consumer takes from its producers, by its side: each producer's agent, side,
/// and the types taken from it (the consumer's name -> the producer's).
pub(crate) type Uses = BTreeMap<String, Vec<(String, String, BTreeMap<String, String>)>>;

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
                signature.insert(side.ident.to_string(), share::side(side_items));
            }
        }
    }
    signature
}

/// What the folder's agents share.
#[derive(Debug, Default)]
pub(crate) struct Plan {
    /// Per consumer agent (by module name), what it takes from the others.
    pub uses: BTreeMap<String, Uses>,
    /// Per consumer agent, each producer's type it keeps a copy of, and why.
    pub copies: BTreeMap<String, Vec<String>>,
}

/// What each agent takes from the others, given every agent's signature.
pub(crate) fn plan(agents: &BTreeMap<String, Signature>) -> Plan {
    let mut plan = Plan::default();
    for (consumer, consumer_sides) in agents {
        for (side, consumer_side) in consumer_sides {
            let mut taken = BTreeSet::new();
            for (producer, producer_sides) in agents {
                if producer == consumer {
                    continue;
                }
                for (producer_side, producer_types) in producer_sides {
                    let root = format!("{}{}", agent_type(producer), capitalized(producer_side));
                    let shared = shared(consumer_side, producer_types, &root, &mut taken);
                    if consumer_side.contains_key(&root) && !shared.contains_key(&root) {
                        plan.copies.entry(consumer.clone()).or_default().push(format!(
                            "`{consumer}`'s {side} contract keeps a copy of `{producer}`'s {producer_side} type `{root}`: the two are generated differently, so they are two types (generate both again with the same generator)"
                        ));
                    }
                    if !shared.is_empty() {
                        plan.uses
                            .entry(consumer.clone())
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

/// The consumer's types that are the producer's: from the producer's root (the whole file
/// bundled), and from each producer type one of the consumer's bundled definitions is named
/// after (`#/$defs/area` of the file: the consumer's `<Root>Area` is the producer's `Area`).
/// Names already `taken` from another producer are left alone.
fn shared(
    consumer: &Side,
    producer: &Side,
    root: &str,
    taken: &mut BTreeSet<String>,
) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let entries = std::iter::once((root.to_owned(), root.to_owned())).chain(
        producer
            .keys()
            .map(|name| (format!("{root}{name}"), name.clone())),
    );
    for (consumer_name, producer_name) in entries {
        if taken.contains(&consumer_name) || !consumer.contains_key(&consumer_name) {
            continue;
        }
        let Some(map) = share::correspond(consumer, &consumer_name, producer, &producer_name)
        else {
            continue;
        };
        if map.keys().any(|name| taken.contains(name)) {
            continue;
        }
        taken.extend(map.keys().cloned());
        out.extend(map);
    }
    out
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
                let dropped: BTreeSet<String> = names.keys().cloned().collect();
                share::drop_types(side_items, &dropped);
                let module = format_ident!("{producer}");
                let producer_side = format_ident!("{producer_side}");
                let names = names.iter().map(|(mine, theirs)| {
                    let (mine, theirs) = (format_ident!("{mine}"), format_ident!("{theirs}"));
                    if mine == theirs {
                        quote::quote!(#theirs)
                    } else {
                        quote::quote!(#theirs as #mine)
                    }
                });
                side_items.push(syn::parse_quote! {
                    #[allow(unused_imports, reason = "the consumer's module names every type of its contract")]
                    pub use super::super::#module::#producer_side::{#(#names),*};
                });
            }
        }
    }
}

fn capitalized(side: &str) -> String {
    let mut chars = side.chars();
    chars
        .next()
        .map(|c| c.to_ascii_uppercase().to_string() + chars.as_str())
        .unwrap_or_default()
}
