//! Whether what a producer's contract allows is what a consumer's contract accepts: every
//! value of the provided schema must pass the expected one. The build checks a workflow's
//! data flow with it (agent-codegen), and the runtime a stored run's contracts against the
//! ones a new build has (agent-core).
//!
//! The check is sound: it never finds nothing when some value the producer allows could be
//! refused by the consumer. Each keyword of the expected schema is either decided (a
//! [`FindingKind::Mismatch`], or nothing when it is implied) or reported as
//! [`FindingKind::Undecided`], naming the keyword. Decided: `type` (an integer is a number),
//! `enum`/`const` (`1` and `1.0` are one number), `properties`, `required`,
//! `additionalProperties`, `items` (a schema, `prefixItems` before it, or a tuple), `allOf`
//! member by member, an `if`/`then`/`else` by the branch every provided value takes when the
//! `if` holds for all of them or for none, and the bounds: `minimum`, `maximum`,
//! `exclusiveMinimum`, `exclusiveMaximum` (inclusive and exclusive compared both ways, an
//! integer producer's bound rounded to the integers it allows), `minLength`, `maxLength`,
//! `minItems`, `maxItems`, `minProperties`, `maxProperties`. A keyword that only applies to
//! a type the producer never gives (`minimum` of a string) is met. Any other keyword is met
//! only when the producer states the same (and refs in it resolve alike); otherwise, and for
//! keywords whose meaning depends on their siblings (`unevaluatedProperties`, ...), undecided.
//!
//! ```
//! use agent_contracts_schema::compat::{compare, FindingKind};
//! use serde_json::json;
//!
//! let producer = json!({"type": "integer", "exclusiveMinimum": 0});
//! let consumer = json!({"type": "number", "minimum": 1});
//! assert!(compare((&producer, &producer), (&consumer, &consumer), "n").is_empty());
//!
//! let findings = compare((&consumer, &consumer), (&producer, &producer), "n");
//! assert_eq!(findings[0].kind, FindingKind::Mismatch);
//! assert_eq!(findings[0].keyword, "type");
//! ```

use serde_json::{Map, Number, Value};
use std::cmp::Ordering;
use std::collections::BTreeSet;

/// Whether a finding makes the flow wrong or was beyond the check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FindingKind {
    /// Some value the producer may give is refused by the consumer.
    Mismatch,
    /// The check cannot tell: some value the producer may give might be refused.
    Undecided,
}

/// One finding, at a path below the compared field (`budget_agent_output.allocations`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// Mismatch or undecided.
    pub kind: FindingKind,
    /// Where: the compared field, then `.name` per property and `[]` per array item.
    pub path: String,
    /// The keyword of the expected schema that decided it (`minimum`, `required`, ...).
    pub keyword: &'static str,
    /// What was found, naming the path.
    pub message: String,
}

/// Deepest nesting compared; deeper is undecided.
const MAX_DEPTH: usize = 32;
/// Most `$ref` hops followed to reach a schema.
const MAX_HOPS: usize = 16;

/// Keywords that say nothing about which values pass.
const ANNOTATIONS: &[&str] = &[
    "$schema",
    "$comment",
    "$id",
    "$anchor",
    "title",
    "description",
    "examples",
    "default",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$defs",
    "definitions",
    // Who gives the field (`"user"`: a person, asked when a call omits it).
    "x-source",
];

/// Keywords [`compare`] models by their own rule.
const MODELED: &[&str] = &[
    "type",
    "enum",
    "const",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "prefixItems",
    "allOf",
    "if",
    "then",
    "else",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
];

/// Counting bounds: the producer implies a lower one with a greater or equal value, an upper
/// one with a smaller or equal value, of the same keyword.
const LOWER: &[&str] = &["minLength", "minItems", "minProperties"];
const UPPER: &[&str] = &["maxLength", "maxItems", "maxProperties"];

/// Keywords whose meaning depends on their siblings: the same value in both schemas may
/// still let through different values.
const CONTEXTUAL: &[&str] = &[
    "unevaluatedProperties",
    "unevaluatedItems",
    "additionalItems",
    "minContains",
    "maxContains",
    "$dynamicRef",
    "$recursiveRef",
];

/// The types a keyword applies to: a value of any other type passes it.
fn applies_to(keyword: &str) -> Option<&'static [&'static str]> {
    Some(match keyword {
        "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" | "multipleOf" => {
            &["number", "integer"]
        }
        "minLength" | "maxLength" | "pattern" | "format" | "contentEncoding"
        | "contentMediaType" | "contentSchema" => &["string"],
        "items" | "prefixItems" | "additionalItems" | "minItems" | "maxItems" | "uniqueItems"
        | "contains" | "minContains" | "maxContains" | "unevaluatedItems" => &["array"],
        "properties"
        | "required"
        | "additionalProperties"
        | "patternProperties"
        | "propertyNames"
        | "minProperties"
        | "maxProperties"
        | "dependentRequired"
        | "dependentSchemas"
        | "dependencies"
        | "unevaluatedProperties" => &["object"],
        _ => return None,
    })
}

/// Whether a condition holds for the values of a provided schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Holds {
    /// Every value of the provided schema passes the condition.
    Always,
    /// No value of the provided schema passes it.
    Never,
    /// Some may and some may not, or the check cannot tell.
    Unknown,
}

/// Whether every value of the provided schema `(doc, schema)` passes `condition` (a schema
/// of the expected document, `(doc, schema)`), none does, or the check cannot tell.
///
/// ```
/// use agent_contracts_schema::compat::{holds, Holds};
/// use serde_json::json;
/// let string = json!({"type": "string"});
/// let object = json!({"type": "object"});
/// assert_eq!(holds((&string, &string), (&object, &object)), Holds::Never);
/// ```
pub fn holds(provided: (&Value, &Value), condition: (&Value, &Value)) -> Holds {
    let mut out = Vec::new();
    Compare::new(provided.0, condition.0, &mut out).holds(provided.1, condition.1, 0)
}

/// Compares the provided schema `(doc, schema)` with the expected one, `field` naming both:
/// what some provided value may break (mismatches) and what the check cannot tell
/// (undecided). Empty: every provided value passes the expected schema.
///
/// ```
/// use agent_contracts_schema::compat::{compare, FindingKind};
/// use serde_json::json;
/// let producer = json!({"type": "string", "maxLength": 80});
/// let consumer = json!({"type": "string", "maxLength": 40});
/// let findings = compare((&producer, &producer), (&consumer, &consumer), "title");
/// assert_eq!((findings[0].kind, findings[0].keyword), (FindingKind::Mismatch, "maxLength"));
/// ```
pub fn compare(
    provided: (&Value, &Value),
    expected: (&Value, &Value),
    field: &str,
) -> Vec<Finding> {
    let mut out = Vec::new();
    Compare::new(provided.0, expected.0, &mut out).schemas(provided.1, expected.1, field, 0);
    out
}

struct Compare<'a, 'o> {
    provided_doc: &'a Value,
    expected_doc: &'a Value,
    /// Whether a `$ref` names the same schema in both documents: the documents are equal.
    same_docs: bool,
    /// Whether `#...` refs can be followed from the documents' roots: no schema below a root
    /// has an `$id` (which would make its refs relative to it).
    followable: bool,
    out: &'o mut Vec<Finding>,
}

impl<'a, 'o> Compare<'a, 'o> {
    fn new(provided_doc: &'a Value, expected_doc: &'a Value, out: &'o mut Vec<Finding>) -> Self {
        Self {
            provided_doc,
            expected_doc,
            same_docs: std::ptr::eq(provided_doc, expected_doc) || provided_doc == expected_doc,
            followable: !nested_id(provided_doc, 0) && !nested_id(expected_doc, 0),
            out,
        }
    }
}

