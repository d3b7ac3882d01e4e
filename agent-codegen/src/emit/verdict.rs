//! The verdict-only read: a schema node compiled to a check that runs on a value's tape.
//!
//! `checks.rs` compiles a contract's checks onto its generated types. Where a contract ties
//! an untyped value to another contract (the plan generator's collected outputs, each to its
//! producer's output schema), reading the value as the producer's type only to ask its checks
//! builds and drops a whole value per call. Here the same schema node becomes code that walks
//! the value where it stands, on the tape the call's one pass already wrote: keys matched as
//! written, strings and numbers read in place, nothing built.
//!
//! Unlike the typed checks, a verdict knows the value's JSON exactly, so it is JSON Schema's
//! own answer, not a conservative one: `not`, `oneOf`, `anyOf` and `if` compile too. What it
//! cannot decide exactly at run time (a number no `f64` holds exactly, a string serde_json
//! does not decode) is recorded in an `Unsure`, and the verdict is then `false` ("the
//! validator decides"). A keyword not compiled here makes the whole node fall back to the
//! typed read.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use serde_json::Value;

use super::pieces::{and, is_true, number, translated_pattern};
use crate::schema::keywords::ANNOTATIONS;

/// Deepest nesting of schema nodes (`$ref`s inlined) in one verdict.
const MAX_DEPTH: usize = 32;

/// Most schema nodes one verdict inlines: a schema that refers to itself, or a tree of
/// shared definitions, falls back to the typed read rather than growing the code.
const MAX_NODES: usize = 512;

/// The verdict of `node` (in the document `root`) as a closure `|v: TapeValue<'_>| -> bool`,
/// calling the runtime's checks module at `private`; `Err` names the first keyword not
/// compiled. For 2019-09 and later drafts only (`format` an annotation, `$ref` beside other
/// keywords): the caller leaves older drafts to the typed read.
pub(crate) fn verdict(
    root: &Value,
    node: &Value,
    private: &TokenStream,
) -> Result<TokenStream, String> {
    // `prefixItems`, `items` and the rest are read as draft 2020-12 reads them; the
    // validator reads a 2019-09 document otherwise.
    if !is_2020_12(root.get("$schema")) {
        return Err("a document of another draft than 2020-12".into());
    }
    let mut compiler = Compiler {
        root,
        private,
        names: 0,
        nodes: 0,
    };
    let v = compiler.var();
    let check = compiler.node(node, &v, 0)?;
    Ok(quote!(|#v: #private::TapeValue<'_>| {
        let unsure = #private::Unsure::default();
        let passed = #check;
        passed && unsure.decided()
    }))
}

/// The verdict of a whole schema (JSON text) as the source of a function
/// `pub fn NAME(value: TapeValue<'_>) -> bool` calling `::agent_contracts`, for the differential
/// tests of verdicts against the validator; `Err` says why the schema has none.
pub fn verdict_fn(schema: &str, name: &str) -> Result<String, String> {
    let root: Value = serde_json::from_str(schema).map_err(|e| e.to_string())?;
    let old_draft = root
        .get("$schema")
        .and_then(Value::as_str)
        .is_some_and(|s| {
            ["draft-03", "draft-04", "draft-06", "draft-07"]
                .iter()
                .any(|d| s.contains(d))
        });
    if old_draft {
        return Err("a draft before 2019-09".into());
    }
    let private = quote!(::agent_contracts::__private::checks);
    let verdict = verdict(&root, &root, &private)?;
    let name = format_ident!("{name}");
    let item: syn::File = syn::parse_quote! {
        pub fn #name(value: #private::TapeValue<'_>) -> bool {
            (#verdict)(value)
        }
    };
    Ok(prettyplease::unparse(&item))
}

struct Compiler<'a> {
    root: &'a Value,
    private: &'a TokenStream,
    names: usize,
    nodes: usize,
}

/// A node's keywords of one JSON type, checked when the value has that type.
#[derive(Default)]
struct Families {
    strings: Vec<TokenStream>,
    numbers: Vec<TokenStream>,
    /// `minItems`-style counts, on `len`.
    counts: Vec<TokenStream>,
    /// Whether an array keyword was seen (`items`, `prefixItems`, `contains`, counts).
    array: bool,
    /// Whether an object keyword was seen.
    object: bool,
}

