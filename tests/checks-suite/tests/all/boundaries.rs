//! The fast path proven against the validator at every bound: instances generated from each
//! schema's own keywords, so that every typed check of the generated code is reached. Strings
//! at, below and above each length bound (of ASCII, two-byte and four-byte chars: lengths are
//! counted in chars), numbers at, below and above each bound (integral, written as floats,
//! and fractional), each `multipleOf`'s multiples and near misses, every `enum` and `const`
//! member and near misses of each type, item and property counts at their bounds, duplicate
//! and distinct items, every property varied in place with the rest of the instance kept.
//!
//! On the JSON-Schema-Test-Suite's typed schemas, the project's contracts (`schemas/`), the
//! real-world tool schemas (`tests/fixtures/realworld/`) and `bounds.schema.json`:
//! - sound: the checks never pass an instance the validator refuses;
//! - complete where they claim to be: on a fully compiled contract, an instance the validator
//!   accepts and the types read passes the checks (a check stricter than its schema fails here),
//!   but for an absent optional array or map, which reads as an empty one;
//! - reached: every typed keyword decides both ways, passing some instance the validator
//!   accepts and refusing some the validator refuses, after the types read it.

use agent_checks_suite::SCHEMAS;
use agent_contracts::{Contract, Limits, contract::ContractKind};
use serde_json::{Map, Number, Value, json};
use std::collections::{BTreeMap, BTreeSet};

/// Keywords whose checks are code on a typed value, each of which must decide both ways. (Not
/// `pattern`: typify types a string with a pattern as a constrained string that refuses a
/// mismatch when it deserializes, so the checks' pattern only ever passes; counted apart.)
const TYPED: &[&str] = &[
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "enum",
    "const",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minProperties",
    "maxProperties",
];

/// Most candidates kept per schema node below the root (the first ones are the base value and
/// the bounds); the root keeps all of its own.
const MAX_CANDIDATES: usize = 160;
/// Deepest schema node expanded; deeper ones get plain values.
const MAX_DEPTH: usize = 6;

/// A generated value and the keyword whose edge it stands at (`""`: none).
type Candidate = (Value, &'static str);

/// A number as JSON writes it: an integer when integral and exact, else a float.
fn num(f: f64) -> Value {
    if f.fract() == 0.0 && f.abs() < 9_007_199_254_740_992.0 {
        json!(f as i64)
    } else {
        Number::from_f64(f).map_or(Value::Null, Value::Number)
    }
}

/// A number written as a float even when integral (`3.0`): the lenient integer fields read it.
fn float(f: f64) -> Value {
    Number::from_f64(f).map_or(Value::Null, Value::Number)
}

/// Near misses of a value: the same type changed a little, and the same content in another
/// type.
fn near(value: &Value) -> Vec<Value> {
    match value {
        Value::String(s) => vec![
            json!(format!("{s}x")),
            json!(s.chars().skip(1).collect::<String>()),
            json!(s.to_uppercase()),
            json!(format!(" {s}")),
            json!([s]),
            s.parse::<f64>().map_or(Value::Null, num),
        ],
        Value::Number(n) => {
            let f = n.as_f64().unwrap_or(0.0);
            vec![
                num(f + 1.0),
                num(f - 1.0),
                float(f),
                num(f + 0.5),
                num(-f),
                json!(n.to_string()),
                json!([value]),
            ]
        }
        Value::Bool(b) => vec![json!(!b), json!(b.to_string()), json!(u8::from(*b))],
        Value::Null => vec![json!(false), json!(0), json!("null")],
        Value::Array(items) => {
            let mut more = items.clone();
            more.push(items.first().cloned().unwrap_or(json!(1)));
            vec![json!(more), json!([]), json!({})]
        }
        Value::Object(map) => {
            let mut more = map.clone();
            more.insert("zz".into(), json!(1));
            vec![Value::Object(more), json!({}), json!([])]
        }
    }
}

/// `c` repeated `n` times.
fn text(c: char, n: u64) -> Value {
    json!(std::iter::repeat_n(c, n as usize).collect::<String>())
}

struct Gen<'r> {
    root: &'r Value,
}

