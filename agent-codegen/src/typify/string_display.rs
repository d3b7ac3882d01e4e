//! What a prompt template needs of the generated types: constrained strings print as strings
//! (typify types a string with a `minLength` or `pattern` as a newtype, which a template could
//! not print without `Display`), and every type renders through `|markdown`.

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

/// Adds the runtime's `ToMarkdown` to every generated type, so `{{ value|markdown }}` renders
/// it (through serde; a `RawJson` or `RawObject` given to the filter writes from its tape).
pub(crate) fn markdown_types(file: &mut syn::File, runtime: &syn::Path) {
    let types: Vec<syn::Ident> = file
        .items
        .iter()
        .filter_map(|item| match item {
            syn::Item::Struct(s) => Some(s.ident.clone()),
            syn::Item::Enum(e) => Some(e.ident.clone()),
            _ => None,
        })
        .collect();
    for ident in types {
        file.items
            .push(syn::parse_quote! { impl #runtime::__private::ToMarkdown for #ident {} });
    }
}
