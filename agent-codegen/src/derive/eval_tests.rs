//! `eval_tests!(Agent, "evals/agent.jsonl", model)`: one `#[test]` per case of a dataset, each
//! running its case through the agent on the model `model` makes for it (a
//! `Fn(&str case, u32 run) -> CaseModel`: live, recorded or replayed) and failing with the
//! case's failed assertions or error. The dataset is read when the crate compiles (and
//! tracked, so an edit recompiles); its check against the contracts is the derive's
//! `evals = "..."`.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::parse::{Parse, ParseStream};
use syn::{Expr, LitStr, Token, Type};

struct Input {
    agent: Type,
    dataset: LitStr,
    model: Expr,
}

impl Parse for Input {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let agent = input.parse()?;
        input.parse::<Token![,]>()?;
        let dataset = input.parse()?;
        input.parse::<Token![,]>()?;
        let model = input.parse()?;
        let _ = input.parse::<Option<Token![,]>>()?;
        Ok(Self {
            agent,
            dataset,
            model,
        })
    }
}

/// Expands `eval_tests!`: a test function per case, named after the case.
pub fn eval_tests(tokens: TokenStream) -> TokenStream {
    let input = match syn::parse2::<Input>(tokens) {
        Ok(input) => input,
        Err(e) => return e.to_compile_error(),
    };
    let root = std::env::var_os("CARGO_MANIFEST_DIR")
        .map_or_else(|| std::path::PathBuf::from("."), std::path::PathBuf::from);
    let path = root.join(input.dataset.value());
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) => {
            let message = format!("cannot read the eval dataset {}: {e}", path.display());
            return syn::Error::new(input.dataset.span(), message).to_compile_error();
        }
    };
    let mut tests = Vec::new();
    let mut used = std::collections::BTreeSet::new();
    for (index, line) in text.lines().enumerate() {
        let Ok(serde_json::Value::Object(case)) = serde_json::from_str(line) else {
            continue;
        };
        let Some(name) = case.get("name").and_then(serde_json::Value::as_str) else {
            continue;
        };
        let mut ident = test_name(name);
        if !used.insert(ident.clone()) {
            ident = format!("{ident}_line_{}", index + 1);
            used.insert(ident.clone());
        }
        let ident = format_ident!("{}", ident);
        let agent = &input.agent;
        let model = &input.model;
        tests.push(quote! {
            #[test]
            fn #ident() {
                ::agent_contracts::eval::assert_case(&#agent, DATASET, #name, &#model);
            }
        });
    }
    let file = path.to_string_lossy().into_owned();
    quote! {
        const DATASET: &str = ::core::include_str!(#file);
        #(#tests)*
    }
}

/// A case's name as a test function's: lowercase letters, digits and `_`, not starting with a
/// digit, not a keyword.
fn test_name(name: &str) -> String {
    let mut out: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    if out.is_empty()
        || out.starts_with(|c: char| c.is_ascii_digit())
        || syn::parse_str::<syn::Ident>(&out).is_err()
    {
        out = format!("case_{out}");
    }
    out
}
