//! Attribute parsing, in one place for the three derives: `#[agent(..)]` on `Agent` and
//! `AgentInput`, `#[contributor(..)]` on `PromptContributor`. Every key is `key = value`;
//! an unknown key (with a did-you-mean) and a repeated key are errors at the key, and parsing
//! goes on so that all of them are reported at once.

use std::collections::BTreeMap;

use proc_macro2::Span;
use quote::quote;
use syn::spanned::Spanned;
use syn::{Attribute, Expr, LitInt, LitStr};

use crate::derive::ctxt::Ctxt;

/// The keys of one attribute name on one item, each with its value as written.
pub(crate) struct Keys {
    values: BTreeMap<&'static str, Expr>,
    /// Span of the first such attribute's name, for "missing key" errors.
    pub span: Option<Span>,
}

impl Keys {
    /// Parses every `#[<name>(..)]` of `attrs`, accepting the keys in `known`.
    pub(crate) fn parse(
        attrs: &[Attribute],
        name: &str,
        known: &[&'static str],
        errors: &mut Ctxt,
    ) -> Self {
        let mut keys = Self {
            values: BTreeMap::new(),
            span: None,
        };
        for attr in attrs.iter().filter(|a| a.path().is_ident(name)) {
            keys.span.get_or_insert(attr.path().span());
            let result = attr.parse_nested_meta(|meta| {
                let path = &meta.path;
                let key = quote!(#path).to_string().replace(' ', "");
                let Some(k) = known.iter().find(|k| **k == key) else {
                    errors.at(path.span(), unknown_key(name, &key, known));
                    // Skip the value so parsing goes on to the next key.
                    if meta.input.peek(syn::Token![=]) {
                        let _: Expr = meta.value()?.parse()?;
                    }
                    return Ok(());
                };
                let value: Expr = meta.value()?.parse()?;
                if keys.values.contains_key(k) {
                    errors.at(
                        path.span(),
                        format!("duplicate `{name}` attribute key `{key}`"),
                    );
                } else {
                    keys.values.insert(k, value);
                }
                Ok(())
            });
            if let Err(e) = result {
                errors.push(e);
            }
        }
        keys
    }

    /// The string value of `key`, if given; another kind of value is an error.
    pub(crate) fn str(&self, key: &str, errors: &mut Ctxt) -> Option<LitStr> {
        match self.values.get(key)? {
            Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) => Some(s.clone()),
            other => {
                errors.at(other.span(), format!("expected a string for `{key}`"));
                None
            }
        }
    }

    /// The value of `key` as written, if given.
    pub(crate) fn value(&self, key: &str) -> Option<&Expr> {
        self.values.get(key)
    }

    /// The integer value of `key`, if given; another kind of value is an error.
    pub(crate) fn int(&self, key: &str, errors: &mut Ctxt) -> Option<LitInt> {
        let value = self.values.get(key)?;
        let lit = match value {
            Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Int(i),
                ..
            }) => Some(i.clone()),
            // `priority = -5`
            Expr::Unary(syn::ExprUnary {
                op: syn::UnOp::Neg(_),
                expr,
                ..
            }) => match &**expr {
                Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Int(i),
                    ..
                }) => Some(LitInt::new(
                    &format!("-{}", i.base10_digits()),
                    value.span(),
                )),
                _ => None,
            },
            _ => None,
        };
        if lit.is_none() {
            errors.at(value.span(), format!("expected an integer for `{key}`"));
        }
        lit
    }

    /// The value of `key` as a list of strings (`["a", "b"]`), if given.
    pub(crate) fn str_list(&self, key: &str, errors: &mut Ctxt) -> Option<Vec<LitStr>> {
        let value = self.values.get(key)?;
        let Expr::Array(list) = value else {
            errors.at(
                value.span(),
                format!("expected a list of strings for `{key}`"),
            );
            return None;
        };
        let mut out = Vec::new();
        for elem in &list.elems {
            match elem {
                Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(s),
                    ..
                }) => out.push(s.clone()),
                other => errors.at(other.span(), format!("expected a string in `{key}`")),
            }
        }
        Some(out)
    }
}

/// "unknown key" with the keys there are, and the one meant if it is a near miss.
fn unknown_key(name: &str, key: &str, known: &[&str]) -> String {
    let expected: Vec<String> = known.iter().map(|k| format!("`{k}`")).collect();
    let mut message = format!(
        "unknown `{name}` attribute key `{key}`, expected one of {}",
        expected.join(", ")
    );
    if let Some(close) = crate::suggest::closest(key, known.iter().copied()) {
        message.push_str(&format!(" (did you mean `{close}`?)"));
    }
    message
}
