//! A contract's schema compiled for checking a prefix of an answer: the keywords a prefix can
//! decide, per schema node, with `allOf`, `$ref`, `anyOf` and `oneOf` flattened into
//! alternatives (an instance can still become valid while one alternative can).
//!
//! Built once per contract (the contract keeps it), read by [`crate::stream`] per token.
//! Every keyword left out here is one a prefix cannot decide, or one whose absence only lets
//! more answers through (`pattern`, `format`, `not`, `if`, `uniqueItems`, ...): the final
//! check decides those, so nothing here can call a valid answer broken.

use serde_json::Value;
use std::collections::HashMap;

/// Index of a [`Local`] in [`PrefixSchema::locals`].
pub(crate) type LocalId = usize;

/// Alternatives, each a conjunction of locals: an instance can become valid while every local
/// of one alternative still allows it. An empty conjunction allows anything.
pub(crate) type Alternatives = Vec<Vec<LocalId>>;

/// Past this many alternatives a node allows anything (checked at the end only).
const MAX_ALTERNATIVES: usize = 32;
/// `$ref`s followed in a row without a keyword between (a chain, or a cycle through
/// `allOf`/`anyOf`), past which a node allows anything.
const MAX_INDIRECTION: usize = 16;

/// JSON types, as bits.
pub(crate) mod types {
    pub(crate) const NULL: u8 = 1;
    pub(crate) const BOOLEAN: u8 = 2;
    pub(crate) const OBJECT: u8 = 4;
    pub(crate) const ARRAY: u8 = 8;
    pub(crate) const NUMBER: u8 = 16;
    pub(crate) const STRING: u8 = 32;
    /// `integer`: a number that is decided complete.
    pub(crate) const INTEGER: u8 = 64;
    pub(crate) const ALL: u8 = 127;
}

/// What one schema object says, of the keywords a prefix decides.
#[derive(Debug, Default)]
pub(crate) struct Local {
    /// Allowed types ([`types`] bits).
    pub(crate) types: u8,
    /// The schema's `type` as written, for messages.
    pub(crate) type_text: String,
    /// `enum` and `const` members: a value must be one of each list.
    pub(crate) one_of_values: Vec<Vec<Value>>,
    pub(crate) min_length: Option<u64>,
    pub(crate) max_length: Option<u64>,
    pub(crate) min_items: Option<u64>,
    pub(crate) max_items: Option<u64>,
    pub(crate) minimum: Option<(f64, bool)>,
    pub(crate) maximum: Option<(f64, bool)>,
    pub(crate) properties: HashMap<String, Alternatives>,
    /// The properties in the schema's order, for messages.
    pub(crate) required: Vec<String>,
    pub(crate) additional: Additional,
    pub(crate) prefix_items: Vec<Alternatives>,
    pub(crate) items: Option<Alternatives>,
    /// `false`: no value passes.
    pub(crate) never: bool,
    pub(crate) description: Option<String>,
}

/// What `additionalProperties` says about a key no `properties` entry names.
#[derive(Debug, Default)]
pub(crate) enum Additional {
    #[default]
    Any,
    Forbidden,
    Schema(Alternatives),
}

/// A contract's schema compiled for prefixes; see the module docs.
#[derive(Debug)]
pub(crate) struct PrefixSchema {
    pub(crate) locals: Vec<Local>,
    pub(crate) root: Alternatives,
    /// Keys whose `null` a strict provider may write for an absent property (removed before
    /// the final check): a `null` under one of these keys is never called broken.
    pub(crate) null_keys: Vec<String>,
}

impl PrefixSchema {
    /// Compiles `schema` (already compiled by the validator, so well-formed).
    pub(crate) fn new(schema: &Value, null_keys: Vec<String>) -> Self {
        let mut compiler = Compiler {
            root: schema,
            locals: Vec::new(),
            by_pointer: HashMap::new(),
        };
        let root = compiler.node(schema, 0);
        Self {
            locals: compiler.locals,
            root,
            null_keys,
        }
    }
}

struct Compiler<'s> {
    root: &'s Value,
    locals: Vec<Local>,
    /// The alternatives of each `$ref` target, once compiled (a recursive contract's cycle
    /// is cut by the placeholder put here before compiling the target).
    by_pointer: HashMap<String, Option<Alternatives>>,
}