impl<'a> Compare<'a, '_> {
    fn push(&mut self, kind: FindingKind, path: &str, keyword: &'static str, message: String) {
        self.out.push(Finding {
            kind,
            path: path.to_owned(),
            keyword,
            message,
        });
    }

    fn mismatch(&mut self, path: &str, keyword: &'static str, message: String) {
        self.push(FindingKind::Mismatch, path, keyword, message);
    }

    fn undecided(&mut self, path: &str, keyword: &'static str, message: String) {
        self.push(FindingKind::Undecided, path, keyword, message);
    }

    fn resolve_provided(&self, schema: &'a Value) -> Option<&'a Value> {
        match self.followable {
            true => resolve(self.provided_doc, schema),
            false => (schema.get("$ref").is_none()).then_some(schema),
        }
    }

    /// The expected schema a ref names; `None` past a hop whose siblings would constrain
    /// too (the first hop's siblings are compared by [`Self::schemas`]).
    fn resolve_expected(&self, schema: &'a Value) -> Option<&'a Value> {
        if !self.followable {
            return schema.get("$ref").is_none().then_some(schema);
        }
        let mut current = schema;
        for hop in 0..MAX_HOPS {
            let Some(target) = current.get("$ref") else {
                return Some(current);
            };
            if hop > 0 && ref_siblings(current).is_some() {
                return None;
            }
            let pointer = target.as_str()?.strip_prefix('#')?;
            current = self.expected_doc.pointer(pointer)?;
        }
        None
    }

    /// Whether a provided and an expected value are the same constraint: equal, and any ref
    /// in them names the same schema (the documents are equal, or there is none).
    fn identical(&self, p: &Value, e: &Value) -> bool {
        p == e && (self.same_docs || !has_ref(e, 0))
    }

    fn schemas(&mut self, provided: &'a Value, expected: &'a Value, path: &str, depth: usize) {
        let (Some(p), Some(e)) = (
            self.resolve_provided(provided),
            self.resolve_expected(expected),
        ) else {
            self.undecided(
                path,
                "$ref",
                format!("`{path}`: a `$ref` that cannot be followed"),
            );
            return;
        };
        let p = match p {
            Value::Bool(false) => return,
            Value::Object(p) => p,
            _ => &EMPTY,
        };
        let e = match e {
            Value::Bool(true) => None,
            Value::Bool(false) => {
                self.mismatch(
                    path,
                    "false",
                    format!("`{path}`: the step's contract accepts no value here"),
                );
                return;
            }
            Value::Object(e) => Some(e),
            _ => {
                self.undecided(
                    path,
                    "schema",
                    format!("`{path}`: the step's schema there is neither an object nor a boolean"),
                );
                return;
            }
        };
        if let Some(e) = e {
            self.keywords(provided, p, e, path, depth);
        }
        // A ref's siblings apply beside it (2019-09 on): they are compared too.
        if let Some(siblings) = ref_siblings(expected) {
            self.keywords(provided, p, siblings, path, depth);
        }
    }

    /// The expected schema `e`'s keywords against the provided schema `p` (`provided` as
    /// written, for the applicators that compare it again).
    fn keywords(
        &mut self,
        provided: &'a Value,
        p: &'a Map<String, Value>,
        e: &'a Map<String, Value>,
        path: &str,
        depth: usize,
    ) {
        if self.same(p, e) {
            return;
        }
        if depth > MAX_DEPTH {
            self.undecided(
                path,
                "depth",
                format!("`{path}`: nested deeper than {MAX_DEPTH} levels"),
            );
            return;
        }
        if constrains(e) && !constrains(p) {
            let keyword = e
                .keys()
                .find_map(|k| known_keyword(k).filter(|k| !ANNOTATIONS.contains(k)))
                .unwrap_or("schema");
            self.undecided(
                path,
                keyword,
                format!("`{path}` may be any value there, and the step's contract constrains it"),
            );
            return;
        }
        let given = types_of(p);
        self.types(p, e, path);
        self.values(p, e, path);
        if may_be(given.as_ref(), "object") {
            self.objects(p, e, path, depth);
        }
        if may_be(given.as_ref(), "array") {
            self.items(p, e, path, depth);
        }
        if may_be(given.as_ref(), "number") {
            self.numbers(p, e, path, given.as_ref());
        }
        self.others(p, e, path, given.as_ref());
        self.all_of(provided, e, path, depth);
        self.conditional(provided, e, path, depth);
    }

    /// Same keywords with the same values, annotations aside: nothing to compare.
    fn same(&self, p: &Map<String, Value>, e: &Map<String, Value>) -> bool {
        let strip = |m: &Map<String, Value>| -> Map<String, Value> {
            m.iter()
                .filter(|(k, _)| !ANNOTATIONS.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        };
        let e = Value::Object(strip(e));
        self.identical(&Value::Object(strip(p)), &e)
    }

    /// The findings of comparing `provided` with `expected`, kept apart from this one's.
    fn quietly(&self, provided: &'a Value, expected: &'a Value, depth: usize) -> Vec<Finding> {
        let mut out = Vec::new();
        Compare {
            provided_doc: self.provided_doc,
            expected_doc: self.expected_doc,
            same_docs: self.same_docs,
            followable: self.followable,
            out: &mut out,
        }
        .schemas(provided, expected, "", depth);
        out
    }

    /// "Always" only when the comparison finds nothing at all; "never" only when a type,
    /// a const/enum or a required property's value rules every provided value out.
    fn holds(&self, provided: &'a Value, condition: &'a Value, depth: usize) -> Holds {
        if self.quietly(provided, condition, depth).is_empty() {
            Holds::Always
        } else if self.never(provided, condition, depth) {
            Holds::Never
        } else {
            Holds::Unknown
        }
    }

    /// Whether no value of `provided` passes `condition`; false when unsure.
    fn never(&self, provided: &'a Value, condition: &'a Value, depth: usize) -> bool {
        if depth > MAX_DEPTH {
            return false;
        }
        let (Some(p), Some(c)) = (
            self.resolve_provided(provided),
            self.resolve_expected(condition),
        ) else {
            return false;
        };
        // A condition's ref siblings are left out: that widens it, so "never" stays true.
        let c = match c {
            Value::Bool(false) => return true,
            Value::Object(c) => c,
            _ => return false,
        };
        let Value::Object(p) = p else { return false };
        let given_types = types_of(p);
        if let (Some(given), Some(wanted)) = (&given_types, types_of(c))
            && disjoint_types(given, &wanted)
        {
            return true;
        }
        if let Some(given) = values_of(p)
            && given.iter().all(|g| !allowed_value(c, g))
        {
            return true;
        }
        if c.get("allOf")
            .and_then(Value::as_array)
            .is_some_and(|all| all.iter().any(|m| self.never(provided, m, depth + 1)))
        {
            return true;
        }
        // `properties` and `required` say nothing about a value that is not an object: it
        // passes them. Only a provided schema that allows objects alone rules them out.
        if given_types.is_none_or(|t| t.len() != 1 || !t.contains("object")) {
            return false;
        }
        let given_required = names(p.get("required"));
        let given = p.get("properties").and_then(Value::as_object);
        if let Some(wanted) = c.get("properties").and_then(Value::as_object) {
            for (name, schema) in wanted {
                // A property the provided may leave out lets the `if` hold without it.
                if !given_required.contains(&name.as_str()) {
                    continue;
                }
                if let Some(from) = given.and_then(|g| g.get(name))
                    && self.never(from, schema, depth + 1)
                {
                    return true;
                }
            }
        }
        closed(p)
            && names(c.get("required"))
                .iter()
                .any(|name| !given.is_some_and(|g| g.contains_key(*name)))
    }

    /// Each member of `allOf` must be met on its own.
    fn all_of(&mut self, provided: &'a Value, e: &'a Map<String, Value>, path: &str, depth: usize) {
        let Some(all) = e.get("allOf") else { return };
        let Some(members) = all.as_array() else {
            self.undecided(
                path,
                "allOf",
                format!("`{path}`: the step's `allOf` is not an array"),
            );
            return;
        };
        for member in members {
            self.schemas(provided, member, path, depth + 1);
        }
    }

    /// The branch every provided value takes applies; an `if` without branches constrains
    /// nothing, and a `then`/`else` without `if` is ignored.
    fn conditional(
        &mut self,
        provided: &'a Value,
        e: &'a Map<String, Value>,
        path: &str,
        depth: usize,
    ) {
        let Some(condition) = e.get("if") else { return };
        let (then, otherwise) = (e.get("then"), e.get("else"));
        if then.is_none() && otherwise.is_none() {
            return;
        }
        match self.holds(provided, condition, depth + 1) {
            Holds::Always => {
                if let Some(then) = then {
                    self.schemas(provided, then, path, depth + 1);
                }
            }
            Holds::Never => {
                if let Some(otherwise) = otherwise {
                    self.schemas(provided, otherwise, path, depth + 1);
                }
            }
            Holds::Unknown => {
                // Fitting every branch given fits whichever one a value takes.
                let fits = |branch: Option<&'a Value>| {
                    branch.is_none_or(|b| self.quietly(provided, b, depth + 1).is_empty())
                };
                if !(fits(then) && fits(otherwise)) {
                    self.undecided(
                        path,
                        "if",
                        format!(
                            "`{path}`: whether the step's `if` holds depends on the value there"
                        ),
                    );
                }
            }
        }
    }

    fn types(&mut self, p: &Map<String, Value>, e: &Map<String, Value>, path: &str) {
        if !e.contains_key("type") && values_of(e).is_none() {
            return;
        }
        let Some(wanted) = types_of(e) else {
            self.undecided(
                path,
                "type",
                format!("`{path}`: the step's `type` names no type the check knows"),
            );
            return;
        };
        let Some(given) = types_of(p) else {
            self.undecided(
                path,
                "type",
                format!(
                    "`{path}` has no stated type, and the step expects {}",
                    list(&wanted)
                ),
            );
            return;
        };
        let refused = given
            .iter()
            .any(|t| !(wanted.contains(*t) || (*t == "integer" && wanted.contains("number"))));
        if refused {
            self.mismatch(
                path,
                "type",
                format!(
                    "`{path}` is {} there, and the step expects {}",
                    list(&given),
                    list(&wanted)
                ),
            );
        }
    }

    fn values(&mut self, p: &Map<String, Value>, e: &Map<String, Value>, path: &str) {
        let keyword = match (e.contains_key("const"), e.contains_key("enum")) {
            (true, _) => "const",
            (false, true) => "enum",
            (false, false) => return,
        };
        if e.get("enum").is_some_and(|v| !v.is_array()) {
            self.undecided(
                path,
                "enum",
                format!("`{path}`: the step's `enum` is not an array"),
            );
            return;
        }
        match values_of(p) {
            Some(given) => {
                let refused: Vec<String> = given
                    .iter()
                    .filter(|v| !allowed_value(e, v))
                    .map(|v| format!("`{v}`"))
                    .collect();
                if !refused.is_empty() {
                    self.mismatch(
                        path,
                        keyword,
                        format!(
                            "`{path}` may be {}, which the step's {keyword} does not allow",
                            refused.join(", ")
                        ),
                    );
                }
            }
            None => {
                let shown: Vec<String> = values_of(e)
                    .unwrap_or_default()
                    .iter()
                    .map(|v| format!("`{v}`"))
                    .collect();
                self.mismatch(
                    path,
                    keyword,
                    format!(
                        "`{path}` may be any value of its type there, and the step allows only {}",
                        shown.join(", ")
                    ),
                );
            }
        }
    }

    fn objects(
        &mut self,
        p: &'a Map<String, Value>,
        e: &'a Map<String, Value>,
        path: &str,
        depth: usize,
    ) {
        let given_required = names(p.get("required"));
        for name in names(e.get("required")) {
            if !given_required.contains(&name) {
                self.mismatch(
                    &format!("{path}.{name}"),
                    "required",
                    format!("`{path}.{name}` is required by the step, and may be left out there"),
                );
            }
        }
        let given = p.get("properties").and_then(Value::as_object);
        // Names matching a provided `patternProperties` take that schema, not
        // `additionalProperties`: the check cannot tell which names match.
        let patterns = p.contains_key("patternProperties");
        let closed = closed(p);
        if let Some(wanted) = e.get("properties").and_then(Value::as_object) {
            for (name, schema) in wanted {
                let here = format!("{path}.{name}");
                match given.and_then(|g| g.get(name)) {
                    Some(from) => self.schemas(from, schema, &here, depth + 1),
                    None if closed => {}
                    None if patterns && constrains_value(schema) => self.undecided(
                        &here,
                        "properties",
                        format!(
                            "`{here}` is not declared there but may match its `patternProperties`, and the step's contract constrains it"
                        ),
                    ),
                    None => match p.get("additionalProperties") {
                        Some(extra @ Value::Object(_)) => {
                            self.schemas(extra, schema, &here, depth + 1)
                        }
                        _ if constrains_value(schema) => self.undecided(
                            &here,
                            "properties",
                            format!(
                                "`{here}` is not declared there, and the step's contract constrains it"
                            ),
                        ),
                        _ => {}
                    },
                }
            }
        }
        let Some(extra) = e.get("additionalProperties") else {
            return;
        };
        let wanted = e.get("properties").and_then(Value::as_object);
        for (name, schema) in given.into_iter().flatten() {
            if wanted.is_some_and(|w| w.contains_key(name)) {
                continue;
            }
            let here = format!("{path}.{name}");
            if extra == &Value::Bool(false) {
                self.mismatch(
                    &here,
                    "additionalProperties",
                    format!("`{here}` may be given there, and the step allows no such property"),
                );
            } else {
                self.schemas(schema, extra, &here, depth + 1);
            }
        }
        if !closed {
            let here = format!("{path}.*");
            match p.get("additionalProperties") {
                Some(from @ Value::Object(_)) if !patterns => {
                    self.schemas(from, extra, &here, depth + 1)
                }
                _ if constrains_value(extra) => self.undecided(
                    &here,
                    "additionalProperties",
                    format!(
                        "`{here}`: other properties are allowed there, and the step's contract constrains them"
                    ),
                ),
                _ => {}
            }
        }
    }

    /// The expected `items` (a schema for every element, after `prefixItems`; or a tuple,
    /// before 2020-12) against what the provided says of each element.
    fn items(
        &mut self,
        p: &'a Map<String, Value>,
        e: &'a Map<String, Value>,
        path: &str,
        depth: usize,
    ) {
        self.prefix(p, e, path, depth);
        let Some(wanted) = e.get("items") else { return };
        let here = format!("{path}[]");
        if wanted.is_array() {
            // A tuple: met when the provided states the same tuple (its `additionalItems`
            // is compared as a contextual keyword).
            if !p.get("items").is_some_and(|g| self.identical(g, wanted)) {
                self.undecided(
                    &here,
                    "items",
                    format!(
                        "`{here}`: the step's `items` is a tuple the schema there does not state"
                    ),
                );
            }
            return;
        }
        // With its own `prefixItems`, the step's `items` starts after them: a different
        // prefix is undecided (as a keyword the producer does not state alike), the same
        // one leaves the elements after it to compare.
        let prefix_alike = match (p.get("prefixItems"), e.get("prefixItems")) {
            (Some(g), Some(w)) => self.identical(g, w),
            _ => false,
        };
        let mut sources: Vec<&'a Value> = Vec::new();
        if !prefix_alike {
            if let Some(prefix) = p.get("prefixItems").and_then(Value::as_array) {
                sources.extend(prefix);
            }
            if let Some(tuple) = p.get("items").and_then(Value::as_array) {
                sources.extend(tuple);
            }
        }
        let rest = match p.get("items") {
            Some(Value::Array(_)) => p.get("additionalItems"),
            other => other,
        };
        match rest {
            Some(given) => sources.push(given),
            None if constrains_value(wanted) => {
                self.undecided(
                    &here,
                    "items",
                    format!(
                        "`{here}`: items are not described there, and the step's contract constrains them"
                    ),
                );
            }
            None => {}
        }
        for given in sources {
            self.schemas(given, wanted, &here, depth + 1);
        }
    }

    /// The expected `prefixItems`: position by position, against the provided's own prefix
    /// (at least as long) or the schema the provided gives every item.
    fn prefix(
        &mut self,
        p: &'a Map<String, Value>,
        e: &'a Map<String, Value>,
        path: &str,
        depth: usize,
    ) {
        let Some(wanted) = e.get("prefixItems") else {
            return;
        };
        if p.get("prefixItems")
            .is_some_and(|g| self.identical(g, wanted))
        {
            return;
        }
        let every = match p.get("items") {
            Some(items) if !items.is_array() && !p.contains_key("prefixItems") => Some(items),
            _ => None,
        };
        match (
            p.get("prefixItems").and_then(Value::as_array),
            wanted.as_array(),
            every,
        ) {
            (Some(given), Some(wanted), _) if given.len() >= wanted.len() => {
                for (i, (g, w)) in given.iter().zip(wanted).enumerate() {
                    self.schemas(g, w, &format!("{path}[{i}]"), depth + 1);
                }
            }
            (None, Some(wanted), Some(every)) => {
                for (i, w) in wanted.iter().enumerate() {
                    self.schemas(every, w, &format!("{path}[{i}]"), depth + 1);
                }
            }
            (None, Some(wanted), None) if !wanted.iter().any(constrains_value) => {}
            _ => self.undecided(
                path,
                "prefixItems",
                format!("`{path}`: the step's `prefixItems` is not implied by the schema there"),
            ),
        }
    }

    /// The numeric bounds: the provided's tightest lower and upper bounds against each of
    /// the expected's.
    fn numbers(
        &mut self,
        p: &Map<String, Value>,
        e: &Map<String, Value>,
        path: &str,
        given_types: Option<&BTreeSet<&'static str>>,
    ) {
        let integral = given_types.is_some_and(|t| t.len() == 1 && t.contains("integer"));
        let values = values_of(p);
        for (keyword, lower) in [
            ("minimum", true),
            ("exclusiveMinimum", true),
            ("maximum", false),
            ("exclusiveMaximum", false),
        ] {
            let Some(bound) = e.get(keyword) else {
                continue;
            };
            let Some(wanted) = bound.as_number() else {
                // Draft 4's boolean `exclusiveMinimum` modifies `minimum`: only the same
                // pair is met.
                let pair = if lower { "minimum" } else { "maximum" };
                let alike = p.get(keyword) == Some(bound) && p.get(pair) == e.get(pair);
                if !alike {
                    self.undecided(
                        path,
                        static_keyword(keyword),
                        format!("`{path}`: the step's `{keyword}` is not a number"),
                    );
                }
                continue;
            };
            let exclusive = keyword.starts_with("exclusive");
            // A provided enum decides by its values.
            let met = match &values {
                Some(values) => values.iter().all(|v| match v.as_number() {
                    Some(n) => within(n, wanted, lower, exclusive),
                    None => true,
                }),
                None => {
                    let tightest = if lower {
                        lower_bound(p, integral)
                    } else {
                        upper_bound(p, integral)
                    };
                    tightest.is_some_and(|b| implies(&b, wanted, lower, exclusive))
                }
            };
            if met {
                continue;
            }
            // A provided enum's value past the bound is a value it gives.
            let kind = match values {
                Some(_) => FindingKind::Mismatch,
                None => definite(p, given_types, keyword),
            };
            let stated = tightest_text(p, lower)
                .map_or_else(|| "no such bound".to_owned(), |t| format!("`{t}`"));
            self.push(
                kind,
                path,
                static_keyword(keyword),
                format!(
                    "`{path}` may be a number past the step's `{keyword}` of {wanted}: the schema there has {stated}"
                ),
            );
        }
    }

    /// Keywords without a rule of their own: met when the producer states the same (or, for
    /// a counting bound, a tighter one), or when they apply to no type the producer gives;
    /// otherwise undecided.
    fn others(
        &mut self,
        p: &Map<String, Value>,
        e: &Map<String, Value>,
        path: &str,
        given_types: Option<&BTreeSet<&'static str>>,
    ) {
        for (key, value) in e {
            let key = key.as_str();
            if ANNOTATIONS.contains(&key) || MODELED.contains(&key) || key == "$ref" {
                continue;
            }
            if let (Some(applies), Some(given)) = (applies_to(key), given_types)
                && !given.is_empty()
                && !given.iter().any(|t| {
                    applies.contains(t) || (*t == "integer" && applies.contains(&"number"))
                })
            {
                continue;
            }
            let keyword = static_keyword(key);
            if CONTEXTUAL.contains(&key) {
                self.undecided(
                    path,
                    keyword,
                    format!(
                        "`{path}`: the step's `{key}` depends on its sibling keywords, which differ from the schema there"
                    ),
                );
                continue;
            }
            let given = p.get(key);
            let bound = LOWER.contains(&key) || UPPER.contains(&key);
            if bound {
                let Some(wanted) = value.as_number() else {
                    self.undecided(
                        path,
                        keyword,
                        format!("`{path}`: the step's `{key}` is not a number"),
                    );
                    continue;
                };
                let lower = LOWER.contains(&key);
                let fits = |order: Ordering| match lower {
                    true => order != Ordering::Less,
                    false => order != Ordering::Greater,
                };
                let ok = match values_of(p) {
                    // A provided enum decides by its values' counts.
                    Some(values) => values.iter().all(|v| {
                        count(v, key).is_none_or(|n| fits(cmp_num(Num::Int(n), Num::of(wanted))))
                    }),
                    None => given
                        .and_then(Value::as_number)
                        .is_some_and(|g| fits(cmp_numbers(g, wanted))),
                };
                if !ok {
                    let stated = given.map_or_else(|| "none".to_owned(), |g| format!("`{g}`"));
                    let kind = match values_of(p) {
                        Some(_) => FindingKind::Mismatch,
                        None => definite(p, given_types, key),
                    };
                    self.push(
                        kind,
                        path,
                        keyword,
                        format!(
                            "`{path}` may break the step's `{key}` of {wanted}: the schema there has {stated}"
                        ),
                    );
                }
                continue;
            }
            if !given.is_some_and(|g| self.identical(g, value)) {
                self.undecided(
                    path,
                    keyword,
                    format!("`{path}`: the step's `{key}` is not implied by the schema there"),
                );
            }
        }
    }
}

static EMPTY: std::sync::LazyLock<Map<String, Value>> = std::sync::LazyLock::new(Map::new);

/// Follows local `$ref`s (`#` and `#/...` pointers) to the schema they name.
pub fn resolve<'a>(doc: &'a Value, schema: &'a Value) -> Option<&'a Value> {
    let mut current = schema;
    for _ in 0..MAX_HOPS {
        let Some(target) = current.get("$ref") else {
            return Some(current);
        };
        let pointer = target.as_str()?.strip_prefix('#')?;
        current = doc.pointer(pointer)?;
    }
    None
}

/// A `$ref` schema with other constraining keywords: the map they are in (whose `$ref` the
/// keyword rules skip).
fn ref_siblings(schema: &Value) -> Option<&Map<String, Value>> {
    let map = schema.as_object()?;
    let constrains = map.contains_key("$ref")
        && map
            .keys()
            .any(|k| k != "$ref" && !ANNOTATIONS.contains(&k.as_str()));
    constrains.then_some(map)
}

fn closed(p: &Map<String, Value>) -> bool {
    p.get("additionalProperties") == Some(&Value::Bool(false))
        && !p.contains_key("patternProperties")
}

fn constrains(schema: &Map<String, Value>) -> bool {
    schema.keys().any(|k| !ANNOTATIONS.contains(&k.as_str()))
}

fn constrains_value(schema: &Value) -> bool {
    match schema {
        Value::Object(map) => constrains(map),
        Value::Bool(b) => !b,
        _ => true,
    }
}

/// Whether a schema below the root (`depth` > 0) has an `$id`, which rebases its refs.
fn nested_id(value: &Value, depth: usize) -> bool {
    if depth > 64 {
        return true;
    }
    match value {
        Value::Object(map) => {
            (depth > 0 && map.contains_key("$id")) || map.values().any(|v| nested_id(v, depth + 1))
        }
        Value::Array(items) => items.iter().any(|v| nested_id(v, depth + 1)),
        _ => false,
    }
}

/// Whether a value holds a reference (resolved against its document).
fn has_ref(value: &Value, depth: usize) -> bool {
    if depth > 64 {
        return true;
    }
    match value {
        Value::Object(map) => {
            ["$ref", "$dynamicRef", "$recursiveRef"]
                .iter()
                .any(|k| map.contains_key(*k))
                || map.values().any(|v| has_ref(v, depth + 1))
        }
        Value::Array(items) => items.iter().any(|v| has_ref(v, depth + 1)),
        _ => false,
    }
}

/// Whether `types` (None: any) may hold a value of type `name`.
fn may_be(types: Option<&BTreeSet<&'static str>>, name: &str) -> bool {
    types.is_none_or(|t| {
        t.contains(name)
            || (name == "number" && t.contains("integer"))
            || (name == "integer" && t.contains("number"))
    })
}

/// The JSON types a schema allows: its `type`, else those of its `enum`/`const` values;
/// `None` when it does not say, or names a type the check does not know.
fn types_of(schema: &Map<String, Value>) -> Option<BTreeSet<&'static str>> {
    if let Some(t) = schema.get("type") {
        let names: Vec<&Value> = match t {
            Value::String(_) => vec![t],
            Value::Array(a) => a.iter().collect(),
            _ => return None,
        };
        return names
            .into_iter()
            .map(|n| n.as_str().and_then(type_name))
            .collect::<Option<BTreeSet<_>>>()
            .filter(|set| !set.is_empty());
    }
    let values = values_of(schema)?;
    Some(values.iter().map(|v| json_type(v)).collect())
}

