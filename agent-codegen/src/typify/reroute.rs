//! Points typify's output at the runtime crate's re-exports.
//!
//! typify emits `::serde::..`, `::serde_json::..` and `::regress::..` paths,
//! which would force every crate using a contract to depend on those crates
//! directly. We reroute them through `<runtime>::__private`, and tell serde's
//! derives where serde lives with `#[serde(crate = "..")]`.

use proc_macro2::{TokenStream, TokenTree};
use quote::{ToTokens, quote};
use syn::punctuated::Punctuated;
use syn::visit_mut::{self, VisitMut};
use syn::{Attribute, Expr, ExprLit, Lit, LitStr, Meta, Path, Token};

/// Crates whose paths are rerouted through `<runtime>::__private`.
const REROUTED: &[&str] = &["serde", "serde_json", "regress"];

/// Crates the generated code must not name directly once rewritten.
const FORBIDDEN: &[&str] = &["serde", "serde_json", "regress", "chrono", "uuid"];

/// `#[serde(..)]` keys whose string value is a Rust path (the rest are data:
/// `rename = "serde_json::x"` names a JSON property and must stay as is).
const PATH_KEYS: &[&str] = &[
    "default",
    "skip_serializing_if",
    "serialize_with",
    "deserialize_with",
    "with",
    "from",
    "try_from",
    "into",
];

/// Rewrites every path of `file` that starts with a rerouted crate (with or
/// without leading `::`) to `<runtime>::__private::<crate>::..`, and adds
/// `#[serde(crate = "<runtime>::__private::serde")]` to serde-derived items.
pub(crate) fn reroute(file: &mut syn::File, runtime: &Path) {
    let mut private = runtime.clone();
    private.segments.push(syn::parse_quote!(__private));
    let serde_crate = format!("{}::serde", compact(&private));
    Rerouter {
        private,
        serde_crate,
        rerouted: false,
    }
    .visit_file_mut(file);
}

struct Rerouter {
    private: Path,
    serde_crate: String,
    /// Whether a path was rerouted since this was last cleared.
    rerouted: bool,
}

impl Rerouter {
    /// Prefixes `path` with `<runtime>::__private` if it names a rerouted
    /// crate. Single-segment paths (`serde` in `#[serde(..)]`) are left alone.
    fn reroute_path(&mut self, path: &mut Path) -> bool {
        let names_crate =
            path.segments.len() > 1 && REROUTED.iter().any(|c| path.segments[0].ident == c);
        if names_crate {
            let mut rerouted = self.private.clone();
            rerouted.segments.extend(std::mem::take(&mut path.segments));
            *path = rerouted;
            self.rerouted = true;
        }
        names_crate
    }

    /// Rewrites the paths listed in `#[derive(..)]`.
    fn reroute_derive(&mut self, attr: &mut Attribute) {
        let parser = Punctuated::<Path, Token![,]>::parse_terminated;
        let Ok(mut paths) = attr.parse_args_with(parser) else {
            return;
        };
        let mut changed = false;
        for path in &mut paths {
            changed |= self.reroute_path(path);
        }
        if changed {
            set_args(attr, paths.to_token_stream());
        }
    }

    /// Rewrites path-valued strings in `#[serde(..)]`, e.g.
    /// `skip_serializing_if = "::serde_json::Map::is_empty"`.
    fn reroute_serde(&mut self, attr: &mut Attribute) {
        let parser = Punctuated::<Meta, Token![,]>::parse_terminated;
        let Ok(mut metas) = attr.parse_args_with(parser) else {
            return;
        };
        let mut changed = false;
        for meta in &mut metas {
            changed |= self.reroute_serde_value(meta);
        }
        if changed {
            set_args(attr, metas.to_token_stream());
        }
    }

    fn reroute_serde_value(&mut self, meta: &mut Meta) -> bool {
        let Meta::NameValue(nv) = meta else {
            return false;
        };
        let Expr::Lit(ExprLit {
            lit: Lit::Str(lit), ..
        }) = &mut nv.value
        else {
            return false;
        };
        if !PATH_KEYS.iter().any(|k| nv.path.is_ident(k)) {
            return false;
        }
        // `from`/`into` hold types, the others function paths; a type parser
        // accepts both spellings typify uses.
        let Ok(mut ty) = lit.parse::<syn::Type>() else {
            return false;
        };
        self.rerouted = false;
        self.visit_type_mut(&mut ty);
        if !self.rerouted {
            return false;
        }
        // The value is text: the path is written back as tokens print.
        *lit = LitStr::new(&ty.to_token_stream().to_string(), lit.span());
        true
    }

