//! Small questions about typify's syntax tree that more than one fix-up asks.

/// The name a type path ends in, when it has no generic arguments (`String` for
/// `::std::string::String`, `Foo` for `Foo`).
pub(crate) fn type_ident(ty: &syn::Type) -> Option<&syn::Ident> {
    let syn::Type::Path(path) = ty else {
        return None;
    };
    let last = path.path.segments.last()?;
    matches!(last.arguments, syn::PathArguments::None).then_some(&last.ident)
}
