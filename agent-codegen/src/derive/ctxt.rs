//! The error collector of the derives: every problem of one derive is reported in one
//! compile (serde_derive's `Ctxt`, darling's `Accumulator`).

use proc_macro2::{Span, TokenStream};

/// Collects errors, then combines them into one `compile_error!` per problem.
#[derive(Default)]
pub(crate) struct Ctxt(Option<syn::Error>);

impl Ctxt {
    /// Adds an error.
    pub(crate) fn push(&mut self, error: syn::Error) {
        match &mut self.0 {
            Some(all) => all.combine(error),
            None => self.0 = Some(error),
        }
    }

    /// Adds an error at `span`.
    pub(crate) fn at(&mut self, span: Span, message: impl std::fmt::Display) {
        self.push(syn::Error::new(span, message));
    }

    /// Adds the error of a result, if any, and returns its value.
    pub(crate) fn ok<T>(&mut self, result: syn::Result<T>) -> Option<T> {
        result.map_err(|e| self.push(e)).ok()
    }

    /// Whether any error was added.
    pub(crate) fn has_errors(&self) -> bool {
        self.0.is_some()
    }

    /// The errors as `compile_error!` invocations (empty when there are none).
    pub(crate) fn into_compile_errors(self) -> TokenStream {
        self.0.map(|e| e.to_compile_error()).unwrap_or_default()
    }
}