impl Gen<'_> {
    /// Follows local `$ref`s (annotations beside them aside).
    fn resolve(&self, node: &Value) -> Value {
        let mut node = node.clone();
        for _ in 0..16 {
            let Some(target) = node.get("$ref").and_then(Value::as_str) else {
                break;
            };
            let Some(found) = target
                .strip_prefix('#')
                .and_then(|pointer| self.root.pointer(pointer))
            else {
                break;
            };
            node = found.clone();
        }
        node
    }

    /// Values for `node`: the first meant to be valid, then each keyword's edges and near
    /// misses, then the subschemas', then values of other types.
    fn candidates(&self, node: &Value, depth: usize) -> Vec<Candidate> {
        let node = self.resolve(node);
        let plain = || -> Vec<Candidate> {
            [json!(1), json!("a"), json!(null), json!([]), json!({})]
                .into_iter()
                .map(|v| (v, ""))
                .collect()
        };
        let Value::Object(o) = &node else {
            return plain();
        };
        if depth > MAX_DEPTH {
            return plain();
        }
        let mut out: Vec<Candidate> = Vec::new();
        if let Some(c) = o.get("const") {
            out.push((c.clone(), "const"));
            out.extend(near(c).into_iter().map(|v| (v, "const")));
        }
        if let Some(Value::Array(members)) = o.get("enum") {
            out.extend(members.iter().map(|m| (m.clone(), "enum")));
            for m in members {
                out.extend(near(m).into_iter().map(|v| (v, "enum")));
            }
        }
        for t in types_of(o) {
            match t {
                "string" => self.strings(o, &mut out),
                "integer" | "number" => numbers(o, t == "integer", &mut out),
                "boolean" => out.extend([(json!(true), ""), (json!(false), "")]),
                "null" => out.push((Value::Null, "")),
                "array" => self.arrays(o, depth, &mut out),
                "object" => self.objects(o, depth, &mut out),
                _ => {}
            }
        }
        for keyword in ["allOf", "anyOf", "oneOf"] {
            for sub in o
                .get(keyword)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                out.extend(self.candidates(sub, depth + 1));
            }
        }
        for keyword in ["if", "then", "else", "not"] {
            if let Some(sub) = o.get(keyword) {
                out.extend(self.candidates(sub, depth + 1));
            }
        }
        out.extend(
            [
                json!(null),
                json!(true),
                json!(0),
                json!(1.5),
                json!(""),
                json!([]),
                json!({}),
            ]
            .into_iter()
            .map(|v| (v, "type")),
        );
        let mut seen = BTreeSet::new();
        // The same value may stand at two keywords' edges: kept for each.
        out.retain(|(v, keyword)| seen.insert((v.to_string(), *keyword)));
        if depth > 0 {
            out.truncate(MAX_CANDIDATES);
        }
        out
    }

    fn strings(&self, o: &Map<String, Value>, out: &mut Vec<Candidate>) {
        let lo = o.get("minLength").and_then(Value::as_u64);
        let hi = o.get("maxLength").and_then(Value::as_u64);
        out.push((text('a', lo.unwrap_or(1).min(hi.unwrap_or(u64::MAX))), ""));
        for (keyword, bound) in [("minLength", lo), ("maxLength", hi)] {
            let Some(n) = bound else { continue };
            for len in [n.saturating_sub(1), n, n + 1] {
                for c in ['a', 'é', '😀'] {
                    out.push((text(c, len), keyword));
                }
            }
        }
        if o.contains_key("pattern") {
            for s in ["a", "aa", "aaaa", "b", "ab", "", "é", "1", "A"] {
                out.push((json!(s), "pattern"));
            }
        }
    }

    fn arrays(&self, o: &Map<String, Value>, depth: usize, out: &mut Vec<Candidate>) {
        let items = match o.get("items") {
            Some(schema) => self.candidates(schema, depth + 1),
            None => vec![(json!(1), ""), (json!("a"), "")],
        };
        let first = items[0].0.clone();
        // Distinct items, as far as the candidates go.
        let distinct = |n: u64| -> Value {
            json!(
                (0..n as usize)
                    .map(|i| items[i % items.len()].0.clone())
                    .collect::<Vec<_>>()
            )
        };
        let lo = o.get("minItems").and_then(Value::as_u64);
        let hi = o.get("maxItems").and_then(Value::as_u64);
        let base_len = lo.unwrap_or(1).min(hi.unwrap_or(u64::MAX));
        let base: Vec<Value> = (0..base_len).map(|_| first.clone()).collect();
        out.push((json!(base), ""));
        for (item, keyword) in &items {
            let mut one = base.clone();
            match one.first_mut() {
                Some(slot) => *slot = item.clone(),
                None => one.push(item.clone()),
            }
            out.push((json!(one), keyword));
        }
        for (keyword, bound) in [("minItems", lo), ("maxItems", hi)] {
            let Some(n) = bound else { continue };
            for len in [n.saturating_sub(1), n, n + 1] {
                out.push((json!(vec![first.clone(); len as usize]), keyword));
                out.push((distinct(len), keyword));
            }
        }
        if o.contains_key("uniqueItems") {
            out.push((json!([first.clone(), first.clone()]), "uniqueItems"));
            out.push((distinct(2), "uniqueItems"));
            out.push((distinct(3), "uniqueItems"));
            // Equal as JSON numbers, different as text.
            out.push((json!([1, 1.0]), "uniqueItems"));
            out.push((json!([1, 2]), "uniqueItems"));
        }
    }

    fn objects(&self, o: &Map<String, Value>, depth: usize, out: &mut Vec<Candidate>) {
        let properties = o
            .get("properties")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let each: Vec<(String, Vec<Candidate>)> = properties
            .iter()
            .map(|(name, schema)| (name.clone(), self.candidates(schema, depth + 1)))
            .collect();
        let extra = match o.get("additionalProperties") {
            Some(schema @ Value::Object(_)) => self.candidates(schema, depth + 1),
            _ => vec![(json!(1), "additionalProperties")],
        };
        let lo = o.get("minProperties").and_then(Value::as_u64);
        let hi = o.get("maxProperties").and_then(Value::as_u64);
        let mut base = Map::new();
        for (name, candidates) in &each {
            base.insert(name.clone(), candidates[0].0.clone());
        }
        for i in 0..lo.unwrap_or(0).saturating_sub(base.len() as u64) {
            base.insert(format!("k{i}"), extra[0].0.clone());
        }
        out.push((Value::Object(base.clone()), ""));
        for (name, candidates) in &each {
            for (value, keyword) in candidates {
                let mut varied = base.clone();
                varied.insert(name.clone(), value.clone());
                out.push((Value::Object(varied), keyword));
            }
            let mut without = base.clone();
            without.remove(name);
            out.push((Value::Object(without), "required"));
        }
        for (value, keyword) in &extra {
            let mut more = base.clone();
            more.insert("zz".into(), value.clone());
            out.push((Value::Object(more), keyword));
        }
        for (keyword, bound) in [("minProperties", lo), ("maxProperties", hi)] {
            let Some(n) = bound else { continue };
            for len in [n.saturating_sub(1), n, n + 1] {
                let mut sized = base.clone();
                let mut i = 0;
                while (sized.len() as u64) < len {
                    sized.insert(format!("k{i}"), extra[0].0.clone());
                    i += 1;
                }
                while (sized.len() as u64) > len {
                    let last = sized.keys().next_back().cloned().unwrap();
                    sized.remove(&last);
                }
                out.push((Value::Object(sized), keyword));
            }
        }
        if let Some(names) = o.get("propertyNames") {
            for (name, _) in self.candidates(names, depth + 1) {
                if let Value::String(name) = name {
                    let mut named = base.clone();
                    named.insert(name, extra[0].0.clone());
                    out.push((Value::Object(named), "propertyNames"));
                }
            }
        }
    }
}

