//! typify's output read once, after the fix-ups, into the model the later stages read: each
//! generated struct and enum, and what its `#[serde(...)]` attributes say (a field's JSON name,
//! `default`, `flatten`, `deserialize_with`; the container's `deny_unknown_fields`; the JSON
//! names of a unit enum's variants). The root's properties and the generated checks both read
//! it, so the attributes are parsed in one place and both stages agree on what they mean.
//!
//! The fix-ups themselves still read and write attributes on the syntax tree: they make the
//! code this model describes.

use std::collections::BTreeMap;

use syn::{Ident, Type};

/// Every generated struct and enum of one contract, by name, with its serde reading.
pub(crate) struct Model {
    /// The items, as typify (and the fix-ups) left them.
    pub(crate) items: BTreeMap<String, Item>,
    serde: BTreeMap<String, Serde>,
}

/// What one item's serde attributes say.
struct Serde {
    /// Named fields, `None` for an enum or a struct without named fields.
    fields: Option<Vec<Field>>,
    /// JSON names of the variants when the item is an enum of unit variants only.
    unit_variants: Option<Vec<String>>,
    deny_unknown_fields: bool,
}

impl Model {
    /// Reads the structs and enums of `file` and their serde attributes.
    pub(crate) fn read(file: &syn::File) -> Self {
        let mut items = BTreeMap::new();
        let mut serde = BTreeMap::new();
        for item in &file.items {
            let (name, item, read) = match item {
                syn::Item::Struct(s) => (
                    s.ident.to_string(),
                    Item::Struct(s.clone()),
                    Serde {
                        fields: fields(s),
                        unit_variants: None,
                        deny_unknown_fields: container_has(&s.attrs, "deny_unknown_fields"),
                    },
                ),
                syn::Item::Enum(e) => (
                    e.ident.to_string(),
                    Item::Enum(e.clone()),
                    Serde {
                        fields: None,
                        unit_variants: unit_variants(e),
                        deny_unknown_fields: container_has(&e.attrs, "deny_unknown_fields"),
                    },
                ),
                _ => continue,
            };
            items.insert(name.clone(), item);
            serde.insert(name, read);
        }
        Self { items, serde }
    }

    /// The named fields of struct `name`, `None` when it has none (or is no struct).
    pub(crate) fn fields(&self, name: &Ident) -> Option<&[Field]> {
        self.serde.get(&name.to_string())?.fields.as_deref()
    }

    /// Serde names of enum `name`'s variants, when they are all units (and the enum is
    /// neither untagged nor internally tagged).
    pub(crate) fn unit_variants(&self, name: &Ident) -> Option<&[String]> {
        self.serde.get(&name.to_string())?.unit_variants.as_deref()
    }

    /// Whether item `name` has `#[serde(deny_unknown_fields)]`.
    pub(crate) fn denies_unknown_fields(&self, name: &Ident) -> bool {
        self.serde
            .get(&name.to_string())
            .is_some_and(|s| s.deny_unknown_fields)
    }
}

#[derive(Clone)]
/// A generated struct or enum.
pub(crate) enum Item {
    /// A struct, named or newtype.
    Struct(syn::ItemStruct),
    /// An enum.
    Enum(syn::ItemEnum),
}

/// A named struct field as serde reads it.
#[derive(Clone)]
pub(crate) struct Field {
    pub(crate) ident: syn::Ident,
    pub(crate) json: String,
    pub(crate) ty: Type,
    pub(crate) default: bool,
    pub(crate) flatten: bool,
    pub(crate) deserialize_with: bool,
    /// Whether that is the runtime's lenient integer reader.
    pub(crate) lenient: bool,
    /// A serde attribute the walk does not know.
    pub(crate) unknown: bool,
}

fn fields(item: &syn::ItemStruct) -> Option<Vec<Field>> {
    let syn::Fields::Named(named) = &item.fields else {
        return None;
    };
    let mut out = Vec::new();
    for f in &named.named {
        let ident = f.ident.clone()?;
        let mut field = Field {
            json: syn::ext::IdentExt::unraw(&ident).to_string(),
            ident,
            ty: f.ty.clone(),
            default: false,
            flatten: false,
            deserialize_with: false,
            lenient: false,
            unknown: false,
        };
        for attr in f.attrs.iter().filter(|a| a.path().is_ident("serde")) {
            let parsed = attr.parse_nested_meta(|meta| {
                let key = meta.path.get_ident().map(ToString::to_string);
                match key.as_deref() {
                    Some("rename") => {
                        field.json = meta.value()?.parse::<syn::LitStr>()?.value();
                    }
                    Some("default") => field.default = true,
                    Some("flatten") => field.flatten = true,
                    Some("deserialize_with") => {
                        let function = meta.value()?.parse::<syn::LitStr>()?.value();
                        field.deserialize_with = true;
                        field.lenient = function.ends_with("__private::integer::deserialize");
                        return Ok(());
                    }
                    Some("skip_serializing_if") => {}
                    _ => field.unknown = true,
                }
                if meta.input.peek(syn::Token![=]) {
                    meta.value()?.parse::<syn::Expr>()?;
                }
                Ok(())
            });
            field.unknown |= parsed.is_err();
        }
        out.push(field);
    }
    Some(out)
}

/// Whether the container has `#[serde(<word>)]` (`deny_unknown_fields`, ...).
fn container_has(attrs: &[syn::Attribute], word: &str) -> bool {
    attrs
        .iter()
        .filter(|a| a.path().is_ident("serde"))
        .any(|a| {
            let mut found = false;
            let _ = a.parse_nested_meta(|meta| {
                found |= meta.path.is_ident(word);
                if meta.input.peek(syn::Token![=]) {
                    meta.value()?.parse::<syn::Expr>()?;
                }
                Ok(())
            });
            found
        })
}

/// Serde names of an enum whose variants are all units, or `None`.
fn unit_variants(item: &syn::ItemEnum) -> Option<Vec<String>> {
    if container_has(&item.attrs, "untagged") || container_has(&item.attrs, "tag") {
        return None;
    }
    item.variants
        .iter()
        .map(|v| {
            if !matches!(v.fields, syn::Fields::Unit) {
                return None;
            }
            let mut name = v.ident.to_string();
            for attr in v.attrs.iter().filter(|a| a.path().is_ident("serde")) {
                let mut other = false;
                let _ = attr.parse_nested_meta(|meta| {
                    if meta.path.is_ident("rename") {
                        name = meta.value()?.parse::<syn::LitStr>()?.value();
                    } else {
                        other = true;
                    }
                    Ok(())
                });
                if other {
                    return None;
                }
            }
            Some(name)
        })
        .collect()
}
