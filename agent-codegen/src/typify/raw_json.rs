//! Untyped parts of a contract keep the caller's JSON text.
//!
//! typify types a property with no `type` as `serde_json::Value` and an object without
//! properties as `serde_json::Map<String, Value>`. Both would lose the caller's key order and
//! number text (`0.60` becomes `0.6`) unless serde_json's `preserve_order` and
//! `arbitrary_precision` features were on, and those change how every other crate of the
//! user's build parses JSON. So they become the runtime's `RawJson` and `RawObject`, which keep
//! the text and render it as written.

use quote::ToTokens;
use syn::visit_mut::{self, VisitMut};
use syn::{Attribute, Expr, ExprLit, Lit, LitStr, Meta, Path, Token, Type};

/// Replaces typify's `serde_json::Value` and `serde_json::Map<..>` types (before the crate
/// paths are rerouted) with `<runtime>::__private::RawJson` and `RawObject`.
pub(crate) fn keep_raw_json(file: &mut syn::File, runtime: &Path) {
    let private = quote::quote!(#runtime::__private);
    let object: Path = syn::parse_quote!(#private::RawObject);
    Raw {
        json: syn::parse_quote!(#private::RawJson),
        is_empty: format!("{}::is_empty", compact(&object)),
        object,
    }
    .visit_file_mut(file);
}

struct Raw {
    json: Path,
    object: Path,
    /// The path of `RawObject::is_empty`, for `skip_serializing_if`.
    is_empty: String,
}

/// Which serde_json item `path` names, if any: `Value` or `Map`.
fn serde_json_item(path: &Path) -> Option<String> {
    let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
    match segments.as_slice() {
        [krate, item] if krate == "serde_json" && (item == "Value" || item == "Map") => {
            Some(item.clone())
        }
        _ => None,
    }
}

impl VisitMut for Raw {
    fn visit_type_mut(&mut self, ty: &mut Type) {
        if let Type::Path(type_path) = ty
            && type_path.qself.is_none()
        {
            match serde_json_item(&type_path.path).as_deref() {
                Some("Value") => {
                    type_path.path = self.json.clone();
                    return;
                }
                Some("Map") => {
                    type_path.path = self.object.clone();
                    return;
                }
                _ => {}
            }
        }
        visit_mut::visit_type_mut(self, ty);
    }

    // Macro arguments are opaque tokens to syn: typify's `vec![..]` defaults parse their items
    // with `::serde_json::from_str::<::serde_json::Value>`.
    fn visit_macro_mut(&mut self, mac: &mut syn::Macro) {
        let parser = syn::punctuated::Punctuated::<Expr, Token![,]>::parse_terminated;
        if let Ok(mut exprs) = mac.parse_body_with(parser) {
            for expr in &mut exprs {
                self.visit_expr_mut(expr);
            }
            mac.tokens = exprs.to_token_stream();
        }
    }

    fn visit_attribute_mut(&mut self, attr: &mut Attribute) {
        if !attr.path().is_ident("serde") {
            return;
        }
        let parser = syn::punctuated::Punctuated::<Meta, Token![,]>::parse_terminated;
        let Ok(mut metas) = attr.parse_args_with(parser) else {
            return;
        };
        let mut changed = false;
        for meta in &mut metas {
            if let Meta::NameValue(nv) = meta
                && nv.path.is_ident("skip_serializing_if")
                && let Expr::Lit(ExprLit {
                    lit: Lit::Str(lit), ..
                }) = &mut nv.value
                && lit.value().replace(' ', "") == "::serde_json::Map::is_empty"
            {
                *lit = LitStr::new(&self.is_empty, lit.span());
                changed = true;
            }
        }
        if changed && let Meta::List(list) = &mut attr.meta {
            list.tokens = metas.to_token_stream();
        }
    }
}

/// `::a::b` without the spaces `to_string` puts around `::`.
fn compact(path: &Path) -> String {
    path.to_token_stream().to_string().replace(' ', "")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn untyped_values_and_objects_become_raw_json() {
        let mut file: syn::File = syn::parse_quote! {
            pub struct A {
                #[serde(default, skip_serializing_if = "::serde_json::Map::is_empty")]
                pub m: ::serde_json::Map<::std::string::String, ::serde_json::Value>,
                pub v: ::std::option::Option<::serde_json::Value>,
                pub w: ::std::vec::Vec<serde_json::Value>,
            }
        };
        keep_raw_json(&mut file, &syn::parse_quote!(::rt));
        let code = file.to_token_stream().to_string();
        for part in [
            "skip_serializing_if = \"::rt::__private::RawObject::is_empty\"",
            "pub m : :: rt :: __private :: RawObject",
            "pub v : :: std :: option :: Option < :: rt :: __private :: RawJson >",
            "pub w : :: std :: vec :: Vec < :: rt :: __private :: RawJson >",
        ] {
            assert!(code.contains(part), "{part}\nnot in\n{code}");
        }
    }
}