/// The JSON types a node's values may have: its `type`, else the types its keywords are
/// about, else every type.
fn types_of(o: &Map<String, Value>) -> Vec<&'static str> {
    const ALL: [&str; 7] = [
        "string", "integer", "number", "boolean", "null", "array", "object",
    ];
    let named = |t: &str| ALL.iter().copied().find(|a| *a == t);
    match o.get("type") {
        Some(Value::String(t)) => named(t).into_iter().collect(),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .filter_map(named)
            .collect(),
        _ => {
            let has = |keys: &[&str]| keys.iter().any(|k| o.contains_key(*k));
            let mut inferred = Vec::new();
            if has(&["minLength", "maxLength", "pattern"]) {
                inferred.push("string");
            }
            if has(&[
                "minimum",
                "maximum",
                "exclusiveMinimum",
                "exclusiveMaximum",
                "multipleOf",
            ]) {
                inferred.push("number");
            }
            if has(&[
                "items",
                "minItems",
                "maxItems",
                "uniqueItems",
                "prefixItems",
            ]) {
                inferred.push("array");
            }
            if has(&[
                "properties",
                "required",
                "additionalProperties",
                "minProperties",
            ]) {
                inferred.push("object");
            }
            if inferred.is_empty() && !o.contains_key("const") && !o.contains_key("enum") {
                inferred.extend(["string", "integer", "boolean", "null"]);
            }
            inferred
        }
    }
}