fn type_name(name: &str) -> Option<&'static str> {
    [
        "null", "boolean", "object", "array", "number", "string", "integer",
    ]
    .into_iter()
    .find(|t| *t == name)
}

/// The keyword as a `'static` name, for [`Finding::keyword`].
fn static_keyword(key: &str) -> &'static str {
    known_keyword(key).unwrap_or("keyword")
}

fn known_keyword(key: &str) -> Option<&'static str> {
    ANNOTATIONS
        .iter()
        .chain(MODELED)
        .chain(LOWER)
        .chain(UPPER)
        .chain(CONTEXTUAL)
        .chain(&[
            "$ref",
            "pattern",
            "format",
            "multipleOf",
            "uniqueItems",
            "contains",
            "patternProperties",
            "propertyNames",
            "dependentRequired",
            "dependentSchemas",
            "dependencies",
            "anyOf",
            "oneOf",
            "not",
            "contentEncoding",
            "contentMediaType",
            "contentSchema",
        ])
        .copied()
        .find(|k| *k == key)
}

/// The JSON Schema type of a value: an integral number (`1.0` too) is an integer.
fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(n) if n.as_f64().is_some_and(|f| f.fract() == 0.0) => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// No value has a type of both sets; an integer is also a number.
fn disjoint_types(a: &BTreeSet<&str>, b: &BTreeSet<&str>) -> bool {
    let meet = |x: &str, y: &str| {
        x == y || matches!((x, y), ("integer", "number") | ("number", "integer"))
    };
    // An empty set comes from a `type` the check does not know: no conclusion.
    !a.is_empty() && !b.is_empty() && a.iter().all(|x| b.iter().all(|y| !meet(x, y)))
}

