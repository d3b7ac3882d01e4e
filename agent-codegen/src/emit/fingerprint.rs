//! The fingerprint of a contract type: every generated root type implements
//! `contract::ContractType`, whose `FINGERPRINT` hashes the schema it was generated from, so a
//! type mapped in place of a contract's own (`#[agent(types = ...)]`) is checked to come from
//! the same schema when the user's crate compiles.

use proc_macro2::TokenStream;
use quote::quote;
use std::hash::Hasher;

/// The fingerprint of a contract type: FNV-1a of the schema's JSON, re-serialized so that
/// whitespace does not count. `None` for text that is not JSON (the schema check reports it).
pub(crate) fn fingerprint(text: &str) -> Option<u64> {
    let value: serde_json::Value = serde_json::from_str(text).ok()?;
    let mut hasher = fnv::FnvHasher::default();
    hasher.write(value.to_string().as_bytes());
    Some(hasher.finish())
}

/// The `impl ContractType` of a generated root type.
pub(crate) fn contract_type_impl(runtime: &syn::Path, ty: &TokenStream, text: &str) -> TokenStream {
    let Some(fingerprint) = fingerprint(text) else {
        return TokenStream::new();
    };
    quote! {
        #[automatically_derived]
        impl #runtime::__private::ContractType for #ty {
            const FINGERPRINT: u64 = #fingerprint;
        }
    }
}
