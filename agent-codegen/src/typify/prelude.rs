//! Names the prelude's traits by their full paths in typify's output.
//!
//! typify writes `impl Default for X` and `Default::default()` as the prelude names them. A
//! contract whose `$defs` include one named `default` (a config schema's usual "the default
//! profile") gets a type `Default` in the same module, which then shadows the trait: the
//! generated code stops compiling. Every such path is rewritten to its absolute form, so a
//! type of any name leaves the traits alone.

use syn::visit_mut::{self, VisitMut};

/// Prelude traits typify names by their bare name, and their absolute paths.
const TRAITS: &[(&str, &str)] = &[
    ("Default", "::core::default::Default"),
    ("Clone", "::core::clone::Clone"),
    ("From", "::core::convert::From"),
    ("Into", "::core::convert::Into"),
    ("TryFrom", "::core::convert::TryFrom"),
    ("ToString", "::std::string::ToString"),
];

/// Rewrites bare prelude trait paths (`Default::default`, `impl Default for`) in `file`.
pub(crate) fn absolute_prelude_paths(file: &mut syn::File) {
    Absolute.visit_file_mut(file);
}

struct Absolute;

impl Absolute {
    /// `Trait::item` and `Trait` (in an `impl ... for`) without a leading `::`, for a trait of
    /// [`TRAITS`]: the trait's absolute path instead.
    fn rewrite(path: &mut syn::Path, alone: bool) {
        if path.leading_colon.is_some() || (path.segments.len() < 2 && !alone) {
            return;
        }
        let Some(first) = path.segments.first() else {
            return;
        };
        let Some((_, absolute)) = TRAITS.iter().find(|(name, _)| first.ident == name) else {
            return;
        };
        let mut full: syn::Path = syn::parse_str(absolute).expect("a valid path");
        // The trait's own segment keeps its generic arguments (`From<&str>`).
        if let Some(last) = full.segments.last_mut() {
            last.arguments = first.arguments.clone();
        }
        full.segments
            .extend(std::mem::take(&mut path.segments).into_iter().skip(1));
        *path = full;
    }
}

impl VisitMut for Absolute {
    fn visit_expr_path_mut(&mut self, node: &mut syn::ExprPath) {
        if node.qself.is_none() {
            Self::rewrite(&mut node.path, false);
        }
        visit_mut::visit_expr_path_mut(self, node);
    }

    fn visit_item_impl_mut(&mut self, node: &mut syn::ItemImpl) {
        if let Some((path, _)) = &mut node.trait_ {
            Self::rewrite(path, true);
        }
        visit_mut::visit_item_impl_mut(self, node);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    #[test]
    fn bare_trait_paths_become_absolute() {
        let mut file: syn::File = syn::parse2(quote! {
            pub struct Default { level: i64 }
            impl Default for Config {
                fn default() -> Self { Self { mode: Default::default(), n: ::core::default::Default::default() } }
            }
            impl From<&str> for Name { fn from(s: &str) -> Self { Self(ToString::to_string(s)) } }
            fn keep() { let d: Default = make(); d.default(); }
        })
        .unwrap();
        absolute_prelude_paths(&mut file);
        let text = quote!(#file).to_string();
        assert!(
            text.contains("impl :: core :: default :: Default for Config"),
            "{text}"
        );
        assert!(
            text.contains("mode : :: core :: default :: Default :: default ()"),
            "{text}"
        );
        assert!(
            text.contains("impl :: core :: convert :: From < & str > for Name"),
            "{text}"
        );
        assert!(
            text.contains(":: std :: string :: ToString :: to_string (s)"),
            "{text}"
        );
        // The type itself, and paths already absolute, are left as they are.
        assert!(text.contains("pub struct Default"), "{text}");
        assert!(text.contains("let d : Default = make ()"), "{text}");
        assert_eq!(
            text.matches(":: core :: default :: Default :: default ()")
                .count(),
            2
        );
    }
}