/// Equal as JSON Schema compares values: `1` and `1.0` are the same number.
fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => cmp_numbers(x, y) == Ordering::Equal,
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same_value(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_value(v, w)))
        }
        _ => a == b,
    }
}

/// Whether `value` passes the schema's `const` and `enum`, both when both are there.
fn allowed_value(schema: &Map<String, Value>, value: &Value) -> bool {
    let by_const = schema.get("const").is_none_or(|c| same_value(c, value));
    let by_enum = match schema.get("enum") {
        None => true,
        Some(Value::Array(values)) => values.iter().any(|w| same_value(w, value)),
        Some(_) => false,
    };
    by_const && by_enum
}

/// The values a schema allows at most: its `const`, else its `enum`.
fn values_of(schema: &Map<String, Value>) -> Option<Vec<&Value>> {
    if let Some(c) = schema.get("const") {
        return Some(vec![c]);
    }
    schema.get("enum")?.as_array().map(|a| a.iter().collect())
}

fn names(value: Option<&Value>) -> Vec<&str> {
    value
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

fn list(types: &BTreeSet<&str>) -> String {
    let shown: Vec<String> = types.iter().map(|t| format!("`{t}`")).collect();
    match shown.as_slice() {
        [one] => one.clone(),
        _ => format!("one of {}", shown.join(", ")),
    }
}

/// How sure a bound's finding is: a mismatch when the provided states its types and nothing
/// that could narrow the values `keyword` bounds further (then values past the bound are
/// among them), undecided otherwise.
fn definite(
    p: &Map<String, Value>,
    types: Option<&BTreeSet<&'static str>>,
    keyword: &str,
) -> FindingKind {
    const ANY: &[&str] = &["not", "anyOf", "oneOf", "allOf", "if", "$ref"];
    let own: &[&str] = match applies_to(keyword).unwrap_or(&[]) {
        ["number", ..] => &["multipleOf"],
        ["string"] => &["pattern", "format", "contentEncoding", "contentMediaType"],
        ["array"] => &[
            "items",
            "prefixItems",
            "additionalItems",
            "contains",
            "uniqueItems",
            "unevaluatedItems",
        ],
        _ => &[
            "properties",
            "additionalProperties",
            "patternProperties",
            "propertyNames",
            "dependentRequired",
            "dependentSchemas",
            "dependencies",
            "unevaluatedProperties",
            "required",
        ],
    };
    let narrowed = ANY.iter().chain(own).any(|k| p.contains_key(*k));
    match types.is_some() && !narrowed {
        true => FindingKind::Mismatch,
        false => FindingKind::Undecided,
    }
}

/// What a counting keyword counts in `value`: a string's characters, an array's items, an
/// object's properties; `None` when it does not apply to the value's type.
fn count(value: &Value, keyword: &str) -> Option<i128> {
    let n = match (value, keyword) {
        (Value::String(s), "minLength" | "maxLength") => s.chars().count(),
        (Value::Array(a), "minItems" | "maxItems") => a.len(),
        (Value::Object(o), "minProperties" | "maxProperties") => o.len(),
        _ => return None,
    };
    i128::try_from(n).ok()
}

/// A number, exactly: JSON integers as written, other numbers as `f64`.
#[derive(Debug, Clone, Copy)]
enum Num {
    Int(i128),
    Float(f64),
}

impl Num {
    fn of(n: &Number) -> Self {
        if let Some(i) = n.as_i64() {
            Self::Int(i128::from(i))
        } else if let Some(u) = n.as_u64() {
            Self::Int(i128::from(u))
        } else {
            Self::Float(n.as_f64().unwrap_or(f64::NAN))
        }
    }

    /// The integral value as an integer when it is one within `i128`.
    fn integral(self) -> Option<i128> {
        match self {
            Self::Int(i) => Some(i),
            // The cast saturates; within ±2^126 it is exact for an integral float.
            Self::Float(f) if f.fract() == 0.0 && f.abs() < 2f64.powi(126) => Some(f as i128),
            Self::Float(_) => None,
        }
    }
}

fn cmp_num(a: Num, b: Num) -> Ordering {
    match (a, b) {
        (Num::Int(x), Num::Int(y)) => x.cmp(&y),
        (Num::Float(x), Num::Float(y)) => x.partial_cmp(&y).unwrap_or(Ordering::Equal),
        (Num::Float(x), Num::Int(y)) => cmp_float_int(x, y),
        (Num::Int(x), Num::Float(y)) => cmp_float_int(y, x).reverse(),
    }
}

/// `x` against `y` exactly (no rounding of `y` to a float).
fn cmp_float_int(x: f64, y: i128) -> Ordering {
    let whole = x.trunc();
    // Saturating: beyond i128 the float is past any JSON integer serde_json reads.
    let int = whole as i128;
    match int.cmp(&y) {
        Ordering::Equal => x.partial_cmp(&whole).unwrap_or(Ordering::Equal),
        other => other,
    }
}

fn cmp_numbers(a: &Number, b: &Number) -> Ordering {
    cmp_num(Num::of(a), Num::of(b))
}

/// A bound a schema puts on its numbers.
#[derive(Debug, Clone, Copy)]
struct Bound {
    value: Num,
    exclusive: bool,
}

/// The tightest lower bound of `p`'s numbers; for integers only, rounded up to an inclusive
/// integer bound.
fn lower_bound(p: &Map<String, Value>, integral: bool) -> Option<Bound> {
    tightest(p, "minimum", "exclusiveMinimum", Ordering::Greater)
        .map(|b| if integral { round_integral(b, true) } else { b })
}

fn upper_bound(p: &Map<String, Value>, integral: bool) -> Option<Bound> {
    tightest(p, "maximum", "exclusiveMaximum", Ordering::Less).map(|b| {
        if integral {
            round_integral(b, false)
        } else {
            b
        }
    })
}

/// Of an inclusive and an exclusive keyword, the one that allows fewer numbers
/// (`tighter`: `Greater` for lower bounds).
fn tightest(
    p: &Map<String, Value>,
    inclusive: &str,
    exclusive: &str,
    tighter: Ordering,
) -> Option<Bound> {
    let inc = p.get(inclusive).and_then(Value::as_number).map(|n| Bound {
        value: Num::of(n),
        exclusive: false,
    });
    let exc = p.get(exclusive).and_then(Value::as_number).map(|n| Bound {
        value: Num::of(n),
        exclusive: true,
    });
    match (inc, exc) {
        (Some(i), Some(x)) => match cmp_num(i.value, x.value) {
            Ordering::Equal => Some(x),
            o if o == tighter => Some(i),
            _ => Some(x),
        },
        (one, None) | (None, one) => one,
    }
}

/// An integer producer's bound as the inclusive integer bound it amounts to: `> 4` is `>= 5`,
/// `>= 4.5` is `>= 5`. Kept as is when out of `i128`.
fn round_integral(b: Bound, lower: bool) -> Bound {
    let rounded = match b.value {
        Num::Int(i) => Some(i),
        Num::Float(f) if lower => Num::Float(f.ceil()).integral(),
        Num::Float(f) => Num::Float(f.floor()).integral(),
    };
    let Some(mut n) = rounded else { return b };
    let on_it = cmp_num(b.value, Num::Int(n)) == Ordering::Equal;
    if b.exclusive && on_it {
        n = if lower {
            n.saturating_add(1)
        } else {
            n.saturating_sub(1)
        };
    }
    Bound {
        value: Num::Int(n),
        exclusive: false,
    }
}

/// Whether every number within the provided bound `b` is within the expected one.
fn implies(b: &Bound, wanted: &Number, lower: bool, exclusive: bool) -> bool {
    let order = cmp_num(b.value, Num::of(wanted));
    let past = if lower {
        Ordering::Greater
    } else {
        Ordering::Less
    };
    order == past || (order == Ordering::Equal && (b.exclusive || !exclusive))
}

/// Whether the number `n` is within the expected bound.
fn within(n: &Number, wanted: &Number, lower: bool, exclusive: bool) -> bool {
    implies(
        &Bound {
            value: Num::of(n),
            exclusive: false,
        },
        wanted,
        lower,
        exclusive,
    )
}

/// The provided's bounds on one side, as written, for messages.
fn tightest_text(p: &Map<String, Value>, lower: bool) -> Option<String> {
    let keys: [&str; 2] = if lower {
        ["minimum", "exclusiveMinimum"]
    } else {
        ["maximum", "exclusiveMaximum"]
    };
    let stated: Vec<String> = keys
        .iter()
        .filter_map(|k| p.get(*k).map(|v| format!("{k} {v}")))
        .collect();
    (!stated.is_empty()).then(|| stated.join(", "))
}
#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(p: Value, e: Value) -> Vec<(FindingKind, String)> {
        compare((&p, &p), (&e, &e), "x")
            .into_iter()
            .map(|f| (f.kind, f.message))
            .collect()
    }

    #[test]
    fn the_same_schema_fits() {
        let s =
            json!({"type": "object", "required": ["a"], "properties": {"a": {"type": "string"}}});
        assert!(run(s.clone(), s).is_empty());
    }

    #[test]
    fn types_required_and_enums_are_decided() {
        let p = json!({"type": "object", "properties": {"n": {"type": "string"}, "k": {"type": "string"}}});
        let e = json!({"type": "object", "required": ["n"], "properties": {"n": {"type": "integer"}, "k": {"enum": ["a", "b"]}}});
        assert_eq!(
            run(p, e),
            [
                (FindingKind::Mismatch, "`x.n` is required by the step, and may be left out there".to_owned()),
                (FindingKind::Mismatch, "`x.k` may be any value of its type there, and the step allows only `\"a\"`, `\"b\"`".to_owned()),
                (FindingKind::Mismatch, "`x.n` is `string` there, and the step expects `integer`".to_owned()),
            ]
        );
        // An integer is a number; an enum inside the step's enum fits.
        let p = json!({"type": "object", "required": ["n", "k"], "properties": {"n": {"type": "integer"}, "k": {"enum": ["a"]}}});
        let e = json!({"type": "object", "required": ["n"], "properties": {"n": {"type": "number"}, "k": {"enum": ["a", "b"]}}});
        assert!(run(p, e).is_empty());
    }

    #[test]
    fn what_is_not_modelled_is_undecided() {
        let p = json!({"type": "string"});
        let e = json!({"type": "string", "pattern": "^a"});
        assert_eq!(
            run(p, e),
            [(
                FindingKind::Undecided,
                "`x`: the step's `pattern` is not implied by the schema there".to_owned()
            )]
        );
        assert!(
            run(
                json!({"type": "string", "minLength": 3}),
                json!({"type": "string", "minLength": 1})
            )
            .is_empty()
        );
        assert_eq!(
            run(json!({}), json!({"type": "object"}))[0].0,
            FindingKind::Undecided
        );
    }

    #[test]
    fn all_of_members_are_each_compared() {
        let p = json!({"type": "object", "properties": {"a": {"type": "string"}}});
        let e = json!({"allOf": [
            {"required": ["a"]},
            {"properties": {"a": {"type": "integer"}}}
        ]});
        assert_eq!(
            run(p, e),
            [
                (
                    FindingKind::Mismatch,
                    "`x.a` is required by the step, and may be left out there".to_owned()
                ),
                (
                    FindingKind::Mismatch,
                    "`x.a` is `string` there, and the step expects `integer`".to_owned()
                ),
            ]
        );
    }

    /// A provided object whose `kind` is `kind` (a schema) and whose `output` is `output`.
    fn tagged(kind: Value, output: Value) -> Value {
        json!({
            "type": "object",
            "required": ["kind", "output"],
            "properties": {"kind": kind, "output": output},
            "additionalProperties": false
        })
    }

    fn when_kind(kind: &str, then: Value, otherwise: Option<Value>) -> Value {
        let mut e = json!({
            "if": {"required": ["kind"], "properties": {"kind": {"const": kind}}},
            "then": {"properties": {"output": then}}
        });
        if let Some(otherwise) = otherwise {
            e["else"] = json!({"properties": {"output": otherwise}});
        }
        e
    }

    #[test]
    fn the_branch_the_if_always_takes_is_compared() {
        let output =
            json!({"type": "object", "required": ["a"], "properties": {"a": {"type": "string"}}});
        let p = tagged(json!({"const": "k"}), output);
        assert!(run(p.clone(), when_kind("k", json!({"required": ["a"]}), None)).is_empty());
        assert_eq!(
            run(p, when_kind("k", json!({"required": ["a", "b"]}), None)),
            [(
                FindingKind::Mismatch,
                "`x.output.b` is required by the step, and may be left out there".to_owned()
            )]
        );
    }

    #[test]
    fn the_else_applies_when_the_if_never_holds() {
        let output =
            json!({"type": "object", "required": ["a"], "properties": {"a": {"type": "string"}}});
        let p = tagged(json!({"enum": ["m", "n"]}), output);
        // `then` would refuse, but no provided value takes it.
        let refusing_then = json!({"required": ["z"]});
        assert!(
            run(
                p.clone(),
                when_kind("k", refusing_then.clone(), Some(json!({"required": ["a"]})))
            )
            .is_empty()
        );
        assert_eq!(
            run(
                p,
                when_kind("k", refusing_then, Some(json!({"required": ["a", "c"]})))
            ),
            [(
                FindingKind::Mismatch,
                "`x.output.c` is required by the step, and may be left out there".to_owned()
            )]
        );
    }

    #[test]
    fn an_if_the_value_decides_is_undecided() {
        let undecided = vec![(
            FindingKind::Undecided,
            "`x`: whether the step's `if` holds depends on the value there".to_owned(),
        )];
        let then = json!({"required": ["z"]});
        // The provided leaves `kind` unconstrained.
        let p = json!({"type": "object", "properties": {"n": {"type": "integer"}}});
        assert_eq!(run(p, when_kind("k", then.clone(), None)), undecided);
        // `kind` may be left out, and the `if` then holds without it.
        let p = json!({"type": "object", "properties": {"kind": {"const": "m"}}});
        assert_eq!(run(p, when_kind("k", then.clone(), None)), undecided);
        // A value that may not be an object passes `properties` whatever it holds.
        let p = json!({"type": ["object", "string"], "required": ["kind"], "properties": {"kind": {"const": "m"}}});
        assert_eq!(run(p, when_kind("k", then, None)), undecided);
        // An `if` without branches constrains nothing.
        let p = json!({"type": "object"});
        let e = json!({"type": "object", "if": {"required": ["kind"]}});
        assert!(run(p, e).is_empty());
    }

    #[test]
    fn holds_is_always_never_or_unknown() {
        let h = |p: Value, c: Value| holds((&p, &p), (&c, &c));
        assert_eq!(
            h(json!({"type": "string"}), json!({"type": "string"})),
            Holds::Always
        );
        assert_eq!(
            h(json!({"type": "string"}), json!({"type": "object"})),
            Holds::Never
        );
        assert_eq!(
            h(json!({"type": "integer"}), json!({"type": "number"})),
            Holds::Always
        );
        // 1 and 1.0 are the same number.
        assert_eq!(h(json!({"const": 1}), json!({"const": 1.0})), Holds::Always);
        assert_eq!(h(json!({"const": 1}), json!({"const": 2})), Holds::Never);
        let closed =
            json!({"type": "object", "properties": {"a": {}}, "additionalProperties": false});
        assert_eq!(h(closed, json!({"required": ["b"]})), Holds::Never);
        assert_eq!(
            h(json!({"type": "object"}), json!({"required": ["b"]})),
            Holds::Unknown
        );
    }

    /// The findings of `p` against `e` as `(kind, keyword, path)`.
    fn found(p: &Value, e: &Value) -> Vec<(FindingKind, &'static str, String)> {
        compare((p, p), (e, e), "x")
            .into_iter()
            .map(|f| (f.kind, f.keyword, f.path))
            .collect()
    }

    use FindingKind::{Mismatch, Undecided};

    /// For each keyword: `tight` fits `loose`, and `loose` given where `tight` is expected is
    /// found, as `kind`, by `keyword` at `path`.
    #[test]
    fn every_keyword_fits_one_way_and_not_the_other() {
        let cases: Vec<(&str, Value, Value, FindingKind, &str)> = vec![
            (
                "type",
                json!({"type": "integer"}),
                json!({"type": "number"}),
                Mismatch,
                "x",
            ),
            (
                "type",
                json!({"type": "string"}),
                json!({"type": ["string", "null"]}),
                Mismatch,
                "x",
            ),
            (
                "enum",
                json!({"enum": ["a"]}),
                json!({"enum": ["a", "b"]}),
                Mismatch,
                "x",
            ),
            (
                "const",
                json!({"const": 1}),
                json!({"enum": [1.0, 2]}),
                Mismatch,
                "x",
            ),
            (
                "minimum",
                json!({"type": "number", "minimum": 6}),
                json!({"type": "number", "minimum": 5}),
                Mismatch,
                "x",
            ),
            (
                "maximum",
                json!({"type": "number", "maximum": 5}),
                json!({"type": "number", "maximum": 6}),
                Mismatch,
                "x",
            ),
            (
                "exclusiveMinimum",
                json!({"type": "number", "exclusiveMinimum": 5}),
                json!({"type": "number", "exclusiveMinimum": 4.5}),
                Mismatch,
                "x",
            ),
            (
                "exclusiveMaximum",
                json!({"type": "number", "exclusiveMaximum": 5}),
                json!({"type": "number", "exclusiveMaximum": 5.5}),
                Mismatch,
                "x",
            ),
            // Inclusive against exclusive, both ways.
            (
                "exclusiveMinimum",
                json!({"type": "number", "exclusiveMinimum": 5}),
                json!({"type": "number", "minimum": 5}),
                Mismatch,
                "x",
            ),
            (
                "exclusiveMaximum",
                json!({"type": "number", "exclusiveMaximum": 5}),
                json!({"type": "number", "maximum": 5}),
                Mismatch,
                "x",
            ),
            (
                "minimum",
                json!({"type": "number", "minimum": 5}),
                json!({"type": "number", "exclusiveMinimum": 4}),
                Mismatch,
                "x",
            ),
            (
                "maximum",
                json!({"type": "number", "maximum": 5}),
                json!({"type": "number", "exclusiveMaximum": 6}),
                Mismatch,
                "x",
            ),
            // Integers between the bounds: `> 4` is `>= 5`, `<= 5.5` is `<= 5`.
            (
                "exclusiveMinimum",
                json!({"type": "integer", "exclusiveMinimum": 4}),
                json!({"type": "integer", "minimum": 4}),
                Mismatch,
                "x",
            ),
            (
                "maximum",
                json!({"type": "integer", "maximum": 5}),
                json!({"type": "integer", "exclusiveMaximum": 6.5}),
                Mismatch,
                "x",
            ),
            // Past f64's exact integers: 2^53 + 1 is not 2^53.
            (
                "maximum",
                json!({"type": "integer", "maximum": 9_007_199_254_740_992_u64}),
                json!({"type": "integer", "maximum": 9_007_199_254_740_993_u64}),
                Mismatch,
                "x",
            ),
            (
                "minLength",
                json!({"type": "string", "minLength": 3}),
                json!({"type": "string", "minLength": 2}),
                Mismatch,
                "x",
            ),
            (
                "maxLength",
                json!({"type": "string", "maxLength": 3}),
                json!({"type": "string", "maxLength": 4}),
                Mismatch,
                "x",
            ),
            (
                "minItems",
                json!({"type": "array", "minItems": 2}),
                json!({"type": "array", "minItems": 1}),
                Mismatch,
                "x",
            ),
            (
                "maxItems",
                json!({"type": "array", "maxItems": 2}),
                json!({"type": "array", "maxItems": 3}),
                Mismatch,
                "x",
            ),
            (
                "minProperties",
                json!({"type": "object", "minProperties": 2}),
                json!({"type": "object", "minProperties": 1}),
                Mismatch,
                "x",
            ),
            (
                "maxProperties",
                json!({"type": "object", "maxProperties": 2}),
                json!({"type": "object", "maxProperties": 3}),
                Mismatch,
                "x",
            ),
            (
                "required",
                json!({"type": "object", "required": ["a", "b"]}),
                json!({"type": "object", "required": ["a"]}),
                Mismatch,
                "x.b",
            ),
            (
                "additionalProperties",
                json!({"type": "object", "properties": {"a": {}}, "additionalProperties": false}),
                json!({"type": "object", "properties": {"a": {}, "c": {}}, "additionalProperties": false}),
                Mismatch,
                "x.c",
            ),
            (
                "type",
                json!({"type": "object", "additionalProperties": {"type": "integer"}}),
                json!({"type": "object", "additionalProperties": {"type": "number"}}),
                Mismatch,
                "x.*",
            ),
            (
                "type",
                json!({"type": "object", "required": ["a"], "properties": {"a": {"type": "object", "required": ["b"], "properties": {"b": {"type": "integer"}}}}}),
                json!({"type": "object", "required": ["a"], "properties": {"a": {"type": "object", "required": ["b"], "properties": {"b": {"type": "number"}}}}}),
                Mismatch,
                "x.a.b",
            ),
            (
                "type",
                json!({"type": "array", "items": {"type": "integer"}}),
                json!({"type": "array", "items": {"type": "number"}}),
                Mismatch,
                "x[]",
            ),
            // An array whose items the producer does not describe.
            (
                "items",
                json!({"type": "array", "items": {"type": "string"}}),
                json!({"type": "array"}),
                Undecided,
                "x[]",
            ),
            (
                "type",
                json!({"type": "array", "prefixItems": [{"type": "integer"}]}),
                json!({"type": "array", "prefixItems": [{"type": "number"}]}),
                Mismatch,
                "x[0]",
            ),
            (
                "prefixItems",
                json!({"type": "array", "prefixItems": [{"type": "integer"}, {"type": "integer"}]}),
                json!({"type": "array", "prefixItems": [{"type": "number"}]}),
                Undecided,
                "x",
            ),
            (
                "pattern",
                json!({"type": "string", "pattern": "^a"}),
                json!({"type": "string"}),
                Undecided,
                "x",
            ),
            (
                "anyOf",
                json!({"type": "string", "anyOf": [{"minLength": 1}]}),
                json!({"type": "string"}),
                Undecided,
                "x",
            ),
            (
                "multipleOf",
                json!({"type": "integer", "multipleOf": 2}),
                json!({"type": "integer"}),
                Undecided,
                "x",
            ),
        ];
        for (keyword, tight, loose, kind, path) in cases {
            assert_eq!(found(&tight, &loose), [], "{keyword}: {tight} fits {loose}");
            let back = found(&loose, &tight);
            assert!(
                back.contains(&(kind, keyword, path.to_owned())),
                "{keyword}: {loose} given for {tight}: {back:?}"
            );
        }
    }

    #[test]
    fn equal_bounds_fit_and_one_past_does_not() {
        let n = |k: &str, v: Value| json!({"type": "number", k: v});
        assert_eq!(
            found(&n("minimum", json!(5)), &n("minimum", json!(5.0))),
            []
        );
        assert_eq!(
            found(
                &n("exclusiveMinimum", json!(5)),
                &n("exclusiveMinimum", json!(5))
            ),
            []
        );
        assert_eq!(
            found(
                &n("maximum", json!(5)),
                &n("exclusiveMaximum", json!(5.000_001))
            ),
            []
        );
        assert_eq!(
            found(&n("minimum", json!(4.999)), &n("minimum", json!(5))),
            [(Mismatch, "minimum", "x".to_owned())]
        );
        // Both of the producer's bounds: the tighter one counts.
        let p = json!({"type": "number", "minimum": 3, "exclusiveMinimum": 5});
        assert_eq!(found(&p, &n("minimum", json!(5))), []);
        let p = json!({"type": "number", "minimum": 5, "exclusiveMinimum": 3});
        assert_eq!(
            found(&p, &n("exclusiveMinimum", json!(5))),
            [(Mismatch, "exclusiveMinimum", "x".to_owned())]
        );
        // A number is not rounded like an integer.
        assert_eq!(
            found(&n("exclusiveMinimum", json!(4)), &n("minimum", json!(5))),
            [(Mismatch, "minimum", "x".to_owned())]
        );
        // The same integers, written two ways, fit each other.
        let a = json!({"type": "integer", "minimum": 4.5});
        let b = json!({"type": "integer", "exclusiveMinimum": 4});
        assert_eq!((found(&a, &b), found(&b, &a)), (vec![], vec![]));
        let i = json!({"type": "integer", "exclusiveMinimum": 4});
        assert_eq!(found(&i, &n("minimum", json!(5))), []);
        assert_eq!(
            found(&i, &n("minimum", json!(5.5))),
            [(Mismatch, "minimum", "x".to_owned())]
        );
    }

    #[test]
    fn a_producer_without_the_bound_may_break_it() {
        // The issue's case: no `minimum` where the consumer has one.
        assert_eq!(
            found(
                &json!({"type": "integer"}),
                &json!({"type": "integer", "minimum": 1})
            ),
            [(Mismatch, "minimum", "x".to_owned())]
        );
        assert_eq!(
            found(&json!({"type": "string"}), &json!({"maxLength": 10})),
            [(Mismatch, "maxLength", "x".to_owned())]
        );
        // A producer that may be narrowed by what is not modelled: undecided, not fits.
        assert_eq!(
            found(
                &json!({"type": "integer", "multipleOf": 3}),
                &json!({"minimum": 1})
            ),
            [(Undecided, "minimum", "x".to_owned())]
        );
        // A bound of a type the producer never gives is met.
        assert_eq!(
            found(&json!({"type": "string"}), &json!({"minimum": 1})),
            []
        );
        assert_eq!(
            found(
                &json!({"type": "integer"}),
                &json!({"maxLength": 1, "pattern": "a"})
            ),
            []
        );
        // An enum decides by its values.
        assert_eq!(
            found(
                &json!({"enum": [1, 2.5]}),
                &json!({"minimum": 1, "maximum": 2.5})
            ),
            []
        );
        assert_eq!(
            found(&json!({"enum": [0, 2]}), &json!({"minimum": 1})),
            [(Mismatch, "minimum", "x".to_owned())]
        );
        assert_eq!(
            found(&json!({"enum": ["ab", "abc"]}), &json!({"minLength": 2})),
            []
        );
        assert_eq!(
            found(&json!({"const": "é"}), &json!({"minLength": 2})),
            [(Mismatch, "minLength", "x".to_owned())]
        );
    }

    #[test]
    fn enums_compare_numbers_by_value_and_both_keywords_hold() {
        assert_eq!(
            found(&json!({"enum": [1.0]}), &json!({"type": "integer"})),
            []
        );
        assert_eq!(found(&json!({"const": 2}), &json!({"enum": [2.0]})), []);
        assert_eq!(
            found(
                &json!({"const": "a"}),
                &json!({"const": "a", "enum": ["b"]})
            ),
            [(Mismatch, "const", "x".to_owned())]
        );
        assert_eq!(
            found(&json!({"type": "string"}), &json!({"enum": ["a"]})),
            [(Mismatch, "enum", "x".to_owned())]
        );
    }

    #[test]
    fn arrays_with_a_prefix_or_a_tuple_are_compared_by_position() {
        // The producer's first item is a string: `items` alone would say it fits.
        let p = json!({"type": "array", "prefixItems": [{"type": "string"}], "items": {"type": "integer"}});
        assert_eq!(
            found(&p, &json!({"type": "array", "items": {"type": "integer"}})),
            [(Mismatch, "type", "x[]".to_owned())]
        );
        assert_eq!(
            found(
                &p,
                &json!({"type": "array", "items": {"type": ["integer", "string"]}})
            ),
            []
        );
        // The same prefix: `items` compared after it.
        let e = json!({"type": "array", "prefixItems": [{"type": "string"}], "items": {"type": "number"}});
        assert_eq!(found(&p, &e), []);
        // A producer's `items` for every item meets a consumer's prefix.
        let every = json!({"type": "array", "items": {"type": "integer"}});
        let prefixed =
            json!({"type": "array", "prefixItems": [{"type": "number"}, {"minimum": 0}]});
        assert_eq!(
            found(&every, &prefixed),
            [(Mismatch, "minimum", "x[1]".to_owned())]
        );
        // A tuple (draft 2019-09) is met only by the same tuple.
        let tuple =
            json!({"type": "array", "items": [{"type": "string"}], "additionalItems": false});
        assert_eq!(found(&tuple, &tuple.clone()), []);
        assert_eq!(
            found(
                &json!({"type": "array", "items": [{"type": "string"}]}),
                &tuple
            ),
            [(Undecided, "additionalItems", "x".to_owned())]
        );
        // A producer's tuple against a consumer's `items`: each position and the rest.
        let p = json!({"type": "array", "items": [{"type": "integer"}], "additionalItems": {"type": "string"}});
        assert_eq!(
            found(&p, &json!({"type": "array", "items": {"type": "integer"}})),
            [(Mismatch, "type", "x[]".to_owned())]
        );
    }

    #[test]
    fn pattern_properties_keep_names_open() {
        // `additionalProperties: false` beside patterns: a name matching one may be there.
        let p = json!({"type": "object", "patternProperties": {"^n": {"type": "string"}}, "additionalProperties": false});
        assert_eq!(
            found(
                &p,
                &json!({"type": "object", "properties": {"nx": {"type": "integer"}}})
            ),
            [(Undecided, "properties", "x.nx".to_owned())]
        );
        let p = json!({"type": "object", "patternProperties": {"^n": {"type": "string"}}, "additionalProperties": {"type": "integer"}});
        assert_eq!(
            found(
                &p,
                &json!({"type": "object", "additionalProperties": {"type": "integer"}})
            ),
            [(Undecided, "additionalProperties", "x.*".to_owned())]
        );
    }

    #[test]
    fn refs_resolve_in_their_own_document_and_keep_their_siblings() {
        // The same text, refs to different definitions.
        let p =
            json!({"properties": {"a": {"$ref": "#/$defs/A"}}, "$defs": {"A": {"type": "string"}}});
        let e = json!({"properties": {"a": {"$ref": "#/$defs/A"}}, "$defs": {"A": {"type": "integer"}}});
        assert_eq!(found(&p, &e), [(Mismatch, "type", "x.a".to_owned())]);
        assert_eq!(found(&p, &p.clone()), []);
        // A ref's siblings constrain beside it.
        let e = json!({"$ref": "#/$defs/n", "minimum": 5, "$defs": {"n": {"type": "number"}}});
        assert_eq!(
            found(&json!({"type": "number", "minimum": 1}), &e),
            [(Mismatch, "minimum", "x".to_owned())]
        );
        assert_eq!(found(&json!({"type": "integer", "minimum": 5}), &e), []);
        // A nested `$id` rebases refs: not followed.
        let e =
            json!({"properties": {"a": {"$id": "other", "$ref": "#/$defs/x"}}, "$defs": {"x": {}}});
        let p = json!({"type": "object", "properties": {"a": {"type": "string"}}});
        assert_eq!(found(&p, &e), [(Undecided, "$ref", "x.a".to_owned())]);
    }

    #[test]
    fn sibling_dependent_keywords_are_undecided_even_when_equal() {
        let p = json!({"type": "object", "properties": {"a": {}, "b": {}}, "unevaluatedProperties": false});
        let e = json!({"type": "object", "properties": {"a": {}}, "unevaluatedProperties": false});
        assert_eq!(
            found(&p, &e),
            [(Undecided, "unevaluatedProperties", "x".to_owned())]
        );
        assert_eq!(found(&p, &p.clone()), []);
    }

    #[test]
    fn false_and_unknown_types() {
        assert_eq!(
            found(&json!({"type": "string"}), &json!(false)),
            [(Mismatch, "false", "x".to_owned())]
        );
        assert_eq!(found(&json!(false), &json!({"type": "string"})), []);
        assert_eq!(
            found(
                &json!({"type": ["string", "strng"]}),
                &json!({"type": "string"})
            ),
            [(Undecided, "type", "x".to_owned())]
        );
    }

    #[test]
    fn a_type_other_than_integer_does_not_fit_a_number() {
        assert_eq!(
            found(&json!({"type": "string"}), &json!({"type": "number"})),
            [(Mismatch, "type", "x".to_owned())]
        );
        assert_eq!(
            found(
                &json!({"type": "boolean"}),
                &json!({"type": ["number", "null"]})
            ),
            [(Mismatch, "type", "x".to_owned())]
        );
    }

    #[test]
    fn a_property_the_producer_does_not_declare_takes_its_other_properties_rule() {
        let wants_b = json!({"type": "object", "properties": {"b": {"type": "number"}}});
        // A closed producer never gives `b`: nothing to break.
        let closed =
            json!({"type": "object", "properties": {"a": {}}, "additionalProperties": false});
        assert_eq!(found(&closed, &wants_b), []);
        // An open one gives it as its `additionalProperties` say.
        let integers = json!({"type": "object", "additionalProperties": {"type": "integer"}});
        assert_eq!(found(&integers, &wants_b), []);
        let strings = json!({"type": "object", "additionalProperties": {"type": "string"}});
        assert_eq!(
            found(&strings, &wants_b),
            [(Mismatch, "type", "x.b".to_owned())]
        );
        // Unless `b` may match a pattern, which has a schema of its own.
        let patterned = json!({"type": "object", "patternProperties": {"^b": {"type": "string"}}, "additionalProperties": {"type": "integer"}});
        assert_eq!(
            found(&patterned, &wants_b),
            [(Undecided, "properties", "x.b".to_owned())]
        );
        // A property or other properties the consumer does not constrain fit anything.
        let open = json!({"type": "object"});
        let any = json!({"type": "object", "properties": {"b": {}, "c": true}, "additionalProperties": true});
        assert_eq!(found(&open, &any), []);
        let patterns = json!({"type": "object", "patternProperties": {"^b": {"type": "string"}}});
        assert_eq!(found(&patterns, &any), []);
        // A declared property the consumer knows only by its `additionalProperties`.
        let declared = json!({"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": false});
        assert_eq!(
            found(
                &declared,
                &json!({"type": "object", "additionalProperties": {"type": "integer"}})
            ),
            [(Mismatch, "type", "x.a".to_owned())]
        );
    }

    #[test]
    fn array_items_the_consumer_leaves_free_fit_and_a_tuple_is_not_a_prefix() {
        let untyped = json!({"type": "array"});
        assert_eq!(
            found(
                &untyped,
                &json!({"type": "array", "items": {}, "prefixItems": [{}, true]})
            ),
            []
        );
        assert_eq!(
            found(
                &untyped,
                &json!({"type": "array", "prefixItems": [{"type": "string"}]})
            ),
            [(Undecided, "prefixItems", "x".to_owned())]
        );
        // A draft 2019-09 tuple is not read as a schema for every item.
        let tuple = json!({"type": "array", "items": [{"type": "integer"}]});
        assert_eq!(
            found(
                &tuple,
                &json!({"type": "array", "prefixItems": [{"type": "number"}]})
            ),
            [(Undecided, "prefixItems", "x".to_owned())]
        );
    }

    /// A schema that names itself through `$defs/n`, rooted at a ref to it.
    fn recursive(node: Value) -> Value {
        json!({"$defs": {"n": node}, "$ref": "#/$defs/n"})
    }

    #[test]
    fn recursive_schemas_end_undecided_at_the_depth_bound() {
        let r = json!({"$ref": "#/$defs/n"});
        // (what recurses, the provided node, the expected node, one level's path)
        let cases = [
            (
                "properties",
                json!({"type": "object", "properties": {"next": r}}),
                json!({"properties": {"next": r}}),
                ".next",
            ),
            (
                "the producer's additionalProperties",
                json!({"type": "object", "additionalProperties": r}),
                json!({"properties": {"next": r}}),
                ".next",
            ),
            (
                "the consumer's additionalProperties",
                json!({"type": "object", "properties": {"next": r}, "additionalProperties": false}),
                json!({"additionalProperties": r}),
                ".next",
            ),
            (
                "both additionalProperties",
                json!({"type": "object", "additionalProperties": r}),
                json!({"additionalProperties": r}),
                ".*",
            ),
            (
                "items",
                json!({"type": "array", "items": r}),
                json!({"items": r}),
                "[]",
            ),
            (
                "prefixItems",
                json!({"type": "array", "prefixItems": [r]}),
                json!({"prefixItems": [r]}),
                "[0]",
            ),
            (
                "items against prefixItems",
                json!({"type": "array", "items": r}),
                json!({"prefixItems": [r]}),
                "[0]",
            ),
            (
                "allOf",
                json!({"type": "string"}),
                json!({"allOf": [r]}),
                "",
            ),
            (
                "then",
                json!({"type": "string"}),
                json!({"if": true, "then": r}),
                "",
            ),
        ];
        for (what, p, e, step) in cases {
            let path = format!("x{}", step.repeat(MAX_DEPTH + 1));
            assert_eq!(
                found(&recursive(p), &recursive(e)),
                [(Undecided, "depth", path)],
                "{what}"
            );
        }
    }

    #[test]
    fn a_draft_4_boolean_exclusive_bound_is_met_only_by_the_same_pair() {
        let e = json!({"type": "number", "minimum": 5, "exclusiveMinimum": true});
        let p = json!({"type": "integer", "minimum": 5, "exclusiveMinimum": true});
        assert_eq!(found(&p, &e), []);
        assert_eq!(
            found(&json!({"type": "number", "minimum": 5}), &e),
            [(Undecided, "exclusiveMinimum", "x".to_owned())]
        );
        assert_eq!(
            found(
                &json!({"type": "integer", "minimum": 6, "exclusiveMinimum": true}),
                &e
            ),
            [(Undecided, "exclusiveMinimum", "x".to_owned())]
        );
        let e = json!({"type": "number", "maximum": 5, "exclusiveMaximum": true});
        assert_eq!(
            found(&json!({"type": "number", "maximum": 5}), &e),
            [(Undecided, "exclusiveMaximum", "x".to_owned())]
        );
    }

    #[test]
    fn a_keyword_of_a_type_the_producer_never_gives_is_met() {
        assert_eq!(
            found(&json!({"type": "string"}), &json!({"multipleOf": 2})),
            []
        );
        assert_eq!(
            found(
                &json!({"type": "string"}),
                &json!({"minItems": 1, "minProperties": 1})
            ),
            []
        );
        assert_eq!(
            found(&json!({"type": "integer"}), &json!({"multipleOf": 2})),
            [(Undecided, "multipleOf", "x".to_owned())]
        );
    }

    #[test]
    fn arrays_and_objects_in_enums_compare_by_value() {
        assert_eq!(
            found(&json!({"const": [1, 2]}), &json!({"enum": [[1.0, 2]]})),
            []
        );
        assert_eq!(
            found(&json!({"const": [1]}), &json!({"enum": [[1, 2]]})),
            [(Mismatch, "enum", "x".to_owned())]
        );
        assert_eq!(
            found(&json!({"const": {"a": 1}}), &json!({"const": {"a": 1.0}})),
            []
        );
        assert_eq!(
            found(
                &json!({"const": {"a": 1, "b": 2}}),
                &json!({"const": {"a": 1}})
            ),
            [(Mismatch, "const", "x".to_owned())]
        );
    }

    #[test]
    fn an_enum_of_arrays_or_objects_is_counted_against_counting_bounds() {
        assert_eq!(
            found(&json!({"enum": [[1], []]}), &json!({"maxItems": 1})),
            []
        );
        assert_eq!(
            found(&json!({"const": [1, 2]}), &json!({"maxItems": 1})),
            [(Mismatch, "maxItems", "x".to_owned())]
        );
        assert_eq!(
            found(&json!({"const": {"a": 1}}), &json!({"maxProperties": 0})),
            [(Mismatch, "maxProperties", "x".to_owned())]
        );
    }

    #[test]
    fn an_integer_producers_fractional_bounds_round_to_the_integers_they_allow() {
        assert_eq!(
            found(
                &json!({"type": "integer", "exclusiveMinimum": 4.5}),
                &json!({"minimum": 5})
            ),
            []
        );
        assert_eq!(
            found(
                &json!({"type": "integer", "maximum": 5.5}),
                &json!({"maximum": 5})
            ),
            []
        );
        // Past i128 a bound is kept as written, not saturated to a smaller one.
        assert_eq!(
            found(
                &json!({"type": "integer", "maximum": 1e300}),
                &json!({"maximum": 1e200})
            ),
            [(Mismatch, "maximum", "x".to_owned())]
        );
    }

    #[test]
    fn of_an_inclusive_and_an_exclusive_bound_the_tighter_counts() {
        let p = json!({"type": "number", "minimum": 5, "exclusiveMinimum": 3});
        assert_eq!(found(&p, &json!({"minimum": 5})), []);
        let p = json!({"type": "number", "maximum": 5, "exclusiveMaximum": 7});
        assert_eq!(found(&p, &json!({"maximum": 5})), []);
    }

    /// Conditions are compared and ruled out to the same depth bound: one that names itself
    /// ends unknown, and the branches decide.
    #[test]
    fn recursive_conditions_end_at_the_depth_bound() {
        let string = json!({"type": "string"});
        // The `if` names itself: it cannot be decided, and the only branch fits.
        let e = recursive(json!({"if": {"$ref": "#/$defs/n"}, "then": {"type": "string"}}));
        assert_eq!(found(&string, &e), []);
        // Ruling the `if` out goes through its `allOf`, or through a required property.
        let e = json!({
            "$defs": {"c": {"allOf": [{"$ref": "#/$defs/c"}]}},
            "if": {"$ref": "#/$defs/c"},
            "then": {"type": "string"},
        });
        assert_eq!(found(&string, &e), []);
        let p = recursive(
            json!({"type": "object", "required": ["next"], "properties": {"next": {"$ref": "#/$defs/n"}}}),
        );
        let e = json!({
            "$defs": {"c": {"properties": {"next": {"$ref": "#/$defs/c"}}}},
            "if": {"$ref": "#/$defs/c"},
            "then": {"type": "object"},
        });
        assert_eq!(found(&p, &e), []);
        // An `if` of `false` never holds: the `else` decides, the `then` does not.
        let e = json!({"if": false, "then": {"type": "integer"}, "else": {"type": "string"}});
        assert_eq!(found(&string, &e), []);
        // An `if` that never holds, whose `else` names the schema again: ruled out down to
        // the bound, and undecided past it.
        let e = recursive(json!({"if": false, "else": {"$ref": "#/$defs/n"}}));
        assert_eq!(found(&string, &e), [(Undecided, "if", "x".to_owned())]);
        // An `if` the value decides, whose branch names the schema again: undecided.
        let e = recursive(json!({"if": {"minLength": 1}, "then": {"$ref": "#/$defs/n"}}));
        assert_eq!(found(&string, &e), [(Undecided, "if", "x".to_owned())]);
    }

    #[test]
    fn expected_true_fits_and_an_unconstrained_producer_is_named_by_a_constraint() {
        assert_eq!(found(&json!({"type": "string"}), &json!(true)), []);
        // The first keyword that constrains, not an annotation before it.
        assert_eq!(
            found(
                &json!({"description": "anything"}),
                &json!({"description": "a name", "type": "string"})
            ),
            [(Undecided, "type", "x".to_owned())]
        );
    }

    #[test]
    fn who_gives_a_field_says_nothing_about_its_values() {
        let given = json!({"type": "string", "minLength": 1});
        let asked = json!({"type": "string", "minLength": 1, "x-source": "user"});
        assert_eq!(found(&given, &asked), []);
    }

    #[test]
    fn a_ref_past_the_first_hop_with_siblings_is_undecided() {
        let e = json!({
            "$ref": "#/$defs/a",
            "$defs": {"a": {"$ref": "#/$defs/b", "minimum": 5}, "b": {"type": "number"}},
        });
        assert_eq!(
            found(&json!({"type": "number"}), &e),
            [(Undecided, "$ref", "x".to_owned())]
        );
    }

    #[test]
    fn ref_siblings_constrain_and_an_id_anywhere_below_the_root_stops_refs() {
        // Siblings of a ref below the root, with no annotation beside them.
        let e = json!({
            "properties": {"a": {"$ref": "#/$defs/n", "minimum": 5}},
            "$defs": {"n": {"type": "number"}},
        });
        let p = json!({"type": "object", "properties": {"a": {"type": "number", "minimum": 1}}});
        assert_eq!(found(&p, &e), [(Mismatch, "minimum", "x.a".to_owned())]);
        // An `$id` in an array rebases the refs below it as well.
        let e = json!({"allOf": [{"$id": "other", "$ref": "#/$defs/x"}], "$defs": {"x": {}}});
        assert_eq!(
            found(&json!({"type": "string"}), &e),
            [(Undecided, "$ref", "x".to_owned())]
        );
        // The root's own `$id` rebases nothing: its refs are followed.
        let e = json!({
            "$id": "https://example.com/s",
            "properties": {"a": {"$ref": "#/$defs/n"}},
            "$defs": {"n": {"type": "string"}},
        });
        let p = json!({"type": "object", "properties": {"a": {"type": "string"}}});
        assert_eq!(found(&p, &e), []);
    }

    #[test]
    fn a_numeric_producer_meets_object_and_array_keywords() {
        let e = json!({"required": ["a"], "properties": {"a": {"type": "string"}}, "items": {"type": "string"}});
        assert_eq!(found(&json!({"type": "integer"}), &e), []);
        assert_eq!(found(&json!({"type": "number"}), &e), []);
    }

    #[test]
    fn a_fractional_value_is_a_number_not_an_integer() {
        assert_eq!(
            found(&json!({"const": 1.5}), &json!({"type": "integer"})),
            [(Mismatch, "type", "x".to_owned())]
        );
        assert_eq!(
            found(&json!({"enum": [1.0, -2]}), &json!({"type": "integer"})),
            []
        );
    }

    #[test]
    fn an_if_of_an_overlapping_type_is_not_ruled_out() {
        // Integers are numbers: some may pass the `if`, some may not.
        let e = json!({"if": {"type": "number", "minimum": 5}, "then": {"type": "string"}});
        assert_eq!(
            found(&json!({"type": "integer"}), &e),
            [(Undecided, "if", "x".to_owned())]
        );
    }

    #[test]
    fn a_bound_the_producers_own_keywords_may_imply_is_undecided() {
        // `^a` has at least one char, `contains` at least one item.
        assert_eq!(
            found(
                &json!({"type": "string", "pattern": "^a"}),
                &json!({"minLength": 1})
            ),
            [(Undecided, "minLength", "x".to_owned())]
        );
        assert_eq!(
            found(
                &json!({"type": "array", "contains": {"type": "string"}}),
                &json!({"minItems": 1})
            ),
            [(Undecided, "minItems", "x".to_owned())]
        );
    }

    #[test]
    fn a_bound_finding_names_the_bounds_the_producer_states() {
        let message = |p: Value| {
            compare(
                (&p, &p),
                (&json!({"minimum": 5}), &json!({"minimum": 5})),
                "x",
            )[0]
            .message
            .clone()
        };
        assert_eq!(
            message(json!({"type": "number", "minimum": 1, "exclusiveMinimum": 0})),
            "`x` may be a number past the step's `minimum` of 5: the schema there has `minimum 1, exclusiveMinimum 0`"
        );
        assert_eq!(
            message(json!({"type": "number", "maximum": 9})),
            "`x` may be a number past the step's `minimum` of 5: the schema there has no such bound"
        );
    }
}