    /// Adds `#[serde(crate = ..)]` after the derive that pulls in serde.
    fn add_serde_crate(&self, attrs: &mut Vec<Attribute>) {
        let Some(index) = attrs.iter().position(derives_serde) else {
            return;
        };
        let krate = &self.serde_crate;
        attrs.insert(index + 1, syn::parse_quote!(#[serde(crate = #krate)]));
    }
}

impl VisitMut for Rerouter {
    fn visit_path_mut(&mut self, path: &mut Path) {
        self.reroute_path(path);
        visit_mut::visit_path_mut(self, path);
    }

    // In `<T as ::serde::de::Error>::custom` the trait is the path's first `position`
    // segments: prefixing the path must shift that boundary too.
    fn visit_expr_path_mut(&mut self, expr: &mut syn::ExprPath) {
        let before = expr.path.segments.len();
        visit_mut::visit_expr_path_mut(self, expr);
        if let Some(qself) = &mut expr.qself {
            qself.position += expr.path.segments.len() - before;
        }
    }

    fn visit_type_path_mut(&mut self, ty: &mut syn::TypePath) {
        let before = ty.path.segments.len();
        visit_mut::visit_type_path_mut(self, ty);
        if let Some(qself) = &mut ty.qself {
            qself.position += ty.path.segments.len() - before;
        }
    }

    // Macro arguments are opaque tokens to syn: typify's `vec![..]` defaults hold
    // `::serde_json::from_str` calls.
    fn visit_macro_mut(&mut self, mac: &mut syn::Macro) {
        let parser = Punctuated::<Expr, Token![,]>::parse_terminated;
        if let Ok(mut exprs) = mac.parse_body_with(parser) {
            for expr in &mut exprs {
                self.visit_expr_mut(expr);
            }
            mac.tokens = exprs.to_token_stream();
        }
    }

    fn visit_attribute_mut(&mut self, attr: &mut Attribute) {
        // Attribute arguments are opaque tokens to syn: parse the two kinds
        // whose arguments carry paths.
        if attr.path().is_ident("derive") {
            self.reroute_derive(attr);
        } else if attr.path().is_ident("serde") {
            self.reroute_serde(attr);
        }
    }

    fn visit_item_struct_mut(&mut self, item: &mut syn::ItemStruct) {
        visit_mut::visit_item_struct_mut(self, item);
        self.add_serde_crate(&mut item.attrs);
    }

    fn visit_item_enum_mut(&mut self, item: &mut syn::ItemEnum) {
        visit_mut::visit_item_enum_mut(self, item);
        self.add_serde_crate(&mut item.attrs);
    }
}

/// Replaces the parenthesized arguments of a list attribute.
fn set_args(attr: &mut Attribute, tokens: TokenStream) {
    if let Meta::List(list) = &mut attr.meta {
        list.tokens = tokens;
    }
}

/// Whether `attr` is a derive of serde's `Serialize` or `Deserialize`.
fn derives_serde(attr: &Attribute) -> bool {
    let parser = Punctuated::<Path, Token![,]>::parse_terminated;
    attr.path().is_ident("derive")
        && attr.parse_args_with(parser).is_ok_and(|paths| {
            paths.iter().any(|p| {
                p.segments.iter().any(|s| s.ident == "serde")
                    && p.segments
                        .last()
                        .is_some_and(|s| s.ident == "Serialize" || s.ident == "Deserialize")
            })
        })
}

/// `::a::b` without the spaces `to_string` puts around `::`, for paths written in strings.
pub(crate) fn compact(path: &Path) -> String {
    quote!(#path).to_string().replace(' ', "")
}

/// Names of crates the rewritten code still reaches directly (a path `crate::..` or
/// `::crate::..` not under `__private`), for a final check. The file is not changed: a
/// `VisitMut` saves enabling syn's `visit` feature, a second visitor in every user's build.
pub(crate) fn direct_crate_uses(file: &mut syn::File) -> Vec<String> {
    let mut direct = Direct::default();
    direct.visit_file_mut(file);
    direct.found.sort();
    direct.found.dedup();
    direct.found
}

#[derive(Default)]
struct Direct {
    found: Vec<String>,
}

impl Direct {
    fn check(&mut self, first: &syn::Ident) {
        if let Some(name) = FORBIDDEN.iter().find(|c| first == *c) {
            self.found.push((*name).to_owned());
        }
    }
}

impl VisitMut for Direct {
    fn visit_path_mut(&mut self, path: &mut Path) {
        if path.segments.len() > 1 {
            self.check(&path.segments[0].ident);
        }
        visit_mut::visit_path_mut(self, path);
    }

    fn visit_item_use_mut(&mut self, item: &mut syn::ItemUse) {
        if let syn::UseTree::Path(path) = &item.tree {
            self.check(&path.ident);
        }
    }

    // Attribute arguments and macro bodies are opaque tokens to syn: they are scanned as such.
    fn visit_meta_list_mut(&mut self, list: &mut syn::MetaList) {
        scan(list.tokens.clone(), &mut self.found);
        visit_mut::visit_meta_list_mut(self, list);
    }

    fn visit_macro_mut(&mut self, mac: &mut syn::Macro) {
        scan(mac.tokens.clone(), &mut self.found);
        visit_mut::visit_macro_mut(self, mac);
    }
}

fn scan(tokens: TokenStream, found: &mut Vec<String>) {
    let trees: Vec<TokenTree> = tokens.into_iter().collect();
    for (i, tree) in trees.iter().enumerate() {
        match tree {
            TokenTree::Group(group) => scan(group.stream(), found),
            TokenTree::Ident(ident) => {
                let name = ident.to_string();
                let starts_path = is_path_sep(&trees[i + 1..]);
                let under_private = i >= 3
                    && is_path_sep(&trees[i - 2..])
                    && matches!(&trees[i - 3], TokenTree::Ident(p) if p == "__private");
                if FORBIDDEN.contains(&name.as_str()) && starts_path && !under_private {
                    found.push(name);
                }
            }
            _ => {}
        }
    }
}

/// Whether `trees` starts with `::` (a joint pair: `uuid: ::std::..` is a field named `uuid`
/// of type `::std::..`, not a path into a crate `uuid`).
fn is_path_sep(trees: &[TokenTree]) -> bool {
    matches!(
        trees,
        [TokenTree::Punct(a), TokenTree::Punct(b), ..]
            if a.as_char() == ':' && a.spacing() == proc_macro2::Spacing::Joint && b.as_char() == ':'
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reroutes_paths_with_and_without_leading_colons() {
        let mut file: syn::File = syn::parse_quote! {
            #[derive(serde::Serialize, ::serde::Deserialize, Clone)]
            #[serde(rename = "serde_json::x", default = "serde_json::Map::new")]
            pub struct A {
                v: serde_json::Value,
                w: ::regress::Regex,
            }
            impl<'de> ::serde::Deserialize<'de> for B {}
        };
        reroute(&mut file, &syn::parse_quote!(::rt));
        let code = file.to_token_stream().to_string();
        let expected = [
            "# [derive (:: rt :: __private :: serde :: Serialize , :: rt :: __private :: serde :: Deserialize , Clone)]",
            "# [serde (crate = \"::rt::__private::serde\")]",
            // A property name is data, a `default` function is a path.
            "# [serde (rename = \"serde_json::x\" , default = \":: rt :: __private :: serde_json :: Map :: new\")]",
            "v : :: rt :: __private :: serde_json :: Value",
            "w : :: rt :: __private :: regress :: Regex",
            "impl < 'de > :: rt :: __private :: serde :: Deserialize < 'de > for B",
        ];
        for part in expected {
            assert!(code.contains(part), "{part}\nnot in\n{code}");
        }
        assert!(direct_crate_uses(&mut file).is_empty(), "{code}");
    }

    #[test]
    fn finds_direct_crate_uses() {
        let mut file: syn::File = syn::parse_quote! {
            #[serde(default)]
            struct A { a: ::serde_json::Value, b: x::__private::serde::Y, c: chrono::Utc, uuid: u8 }
            #[serde(with = "uuid")]
            struct B(#[serde(with = uuid::serde)] u8);
            const C: u8 = regress!(::serde::x);
            use ::regress::Regex;
        };
        assert_eq!(
            direct_crate_uses(&mut file),
            ["chrono", "regress", "serde", "serde_json", "uuid"]
        );
    }
}
