//! The pieces both checks generators write (`checks.rs` on typed values, `verdict.rs` on a
//! value's tape): conjunctions, exact number literals, patterns as the validator runs them.

use proc_macro2::TokenStream;
use quote::quote;
use serde_json::Value;

/// A `pattern` as the validator runs it: translated from ECMA-262 syntax for the `regex`
/// crate, or why it cannot be compiled.
pub(crate) fn translated_pattern(arg: &Value) -> Result<String, &'static str> {
    let pattern = arg.as_str().ok_or("a pattern that is not a string")?;
    let translated = jsonschema_regex::to_rust_regex(pattern)
        .map_err(|_| "a pattern the validator translates differently")?;
    regex::Regex::new(&translated).map_err(|_| "a pattern the `regex` crate refuses")?;
    Ok(translated.into_owned())
}

/// Whether a check is the literal `true` (left out of conjunctions).
pub(crate) fn is_true(check: &TokenStream) -> bool {
    check.to_string() == "true"
}

/// `a && b && ...`, `true` for none.
pub(crate) fn and(checks: Vec<TokenStream>) -> TokenStream {
    let checks: Vec<TokenStream> = checks.into_iter().filter(|c| !is_true(c)).collect();
    match checks.as_slice() {
        [] => quote!(true),
        [one] => one.clone(),
        _ => quote!(#((#checks))&&*),
    }
}

/// A JSON number as a `Number` literal, exact (floats by their bits).
pub(crate) fn number(value: &Value, private: &TokenStream) -> Option<TokenStream> {
    let n = value.as_number()?;
    if let Some(i) = n.as_i64() {
        let i = i128::from(i);
        return Some(quote!(#private::Number::Int(#i)));
    }
    if let Some(u) = n.as_u64() {
        let u = i128::from(u);
        return Some(quote!(#private::Number::Int(#u)));
    }
    let bits = n.as_f64()?.to_bits();
    Some(quote!(#private::Number::Float(f64::from_bits(#bits))))
}