impl Compiler<'_> {
    fn var(&mut self) -> syn::Ident {
        self.names += 1;
        format_ident!("v{}", self.names)
    }

    /// The check of `node` on the tape value `v`.
    fn node(&mut self, node: &Value, v: &syn::Ident, depth: usize) -> Result<TokenStream, String> {
        self.nodes += 1;
        if depth > MAX_DEPTH || self.nodes > MAX_NODES {
            return Err("a schema nested or referred to too deeply".into());
        }
        let object = match node {
            Value::Bool(true) => return Ok(quote!(true)),
            Value::Bool(false) => return Ok(quote!(false)),
            Value::Object(object) => object,
            _ => return Err("a node that is not a schema".into()),
        };
        let p = self.private;
        let (s, n) = (self.var(), self.var());
        let mut checks = Vec::new();
        let mut families = Families::default();
        for (keyword, arg) in object {
            let keyword = keyword.as_str();
            match keyword {
                // The validator reads a node under another draft's `$schema` by that draft.
                "$schema" if !is_2020_12(Some(arg)) => {
                    return Err("a `$schema` of another draft below the root".into());
                }
                k if ANNOTATIONS.contains(&k) => {}
                // An annotation from draft 2019-09 on, as the validator is configured.
                "format" => {}
                "$ref" => checks.push(self.reference(arg, v, depth)?),
                "type" => checks.push(self.types(arg, v)?),
                "enum" => checks.push(self.values(arg.as_array(), v)?),
                "const" => checks.push(self.values(Some(&vec![arg.clone()]), v)?),
                "minLength" | "maxLength" => {
                    families
                        .strings
                        .push(bounded(keyword, arg, quote!(#p::chars(#s)))?);
                }
                "pattern" => {
                    let translated = translated_pattern(arg)?;
                    families.strings.push(quote!({
                        static PATTERN: #p::Pattern = #p::LazyLock::new(|| #p::pattern(#translated));
                        #p::matches(&PATTERN, #s)
                    }));
                }
                "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" => {
                    let limit = number(arg, p).ok_or("a bound that is not a number")?;
                    let accept = match keyword {
                        "minimum" => {
                            quote!(&[::core::cmp::Ordering::Greater, ::core::cmp::Ordering::Equal])
                        }
                        "maximum" => {
                            quote!(&[::core::cmp::Ordering::Less, ::core::cmp::Ordering::Equal])
                        }
                        "exclusiveMinimum" => quote!(&[::core::cmp::Ordering::Greater]),
                        _ => quote!(&[::core::cmp::Ordering::Less]),
                    };
                    families
                        .numbers
                        .push(quote!(#p::tape_bound(#n, #limit, #accept, &unsure)));
                }
                "multipleOf" => {
                    let divisor = arg
                        .as_u64()
                        .filter(|d| *d > 0 && *d <= 1 << 53)
                        .ok_or("a `multipleOf` that is not a whole number")?;
                    families
                        .numbers
                        .push(quote!(#p::tape_multiple_of(#n, #divisor, &unsure)));
                }
                "minItems" | "maxItems" => {
                    families
                        .counts
                        .push(bounded(keyword, arg, quote!(#p::tape_len(#v)))?);
                    families.array = true;
                }
                "uniqueItems" if arg == &Value::Bool(false) => {}
                "items" | "prefixItems" | "contains" | "minContains" | "maxContains" => {
                    families.array = true;
                }
                "minProperties" | "maxProperties" => {
                    let within = bounded(keyword, arg, quote!(#p::tape_len(#v)))?;
                    checks.push(quote!(#p::tape_entries(#v).is_none() || #within));
                }
                "properties" | "required" | "additionalProperties" => families.object = true,
                "allOf" | "anyOf" | "oneOf" => {
                    let members = arg
                        .as_array()
                        .filter(|m| !m.is_empty())
                        .ok_or_else(|| format!("an `{keyword}` that is not a list"))?;
                    let mut each = Vec::new();
                    for member in members {
                        each.push(self.node(member, v, depth + 1)?);
                    }
                    checks.push(match keyword {
                        "allOf" => and(each),
                        "anyOf" => quote!(false #(|| (#each))*),
                        _ => quote!(0usize #(+ usize::from(#each))* == 1),
                    });
                }
                "not" => {
                    let inner = self.node(arg, v, depth + 1)?;
                    checks.push(quote!(!(#inner)));
                }
                "if" => {
                    let test = self.node(arg, v, depth + 1)?;
                    let mut branch = |key: &str| match object.get(key) {
                        Some(b) => self.node(b, v, depth + 1),
                        None => Ok(quote!(true)),
                    };
                    let (then, otherwise) = (branch("then")?, branch("else")?);
                    checks.push(quote!(if #test { #then } else { #otherwise }));
                }
                // Without an `if` they have no effect; with one, decided there.
                "then" | "else" => {}
                _ => return Err(format!("`{keyword}` is not compiled")),
            }
        }
        if !families.strings.is_empty() {
            let strings = and(std::mem::take(&mut families.strings));
            checks.push(quote!(match #p::tape_str(#v, &unsure) {
                ::core::option::Option::Some(#s) => { let #s: &str = &#s; #strings }
                ::core::option::Option::None => true,
            }));
        }
        if !families.numbers.is_empty() {
            let numbers = and(std::mem::take(&mut families.numbers));
            checks.push(quote!(match #p::tape_number(#v, &unsure) {
                ::core::option::Option::Some(#n) => #numbers,
                ::core::option::Option::None => true,
            }));
        }
        if families.array {
            checks.push(self.array(object, families.counts, v, depth)?);
        }
        if families.object {
            checks.push(self.object(object, v, depth)?);
        }
        Ok(and(checks))
    }

    /// A local `$ref`, inlined.
    fn reference(
        &mut self,
        arg: &Value,
        v: &syn::Ident,
        depth: usize,
    ) -> Result<TokenStream, String> {
        let target = arg
            .as_str()
            .and_then(|t| t.strip_prefix('#'))
            .filter(|t| !t.contains('%'))
            .ok_or("a `$ref` that is not local")?;
        let found = self
            .root
            .pointer(target)
            .ok_or("a `$ref` that does not resolve")?;
        if crosses_id(self.root, target) {
            // Below an `$id`, the validator resolves `#...` against that `$id`.
            return Err("a `$ref` through a schema with an `$id`".into());
        }
        self.node(found, v, depth + 1)
    }

    fn types(&mut self, arg: &Value, v: &syn::Ident) -> Result<TokenStream, String> {
        let names: Vec<&str> = match arg {
            Value::String(t) => vec![t.as_str()],
            Value::Array(ts) => ts
                .iter()
                .map(|t| t.as_str().ok_or("a `type` that is not a name"))
                .collect::<Result<_, _>>()?,
            _ => return Err("a `type` that is not a name".into()),
        };
        let p = self.private;
        let mut bits = Vec::new();
        for name in names {
            let bit = match name {
                "object" => quote!(#p::OBJECT),
                "array" => quote!(#p::ARRAY),
                "string" => quote!(#p::STRING),
                "number" => quote!(#p::NUMBER),
                "integer" => quote!(#p::INTEGER),
                "boolean" => quote!(#p::BOOLEAN),
                "null" => quote!(#p::NULL),
                _ => return Err(format!("the type `{name}`")),
            };
            bits.push(bit);
        }
        Ok(quote!(#p::tape_type(#v, 0 #(| #bits)*, &unsure)))
    }

    /// `enum` and `const`: scalars only.
    fn values(
        &mut self,
        values: Option<&Vec<Value>>,
        v: &syn::Ident,
    ) -> Result<TokenStream, String> {
        let values = values.ok_or("an `enum` that is not a list")?;
        let p = self.private;
        let (mut strings, mut numbers, mut checks) = (Vec::new(), Vec::new(), Vec::new());
        for value in values {
            match value {
                Value::String(s) => strings.push(s.as_str()),
                Value::Number(_) => {
                    numbers.push(number(value, p).ok_or("a number no `f64` holds")?)
                }
                Value::Bool(b) => {
                    checks.push(quote!(#p::tape_bool(#v) == ::core::option::Option::Some(#b)))
                }
                Value::Null => checks.push(quote!(#p::tape_null(#v))),
                _ => return Err("an `enum` or `const` of arrays or objects".into()),
            }
        }
        if !strings.is_empty() {
            checks.push(quote!(#p::tape_str(#v, &unsure).is_some_and(|s| ::core::matches!(&*s, #(#strings)|*))));
        }
        if !numbers.is_empty() {
            let n = self.var();
            checks.push(quote!(#p::tape_number(#v, &unsure).is_some_and(|#n| false #(|| #p::tape_equal(#n, #numbers, &unsure))*)));
        }
        Ok(quote!(false #(|| (#checks))*))
    }

    /// The array keywords: counts, `prefixItems`, `items`, `contains` with its bounds.
    fn array(
        &mut self,
        object: &serde_json::Map<String, Value>,
        counts: Vec<TokenStream>,
        v: &syn::Ident,
        depth: usize,
    ) -> Result<TokenStream, String> {
        let p = self.private;
        let prefix = match object.get("prefixItems") {
            None => Vec::new(),
            Some(Value::Array(items)) => items.clone(),
            Some(_) => return Err("a `prefixItems` that is not a list".into()),
        };
        let (w, i) = (self.var(), self.var());
        let mut arms = Vec::new();
        for (at, schema) in prefix.iter().enumerate() {
            let check = self.node(schema, &w, depth + 1)?;
            arms.push(quote!(#at => #check,));
        }
        let rest = match object.get("items") {
            None => quote!(true),
            Some(items @ (Value::Object(_) | Value::Bool(_))) => self.node(items, &w, depth + 1)?,
            Some(_) => return Err("`items` as a list (a tuple, before draft 2020-12)".into()),
        };
        let mut checks = counts;
        if !arms.is_empty() || !is_true(&rest) {
            let each = if arms.is_empty() {
                rest
            } else {
                quote!(match #i { #(#arms)* _ => #rest })
            };
            checks.push(quote!(items.enumerate().all(|(#i, #w)| { let _ = #i; #each })));
        }
        if let Some(schema) = object.get("contains") {
            let bound = |key: &str| match object.get(key) {
                None => Ok(None),
                Some(arg) => count(arg, key).map(Some),
            };
            let (min, max) = (bound("minContains")?, bound("maxContains")?);
            let check = self.node(schema, &w, depth + 1)?;
            let min = min.unwrap_or(1);
            let mut on = vec![if min == 0 {
                quote!(true)
            } else {
                quote!(found >= #min)
            }];
            if let Some(max) = max {
                on.push(quote!(found <= #max));
            }
            checks.push(quote!({
                let found = #p::tape_items(#v).into_iter().flatten().filter(|&#w| #check).count();
                #(#on)&&*
            }));
        }
        let checks = and(checks);
        if is_true(&checks) {
            return Ok(checks);
        }
        Ok(quote!(match #p::tape_items(#v) {
            ::core::option::Option::Some(items) => { let _ = &items; #checks }
            ::core::option::Option::None => true,
        }))
    }

    /// `properties`, `required` and `additionalProperties`, in one walk of the entries.
    fn object(
        &mut self,
        object: &serde_json::Map<String, Value>,
        v: &syn::Ident,
        depth: usize,
    ) -> Result<TokenStream, String> {
        let p = self.private;
        let empty = serde_json::Map::new();
        let properties = match object.get("properties") {
            None => &empty,
            Some(Value::Object(properties)) => properties,
            Some(_) => return Err("`properties` that is not an object".into()),
        };
        let mut required: Vec<&str> = match object.get("required") {
            None => Vec::new(),
            Some(Value::Array(names)) => names
                .iter()
                .map(|n| n.as_str().ok_or("a `required` name that is not a string"))
                .collect::<Result<_, _>>()?,
            Some(_) => return Err("`required` that is not a list".into()),
        };
        required.sort_unstable();
        required.dedup();
        if required.len() > 64 {
            return Err("more than 64 required properties".into());
        }
        let w = self.var();
        let additional = match object.get("additionalProperties") {
            None => quote!(true),
            Some(schema) => self.node(schema, &w, depth + 1)?,
        };
        let bit = |name: &str| {
            required
                .iter()
                .position(|r| *r == name)
                .map(|at| 1u64 << at)
        };
        let mut arms = Vec::new();
        for (name, schema) in properties {
            let check = self.node(schema, &w, depth + 1)?;
            arms.push((name.as_str(), bit(name), check));
        }
        // A required name `properties` does not list falls to `additionalProperties`: its bit
        // is set in an arm of its own when that is `true`, else in a match of its own, so the
        // `additionalProperties` code is written once.
        let unlisted: Vec<&str> = required
            .iter()
            .copied()
            .filter(|name| !properties.contains_key(*name))
            .collect();
        let mut marks = Vec::new();
        for name in unlisted {
            let bit = bit(name).unwrap_or_default();
            if is_true(&additional) {
                arms.push((name, Some(bit), quote!(true)));
            } else {
                marks.push(quote!(#name => #bit,));
            }
        }
        let all_required: u64 = if required.len() == 64 {
            u64::MAX
        } else {
            (1u64 << required.len()) - 1
        };
        let arms: Vec<TokenStream> = arms
            .into_iter()
            .filter(|(_, bit, check)| bit.is_some() || !is_true(check) || !is_true(&additional))
            .map(|(name, bit, check)| match bit {
                Some(bit) => quote!(#name => { seen |= #bit; #check }),
                None => quote!(#name => #check,),
            })
            .collect();
        if arms.is_empty() && is_true(&additional) {
            return Ok(quote!(true));
        }
        let walk = if marks.is_empty() {
            quote!(entries.all(|(key, #w)| match key { #(#arms)* _ => #additional }))
        } else {
            quote!(entries.all(|(key, #w)| {
                seen |= match key { #(#marks)* _ => 0 };
                match key { #(#arms)* _ => #additional }
            }))
        };
        let body = if required.is_empty() {
            walk
        } else {
            quote!({
                let mut seen = 0u64;
                let each = #walk;
                each && seen == #all_required
            })
        };
        Ok(quote!(match #p::tape_entries(#v) {
            ::core::option::Option::Some(mut entries) => #body,
            ::core::option::Option::None => true,
        }))
    }
}

/// `value >= limit` for a `min...` keyword, `value <= limit` for a `max...` one.
fn bounded(keyword: &str, arg: &Value, value: TokenStream) -> Result<TokenStream, String> {
    let limit = count(arg, keyword)?;
    Ok(if keyword.starts_with("min") {
        if limit == 0 {
            return Ok(quote!(true));
        }
        quote!(#value >= #limit)
    } else {
        quote!(#value <= #limit)
    })
}

/// A whole-number keyword's argument.
/// Whether a `$schema` (none at all, or 2020-12's) reads as draft 2020-12.
pub(crate) fn is_2020_12(schema: Option<&Value>) -> bool {
    schema.is_none_or(|s| s.as_str().is_some_and(|s| s.contains("2020-12")))
}

/// Whether the JSON pointer `target` reaches through or into a node with an `$id` or an
/// `$anchor` (the root's own `$id` aside).
fn crosses_id(root: &Value, target: &str) -> bool {
    let mut node = root;
    for token in target.split('/').skip(1) {
        let token = token.replace("~1", "/").replace("~0", "~");
        let next = match node {
            Value::Object(o) => o.get(&token),
            Value::Array(a) => token.parse::<usize>().ok().and_then(|i| a.get(i)),
            _ => None,
        };
        let Some(next) = next else {
            return true;
        };
        if next.get("$id").is_some() || next.get("$anchor").is_some() {
            return true;
        }
        node = next;
    }
    false
}

/// A whole-number keyword's argument, at most `u32::MAX` (a `usize` on every target).
fn count(arg: &Value, keyword: &str) -> Result<usize, String> {
    arg.as_u64()
        .filter(|n| *n <= u64::from(u32::MAX))
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| format!("a `{keyword}` that is not a whole number"))
}

#[cfg(test)]
mod tests {
    use super::verdict_fn;

    /// What the validator reads otherwise than draft 2020-12's rules at the root has no
    /// verdict: the typed read decides.
    #[test]
    fn nodes_the_validator_reads_otherwise_have_no_verdict() {
        for schema in [
            // 2019-09 has no `prefixItems`: its `items` applies to every item.
            r##"{"$schema": "https://json-schema.org/draft/2019-09/schema", "prefixItems": [{"type": "string"}], "items": {"type": "integer"}}"##,
            // A node under draft 7 checks its `format`.
            r##"{"properties": {"e": {"$schema": "http://json-schema.org/draft-07/schema#", "format": "email"}}}"##,
            // Below an `$id`, `#/$defs/T` is that `$id`'s.
            r##"{"$defs": {"T": true, "H": {"$id": "urn:h", "$defs": {"T": {"type": "string"}, "I": {"$ref": "#/$defs/T"}}}}, "$ref": "#/$defs/H/$defs/I"}"##,
            // A limit past `u32::MAX`, which a 32-bit `usize` does not hold.
            r##"{"maxLength": 4294967296}"##,
        ] {
            assert!(verdict_fn(schema, "v").is_err(), "{schema}");
        }
        for schema in [
            r##"{"$schema": "https://json-schema.org/draft/2020-12/schema", "prefixItems": [{"type": "string"}], "items": {"type": "integer"}}"##,
            r##"{"properties": {"e": {"$schema": "https://json-schema.org/draft/2020-12/schema", "format": "email"}}}"##,
            r##"{"$defs": {"T": {"type": "string"}}, "$ref": "#/$defs/T"}"##,
        ] {
            assert!(verdict_fn(schema, "v").is_ok(), "{schema}");
        }
    }

    /// A bound of zero and a required name only `additionalProperties` covers are written
    /// without a comparison that always holds and without copying that schema's check.
    #[test]
    fn no_comparison_that_always_holds_and_no_copied_check() {
        let code = verdict_fn(
            r##"{"minItems": 0, "minLength": 0, "contains": true, "minContains": 0}"##,
            "v",
        )
        .unwrap();
        assert!(!code.contains(">= 0"), "{code}");
        let code = verdict_fn(
            r##"{"required": ["a", "b"], "additionalProperties": {"type": "integer"}}"##,
            "v",
        )
        .unwrap();
        assert_eq!(code.matches("INTEGER").count(), 1, "{code}");
    }
}
