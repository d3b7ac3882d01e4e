//! Constrained strings print as strings: typify types a string with a `minLength` or
//! `pattern` as a newtype, which a prompt template could not print without `Display`.

use crate::typify::syntax::type_ident;

/// Adds `Display` to typify's constrained-string newtypes (`pub struct X(String)` for a
/// `minLength` or `pattern`), so a prompt template can print them as it prints a `String`.
pub(crate) fn display_string_newtypes(file: &mut syn::File) {
    let has_display: std::collections::BTreeSet<&syn::Ident> = file
        .items
        .iter()
        .filter_map(|item| match item {
            syn::Item::Impl(imp)
                if imp.trait_.as_ref().is_some_and(|(p, _)| {
                    p.segments.last().is_some_and(|s| s.ident == "Display")
                }) =>
            {
                type_ident(&imp.self_ty)
            }
            _ => None,
        })
        .collect();
    let newtypes: Vec<syn::Ident> = file
        .items
        .iter()
        .filter_map(|item| match item {
            syn::Item::Struct(s) => match &s.fields {
                syn::Fields::Unnamed(f)
                    if f.unnamed.len() == 1
                        && type_ident(&f.unnamed[0].ty)
                            .is_some_and(|i| i.to_string().ends_with("String")) =>
                {
                    Some(s.ident.clone())
                }
                _ => None,
            },
            _ => None,
        })
        .filter(|ident| !has_display.contains(ident))
        .collect();
    for ident in newtypes {
        file.items.push(syn::parse_quote! {
            impl ::std::fmt::Display for #ident {
                fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                    ::std::fmt::Display::fmt(&self.0, f)
                }
            }
        });
    }
}
