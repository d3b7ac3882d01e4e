//! The contract's checks as code: an `impl ContractChecks` for every generated type.
//!
//! The schema and typify's items are walked together, from the root: each schema node meets
//! the Rust type its value deserialized into, and what the type does not already guarantee
//! (bounds, lengths, patterns, item counts, `required` and `additionalProperties` where the
//! struct's attributes do not, ...) becomes an expression on the typed value. The runtime may
//! then skip the validator when the typed input deserialized (through
//! `agent_contracts::__private::deserialize_strict`) and the checks pass, so they must be sound: every node
//! or keyword the walk does not understand compiles to `false` ("the validator decides"),
//! and is listed, so a contract is *fully compiled* when the list is empty.
//!
//! Two holes of serde's typing are closed on the types themselves: an optional field whose
//! schema refuses `null` reads a present value only (`null` is refused, as the schema does),
//! and a required field typed `Option` (its schema allows `null`) must be present.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use serde_json::Value;
use syn::{Path, Type};

use super::pieces::{and, is_true, number, translated_pattern};
use crate::schema::keywords::{ANNOTATIONS, CONDITIONS};
use crate::typify::model::{Item, Model};

/// Keywords that only constrain values of one JSON type, by that type.
const STRING_KEYWORDS: &[&str] = &["minLength", "maxLength", "pattern", "format"];
const NUMBER_KEYWORDS: &[&str] = &[
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
];
const ARRAY_KEYWORDS: &[&str] = &[
    "items",
    "prefixItems",
    "minItems",
    "maxItems",
    "uniqueItems",
    "contains",
    "minContains",
    "maxContains",
    "additionalItems",
];
const OBJECT_KEYWORDS: &[&str] = &[
    "properties",
    "required",
    "additionalProperties",
    "minProperties",
    "maxProperties",
    "propertyNames",
    "patternProperties",
    "dependentRequired",
];

/// Deepest inline nesting of schema nodes in one check (named types recurse through their
/// impls, not here).
const MAX_DEPTH: usize = 64;

/// What the checks of one contract left to the validator: the schema pointers of the nodes
/// compiled to `false`, with why.
pub(crate) type Forced = Vec<String>;

/// Adds the checks of `schema` for the types of `file` (rooted at `root`), and the field
/// attributes that close serde's `null` holes. Returns the nodes left to the validator.
pub(crate) fn add_checks(
    file: &mut syn::File,
    model: &Model,
    schema: &Value,
    root: &syn::Ident,
    runtime: &Path,
) -> Forced {
    let items = &model.items;
    let old_draft = schema
        .get("$schema")
        .and_then(Value::as_str)
        .is_some_and(|s| {
            ["draft-04", "draft-06", "draft-07"]
                .iter()
                .any(|d| s.contains(d))
        });
    let mut walk = Walk {
        root: schema,
        items,
        model,
        runtime: runtime.clone(),
        old_draft,
        assigned: BTreeMap::new(),
        queue: VecDeque::new(),
        forced: Vec::new(),
        edits: Vec::new(),
        names: 0,
    };
    // Draft 4 counts `5.0` as no integer, which the lenient integer fields accept.
    let draft4 = schema
        .get("$schema")
        .and_then(Value::as_str)
        .is_some_and(|s| s.contains("draft-04") || s.contains("draft-03"));
    if draft4 {
        walk.forced.push("/: a draft 4 schema".into());
    } else {
        walk.assign(&root.to_string(), schema, "");
    }
    let mut impls = Vec::new();
    let mut done = BTreeSet::new();
    while let Some(name) = walk.queue.pop_front() {
        let (pointer, node) = walk.assigned[&name].clone();
        let body = walk.body(&name, &node, &pointer);
        done.insert(name.clone());
        impls.push((name, body));
    }
    // Types the walk never reached (under a node already left to the validator) still get
    // an impl, which leaves them to the validator too.
    for name in items.keys().filter(|n| !done.contains(*n)) {
        impls.push((name.clone(), quote!(false)));
    }
    let edits = std::mem::take(&mut walk.edits);
    apply_edits(file, &edits, runtime);
    let trait_path = quote!(#runtime::__private::ContractChecks);
    for (name, body) in impls {
        let ident = format_ident!("{name}");
        file.items.push(syn::parse_quote! {
            #[automatically_derived]
            impl #trait_path for #ident {
                #[allow(unused_variables, unused_comparisons, clippy::all)]
                fn satisfies_contract(&self) -> bool {
                    #body
                }
            }
        });
    }
    walk.forced
}

/// A field attribute to add (`deserialize_with`), replacing a `deserialize_with` already
/// there (integers').
struct Edit {
    owner: String,
    field: String,
    /// The function's name in the runtime's `__private::checks`.
    function: String,
    /// Whether to add `#[serde(default)]` too (an absent field is then `None`).
    default: bool,
}