/// Each bound's neighbours, integral, written as floats and fractional; `multipleOf`'s
/// multiples and near misses.
fn numbers(o: &Map<String, Value>, integer: bool, out: &mut Vec<Candidate>) {
    let bound = |k: &str| o.get(k).and_then(Value::as_f64);
    let lo = bound("minimum").or(bound("exclusiveMinimum").map(|b| b.floor() + 1.0));
    let hi = bound("maximum").or(bound("exclusiveMaximum").map(|b| b.ceil() - 1.0));
    let base = match (lo, hi) {
        (Some(lo), _) => lo.ceil(),
        (None, Some(hi)) => hi.floor(),
        (None, None) => 1.0,
    };
    // A multiple of a whole `multipleOf`, at or past the base.
    let base = match bound("multipleOf") {
        Some(d) if d >= 1.0 && d.fract() == 0.0 => (base / d).ceil() * d,
        _ => base,
    };
    out.push((num(base), ""));
    for keyword in ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"] {
        let Some(b) = bound(keyword) else { continue };
        for value in [
            num(b - 1.0),
            num(b),
            num(b + 1.0),
            float(b),
            num(b - 0.5),
            num(b + 0.5),
            num(b.floor()),
            num(b.ceil()),
            float(b + 1.0),
            float(b - 1.0),
        ] {
            out.push((value, keyword));
        }
        // Exact integers beside a bound past 2^53, where a float cannot tell them apart.
        if let Some(i) = o.get(keyword).and_then(Value::as_i64) {
            for value in [json!(i - 1), json!(i), json!(i + 1)] {
                out.push((value, keyword));
            }
        }
    }
    if let Some(d) = bound("multipleOf") {
        for value in [
            num(0.0),
            num(d),
            num(2.0 * d),
            num(-3.0 * d),
            num(d + 1.0),
            float(d),
            float(2.0 * d),
            num(d / 2.0),
            num(1.5 * d),
        ] {
            out.push((value, "multipleOf"));
        }
    }
    if !integer {
        out.extend([(json!(0.25), ""), (json!(-0.75), "")]);
    }
}

#[test]
fn boundary_instances_get_one_verdict() {
    let limits = Limits::default();
    let mut unsound = Vec::new();
    let mut incomplete = Vec::new();
    // Per keyword: instances the checks passed and the validator accepted; instances the checks
    // refused, after the types read them, and the validator refused.
    let mut decided: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    let (mut instances, mut fast) = (0, 0);
    let mut sources = BTreeSet::new();
    for schema in SCHEMAS {
        let contract = Contract::from_json_str("bounds", ContractKind::Input, schema.contract)
            .unwrap_or_else(|e| panic!("{}#{}: {e}", schema.file, schema.group));
        let root: Value = serde_json::from_str(schema.contract).unwrap();
        let node = if schema.wrapped {
            &root["properties"]["x"]
        } else {
            &root
        };
        sources.insert(schema.file.split('/').next().unwrap_or_default());
        let generator = Gen { root: &root };
        for (data, keyword) in generator.candidates(node, 0) {
            let instance = if schema.wrapped {
                json!({ "x": data })
            } else {
                data
            };
            instances += 1;
            let valid = contract.check(&instance, &limits).is_ok();
            let checks = (schema.checks)(&instance);
            assert_eq!((schema.fast)(&instance), checks == Some(true));
            let at = || format!("{}#{} ({keyword}): {instance}", schema.file, schema.group);
            match (valid, checks) {
                (false, Some(true)) => unsound.push(at()),
                // An absent array or map reads as empty (typify's default), which the checks
                // cannot tell from an empty value: `minItems` then leaves it to the validator.
                (true, Some(false)) if schema.unchecked.is_empty() && keyword != "required" => {
                    incomplete.push(at())
                }
                (true, Some(true)) => {
                    fast += 1;
                    decided.entry(keyword).or_default().0 += 1;
                }
                (false, Some(false)) => decided.entry(keyword).or_default().1 += 1,
                _ => {}
            }
        }
    }
    println!(
        "{instances} generated instances on {} contracts: {fast} valid on the fast path",
        SCHEMAS.len()
    );
    println!("decided by the checks (passed, refused) per keyword: {decided:?}");
    assert!(
        unsound.is_empty(),
        "the checks pass what the validator refuses:\n{}",
        unsound.join("\n")
    );
    assert!(
        incomplete.is_empty(),
        "fully compiled checks refuse what the validator accepts:\n{}",
        incomplete.join("\n")
    );
    assert!(
        decided
            .get("pattern")
            .is_some_and(|(passed, _)| *passed > 0)
    );
    for keyword in TYPED {
        let (passed, refused) = decided.get(keyword).copied().unwrap_or_default();
        assert!(
            passed > 0 && refused > 0,
            "`{keyword}` decided {passed} passes and {refused} refusals: a typed path not reached"
        );
    }
    // Every source of contracts took part: the suite, the project's, the real-world ones.
    for source in [
        "schemas",
        "bounds.schema.json",
        "integer_float.schema.json",
        "minLength.json",
    ] {
        assert!(
            sources.contains(source),
            "{source} missing from {sources:?}"
        );
    }
}