impl Compiler<'_> {
    fn node(&mut self, schema: &Value, hops: usize) -> Alternatives {
        let object = match schema {
            Value::Bool(true) => return vec![Vec::new()],
            Value::Bool(false) => {
                let id = self.push(Local {
                    never: true,
                    types: 0,
                    ..Local::default()
                });
                return vec![vec![id]];
            }
            Value::Object(object) => object,
            _ => return vec![Vec::new()],
        };
        let local = self.local(object);
        let mut alternatives = vec![vec![self.push(local)]];
        if let Some(Value::String(reference)) = object.get("$ref") {
            let target = self.reference(reference, hops);
            alternatives = product(alternatives, target);
        }
        if let Some(Value::Array(members)) = object.get("allOf") {
            for member in members {
                let member = self.node(member, hops);
                alternatives = product(alternatives, member);
            }
        }
        for keyword in ["anyOf", "oneOf"] {
            if let Some(Value::Array(members)) = object.get(keyword) {
                let mut union = Vec::new();
                for member in members {
                    union.extend(self.node(member, hops));
                }
                alternatives = product(alternatives, union);
            }
        }
        if alternatives.len() > MAX_ALTERNATIVES {
            return vec![Vec::new()];
        }
        alternatives
    }

    /// The alternatives of a local `$ref` (`#/...`); anything else allows anything.
    fn reference(&mut self, reference: &str, hops: usize) -> Alternatives {
        let Some(pointer) = reference.strip_prefix('#') else {
            return vec![Vec::new()];
        };
        match self.by_pointer.get(pointer) {
            Some(Some(done)) => return done.clone(),
            // Being compiled: a cycle without a keyword between allows anything here.
            Some(None) => return vec![Vec::new()],
            None => {}
        }
        let Some(target) = self.root.pointer(pointer) else {
            return vec![Vec::new()];
        };
        if hops >= MAX_INDIRECTION {
            return vec![Vec::new()];
        }
        self.by_pointer.insert(pointer.to_owned(), None);
        let compiled = self.node(target, hops + 1);
        self.by_pointer
            .insert(pointer.to_owned(), Some(compiled.clone()));
        compiled
    }

    fn push(&mut self, local: Local) -> LocalId {
        self.locals.push(local);
        self.locals.len() - 1
    }

    fn local(&mut self, object: &serde_json::Map<String, Value>) -> Local {
        let count = |key: &str| object.get(key).and_then(Value::as_u64);
        let bound = |key: &str, exclusive: &str| {
            let inclusive = object.get(key).and_then(Value::as_f64).map(|v| (v, false));
            let exclusive = object
                .get(exclusive)
                .and_then(Value::as_f64)
                .map(|v| (v, true));
            inclusive.or(exclusive)
        };
        let mut one_of_values = Vec::new();
        if let Some(Value::Array(members)) = object.get("enum") {
            one_of_values.push(members.clone());
        }
        if let Some(value) = object.get("const") {
            one_of_values.push(vec![value.clone()]);
        }
        let (types, type_text) = match object.get("type") {
            Some(Value::String(t)) => (type_bits(t), format!("{t:?}")),
            Some(Value::Array(list)) => {
                let names: Vec<&str> = list.iter().filter_map(Value::as_str).collect();
                let bits = names.iter().fold(0, |bits, t| bits | type_bits(t));
                let text = names
                    .iter()
                    .map(|t| format!("{t:?}"))
                    .collect::<Vec<_>>()
                    .join(", ");
                (bits, text)
            }
            _ => (types::ALL, String::new()),
        };
        let mut properties = HashMap::new();
        if let Some(Value::Object(props)) = object.get("properties") {
            for (key, schema) in props {
                properties.insert(key.clone(), self.node(schema, 0));
            }
        }
        // Keys a `patternProperties` entry matches are not additional: with patterns, which
        // key is additional is left to the final check.
        let additional = match object.get("additionalProperties") {
            _ if object.contains_key("patternProperties") => Additional::Any,
            Some(Value::Bool(false)) => Additional::Forbidden,
            Some(schema @ Value::Object(_)) => Additional::Schema(self.node(schema, 0)),
            _ => Additional::Any,
        };
        let (prefix_items, items) = self.items(object);
        Local {
            types,
            type_text,
            one_of_values,
            min_length: count("minLength"),
            max_length: count("maxLength"),
            min_items: count("minItems"),
            max_items: count("maxItems"),
            minimum: bound("minimum", "exclusiveMinimum"),
            maximum: bound("maximum", "exclusiveMaximum"),
            properties,
            required: object
                .get("required")
                .and_then(Value::as_array)
                .map(|r| {
                    r.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default(),
            additional,
            prefix_items,
            items,
            never: false,
            description: object
                .get("description")
                .and_then(Value::as_str)
                .map(str::to_owned),
        }
    }

    /// `prefixItems` and `items` (2020-12), or `items` as a list and `additionalItems`
    /// (draft 7).
    fn items(
        &mut self,
        object: &serde_json::Map<String, Value>,
    ) -> (Vec<Alternatives>, Option<Alternatives>) {
        let (list, rest) = match (object.get("prefixItems"), object.get("items")) {
            (Some(Value::Array(list)), rest) => (Some(list), rest),
            (None, Some(Value::Array(list))) => (Some(list), object.get("additionalItems")),
            (_, rest) => (None, rest),
        };
        let prefix = list
            .map(|list| list.iter().map(|s| self.node(s, 0)).collect())
            .unwrap_or_default();
        let rest = rest.map(|s| self.node(s, 0));
        (prefix, rest)
    }
}

/// Every way of picking one alternative of `a` and one of `b`, joined.
fn product(a: Alternatives, b: Alternatives) -> Alternatives {
    let mut out = Vec::with_capacity(a.len() * b.len());
    for left in &a {
        for right in &b {
            let mut joined = left.clone();
            joined.extend(right);
            out.push(joined);
            if out.len() > MAX_ALTERNATIVES {
                return vec![Vec::new()];
            }
        }
    }
    out
}

fn type_bits(name: &str) -> u8 {
    match name {
        "null" => types::NULL,
        "boolean" => types::BOOLEAN,
        "object" => types::OBJECT,
        "array" => types::ARRAY,
        "number" => types::NUMBER | types::INTEGER,
        "integer" => types::INTEGER,
        "string" => types::STRING,
        _ => 0,
    }
}
