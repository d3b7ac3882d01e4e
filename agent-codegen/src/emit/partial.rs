//! The partial form of an output contract's types: what a streaming answer holds so far.
//!
//! Each generated struct with named fields gets a `<Name>Partial` twin whose fields are all
//! optional: a field is there once its value is known, as the runtime's `PartialJson` shows
//! the answer received so far. What each field holds:
//! - a string (or a string newtype with its checks) is a `String` that grows as it arrives:
//!   the checks of the full type apply to the complete answer only;
//! - an object typed by one of the contract's structs is that struct's partial twin, there as
//!   soon as the object opens, so a nested object fills in field by field (it reads better
//!   than waiting for the whole object, and costs nothing the root does not already pay);
//! - an array is a `Vec` of the full item type, growing by complete items (an item being
//!   written is not shown);
//! - anything else (numbers, booleans, enums, maps, unions, raw JSON) is the full type, there
//!   once its value is complete and fits it.
//!
//! Every field deserializes leniently (`__private::partial`): a value that does not fit its
//! type yet leaves the field `None` rather than failing the whole partial. `flatten`ed fields
//! have no partial form and are left out. The root struct's twin is its `PartialOutput`
//! type; a root that is not a struct with named fields has the partial form of any JSON
//! value.

use crate::typify::model::{Item, Model};
use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::{GenericArgument, PathArguments, Type};

/// The partial twins of `model`'s structs and the root's `PartialOutput` impl, as items.
pub(crate) fn partial_items(
    model: &Model,
    root: &syn::Ident,
    runtime: &syn::Path,
) -> Result<Vec<syn::Item>, String> {
    let mut tokens = TokenStream::new();
    let serde_crate = format!("{}::__private::serde", path_text(&quote!(#runtime)));
    for (name, item) in &model.items {
        let Item::Struct(item) = item else { continue };
        let Some(fields) = model.fields(&item.ident) else {
            continue;
        };
        let partial = format_ident!("{name}Partial");
        if model.items.contains_key(&partial.to_string()) {
            return Err(format!(
                "the Rust type `{partial}` would be generated twice (the partial form of `{name}`): rename a `$defs` entry or `title`"
            ));
        }
        let fields = fields.iter().filter(|f| !f.flatten).map(|field| {
            let ident = &field.ident;
            let json = &field.json;
            let (ty, read) = partial_type(model, runtime, &field.ty, field.lenient);
            let read = path_text(&read);
            let doc = format!("`{json}`, once known.");
            quote! {
                #[doc = #doc]
                #[serde(rename = #json, default, deserialize_with = #read)]
                pub #ident: ::core::option::Option<#ty>,
            }
        });
        let doc = format!("[`{name}`] as received so far, while the answer streams.");
        tokens.extend(quote! {
            #[doc = #doc]
            #[derive(
                #runtime::__private::serde::Deserialize,
                ::core::clone::Clone,
                ::core::fmt::Debug,
                ::core::default::Default
            )]
            #[serde(crate = #serde_crate)]
            pub struct #partial {
                #(#fields)*
            }
        });
    }
    let root_partial = match model.fields(root) {
        Some(_) => {
            let ident = format_ident!("{root}Partial");
            quote!(#ident)
        }
        None => quote!(#runtime::__private::serde_json::Value),
    };
    tokens.extend(quote! {
        #[automatically_derived]
        impl #runtime::__private::PartialOutput for #root {
            type Partial = #root_partial;
        }
    });
    syn::parse2::<syn::File>(tokens)
        .map(|file| file.items)
        .map_err(|e| format!("internal error: partial types do not parse: {e}"))
}

/// A path as the text of a serde attribute.
fn path_text(path: &TokenStream) -> String {
    path.to_string().replace(' ', "")
}

/// A field's partial type (inside the `Option`) and the function that reads it.
fn partial_type(
    model: &Model,
    runtime: &syn::Path,
    ty: &Type,
    lenient_integer: bool,
) -> (TokenStream, TokenStream) {
    let partial = quote!(#runtime::__private::partial);
    let ty = generic_of(ty, "Option").unwrap_or(ty);
    if lenient_integer {
        return (quote!(#ty), quote!(#partial::lenient_integer));
    }
    if let Some(item) = generic_of(ty, "Vec") {
        return (
            quote!(::std::vec::Vec<#item>),
            quote!(#partial::lenient_items),
        );
    }
    let lenient = quote!(#partial::lenient);
    if let Some(inner) = generic_of(ty, "Box") {
        let (inner, _) = partial_type(model, runtime, inner, false);
        return (quote!(::std::boxed::Box<#inner>), lenient);
    }
    let Some(ident) = last_ident(ty) else {
        return (quote!(#ty), lenient);
    };
    if ident == "String" || is_string_newtype(model, ident) {
        return (quote!(::std::string::String), lenient);
    }
    if model.fields(ident).is_some() && path_len(ty) == 1 {
        let partial = format_ident!("{ident}Partial");
        return (quote!(#partial), lenient);
    }
    (quote!(#ty), lenient)
}

/// `T` of `Name<T>` (the path's last segment named `name`).
fn generic_of<'t>(ty: &'t Type, name: &str) -> Option<&'t Type> {
    let Type::Path(path) = ty else { return None };
    let last = path.path.segments.last()?;
    if last.ident != name {
        return None;
    }
    let PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    match args.args.first()? {
        GenericArgument::Type(inner) if args.args.len() == 1 => Some(inner),
        _ => None,
    }
}

fn last_ident(ty: &Type) -> Option<&syn::Ident> {
    let Type::Path(path) = ty else { return None };
    let last = path.path.segments.last()?;
    matches!(last.arguments, PathArguments::None).then_some(&last.ident)
}

fn path_len(ty: &Type) -> usize {
    match ty {
        Type::Path(path) if path.qself.is_none() => path.path.segments.len(),
        _ => 0,
    }
}

/// Whether `ident` is a generated newtype over a string (a string with checks).
fn is_string_newtype(model: &Model, ident: &syn::Ident) -> bool {
    let Some(Item::Struct(item)) = model.items.get(&ident.to_string()) else {
        return false;
    };
    let syn::Fields::Unnamed(fields) = &item.fields else {
        return false;
    };
    fields.unnamed.len() == 1 && last_ident(&fields.unnamed[0].ty).is_some_and(|i| i == "String")
}
