//! Enum variants typify names outside UpperCamelCase (`plus1` for `"+1"`) are renamed, so
//! the generated code passes `#![deny(warnings)]`; their `#[serde(rename)]` keeps the JSON
//! value.

use std::collections::{BTreeMap, BTreeSet};

use heck::ToUpperCamelCase;
use quote::format_ident;
use syn::Path;
use syn::visit_mut::{self, VisitMut};

use crate::typify::syntax::type_ident;

/// Renames enum variants that are not UpperCamelCase, and every `Self::old` or `Enum::old`
/// path naming them.
pub(crate) fn camel_case_variants(file: &mut syn::File) {
    let mut renames: BTreeMap<String, BTreeMap<String, syn::Ident>> = BTreeMap::new();
    for item in &mut file.items {
        let syn::Item::Enum(item) = item else {
            continue;
        };
        let taken: BTreeSet<String> = item.variants.iter().map(|v| v.ident.to_string()).collect();
        let mut map = BTreeMap::new();
        for variant in &mut item.variants {
            let old = variant.ident.to_string();
            let new = old.to_upper_camel_case();
            if new == old || new.is_empty() || taken.contains(&new) || !is_ident(&new) {
                continue;
            }
            variant.ident = format_ident!("{new}");
            map.insert(old, variant.ident.clone());
        }
        if !map.is_empty() {
            renames.insert(item.ident.to_string(), map);
        }
    }
    for item in &mut file.items {
        let owner = match item {
            syn::Item::Impl(imp) => type_ident(&imp.self_ty)
                .map(ToString::to_string)
                .unwrap_or_default(),
            _ => String::new(),
        };
        Renamer {
            renames: &renames,
            owner,
        }
        .visit_item_mut(item);
    }
}

fn is_ident(name: &str) -> bool {
    syn::parse_str::<syn::Ident>(name).is_ok()
}

struct Renamer<'a> {
    renames: &'a BTreeMap<String, BTreeMap<String, syn::Ident>>,
    /// The type of the `impl` being visited, for `Self::` paths.
    owner: String,
}

impl VisitMut for Renamer<'_> {
    fn visit_path_mut(&mut self, path: &mut Path) {
        let n = path.segments.len();
        if n >= 2 {
            let parent = path.segments[n - 2].ident.to_string();
            let parent = if parent == "Self" {
                self.owner.clone()
            } else {
                parent
            };
            let last = &mut path.segments[n - 1].ident;
            if let Some(new) = self
                .renames
                .get(&parent)
                .and_then(|m| m.get(&last.to_string()))
            {
                *last = new.clone();
            }
        }
        visit_mut::visit_path_mut(self, path);
    }
}