/// The Rust shape of a value, as far as the checks care.
enum Shape<'t> {
    Option(&'t Type),
    Box(&'t Type),
    Vec(&'t Type),
    Map(&'t Type),
    Str,
    Bool,
    Int,
    Float,
    Null,
    RawJson,
    RawObject,
    Named(String),
    Unknown,
}

fn shape<'t>(ty: &'t Type, items: &BTreeMap<String, Item>) -> Shape<'t> {
    let Type::Path(path) = ty else {
        return match ty {
            Type::Tuple(t) if t.elems.is_empty() => Shape::Null,
            _ => Shape::Unknown,
        };
    };
    if path.qself.is_some() {
        return Shape::Unknown;
    }
    let Some(last) = path.path.segments.last() else {
        return Shape::Unknown;
    };
    let args: Vec<&Type> = match &last.arguments {
        syn::PathArguments::AngleBracketed(a) => a
            .args
            .iter()
            .filter_map(|a| match a {
                syn::GenericArgument::Type(t) => Some(t),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    };
    let name = last.ident.to_string();
    match (name.as_str(), args.as_slice()) {
        ("Option", [t]) => Shape::Option(t),
        ("Box", [t]) => Shape::Box(t),
        ("Vec", [t]) => Shape::Vec(t),
        ("BTreeMap" | "HashMap", [k, v]) if is_string(k) => Shape::Map(v),
        ("String", []) => Shape::Str,
        ("bool", []) => Shape::Bool,
        ("f64" | "f32", []) => Shape::Float,
        ("RawJson", []) => Shape::RawJson,
        ("RawObject", []) => Shape::RawObject,
        (n, []) if crate::typify::lenient_integers::INTEGERS.contains(&n) => Shape::Int,
        (n, []) if path.path.segments.len() == 1 && items.contains_key(n) => {
            Shape::Named(n.to_owned())
        }
        _ => Shape::Unknown,
    }
}

fn is_string(ty: &Type) -> bool {
    matches!(ty, Type::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == "String"))
}

struct Walk<'a> {
    root: &'a Value,
    items: &'a BTreeMap<String, Item>,
    /// The same items' serde reading.
    model: &'a Model,
    runtime: Path,
    old_draft: bool,
    /// Generated type -> the schema node (pointer, resolved node) its impl checks.
    assigned: BTreeMap<String, (String, Value)>,
    queue: VecDeque<String>,
    forced: Forced,
    edits: Vec<Edit>,
    names: usize,
}

impl Walk<'_> {
    fn no(&mut self, pointer: &str, why: &str) -> TokenStream {
        let at = if pointer.is_empty() { "/" } else { pointer };
        self.forced.push(format!("{at}: {why}"));
        quote!(false)
    }

    fn var(&mut self) -> syn::Ident {
        self.names += 1;
        format_ident!("v{}", self.names)
    }

    fn private(&self) -> TokenStream {
        let runtime = &self.runtime;
        quote!(#runtime::__private::checks)
    }

    /// Follows a node that is only a local `$ref` (annotations aside).
    fn resolve(&self, node: &Value, pointer: &str) -> Result<(Value, String), &'static str> {
        let mut node = node.clone();
        let mut pointer = pointer.to_owned();
        for _ in 0..MAX_DEPTH {
            let Some(target) = node.get("$ref") else {
                return Ok((node, pointer));
            };
            let only_ref = node.as_object().is_some_and(|o| {
                o.keys()
                    .all(|k| k == "$ref" || ANNOTATIONS.contains(&k.as_str()))
            });
            if !only_ref {
                return Err("`$ref` beside other keywords");
            }
            let Some(target) = target.as_str().and_then(|t| t.strip_prefix('#')) else {
                return Err("a `$ref` that is not local");
            };
            if target.contains('%') {
                return Err("an escaped `$ref`");
            }
            let Some(found) = self.root.pointer(target) else {
                return Err("a `$ref` that does not resolve");
            };
            pointer = target.to_owned();
            node = found.clone();
        }
        Err("a chain of `$ref`s too long")
    }

    /// An untyped value (`RawJson`, `RawObject`) whose schema is a `$ref` to a definition
    /// with a generated type (a condition ties an untyped `output` to a producer's contract):
    /// its text read as that type, and that type's checks. `None` when that is not the case.
    fn raw_as_type(&mut self, node: &Value, ty: &Type, expr: &TokenStream) -> Option<TokenStream> {
        if !matches!(shape(ty, self.items), Shape::RawJson | Shape::RawObject) {
            return None;
        }
        let object = node.as_object()?;
        if !object
            .keys()
            .all(|k| k == "$ref" || ANNOTATIONS.contains(&k.as_str()))
        {
            return None;
        }
        let target = object.get("$ref")?.as_str()?.strip_prefix('#')?;
        let key = target
            .strip_prefix("/$defs/")
            .or_else(|| target.strip_prefix("/definitions/"))
            .filter(|k| !k.contains(['/', '~', '%']))?;
        let name = crate::naming::type_name(key);
        if !matches!(self.items.get(&name), Some(Item::Struct(_))) {
            return None;
        }
        let schema = self.root.pointer(target)?.clone();
        if !self.assign(&name, &schema, target) {
            return Some(self.no(target, "a type shared by two different schema nodes"));
        }
        let ident = format_ident!("{name}");
        let private = self.private();
        // The verdict-only read where the node compiles to one (2019-09 and later drafts); else
        // the value is read as the producer's type for its checks.
        if !self.old_draft
            && let Ok(verdict) = super::verdict::verdict(self.root, &schema, &private)
        {
            return Some(quote!(#private::raw_verdict::<#ident, _>(&(#expr), #verdict)));
        }
        Some(quote!(#private::raw_satisfies::<#ident>(&(#expr))))
    }

    /// Gives `name` the node `node`, or says it has another already.
    fn assign(&mut self, name: &str, node: &Value, pointer: &str) -> bool {
        match self.assigned.get(name) {
            Some((_, existing)) => existing == node,
            None => {
                self.assigned
                    .insert(name.to_owned(), (pointer.to_owned(), node.clone()));
                self.queue.push_back(name.to_owned());
                true
            }
        }
    }

    /// The body of `name`'s impl, checking `node` (resolved) on `self`.
    fn body(&mut self, name: &str, node: &Value, pointer: &str) -> TokenStream {
        match &self.items[name] {
            Item::Struct(item) => match &item.fields {
                syn::Fields::Named(_) => {
                    self.node(node, pointer, &Held::Struct(item.clone()), quote!(self), 0)
                }
                syn::Fields::Unnamed(u) if u.unnamed.len() == 1 => {
                    let inner = u.unnamed[0].ty.clone();
                    self.value(node, pointer, &inner, quote!(&self.0), 0)
                }
                _ => self.no(pointer, "a struct typify does not make from a schema"),
            },
            Item::Enum(item) => match self.model.unit_variants(&item.ident) {
                Some(names) => self.node(
                    node,
                    pointer,
                    &Held::UnitEnum(names.to_vec()),
                    quote!(self),
                    0,
                ),
                None => self.no(pointer, "a union (enum with data)"),
            },
        }
    }

    /// The check of `node` on `expr`, a reference to a value of type `ty`.
    fn value(
        &mut self,
        node: &Value,
        pointer: &str,
        ty: &Type,
        expr: TokenStream,
        depth: usize,
    ) -> TokenStream {
        if depth > MAX_DEPTH {
            return self.no(pointer, "nested too deep");
        }
        if let Some(check) = self.raw_as_type(node, ty, &expr) {
            return check;
        }
        let (node, pointer) = match self.resolve(node, pointer) {
            Ok(resolved) => resolved,
            Err(why) => return self.no(pointer, why),
        };
        let pointer = pointer.as_str();
        if node == Value::Bool(true) {
            return quote!(true);
        }
        match shape(ty, self.items) {
            Shape::Option(inner) => {
                let none = if accepts_null(self, &node, 0) {
                    quote!(true)
                } else {
                    self.no(pointer, "`None` may stand for a `null` the schema refuses")
                };
                let v = self.var();
                let some = self.value(&node, pointer, inner, quote!(#v), depth + 1);
                option(expr, none, &v, some)
            }
            Shape::Box(inner) => self.value(&node, pointer, inner, quote!(&**#expr), depth + 1),
            Shape::Named(name) => {
                if !self.assign(&name, &node, pointer) {
                    return self.no(pointer, "a type shared by two different schema nodes");
                }
                let runtime = &self.runtime;
                quote!(#runtime::__private::ContractChecks::satisfies_contract(#expr))
            }
            Shape::Vec(t) => self.node(&node, pointer, &Held::Vec(t.clone()), expr, depth),
            Shape::Map(t) => self.node(&node, pointer, &Held::Map(t.clone()), expr, depth),
            Shape::Str => self.node(&node, pointer, &Held::Str, expr, depth),
            Shape::Bool => self.node(&node, pointer, &Held::Bool, expr, depth),
            Shape::Int => self.node(&node, pointer, &Held::Int, expr, depth),
            Shape::Float => self.node(&node, pointer, &Held::Float, expr, depth),
            Shape::Null => self.node(&node, pointer, &Held::Null, expr, depth),
            Shape::RawJson => self.node(&node, pointer, &Held::Any, expr, depth),
            Shape::RawObject => self.node(&node, pointer, &Held::RawObject, expr, depth),
            Shape::Unknown => self.no(pointer, "a Rust type the checks do not know"),
        }
    }

    /// An `allOf` of conditions (`if`/`then`/`else`, `contains`): each member checked on the
    /// same value. A member that shapes the value is left to the validator.
    fn all_of(
        &mut self,
        arg: &Value,
        held: &Held,
        expr: &TokenStream,
        pointer: &str,
        depth: usize,
    ) -> TokenStream {
        let Some(members) = arg.as_array() else {
            return self.no(pointer, "an `allOf` that is not a list");
        };
        let mut checks = Vec::new();
        for (i, member) in members.iter().enumerate() {
            let at = format!("{pointer}/allOf/{i}");
            let only_conditions = match member {
                Value::Bool(true) => continue,
                Value::Object(o) => o
                    .keys()
                    .all(|k| CONDITIONS.contains(&k.as_str()) || ANNOTATIONS.contains(&k.as_str())),
                _ => false,
            };
            if !only_conditions {
                return self.no(&at, "an `allOf` member that is not only conditions");
            }
            checks.push(self.node(member, &at, held, expr.clone(), depth + 1));
        }
        and(checks)
    }

    /// `if`/`then`/`else` on a struct: `if` must be decided exactly (a negated "the checks
    /// cannot tell" would skip the `else`), so only `const`s on fields that are always there;
    /// each branch's properties are checked on their fields.
    fn conditional(
        &mut self,
        object: &serde_json::Map<String, Value>,
        held: &Held,
        expr: &TokenStream,
        pointer: &str,
        depth: usize,
    ) -> TokenStream {
        let Held::Struct(item) = held else {
            return self.no(pointer, "`if` on a value that is not a struct");
        };
        let Some(test) = object.get("if").and_then(|s| self.exact(s, item, expr)) else {
            return self.no(pointer, "an `if` the checks cannot decide exactly");
        };
        let mut branch = |key: &str| match object.get(key) {
            None => quote!(true),
            Some(b) => self.branch(b, item, expr, &format!("{pointer}/{key}"), depth),
        };
        let (then, otherwise) = (branch("then"), branch("else"));
        quote!(if #test { #then } else { #otherwise })
    }

    /// A `then` or `else` of properties only, each checked on its struct field.
    fn branch(
        &mut self,
        node: &Value,
        item: &syn::ItemStruct,
        expr: &TokenStream,
        pointer: &str,
        depth: usize,
    ) -> TokenStream {
        let object = match node {
            Value::Bool(true) => return quote!(true),
            Value::Object(o) => o,
            _ => return self.no(pointer, "a branch that is not an object"),
        };
        let Some(fields) = self.model.fields(&item.ident) else {
            return self.no(pointer, "a struct without named fields");
        };
        let mut checks = Vec::new();
        for (keyword, arg) in object {
            if ANNOTATIONS.contains(&keyword.as_str()) {
                continue;
            }
            let Some(properties) = arg.as_object().filter(|_| keyword == "properties") else {
                return self.no(pointer, &format!("`{keyword}` in a branch is not compiled"));
            };
            for (name, schema) in properties {
                let at = format!(
                    "{pointer}/properties/{}",
                    name.replace('~', "~0").replace('/', "~1")
                );
                let Some(field) = fields.iter().find(|f| f.json == *name) else {
                    return self.no(&at, "a branch property without a field");
                };
                if field.default
                    || field.flatten
                    || field.unknown
                    || matches!(shape(&field.ty, self.items), Shape::Option(_))
                {
                    return self.no(&at, "a branch property on a field that may be absent");
                }
                let ident = &field.ident;
                let ty = field.ty.clone();
                checks.push(self.value(schema, &at, &ty, quote!(&(#expr).#ident), depth + 1));
            }
        }
        and(checks)
    }

    /// `contains` on a `Vec` of structs: some item matches the schema, decided exactly.
    fn contains(
        &mut self,
        schema: &Value,
        item_type: &Type,
        expr: &TokenStream,
        pointer: &str,
    ) -> TokenStream {
        let at = format!("{pointer}/contains");
        let item = match shape(item_type, self.items) {
            Shape::Named(name) => match &self.items[&name] {
                Item::Struct(item) => item.clone(),
                Item::Enum(_) => return self.no(&at, "`contains` on items that are not structs"),
            },
            _ => return self.no(&at, "`contains` on items that are not structs"),
        };
        let v = self.var();
        match self.exact(schema, &item, &quote!(#v)) {
            Some(test) => quote!((#expr).iter().any(|#v| #test)),
            None => self.no(&at, "a `contains` the checks cannot decide exactly"),
        }
    }

    /// Whether the struct `expr` matches `schema`, decided exactly both ways, or `None`: only
    /// `const` strings on fields that are always present (`String` or a unit enum), with
    /// `required` naming such fields.
    fn exact(
        &self,
        schema: &Value,
        item: &syn::ItemStruct,
        expr: &TokenStream,
    ) -> Option<TokenStream> {
        let fields = self.model.fields(&item.ident)?;
        let always = |name: &str| {
            fields.iter().find(|f| {
                f.json == name
                    && !f.default
                    && !f.flatten
                    && !f.unknown
                    && !matches!(shape(&f.ty, self.items), Shape::Option(_))
            })
        };
        let mut checks = Vec::new();
        for (keyword, arg) in schema.as_object()? {
            match keyword.as_str() {
                k if ANNOTATIONS.contains(&k) => {}
                "type" if arg == "object" => {}
                "required" => {
                    for name in arg.as_array()? {
                        always(name.as_str()?)?;
                    }
                }
                "properties" => {
                    for (name, property) in arg.as_object()? {
                        let field = always(name)?;
                        let property = property.as_object()?;
                        if !property
                            .keys()
                            .all(|k| k == "const" || ANNOTATIONS.contains(&k.as_str()))
                        {
                            return None;
                        }
                        let wanted = property.get("const")?.as_str()?;
                        let ident = &field.ident;
                        let check = match shape(&field.ty, self.items) {
                            Shape::Str => quote!((#expr).#ident == #wanted),
                            Shape::Named(name) => {
                                let Item::Enum(e) = &self.items[&name] else {
                                    return None;
                                };
                                let names = self.model.unit_variants(&e.ident)?;
                                let ty = format_ident!("{name}");
                                match e.variants.iter().zip(names).find(|(_, n)| *n == wanted) {
                                    Some((variant, _)) => {
                                        let variant = &variant.ident;
                                        quote!(::core::matches!((#expr).#ident, #ty::#variant))
                                    }
                                    None => quote!(false),
                                }
                            }
                            _ => return None,
                        };
                        checks.push(check);
                    }
                }
                _ => return None,
            }
        }
        Some(and(checks))
    }

    /// The checks of the resolved `node` on `expr`, whose Rust value is `held`.
    fn node(
        &mut self,
        node: &Value,
        pointer: &str,
        held: &Held,
        expr: TokenStream,
        depth: usize,
    ) -> TokenStream {
        let object = match node {
            Value::Bool(true) => return quote!(true),
            Value::Bool(false) => return self.no(pointer, "the schema `false`"),
            Value::Object(object) => object,
            _ => return self.no(pointer, "not a schema"),
        };
        let kind = held.kind();
        let mut checks: Vec<TokenStream> = Vec::new();
        let mut untyped: BTreeMap<&str, serde_json::Map<String, Value>> = BTreeMap::new();
        for (keyword, arg) in object {
            let keyword = keyword.as_str();
            if ANNOTATIONS.contains(&keyword) {
                continue;
            }
            if keyword == "$id" && pointer.is_empty() {
                continue;
            }
            // A keyword about another JSON type than the value's is ignored by the validator.
            let family = [
                (STRING_KEYWORDS, "string"),
                (NUMBER_KEYWORDS, "number"),
                (ARRAY_KEYWORDS, "array"),
                (OBJECT_KEYWORDS, "object"),
            ]
            .into_iter()
            .find(|(keywords, _)| keywords.contains(&keyword));
            if let Some((_, family)) = family {
                match kind {
                    None => {
                        // Checked below, on the value read from its text.
                        untyped
                            .entry(family)
                            .or_default()
                            .insert(keyword.to_owned(), arg.clone());
                        continue;
                    }
                    Some(kind)
                        if !(kind == family || (family == "number" && kind == "integer")) =>
                    {
                        continue;
                    }
                    Some(_) => {}
                }
            }
            let check = match keyword {
                "type" => self.type_check(arg, held, &expr, pointer),
                "enum" => self.one_of_values(arg.as_array(), held, &expr, pointer),
                "const" => self.one_of_values(Some(&vec![arg.clone()]), held, &expr, pointer),
                "format" if !self.old_draft => continue,
                "minLength" | "maxLength" => {
                    let Some(n) = arg.as_u64() else {
                        checks.push(self.no(pointer, "a length that is not a whole number"));
                        continue;
                    };
                    let Some(s) = held.str(&expr) else {
                        checks.push(self.no(pointer, "a length on an enum"));
                        continue;
                    };
                    let private = self.private();
                    let n = n as usize;
                    if keyword == "minLength" {
                        quote!(#private::chars(#s) >= #n)
                    } else {
                        quote!(#private::chars(#s) <= #n)
                    }
                }
                "pattern" => self.pattern(arg, held, &expr, pointer),
                "allOf" => self.all_of(arg, held, &expr, pointer, depth),
                "if" => self.conditional(object, held, &expr, pointer, depth),
                // Decided with their `if`; without one they have no effect.
                "then" | "else" => continue,
                "contains" => match held {
                    Held::Vec(t) => self.contains(arg, &t.clone(), &expr, pointer),
                    _ => self.no(pointer, "`contains` on a value not typed `Vec`"),
                },
                "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" => {
                    self.bound(keyword, arg, &expr, pointer)
                }
                "multipleOf" => self.multiple_of(arg, &expr, pointer),
                "items" | "minItems" | "maxItems" | "uniqueItems" => {
                    let Held::Vec(t) = held else {
                        checks
                            .push(self.no(pointer, "an array keyword on a value not typed `Vec`"));
                        continue;
                    };
                    self.array(keyword, arg, t, &expr, pointer, depth)
                }
                "properties"
                | "required"
                | "additionalProperties"
                | "minProperties"
                | "maxProperties"
                | "propertyNames" => match held {
                    // The struct's keywords are checked together, below.
                    Held::Struct(_) => continue,
                    Held::Map(t) => self.map(keyword, arg, t, &expr, pointer, depth),
                    Held::RawObject => match (keyword, arg) {
                        ("additionalProperties", Value::Bool(true)) => continue,
                        ("properties", Value::Object(p)) if p.is_empty() => continue,
                        ("required", Value::Array(r)) if r.is_empty() => continue,
                        _ => self.no(pointer, "object keywords on an untyped object"),
                    },
                    _ => self.no(pointer, "object keywords on a value of another type"),
                },
                _ => self.no(pointer, &format!("`{keyword}` is not compiled")),
            };
            checks.push(check);
        }
        if let Held::Struct(item) = held {
            checks.push(self.structure(object, item, pointer, depth));
        }
        for (family, keywords) in untyped {
            checks.push(self.untyped(family, keywords, &expr, pointer, depth));
        }
        and(checks)
    }

    /// The keywords of one JSON type on an untyped value (`RawJson`): checked on the value
    /// read from its text when it has that type.
    fn untyped(
        &mut self,
        family: &str,
        keywords: serde_json::Map<String, Value>,
        expr: &TokenStream,
        pointer: &str,
        depth: usize,
    ) -> TokenStream {
        let private = self.private();
        let v = self.var();
        match family {
            "string" => {
                let check = self.node(
                    &Value::Object(keywords),
                    pointer,
                    &Held::Str,
                    quote!(#v),
                    depth + 1,
                );
                quote!(match &#private::raw_str(#expr) {
                    ::core::option::Option::Some(#v) => #check,
                    ::core::option::Option::None => true,
                })
            }
            "number" => {
                let check = self.node(
                    &Value::Object(keywords),
                    pointer,
                    &Held::Float,
                    quote!(#v),
                    depth + 1,
                );
                quote!(match &#private::raw_number(#expr) {
                    ::core::option::Option::Some(#v) => #check,
                    ::core::option::Option::None => true,
                })
            }
            "array" => {
                let mut checks = Vec::new();
                for (keyword, arg) in &keywords {
                    match (keyword.as_str(), arg.as_u64()) {
                        ("minItems", Some(n)) => {
                            let n = n as usize;
                            checks.push(quote!(#v >= #n));
                        }
                        ("maxItems", Some(n)) => {
                            let n = n as usize;
                            checks.push(quote!(#v <= #n));
                        }
                        _ => checks
                            .push(self.no(pointer, &format!("`{keyword}` on an untyped value"))),
                    }
                }
                let check = and(checks);
                quote!(match #private::raw_len(#expr) {
                    ::core::result::Result::Ok(::core::option::Option::Some(#v)) => #check,
                    ::core::result::Result::Ok(::core::option::Option::None) => true,
                    ::core::result::Result::Err(_) => false,
                })
            }
            _ => self.no(pointer, "object keywords on an untyped value"),
        }
    }

    fn type_check(
        &mut self,
        arg: &Value,
        held: &Held,
        expr: &TokenStream,
        pointer: &str,
    ) -> TokenStream {
        let types: Vec<&str> = match arg {
            Value::String(t) => vec![t.as_str()],
            Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
            _ => return self.no(pointer, "a `type` that is not a name"),
        };
        let Some(kind) = held.kind() else {
            let private = self.private();
            return quote!(#private::raw_type(#expr, &[#(#types),*]));
        };
        let has = |t: &str| types.contains(&t);
        if has(kind) || (kind == "integer" && has("number")) {
            return quote!(true);
        }
        if matches!(held, Held::Float) && has("integer") {
            // An integral float is an integer to JSON Schema; the validator reads the same f64.
            return quote!((*#expr).fract() == 0.0);
        }
        self.no(pointer, "a value whose type the schema refuses")
    }

    fn one_of_values(
        &mut self,
        values: Option<&Vec<Value>>,
        held: &Held,
        expr: &TokenStream,
        pointer: &str,
    ) -> TokenStream {
        let Some(values) = values else {
            return self.no(pointer, "an `enum` that is not a list");
        };
        let private = self.private();
        match held {
            Held::Str => {
                let strings: Vec<&str> = values.iter().filter_map(Value::as_str).collect();
                if strings.is_empty() {
                    return self.no(pointer, "no string among the values");
                }
                quote!(::core::matches!((#expr).as_str(), #(#strings)|*))
            }
            Held::UnitEnum(names) => {
                let allowed: BTreeSet<&str> = values.iter().filter_map(Value::as_str).collect();
                if names.iter().all(|n| allowed.contains(n.as_str())) {
                    quote!(true)
                } else {
                    self.no(pointer, "enum variants the schema does not list")
                }
            }
            Held::Int | Held::Float => {
                let numbers: Vec<TokenStream> =
                    values.iter().filter_map(|v| number(v, &private)).collect();
                if numbers.is_empty() {
                    return self.no(pointer, "no number among the values");
                }
                quote!({
                    let n = #private::AsNumber::number(#expr);
                    false #(|| #private::equal(n, #numbers))*
                })
            }
            Held::Bool => {
                let bools: Vec<bool> = values.iter().filter_map(Value::as_bool).collect();
                if bools.is_empty() {
                    return self.no(pointer, "no boolean among the values");
                }
                quote!(false #(|| *#expr == #bools)*)
            }
            Held::Null if values.contains(&Value::Null) => quote!(true),
            _ => self.no(pointer, "`enum`/`const` on a value of this type"),
        }
    }

    fn pattern(
        &mut self,
        arg: &Value,
        held: &Held,
        expr: &TokenStream,
        pointer: &str,
    ) -> TokenStream {
        let Some(s) = held.str(expr) else {
            return self.no(pointer, "a pattern on an enum");
        };
        let translated = match translated_pattern(arg) {
            Ok(translated) => translated,
            Err(why) => return self.no(pointer, why),
        };
        let private = self.private();
        quote!({
            static PATTERN: #private::Pattern = #private::LazyLock::new(|| #private::pattern(#translated));
            #private::matches(&PATTERN, #s)
        })
    }

    fn bound(
        &mut self,
        keyword: &str,
        arg: &Value,
        expr: &TokenStream,
        pointer: &str,
    ) -> TokenStream {
        let private = self.private();
        let Some(limit) = number(arg, &private) else {
            return self.no(
                pointer,
                "a bound that is not a number (draft 4's boolean form)",
            );
        };
        let accept = match keyword {
            "minimum" => quote!(&[::core::cmp::Ordering::Greater, ::core::cmp::Ordering::Equal]),
            "maximum" => quote!(&[::core::cmp::Ordering::Less, ::core::cmp::Ordering::Equal]),
            "exclusiveMinimum" => quote!(&[::core::cmp::Ordering::Greater]),
            _ => quote!(&[::core::cmp::Ordering::Less]),
        };
        quote!(#private::bound(#private::AsNumber::number(#expr), #limit, #accept))
    }

    fn multiple_of(&mut self, arg: &Value, expr: &TokenStream, pointer: &str) -> TokenStream {
        let divisor = arg.as_u64().or_else(|| {
            let f = arg.as_f64()?;
            (f.fract() == 0.0 && f > 0.0 && f <= 9_007_199_254_740_992.0).then_some(f as u64)
        });
        match divisor {
            Some(d) if d > 0 && d <= 1 << 53 => {
                let private = self.private();
                quote!(#private::multiple_of(#private::AsNumber::number(#expr), #d))
            }
            _ => self.no(pointer, "a fractional `multipleOf`"),
        }
    }

    fn array(
        &mut self,
        keyword: &str,
        arg: &Value,
        item: &Type,
        expr: &TokenStream,
        pointer: &str,
        depth: usize,
    ) -> TokenStream {
        let private = self.private();
        match keyword {
            "minItems" | "maxItems" => {
                let Some(n) = arg.as_u64() else {
                    return self.no(pointer, "a count that is not a whole number");
                };
                let n = n as usize;
                if keyword == "minItems" {
                    quote!((#expr).len() >= #n)
                } else {
                    quote!((#expr).len() <= #n)
                }
            }
            "uniqueItems" => match arg {
                Value::Bool(false) => quote!(true),
                Value::Bool(true) if self.equality_is_json(item, &mut BTreeSet::new()) => {
                    quote!(#private::unique(#expr))
                }
                _ => self.no(
                    pointer,
                    "`uniqueItems` on items whose equality is not JSON's",
                ),
            },
            _ => {
                if arg.is_array() {
                    return self.no(pointer, "`items` as a list (a tuple, before draft 2020-12)");
                }
                let v = self.var();
                let each = self.value(
                    arg,
                    &format!("{pointer}/items"),
                    item,
                    quote!(#v),
                    depth + 1,
                );
                all(quote!((#expr).iter()), &v, each)
            }
        }
    }

    fn map(
        &mut self,
        keyword: &str,
        arg: &Value,
        value_ty: &Type,
        expr: &TokenStream,
        pointer: &str,
        depth: usize,
    ) -> TokenStream {
        match keyword {
            "properties" if arg.as_object().is_some_and(|p| p.is_empty()) => quote!(true),
            "required" => {
                let Some(names) = arg
                    .as_array()
                    .map(|r| r.iter().filter_map(Value::as_str).collect::<Vec<_>>())
                else {
                    return self.no(pointer, "a `required` that is not a list");
                };
                and(names
                    .iter()
                    .map(|n| quote!((#expr).contains_key(#n)))
                    .collect())
            }
            "additionalProperties" => {
                let v = self.var();
                let each = self.value(
                    arg,
                    &format!("{pointer}/additionalProperties"),
                    value_ty,
                    quote!(#v),
                    depth + 1,
                );
                all(quote!((#expr).values()), &v, each)
            }
            "propertyNames" => {
                let v = self.var();
                let string: Type = syn::parse_quote!(::std::string::String);
                let each = self.value(
                    arg,
                    &format!("{pointer}/propertyNames"),
                    &string,
                    quote!(#v),
                    depth + 1,
                );
                all(quote!((#expr).keys()), &v, each)
            }
            "minProperties" | "maxProperties" => {
                let Some(n) = arg.as_u64() else {
                    return self.no(pointer, "a count that is not a whole number");
                };
                let n = n as usize;
                if keyword == "minProperties" {
                    quote!((#expr).len() >= #n)
                } else {
                    quote!((#expr).len() <= #n)
                }
            }
            _ => self.no(pointer, "properties on a value typed as a map"),
        }
    }

    /// `properties`, `required` and `additionalProperties` on a struct.
    fn structure(
        &mut self,
        object: &serde_json::Map<String, Value>,
        item: &syn::ItemStruct,
        pointer: &str,
        depth: usize,
    ) -> TokenStream {
        let Some(fields) = self.model.fields(&item.ident) else {
            return self.no(pointer, "a struct without named fields");
        };
        if fields.iter().any(|f| f.flatten || f.unknown) {
            return self.no(pointer, "a struct with flattened or unusual fields");
        }
        for keyword in [
            "minProperties",
            "maxProperties",
            "propertyNames",
            "patternProperties",
            "dependentRequired",
        ] {
            if object.contains_key(keyword) {
                return self.no(pointer, &format!("`{keyword}` on a struct is not compiled"));
            }
        }
        let deny = self.model.denies_unknown_fields(&item.ident);
        match object.get("additionalProperties") {
            None | Some(Value::Bool(true)) => {}
            Some(Value::Bool(false)) if deny => {}
            Some(_) => {
                return self.no(
                    pointer,
                    "`additionalProperties` the struct does not enforce",
                );
            }
        }
        let empty = serde_json::Map::new();
        let properties = match object.get("properties") {
            None => &empty,
            Some(Value::Object(p)) => p,
            Some(_) => return self.no(pointer, "`properties` that is not an object"),
        };
        let required: BTreeSet<&str> = match object.get("required") {
            None => BTreeSet::new(),
            Some(Value::Array(r)) => r.iter().filter_map(Value::as_str).collect(),
            Some(_) => return self.no(pointer, "`required` that is not a list"),
        };
        let mut checks = Vec::new();
        for name in &required {
            if !fields.iter().any(|f| f.json == *name) {
                return self.no(pointer, "a required property without a field");
            }
        }
        for (name, schema) in properties {
            if !fields.iter().any(|f| f.json == *name) && !deny && !accepts_anything(self, schema) {
                return self.no(pointer, "a property the struct ignores");
            }
        }
        let owner = item.ident.to_string();
        for field in fields {
            let schema = properties
                .get(&field.json)
                .cloned()
                .unwrap_or(Value::Bool(true));
            let at = format!(
                "{pointer}/properties/{}",
                field.json.replace('~', "~0").replace('/', "~1")
            );
            let is_required = required.contains(field.json.as_str());
            let ident = &field.ident;
            let expr = quote!(&self.#ident);
            match shape(&field.ty, self.items) {
                Shape::Option(inner) => {
                    if is_required {
                        if field.default {
                            checks.push(self.no(&at, "a required field with a default"));
                            continue;
                        }
                        // With a `deserialize_with` (typify's `Option::deserialize`) and no
                        // `default`, serde already wants the field present.
                        if !field.deserialize_with {
                            self.edits.push(Edit {
                                owner: owner.clone(),
                                field: ident.to_string(),
                                function: "nullable".into(),
                                default: false,
                            });
                        }
                        checks.push(self.value(&schema, &at, &field.ty, expr, depth + 1));
                    } else if refuses_null(self, &schema, 0) {
                        let function = if field.deserialize_with {
                            "present_lenient"
                        } else {
                            "present"
                        };
                        self.edits.push(Edit {
                            owner: owner.clone(),
                            field: ident.to_string(),
                            function: function.into(),
                            default: !field.default,
                        });
                        let v = self.var();
                        let some = self.value(&schema, &at, inner, quote!(#v), depth + 1);
                        checks.push(option(expr, quote!(true), &v, some));
                    } else {
                        checks.push(self.value(&schema, &at, &field.ty, expr, depth + 1));
                    }
                }
                _ => {
                    if is_required && field.default {
                        checks.push(self.no(&at, "a required field with a default"));
                        continue;
                    }
                    checks.push(self.value(&schema, &at, &field.ty, expr, depth + 1));
                }
            }
        }
        and(checks)
    }

    /// Whether `==` on values of `ty` is JSON equality, as far as `uniqueItems` needs: values
    /// from equal JSON compare equal (different JSON may compare equal too, which only sends
    /// the call to the validator).
    fn equality_is_json(&self, ty: &Type, seen: &mut BTreeSet<String>) -> bool {
        match shape(ty, self.items) {
            Shape::Str | Shape::Bool | Shape::Int | Shape::Float | Shape::Null => true,
            Shape::Option(t) | Shape::Box(t) | Shape::Vec(t) | Shape::Map(t) => {
                self.equality_is_json(t, seen)
            }
            Shape::Named(name) => {
                if !seen.insert(name.clone()) {
                    return true;
                }
                match &self.items[&name] {
                    Item::Struct(s) => s.fields.iter().all(|f| self.equality_is_json(&f.ty, seen)),
                    Item::Enum(e) => self.model.unit_variants(&e.ident).is_some(),
                }
            }
            Shape::RawJson | Shape::RawObject | Shape::Unknown => false,
        }
    }
}

/// The Rust value a node's keywords are checked on.
enum Held {
    Struct(syn::ItemStruct),
    UnitEnum(Vec<String>),
    Vec(Type),
    Map(Type),
    Str,
    Bool,
    Int,
    Float,
    Null,
    RawObject,
    /// Any JSON value (`RawJson`).
    Any,
}

impl Held {
    /// The JSON type every value of this Rust type has.
    fn kind(&self) -> Option<&'static str> {
        Some(match self {
            Self::Struct(_) | Self::Map(_) | Self::RawObject => "object",
            Self::UnitEnum(_) | Self::Str => "string",
            Self::Vec(_) => "array",
            Self::Bool => "boolean",
            Self::Int => "integer",
            Self::Float => "number",
            Self::Null => "null",
            Self::Any => return None,
        })
    }

    /// The value as `&str`, for a string.
    fn str(&self, expr: &TokenStream) -> Option<TokenStream> {
        matches!(self, Self::Str).then(|| quote!((#expr).as_str()))
    }
}

/// `iter.all(|v| each)`, or `true` when each item passes.
fn all(iter: TokenStream, v: &syn::Ident, each: TokenStream) -> TokenStream {
    if is_true(&each) {
        return quote!(true);
    }
    quote!(#iter.all(|#v| #each))
}

/// The check of an `Option`: `none` for `None`, `some` on the value.
fn option(expr: TokenStream, none: TokenStream, v: &syn::Ident, some: TokenStream) -> TokenStream {
    if is_true(&none) && is_true(&some) {
        return quote!(true);
    }
    quote!(match #expr {
        ::core::option::Option::None => #none,
        ::core::option::Option::Some(#v) => #some,
    })
}

/// Whether the node certainly accepts `null`.
fn accepts_null(walk: &Walk<'_>, node: &Value, depth: usize) -> bool {
    if depth > MAX_DEPTH {
        return false;
    }
    let Ok((node, _)) = walk.resolve(node, "") else {
        return false;
    };
    let object = match &node {
        Value::Bool(b) => return *b,
        Value::Object(o) => o,
        _ => return false,
    };
    object.iter().all(|(k, v)| match k.as_str() {
        "type" => match v {
            Value::String(t) => t == "null",
            Value::Array(ts) => ts.contains(&Value::from("null")),
            _ => false,
        },
        "enum" => v.as_array().is_some_and(|vs| vs.contains(&Value::Null)),
        "const" => v.is_null(),
        k if ANNOTATIONS.contains(&k) => true,
        // Keywords about other types than null.
        k => {
            STRING_KEYWORDS.contains(&k)
                || NUMBER_KEYWORDS.contains(&k)
                || ARRAY_KEYWORDS.contains(&k)
                || OBJECT_KEYWORDS.contains(&k)
        }
    })
}

/// Whether the node certainly refuses `null`.
fn refuses_null(walk: &Walk<'_>, node: &Value, depth: usize) -> bool {
    if depth > MAX_DEPTH {
        return false;
    }
    let Ok((node, _)) = walk.resolve(node, "") else {
        return false;
    };
    let object = match &node {
        Value::Bool(b) => return !*b,
        Value::Object(o) => o,
        _ => return false,
    };
    let by_type = match object.get("type") {
        Some(Value::String(t)) => t != "null",
        Some(Value::Array(ts)) => !ts.contains(&Value::from("null")),
        _ => false,
    };
    let by_enum = object
        .get("enum")
        .and_then(Value::as_array)
        .is_some_and(|vs| !vs.contains(&Value::Null));
    let by_const = object.get("const").is_some_and(|c| !c.is_null());
    let branches = |keyword: &str| object.get(keyword).and_then(Value::as_array);
    let by_union = ["anyOf", "oneOf"]
        .iter()
        .any(|k| branches(k).is_some_and(|bs| bs.iter().all(|b| refuses_null(walk, b, depth + 1))));
    let by_all =
        branches("allOf").is_some_and(|bs| bs.iter().any(|b| refuses_null(walk, b, depth + 1)));
    by_type || by_enum || by_const || by_union || by_all
}

/// Whether the node accepts every value (only annotations).
fn accepts_anything(walk: &Walk<'_>, node: &Value) -> bool {
    match walk.resolve(node, "") {
        Ok((Value::Bool(b), _)) => b,
        Ok((Value::Object(o), _)) => o.keys().all(|k| ANNOTATIONS.contains(&k.as_str())),
        _ => false,
    }
}

fn apply_edits(file: &mut syn::File, edits: &[Edit], runtime: &Path) {
    let private = format!(
        "{}::__private::checks",
        crate::typify::reroute::compact(runtime)
    );
    for item in &mut file.items {
        let syn::Item::Struct(s) = item else { continue };
        let syn::Fields::Named(named) = &mut s.fields else {
            continue;
        };
        for edit in edits.iter().filter(|e| s.ident == e.owner) {
            let Some(field) = named
                .named
                .iter_mut()
                .find(|f| f.ident.as_ref().is_some_and(|i| *i == edit.field))
            else {
                continue;
            };
            field.attrs.retain(|a| {
                !(a.path().is_ident("serde") && quote!(#a).to_string().contains("deserialize_with"))
            });
            let function = format!("{private}::{}", edit.function);
            field
                .attrs
                .push(syn::parse_quote!(#[serde(deserialize_with = #function)]));
            if edit.default {
                field.attrs.push(syn::parse_quote!(#[serde(default)]));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::emit::types::generate_types;

    #[test]
    fn what_the_checks_cover_and_leave_to_the_validator() {
        let schema = r#"{
            "type": "object",
            "required": ["n", "maybe"],
            "properties": {
                "n": {"type": "integer", "minimum": 1, "multipleOf": 2},
                "s": {"type": "string", "maxLength": 3, "pattern": "^a"},
                "maybe": {"type": ["string", "null"]},
                "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": true}
            }
        }"#;
        let types = generate_types(schema, "s.json", "Root").unwrap();
        assert!(
            types.unchecked.is_empty(),
            "{:?}\n{}",
            types.unchecked,
            types.pretty()
        );
        let code = types.pretty();
        // An optional field whose schema refuses null reads present values only; a required
        // nullable one must be present.
        assert!(code.contains("__private::checks::present"), "{code}");
        assert!(
            code.contains("deserialize_with = \"::std::option::Option::deserialize\""),
            "{code}"
        );
        for part in ["multiple_of", "chars(", "PATTERN", "unique("] {
            assert!(code.contains(part), "{part} not in {code}");
        }

        let union = r#"{"type": "object", "properties": {"u": {"anyOf": [{"type": "string", "minLength": 2}, {"type": "integer"}]}}}"#;
        let types = generate_types(union, "s.json", "Root").unwrap();
        assert_eq!(types.unchecked.len(), 1, "{:?}", types.unchecked);
        assert!(
            types.unchecked[0].starts_with("/properties/u"),
            "{:?}",
            types.unchecked
        );
    }
}
