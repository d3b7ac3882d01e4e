//! JSON kept as the text it arrived in.
//!
//! A parent's data reaches the prompt as the parent wrote it: keys in their order and every
//! number with its own text (`0.60`, `1e5`, `0.000001`). serde_json keeps both only with its
//! `preserve_order` and `arbitrary_precision` features, which change how every crate of a build
//! parses JSON (untagged and internally tagged enums, `flatten` with numbers), so the text
//! itself is kept instead: the untyped parts of a contract are [`RawJson`] and [`RawObject`],
//! and serializing them walks their text with serde_json's own deserializer, one level at a
//! time, handing every number over as its text.
//!
//! The validator reads a plain `serde_json::Value` (serde_json's default features): an integer
//! beyond `u64` is an `f64` to it, still an integer to JSON Schema when it is integral (`1e30`
//! passes `"type": "integer"`), compared as a double against bounds; a number no `f64` holds
//! (`1e400`) is refused before validation, a retry error naming its path. The typed input is
//! read from the text: an integer the field's type cannot hold is a retry error naming its path.

use crate::retry::PathSegment;
use serde::de::{self, Deserialize, Deserializer, MapAccess, Visitor};
use serde::ser::{self, Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, OnceLock};

/// Any JSON value a contract leaves untyped (a property with no `type`), kept as its text.
///
/// Serializing it writes the value as it was written: keys in document order, numbers as
/// written; `|markdown` and the default prompt render it that way. One read from a call's
/// typed input stands on the call's text, shared rather than copied, which it keeps alive
/// while it lives; `RawJson::from` a `Box<RawValue>` of its text makes one of its own.
///
/// ```
/// # use agent_contracts_contract::RawJson;
/// let raw: RawJson = serde_json::from_str(r#"{"b": 0.60, "a": 1e5}"#).unwrap();
/// assert_eq!(serde_json::to_string(&raw).unwrap(), r#"{"b":0.60,"a":1e5}"#);
/// ```
#[derive(Clone)]
pub struct RawJson(Captive);

/// A JSON object a contract leaves untyped (`type: object` without properties), kept as its
/// text, its keys in the order they were written.
///
/// ```
/// # use agent_contracts_contract::RawObject;
/// let raw: RawObject = serde_json::from_str(r#"{"z": 1, "a": [0.000001]}"#).unwrap();
/// let keys: Vec<String> = raw.entries().unwrap().into_iter().map(|(k, _)| k.into_owned()).collect();
/// assert_eq!(keys, ["z", "a"]);
/// assert_eq!(agent_contracts_contract::to_markdown(&raw).unwrap(), "- **z**: 1\n- **a**:\n  - 0.000001");
/// assert!(serde_json::from_str::<RawObject>("[1]").is_err());
/// ```
#[derive(Clone)]
pub struct RawObject(Captive);

/// Where an untyped value's text stands.
#[derive(Clone)]
enum Captive {
    /// A copy of its own, its tape read when first asked for.
    Own(Box<RawValue>, OnceLock<Option<Tape>>),
    /// A place on a call's text and tape, shared with the call and its other untyped parts:
    /// a typed input's parts are read from the call without copying a byte or a part of its
    /// tape. A part keeps the call's whole text and tape alive while it lives.
    Call(Arc<Shared>, u32),
}

impl Captive {
    fn own(raw: Box<RawValue>) -> Self {
        Self::Own(raw, OnceLock::new())
    }

    fn text(&self) -> &str {
        match self {
            Self::Own(raw, _) => raw.get(),
            Self::Call(shared, at) => {
                let tok = shared.tape.0[*at as usize];
                &shared.text[tok.start as usize..tok.end as usize]
            }
        }
    }

    fn value(&self) -> Option<TapeValue<'_>> {
        match self {
            Self::Own(raw, tape) => tape_value(raw.get(), tape),
            Self::Call(shared, at) => Some(TapeValue {
                text: &shared.text,
                toks: &shared.tape.0,
                at: *at as usize,
                share: None,
            }),
        }
    }
}

/// A call's text and its tape, which the untyped parts of its typed input share
/// ([`Captive::Call`]) rather than copy.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) text: Arc<str>,
    pub(crate) tape: Tape,
}

/// JSON text already parsed as a [`RawValue`].
impl From<Box<RawValue>> for RawJson {
    fn from(raw: Box<RawValue>) -> Self {
        Self(Captive::own(raw))
    }
}

/// The JSON of a `Value` (its numbers and key order are the `Value`'s).
impl From<&Value> for RawJson {
    fn from(value: &Value) -> Self {
        Self::from(raw_of(value))
    }
}

impl RawJson {
    /// The text as written.
    pub fn get(&self) -> &str {
        self.0.text()
    }
}

/// JSON text, if it is an object; other JSON is given back.
impl TryFrom<Box<RawValue>> for RawObject {
    type Error = Box<RawValue>;
    fn try_from(raw: Box<RawValue>) -> Result<Self, Box<RawValue>> {
        if raw.get().starts_with('{') {
            Ok(Self(Captive::own(raw)))
        } else {
            Err(raw)
        }
    }
}

impl RawObject {
    /// Whether its tape was read already (handed over with it, or asked for).
    #[cfg(test)]
    pub(crate) fn tape_read(&self) -> bool {
        match &self.0 {
            Captive::Own(_, tape) => tape.get().is_some(),
            Captive::Call(..) => true,
        }
    }

    /// The text as written.
    pub fn get(&self) -> &str {
        self.0.text()
    }

    /// Whether the object has no entries.
    pub fn is_empty(&self) -> bool {
        self.get()[1..].trim_start().starts_with('}')
    }

    /// The entries in document order; a repeated key keeps its first place and its last value,
    /// as serde_json's maps do.
    pub fn entries(&self) -> Result<Vec<(Cow<'_, str>, &RawValue)>, serde_json::Error> {
        entries(self.get())
    }
}

/// JSON to show again: the text as written when it is known, else a `Value`.
#[derive(Debug, Clone, Copy)]
#[doc(hidden)]
pub enum Shown<'a> {
    /// The text as written.
    Text(&'a RawJson),
    /// A value (keys sorted, numbers as parsed).
    Value(&'a Value),
}

impl Shown<'_> {
    /// Compact JSON text.
    #[doc(hidden)]
    pub fn to_json_string(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

impl Serialize for Shown<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Text(text) => text.serialize(serializer),
            Self::Value(value) => value.serialize(serializer),
        }
    }
}

fn raw_of<T: Serialize + ?Sized>(value: &T) -> Box<RawValue> {
    // A `Value` or map always serializes: its keys are strings and its numbers finite.
    serde_json::value::to_raw_value(value)
        .unwrap_or_else(|_| RawValue::from_string("null".to_owned()).expect("valid JSON"))
}

impl Default for RawJson {
    fn default() -> Self {
        Self::from(RawValue::from_string("null".to_owned()).expect("valid JSON"))
    }
}

impl Default for RawObject {
    fn default() -> Self {
        Self(Captive::own(
            RawValue::from_string("{}".to_owned()).expect("valid JSON"),
        ))
    }
}

/// Shown as serde_json shows a `RawValue`, wherever the text stands.
impl fmt::Debug for Captive {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("RawValue")
            .field(&format_args!("{}", self.text()))
            .finish()
    }
}

impl fmt::Debug for RawJson {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("RawJson").field(&self.0).finish()
    }
}

impl fmt::Debug for RawObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("RawObject").field(&self.0).finish()
    }
}

/// Equal when the JSON is: the same text, or text that parses to the same value.
fn same_json(a: &str, b: &str) -> bool {
    a == b
        || matches!(
            (
                serde_json::from_str::<Value>(a),
                serde_json::from_str::<Value>(b)
            ),
            (Ok(a), Ok(b)) if a == b
        )
}

impl PartialEq for RawJson {
    fn eq(&self, other: &Self) -> bool {
        same_json(self.get(), other.get())
    }
}

impl PartialEq for RawObject {
    fn eq(&self, other: &Self) -> bool {
        same_json(self.get(), other.get())
    }
}

// `RawJson` and `RawObject` serialize in `markdown`, which takes their tape over when it is
// the serializer (see `markdown::Handover`).

/// An untyped value's text, with its tape read once, when first asked for, and kept: the
/// checks that read the value as a producer's type and the render that writes it both walk
/// that one reading. What generated checks reach; not part of the public API.
#[doc(hidden)]
pub trait Captured {
    /// The text as written.
    fn text(&self) -> &str;

    /// The value as a deserializer over its tape; `None` when the text has no tape (an
    /// object with a repeated key or an escaped key, nesting past serde_json's limit), and is
    /// to be read from the text.
    fn value(&self) -> Option<TapeValue<'_>>;
}

impl Captured for RawJson {
    fn text(&self) -> &str {
        self.0.text()
    }

    fn value(&self) -> Option<TapeValue<'_>> {
        self.0.value()
    }
}

impl Captured for RawObject {
    fn text(&self) -> &str {
        self.0.text()
    }

    fn value(&self) -> Option<TapeValue<'_>> {
        self.0.value()
    }
}

impl<C: Captured + ?Sized> Captured for &C {
    fn text(&self) -> &str {
        (**self).text()
    }

    fn value(&self) -> Option<TapeValue<'_>> {
        (**self).value()
    }
}

fn tape_value<'t>(text: &'t str, tape: &'t OnceLock<Option<Tape>>) -> Option<TapeValue<'t>> {
    let tape = tape.get_or_init(|| Tape::read(text)).as_ref()?;
    Some(TapeValue {
        text,
        toks: &tape.0,
        at: 0,
        share: None,
    })
}

impl<'de> Deserialize<'de> for RawJson {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer
            .deserialize_newtype_struct(RAW_TOKEN, RawVisitor)
            .map(Self)
    }
}

impl<'de> Deserialize<'de> for RawObject {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let captive = deserializer.deserialize_newtype_struct(RAW_TOKEN, RawVisitor)?;
        if !captive.text().starts_with('{') {
            return Err(de::Error::invalid_type(
                unexpected(captive.text()),
                &"a JSON object",
            ));
        }
        Ok(Self(captive))
    }
}

/// A value on a call's tape that is being handed over as an untyped part (see
/// [`TapeValue`]): where its text stands and its place on the call's text and tape, for the
/// [`RawVisitor`] that takes it next. serde's visitors carry nothing but the text, so the rest
/// waits here; the visitor takes it only for that very slice.
struct Handed {
    at: usize,
    captive: Captive,
}

thread_local! {
    static HANDED: std::cell::RefCell<Option<Handed>> = const { std::cell::RefCell::new(None) };
}

/// serde_json's name for the text of a `RawValue`, which its deserializers hand over as a
/// one-entry map.
const RAW_TOKEN: &str = "$serde_json::private::RawValue";

/// Takes the text serde_json hands over for a `RawValue`. Any other deserializer (serde's own
/// buffer behind an untagged enum or a flattened field) gives the value itself, which is kept
/// as its JSON: its keys and numbers are then the buffer's, as they would be for a `Value`.
struct RawVisitor;

impl<'de> Visitor<'de> for RawVisitor {
    type Value = Captive;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        // serde_json's reader and its `Value` hand a raw value over as a one-entry map of
        // unknown size, whose text they have just read as JSON: their own `Box<RawValue>`
        // takes it over without reading it again. A map that reports its size (serde's
        // buffers, other formats) holds somebody's data, so its text is checked.
        let handed_over = map.size_hint().is_none();
        let Some(Text(first)) = map.next_key::<Text<'de>>()? else {
            return Ok(Captive::own(raw_of(&Map::new())));
        };
        if first == RAW_TOKEN {
            if handed_over && let Some(handed) = HANDED.with(|handed| handed.borrow_mut().take()) {
                // A call's tape handed this value over with its place on the call: taken
                // when the text is that very slice (same place, same bytes).
                let Text(text) = map.next_value::<Text<'de>>()?;
                if let Cow::Borrowed(text) = text
                    && text.as_ptr() as usize == handed.at
                    && text == handed.captive.text()
                {
                    return Ok(handed.captive);
                }
                return RawValue::from_string(text.into_owned())
                    .map(Captive::own)
                    .map_err(de::Error::custom);
            }
            if handed_over {
                let rest = Rewound {
                    key: Some(RAW_TOKEN),
                    map,
                };
                return Box::<RawValue>::deserialize(de::value::MapAccessDeserializer::new(rest))
                    .map(Captive::own);
            }
            let Text(text) = map.next_value::<Text<'de>>()?;
            return RawValue::from_string(text.into_owned())
                .map(Captive::own)
                .map_err(de::Error::custom);
        }
        let mut object = Map::new();
        object.insert(first.into_owned(), map.next_value()?);
        while let Some((key, value)) = map.next_entry::<String, Value>()? {
            object.insert(key, value);
        }
        Ok(Captive::own(raw_of(&object)))
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        Value::deserialize(d).map(|v| Captive::own(raw_of(&v)))
    }

    fn visit_seq<A: de::SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        Value::deserialize(de::value::SeqAccessDeserializer::new(seq))
            .map(|v| Captive::own(raw_of(&v)))
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
        Ok(Captive::own(raw_of(&v)))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        Ok(Captive::own(raw_of(&v)))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        Ok(Captive::own(raw_of(&v)))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
        Ok(Captive::own(raw_of(&Value::from(v))))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Captive::own(raw_of(v)))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Captive::own(raw_of(&Value::Null)))
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Captive::own(raw_of(&Value::Null)))
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        Value::deserialize(d).map(|v| Captive::own(raw_of(&v)))
    }
}

/// A map whose first key was already read: that key is handed over again, then the rest.
struct Rewound<A> {
    key: Option<&'static str>,
    map: A,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for Rewound<A> {
    type Error = A::Error;

    fn next_key_seed<K: de::DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        match self.key.take() {
            Some(key) => seed
                .deserialize(de::value::BorrowedStrDeserializer::new(key))
                .map(Some),
            None => self.map.next_key_seed(seed),
        }
    }

    fn next_value_seed<V: de::DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, A::Error> {
        self.map.next_value_seed(seed)
    }
}

fn unexpected(text: &str) -> de::Unexpected<'static> {
    match text.as_bytes().first() {
        Some(b'[') => de::Unexpected::Seq,
        Some(b'"') => de::Unexpected::Other("a string"),
        Some(b't' | b'f') => de::Unexpected::Other("a boolean"),
        Some(b'n') => de::Unexpected::Unit,
        _ => de::Unexpected::Other("a number"),
    }
}

/// "an array", "a number", ...: the kind of JSON value `text` holds, for messages that must not
/// echo the value itself.
pub(crate) fn type_name(text: &str) -> &'static str {
    match text.trim_start().as_bytes().first() {
        Some(b'{') => "an object",
        Some(b'[') => "an array",
        Some(b'"') => "a string",
        Some(b't' | b'f') => "a boolean",
        Some(b'n') => "null",
        _ => "a number",
    }
}

/// An object's entries, borrowed from its text where no escape is in the way.
pub(crate) type Entries<'a> = Vec<(Cow<'a, str>, &'a RawValue)>;

/// The entries of the object `text`, in document order (see [`RawObject::entries`]).
pub(crate) fn entries(text: &str) -> Result<Entries<'_>, serde_json::Error> {
    serde_json::from_str::<Ordered<'_>>(text).map(|o| o.0)
}

/// Deserializes an object into its entries, in order.
pub(crate) struct Ordered<'a>(pub(crate) Entries<'a>);

impl<'de> Deserialize<'de> for Ordered<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Ordered<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut entries = Vec::with_capacity(map.size_hint().unwrap_or(0));
                while let Some(Text(key)) = map.next_key()? {
                    entries.push((key, map.next_value::<&'de RawValue>()?));
                }
                dedupe(&mut entries);
                Ok(Ordered(entries))
            }
        }
        deserializer.deserialize_map(V)
    }
}

/// A JSON string, borrowed from the text when it holds no escape.
pub(crate) struct Text<'a>(pub(crate) Cow<'a, str>);

impl<'de> Deserialize<'de> for Text<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Text<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Text(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Text(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(Text(Cow::Owned(v)))
            }
        }
        deserializer.deserialize_str(V)
    }
}

/// A repeated key keeps its first place and takes the last value, as serde_json's maps do
/// (which is also what the validator sees).
pub(crate) fn dedupe<K: AsRef<str>, V>(entries: &mut Vec<(K, V)>) {
    let n = entries.len();
    let mut moves: Vec<(usize, usize)> = Vec::new();
    if n <= 8 {
        for i in 1..n {
            if let Some(first) = (0..i).find(|&j| entries[j].0.as_ref() == entries[i].0.as_ref()) {
                moves.push((i, first));
            }
        }
    } else {
        let mut first: HashMap<&str, usize> = HashMap::with_capacity(n);
        for (i, (key, _)) in entries.iter().enumerate() {
            match first.entry(key.as_ref()) {
                std::collections::hash_map::Entry::Occupied(at) => moves.push((i, *at.get())),
                std::collections::hash_map::Entry::Vacant(slot) => {
                    slot.insert(i);
                }
            }
        }
    }
    if moves.is_empty() {
        return;
    }
    // `moves` is in document order, so the last value of a key is the one that stays.
    let mut repeated = vec![false; n];
    for &(from, first) in &moves {
        // `first < from`: the later value moves to the first place; what it displaces goes.
        let (head, tail) = entries.split_at_mut(from);
        std::mem::swap(&mut head[first].1, &mut tail[0].1);
        repeated[from] = true;
    }
    let mut at = 0;
    entries.retain(|_| {
        at += 1;
        !repeated[at - 1]
    });
}

/// Serializes JSON text: objects in document order (a repeated key keeps its first place and
/// its last value), strings decoded, numbers handed over as their text (serde_json's raw-value
/// token), so a serde_json serializer writes them verbatim and `|markdown` shows them as
/// written. The text is one JSON value that serde_json already read (a slice of a call, a
/// `RawValue`); it is scanned once into a borrowed tree, not re-read level by level.
pub(crate) struct Walk<'a>(pub(crate) &'a str);

impl Serialize for Walk<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut scan = Scan {
            text: self.0,
            at: 0,
        };
        let node = scan.value(0).map_err(ser::Error::custom)?;
        scan.space();
        if scan.at != self.0.len() {
            return Err(ser::Error::custom(scan.error("trailing characters")));
        }
        node.serialize(serializer)
    }
}

/// One JSON value borrowed from its text.
enum Node<'a> {
    Object(Vec<(Cow<'a, str>, Node<'a>)>),
    Array(Vec<Node<'a>>),
    Str(Cow<'a, str>),
    /// A number as written.
    Number(&'a str),
    Bool(bool),
    Null,
}

impl Serialize for Node<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Object(entries) => {
                let mut map = serializer.serialize_map(Some(entries.len()))?;
                for (key, value) in entries {
                    map.serialize_entry(key.as_ref(), value)?;
                }
                map.end()
            }
            Self::Array(items) => {
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Self::Str(text) => serializer.serialize_str(text),
            Self::Number(text) => RawToken(text).serialize(serializer),
            Self::Bool(b) => serializer.serialize_bool(*b),
            Self::Null => serializer.serialize_unit(),
        }
    }
}

/// Nesting [`Scan`] follows at most: serde_json's own limit, which the text already passed.
const SCAN_DEPTH: usize = 128;

/// A one-pass reader of JSON text into [`Node`]s. It expects JSON serde_json accepted, and
/// answers anything else with an error (never a panic).
struct Scan<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Scan<'a> {
    fn error(&self, what: &str) -> String {
        format!("{what} at byte {} of a JSON value", self.at)
    }

    fn space(&mut self) {
        let bytes = self.text.as_bytes();
        while matches!(bytes.get(self.at), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    /// Skips whitespace, then `byte` if it is next.
    fn eat(&mut self, byte: u8) -> bool {
        self.space();
        let next = self.text.as_bytes().get(self.at) == Some(&byte);
        self.at += usize::from(next);
        next
    }

    fn value(&mut self, depth: usize) -> Result<Node<'a>, String> {
        if depth > SCAN_DEPTH {
            return Err(self.error("nesting too deep"));
        }
        self.space();
        let rest = &self.text[self.at..];
        match rest.as_bytes().first() {
            Some(b'{') => {
                self.at += 1;
                let mut entries = Vec::new();
                if !self.eat(b'}') {
                    loop {
                        self.space();
                        let key = self.string()?;
                        if !self.eat(b':') {
                            return Err(self.error("expected `:`"));
                        }
                        entries.push((key, self.value(depth + 1)?));
                        if self.eat(b',') {
                            continue;
                        }
                        if self.eat(b'}') {
                            break;
                        }
                        return Err(self.error("expected `,` or `}`"));
                    }
                }
                dedupe(&mut entries);
                Ok(Node::Object(entries))
            }
            Some(b'[') => {
                self.at += 1;
                let mut items = Vec::new();
                if !self.eat(b']') {
                    loop {
                        items.push(self.value(depth + 1)?);
                        if self.eat(b',') {
                            continue;
                        }
                        if self.eat(b']') {
                            break;
                        }
                        return Err(self.error("expected `,` or `]`"));
                    }
                }
                Ok(Node::Array(items))
            }
            Some(b'"') => self.string().map(Node::Str),
            Some(b'-' | b'0'..=b'9') => {
                let len = rest
                    .bytes()
                    .position(|b| !matches!(b, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'))
                    .unwrap_or(rest.len());
                self.at += len;
                Ok(Node::Number(&rest[..len]))
            }
            _ => {
                let (node, len) = if rest.starts_with("true") {
                    (Node::Bool(true), 4)
                } else if rest.starts_with("false") {
                    (Node::Bool(false), 5)
                } else if rest.starts_with("null") {
                    (Node::Null, 4)
                } else {
                    return Err(self.error("expected a JSON value"));
                };
                self.at += len;
                Ok(node)
            }
        }
    }

    /// A string at `self.at`: borrowed when it has no escape, else decoded by serde_json.
    fn string(&mut self) -> Result<Cow<'a, str>, String> {
        let start = self.at;
        let bytes = self.text.as_bytes();
        if bytes.get(start) != Some(&b'"') {
            return Err(self.error("expected a string"));
        }
        let mut at = start + 1;
        let mut escaped = false;
        loop {
            let Some(found) = memchr::memchr2(b'"', b'\\', &bytes[at..]) else {
                return Err(self.error("unterminated string"));
            };
            at += found;
            if bytes[at] == b'"' {
                break;
            }
            escaped = true;
            at += 2;
            if at > bytes.len() {
                return Err(self.error("unterminated string"));
            }
        }
        self.at = at + 1;
        if escaped {
            let Text(text) =
                serde_json::from_str(&self.text[start..=at]).map_err(|e| e.to_string())?;
            Ok(Cow::Owned(text.into_owned()))
        } else {
            Ok(Cow::Borrowed(&self.text[start + 1..at]))
        }
    }
}

/// A number's text, serialized the way serde_json serializes a `RawValue`: a struct named by
/// its raw-value token, so its serializers (and `|markdown`) write the text verbatim.
struct RawToken<'a>(&'a str);

impl Serialize for RawToken<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut s = serializer.serialize_struct(RAW_TOKEN, 1)?;
        s.serialize_field(RAW_TOKEN, self.0)?;
        s.end()
    }
}

/// JSON text read once into a flat list of its parts, in document order: each container is
/// followed by its parts (an object's as key, value, key, value, ...) and knows where it ends,
/// so a walk steps over a whole value without reading it. Only for text whose objects have
/// plain keys (no escape) each written once: a repeated key, which serde_json resolves
/// (first place, last value), is left to [`Walk`] and to serde_json.
#[derive(Clone, Debug)]
pub(crate) struct Tape(pub(crate) Vec<Tok>);

/// One part of a [`Tape`]: where it stands in the text (a string with its quotes), how many
/// entries or items a container has, and the index just past it and its parts.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Tok {
    pub(crate) kind: Kind,
    pub(crate) start: u32,
    pub(crate) end: u32,
    pub(crate) len: u32,
    pub(crate) next: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Object,
    Array,
    /// A string with no escape.
    Str,
    /// A string with an escape, decoded by serde_json when read.
    Escaped,
    Number,
    True,
    False,
    Null,
}

/// An object with more keys than this has no tape: the repeated-key check stays linear.
pub(crate) const TAPE_KEYS: usize = 32;

/// The most parts a tape's buffer may hold to be kept for the thread's next call (1 MiB).
const KEPT_TAPE_PARTS: usize = (1 << 20) / std::mem::size_of::<Tok>();

thread_local! {
    /// The buffer of a tape dropped before, emptied, for the next call's tape: a call's tape
    /// holds about one part per eight bytes of its text, so a 200 KB call's is allocated (and
    /// its pages first touched) once per thread rather than once per call.
    static KEPT_TAPE: std::cell::Cell<Vec<Tok>> = const { std::cell::Cell::new(Vec::new()) };
}

impl Tape {
    /// An empty buffer for a tape of about `parts` parts: the kept one when there is one.
    pub(crate) fn buffer(parts: usize) -> Vec<Tok> {
        let mut toks = KEPT_TAPE
            .try_with(std::cell::Cell::take)
            .unwrap_or_default();
        toks.reserve(parts);
        toks
    }
}

impl Drop for Tape {
    fn drop(&mut self) {
        let toks = std::mem::take(&mut self.0);
        if toks.capacity() > KEPT_TAPE_PARTS {
            return;
        }
        let _ = KEPT_TAPE.try_with(|kept| {
            let held = kept.take();
            // The larger buffer stays: a call's tape, not a captured value's part of it.
            kept.set(if held.capacity() >= toks.capacity() {
                held
            } else {
                let mut toks = toks;
                toks.clear();
                toks
            });
        });
    }
}

impl Tape {
    /// [`Tape::read`], for the tests that validate a text on its tape.
    pub(crate) fn of(text: &str) -> Option<Tape> {
        Self::read(text)
    }

    /// The tape of `text`, one JSON value serde_json already read; `None` for text it does
    /// not cover (see [`Tape`]) or that is not one value.
    fn read(text: &str) -> Option<Tape> {
        u32::try_from(text.len()).ok()?;
        let mut reader = TapeReader {
            scan: Scan { text, at: 0 },
            toks: Vec::with_capacity(text.len() / 8),
            keys: Vec::new(),
        };
        reader.value(0)?;
        reader.scan.space();
        (reader.scan.at == text.len()).then_some(Tape(reader.toks))
    }
}

struct TapeReader<'a> {
    scan: Scan<'a>,
    toks: Vec<Tok>,
    /// The keys of the objects open now, innermost last.
    keys: Vec<&'a str>,
}

impl<'a> TapeReader<'a> {
    fn push(&mut self, kind: Kind, start: usize, end: usize) -> usize {
        let at = self.toks.len();
        // Every offset fits: the text's length was checked against `u32`.
        self.toks.push(Tok {
            kind,
            start: start as u32,
            end: end as u32,
            len: 0,
            next: (at + 1) as u32,
        });
        at
    }

    /// Closes the container at `at`, which has `len` parts and ends before `self.scan.at`.
    fn close(&mut self, at: usize, len: u32) {
        let next = self.toks.len() as u32;
        let end = self.scan.at as u32;
        let tok = &mut self.toks[at];
        (tok.len, tok.end, tok.next) = (len, end, next);
    }

    fn value(&mut self, depth: usize) -> Option<()> {
        if depth > SCAN_DEPTH {
            return None;
        }
        self.scan.space();
        let start = self.scan.at;
        let rest = &self.scan.text.as_bytes()[start..];
        match rest.first()? {
            b'{' => {
                let me = self.push(Kind::Object, start, start);
                self.scan.at += 1;
                let keys = self.keys.len();
                let mut len = 0;
                if !self.scan.eat(b'}') {
                    loop {
                        self.scan.space();
                        let at = self.scan.at;
                        let (key, escaped) = self.string()?;
                        if escaped
                            || self.keys.len() - keys >= TAPE_KEYS
                            || self.keys[keys..].contains(&key)
                        {
                            return None;
                        }
                        self.keys.push(key);
                        self.push(Kind::Str, at, self.scan.at);
                        if !self.scan.eat(b':') {
                            return None;
                        }
                        self.value(depth + 1)?;
                        len += 1;
                        if self.scan.eat(b',') {
                            continue;
                        }
                        if self.scan.eat(b'}') {
                            break;
                        }
                        return None;
                    }
                }
                self.keys.truncate(keys);
                self.close(me, len);
            }
            b'[' => {
                let me = self.push(Kind::Array, start, start);
                self.scan.at += 1;
                let mut len = 0;
                if !self.scan.eat(b']') {
                    loop {
                        self.value(depth + 1)?;
                        len += 1;
                        if self.scan.eat(b',') {
                            continue;
                        }
                        if self.scan.eat(b']') {
                            break;
                        }
                        return None;
                    }
                }
                self.close(me, len);
            }
            b'"' => {
                let (_, escaped) = self.string()?;
                let kind = if escaped { Kind::Escaped } else { Kind::Str };
                self.push(kind, start, self.scan.at);
            }
            b'-' | b'0'..=b'9' => {
                let len = rest
                    .iter()
                    .position(|b| !matches!(b, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'))
                    .unwrap_or(rest.len());
                self.scan.at += len;
                self.push(Kind::Number, start, self.scan.at);
            }
            _ => {
                let (kind, len) = if rest.starts_with(b"true") {
                    (Kind::True, 4)
                } else if rest.starts_with(b"false") {
                    (Kind::False, 5)
                } else if rest.starts_with(b"null") {
                    (Kind::Null, 4)
                } else {
                    return None;
                };
                self.scan.at += len;
                self.push(kind, start, self.scan.at);
            }
        }
        Some(())
    }

    /// The string at `self.scan.at`: what stands between its quotes, and whether that holds
    /// an escape.
    fn string(&mut self) -> Option<(&'a str, bool)> {
        let text = self.scan.text;
        let bytes = text.as_bytes();
        let start = self.scan.at;
        if bytes.get(start) != Some(&b'"') {
            return None;
        }
        let mut at = start + 1;
        let mut escaped = false;
        loop {
            at += memchr::memchr2(b'"', b'\\', bytes.get(at..)?)?;
            if bytes[at] == b'"' {
                break;
            }
            escaped = true;
            at += 2;
        }
        self.scan.at = at + 1;
        Some((text.get(start + 1..at)?, escaped))
    }
}

/// A value on a tape, with the text it was read from. It serializes as `Walk` does
/// (`TapeWalk`) and deserializes as serde_json does from the value's text: containers
/// are walked on the tape, every scalar is handed to serde_json from its own text, and an
/// untyped part ([`RawJson`], [`RawObject`]) takes its text as it stands. What generated checks
/// reach; not part of the public API.
#[doc(hidden)]
#[derive(Clone, Copy)]
pub struct TapeValue<'t> {
    text: &'t str,
    toks: &'t [Tok],
    at: usize,
    /// The call whose text and tape these are, when an untyped part read from here is to
    /// share them (a call's typed input does; a check that reads and drops a value does not).
    share: Option<&'t Arc<Shared>>,
}

impl<'t> TapeValue<'t> {
    fn tok(&self) -> Tok {
        self.toks[self.at]
    }

    fn text_of(&self, tok: Tok) -> &'t str {
        &self.text[tok.start as usize..tok.end as usize]
    }

    /// The value at `at` on `tape`, read from `text`.
    pub(crate) fn on(text: &'t str, tape: &'t Tape, at: usize) -> Self {
        Self {
            text,
            toks: &tape.0,
            at,
            share: None,
        }
    }

    /// The value at `at` on a call's tape, whose untyped parts share the call's text and tape.
    pub(crate) fn shared(shared: &'t Arc<Shared>, at: usize) -> Self {
        Self {
            text: &shared.text,
            toks: &shared.tape.0,
            at,
            share: Some(shared),
        }
    }

    /// This value's part of the tape, its offsets counted from its own text.
    #[cfg(test)]
    fn part(&self) -> Tape {
        let tok = self.tok();
        let (first, base) = (self.at as u32, tok.start);
        Tape(
            self.toks[self.at..tok.next as usize]
                .iter()
                .map(|t| Tok {
                    start: t.start - base,
                    end: t.end - base,
                    next: t.next - first,
                    ..*t
                })
                .collect(),
        )
    }

    /// The value at `at` on the same tape.
    pub(crate) fn at(&self, at: usize) -> Self {
        Self { at, ..*self }
    }

    /// The key at `at` (a plain string), without its quotes.
    fn key(&self, at: usize) -> &'t str {
        let tok = self.toks[at];
        &self.text[tok.start as usize + 1..tok.end as usize - 1]
    }

    /// serde_json's deserializer over this value's text.
    fn json(&self) -> serde_json::Deserializer<serde_json::de::StrRead<'t>> {
        serde_json::Deserializer::from_str(self.text_of(self.tok()))
    }
}

/// An object's entries (with their keys) or an array's items (with none), in order.
pub(crate) struct TapeIter<'t> {
    value: TapeValue<'t>,
    at: usize,
    left: u32,
}

impl<'t> Iterator for TapeIter<'t> {
    type Item = (Option<&'t str>, TapeValue<'t>);

    fn next(&mut self) -> Option<Self::Item> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let value = self.value;
        if value.kind() == Kind::Object {
            let key = value.key(self.at);
            let part = value.at(self.at + 1);
            self.at = value.toks[self.at + 1].next as usize;
            Some((Some(key), part))
        } else {
            let part = value.at(self.at);
            self.at = value.toks[self.at].next as usize;
            Some((None, part))
        }
    }
}

/// The parts of a value on a tape, for a writer that walks it without serde (`|markdown`).
impl<'t> TapeValue<'t> {
    /// The text, the tape and this value's place on it, for a writer that reads the parts
    /// itself (a [`Tok`]'s offsets are into the text).
    pub(crate) fn on_tape(&self) -> (&'t str, &'t [Tok], usize) {
        (self.text, self.toks, self.at)
    }

    /// What this value is.
    pub(crate) fn kind(&self) -> Kind {
        self.tok().kind
    }

    /// This value's text as written: a string with its quotes.
    pub(crate) fn text(&self) -> &'t str {
        self.text_of(self.tok())
    }

    /// A plain string ([`Kind::Str`]) without its quotes: its value, since it has no escape.
    pub(crate) fn unquoted(&self) -> &'t str {
        self.key(self.at)
    }

    /// An object's entries in document order, each key a plain string (see [`Tape`]); none
    /// for anything else.
    pub(crate) fn entries(self) -> impl Iterator<Item = (&'t str, TapeValue<'t>)> {
        let len = self.container_len(Kind::Object);
        let mut at = self.at + 1;
        (0..len).map(move |_| {
            let entry = (self.key(at), self.at(at + 1));
            at = self.toks[at + 1].next as usize;
            entry
        })
    }

    /// An array's items; none for anything else.
    pub(crate) fn items(self) -> impl Iterator<Item = TapeValue<'t>> {
        let len = self.container_len(Kind::Array);
        let mut at = self.at + 1;
        (0..len).map(move |_| {
            let item = self.at(at);
            at = self.toks[at].next as usize;
            item
        })
    }

    /// The `Value` serde_json builds from this value's text, built from the tape: keys and
    /// plain strings copied as they stand, a small integer parsed here, any other scalar read
    /// by serde_json from its own text (so the numbers are serde_json's, whatever its
    /// features). The tape holds no repeated key, so inserting in document order gives
    /// serde_json's map.
    pub(crate) fn to_value(self) -> Result<Value, serde_json::Error> {
        Ok(match self.kind() {
            Kind::Object => {
                let mut map = serde_json::Map::new();
                for (key, value) in self.entries() {
                    map.insert(key.to_owned(), value.to_value()?);
                }
                Value::Object(map)
            }
            Kind::Array => {
                let mut items = Vec::with_capacity(self.container_len(Kind::Array) as usize);
                for item in self.items() {
                    items.push(item.to_value()?);
                }
                Value::Array(items)
            }
            Kind::Str => Value::String(self.unquoted().to_owned()),
            Kind::Escaped => Value::String(serde_json::from_str(self.text())?),
            Kind::Number => Value::Number(number(self.text())?),
            Kind::True => Value::Bool(true),
            Kind::False => Value::Bool(false),
            Kind::Null => Value::Null,
        })
    }

    /// How many values this one holds, itself included: each container and scalar once, keys
    /// not counted (each key is a part of the tape, and an object has `len` of them).
    pub(crate) fn count(&self) -> usize {
        let parts = &self.toks[self.at..self.tok().next as usize];
        let keys: usize = parts
            .iter()
            .filter(|tok| tok.kind == Kind::Object)
            .map(|tok| tok.len as usize)
            .sum();
        parts.len() - keys
    }

    /// How many entries or items a container has; 0 for anything else.
    pub(crate) fn len(&self) -> usize {
        match self.kind() {
            Kind::Object | Kind::Array => self.tok().len as usize,
            _ => 0,
        }
    }

    /// What tells this value from the others on its tape, and from those of other tapes.
    pub(crate) fn place(&self) -> (usize, usize) {
        (self.toks.as_ptr() as usize, self.at)
    }

    /// An object's entries and an array's items, as [`TapeValue::entries`] and
    /// [`TapeValue::items`] give them, in a type that can be named.
    pub(crate) fn parts(self) -> TapeIter<'t> {
        let tok = self.tok();
        let len = match tok.kind {
            Kind::Object | Kind::Array => tok.len,
            _ => 0,
        };
        TapeIter {
            value: self,
            at: self.at + 1,
            left: len,
        }
    }

    fn container_len(&self, kind: Kind) -> u32 {
        let tok = self.tok();
        if tok.kind == kind { tok.len } else { 0 }
    }
}

/// A JSON number's text as serde_json reads it. Up to 19 digits without a sign or fraction
/// always fit a `u64`, which is what serde_json makes of them (and, with its
/// `arbitrary_precision`, the same text, since JSON's grammar allows no leading zero).
pub(crate) fn number(text: &str) -> Result<serde_json::Number, serde_json::Error> {
    if (1..=19).contains(&text.len())
        && text.bytes().all(|b| b.is_ascii_digit())
        && let Ok(n) = text.parse::<u64>()
    {
        return Ok(n.into());
    }
    text.parse()
}

/// A value on a tape as compact JSON (what [`Walk`] writes of its text), for tests.
#[cfg(test)]
pub(crate) fn written(value: TapeValue<'_>) -> Option<String> {
    serde_json::to_string(&TapeWalk(value)).ok()
}

/// Writes a [`TapeValue`] exactly as [`Walk`] writes its text.
pub(crate) struct TapeWalk<'t>(pub(crate) TapeValue<'t>);

impl Serialize for TapeWalk<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let value = self.0;
        let tok = value.tok();
        match tok.kind {
            Kind::Object => {
                let mut map = serializer.serialize_map(Some(tok.len as usize))?;
                let mut at = value.at + 1;
                for _ in 0..tok.len {
                    map.serialize_entry(value.key(at), &TapeWalk(value.at(at + 1)))?;
                    at = value.toks[at + 1].next as usize;
                }
                map.end()
            }
            Kind::Array => {
                let mut seq = serializer.serialize_seq(Some(tok.len as usize))?;
                let mut at = value.at + 1;
                for _ in 0..tok.len {
                    seq.serialize_element(&TapeWalk(value.at(at)))?;
                    at = value.toks[at].next as usize;
                }
                seq.end()
            }
            Kind::Str => serializer.serialize_str(value.key(value.at)),
            Kind::Escaped => {
                let Text(text) =
                    serde_json::from_str(value.text_of(tok)).map_err(ser::Error::custom)?;
                serializer.serialize_str(&text)
            }
            Kind::Number => RawToken(value.text_of(tok)).serialize(serializer),
            Kind::True => serializer.serialize_bool(true),
            Kind::False => serializer.serialize_bool(false),
            Kind::Null => serializer.serialize_unit(),
        }
    }
}

macro_rules! by_serde_json {
    ($($method:ident($($arg:ident: $ty:ty),*)),* $(,)?) => {$(
        fn $method<V: Visitor<'t>>(self, $($arg: $ty,)* visitor: V) -> Result<V::Value, serde_json::Error> {
            (&mut self.json()).$method($($arg,)* visitor)
        }
    )*};
}

impl<'t> Deserializer<'t> for TapeValue<'t> {
    type Error = serde_json::Error;

    // A plain string, a boolean and `null` are visited as serde_json visits them (a string
    // without escape is borrowed from the text); numbers and escaped strings go to serde_json,
    // whose features decide what they become.
    fn deserialize_any<V: Visitor<'t>>(self, visitor: V) -> Result<V::Value, serde_json::Error> {
        match self.tok().kind {
            Kind::Object => visitor.visit_map(TapeParts::new(self)),
            Kind::Array => visitor.visit_seq(TapeParts::new(self)),
            Kind::Str => visitor.visit_borrowed_str(self.unquoted()),
            Kind::True => visitor.visit_bool(true),
            Kind::False => visitor.visit_bool(false),
            Kind::Null => visitor.visit_unit(),
            Kind::Escaped | Kind::Number => (&mut self.json()).deserialize_any(visitor),
        }
    }

    fn deserialize_str<V: Visitor<'t>>(self, visitor: V) -> Result<V::Value, serde_json::Error> {
        match self.tok().kind {
            Kind::Str => visitor.visit_borrowed_str(self.unquoted()),
            _ => (&mut self.json()).deserialize_str(visitor),
        }
    }

    fn deserialize_string<V: Visitor<'t>>(self, visitor: V) -> Result<V::Value, serde_json::Error> {
        self.deserialize_str(visitor)
    }

    fn deserialize_identifier<V: Visitor<'t>>(
        self,
        visitor: V,
    ) -> Result<V::Value, serde_json::Error> {
        self.deserialize_str(visitor)
    }

    fn deserialize_bool<V: Visitor<'t>>(self, visitor: V) -> Result<V::Value, serde_json::Error> {
        match self.tok().kind {
            Kind::True => visitor.visit_bool(true),
            Kind::False => visitor.visit_bool(false),
            _ => (&mut self.json()).deserialize_bool(visitor),
        }
    }

    fn deserialize_enum<V: Visitor<'t>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, serde_json::Error> {
        match self.tok().kind {
            // A unit variant by its name, as serde_json reads a string here.
            Kind::Str => {
                visitor.visit_enum(de::value::BorrowedStrDeserializer::new(self.unquoted()))
            }
            _ => (&mut self.json()).deserialize_enum(name, variants, visitor),
        }
    }

    fn deserialize_option<V: Visitor<'t>>(self, visitor: V) -> Result<V::Value, serde_json::Error> {
        match self.tok().kind {
            Kind::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'t>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, serde_json::Error> {
        if name == RAW_TOKEN {
            // An untyped part: its text, which serde_json read, handed over as serde_json
            // hands it (a one-entry map of unknown size), so it is not read again; with its
            // place on the call's text and tape when it shares them.
            let text = self.text_of(self.tok());
            if let Some(shared) = self.share {
                let handed = Handed {
                    at: text.as_ptr() as usize,
                    captive: Captive::Call(Arc::clone(shared), self.at as u32),
                };
                HANDED.with(|slot| *slot.borrow_mut() = Some(handed));
            }
            return visitor.visit_map(HandOver(Some(text)));
        }
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_map<V: Visitor<'t>>(self, visitor: V) -> Result<V::Value, serde_json::Error> {
        match self.tok().kind {
            Kind::Object => visitor.visit_map(TapeParts::new(self)),
            _ => (&mut self.json()).deserialize_map(visitor),
        }
    }

    fn deserialize_struct<V: Visitor<'t>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, serde_json::Error> {
        match self.tok().kind {
            Kind::Object => visitor.visit_map(TapeParts::new(self)),
            _ => (&mut self.json()).deserialize_struct(name, fields, visitor),
        }
    }

    fn deserialize_seq<V: Visitor<'t>>(self, visitor: V) -> Result<V::Value, serde_json::Error> {
        match self.tok().kind {
            Kind::Array => visitor.visit_seq(TapeParts::new(self)),
            _ => (&mut self.json()).deserialize_seq(visitor),
        }
    }

    fn deserialize_ignored_any<V: Visitor<'t>>(
        self,
        visitor: V,
    ) -> Result<V::Value, serde_json::Error> {
        visitor.visit_unit()
    }

    by_serde_json!(
        deserialize_i8(),
        deserialize_i16(),
        deserialize_i32(),
        deserialize_i64(),
        deserialize_i128(),
        deserialize_u8(),
        deserialize_u16(),
        deserialize_u32(),
        deserialize_u64(),
        deserialize_u128(),
        deserialize_f32(),
        deserialize_f64(),
        deserialize_char(),
        deserialize_bytes(),
        deserialize_byte_buf(),
        deserialize_unit(),
        deserialize_unit_struct(name: &'static str),
        deserialize_tuple(len: usize),
        deserialize_tuple_struct(name: &'static str, len: usize),
    );
}

/// A container's parts on a tape: an object's entries or an array's items.
struct TapeParts<'t> {
    value: TapeValue<'t>,
    /// The next part's index (an entry's key).
    at: usize,
    left: u32,
}

impl<'t> TapeParts<'t> {
    fn new(value: TapeValue<'t>) -> Self {
        Self {
            value,
            at: value.at + 1,
            left: value.tok().len,
        }
    }

    /// The value at `at`, and the next part after it.
    fn take(&mut self, at: usize) -> TapeValue<'t> {
        self.at = self.value.toks[at].next as usize;
        self.left -= 1;
        self.value.at(at)
    }
}

impl<'t> MapAccess<'t> for TapeParts<'t> {
    type Error = serde_json::Error;

    fn next_key_seed<K: de::DeserializeSeed<'t>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, serde_json::Error> {
        if self.left == 0 {
            return Ok(None);
        }
        seed.deserialize(de::value::BorrowedStrDeserializer::new(
            self.value.key(self.at),
        ))
        .map(Some)
    }

    fn next_value_seed<V: de::DeserializeSeed<'t>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, serde_json::Error> {
        let value = self.take(self.at + 1);
        seed.deserialize(value)
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.left as usize)
    }
}

impl<'t> de::SeqAccess<'t> for TapeParts<'t> {
    type Error = serde_json::Error;

    fn next_element_seed<T: de::DeserializeSeed<'t>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, serde_json::Error> {
        if self.left == 0 {
            return Ok(None);
        }
        let value = self.take(self.at);
        seed.deserialize(value).map(Some)
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.left as usize)
    }
}

/// A raw value's text handed over as serde_json hands it: one entry, the raw-value token and
/// the text, of unknown size.
struct HandOver<'t>(Option<&'t str>);

impl<'t> MapAccess<'t> for HandOver<'t> {
    type Error = serde_json::Error;

    fn next_key_seed<K: de::DeserializeSeed<'t>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, serde_json::Error> {
        if self.0.is_none() {
            return Ok(None);
        }
        seed.deserialize(de::value::BorrowedStrDeserializer::new(RAW_TOKEN))
            .map(Some)
    }

    fn next_value_seed<V: de::DeserializeSeed<'t>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, serde_json::Error> {
        let text = self.0.take().unwrap_or("null");
        seed.deserialize(de::value::BorrowedStrDeserializer::new(text))
    }
}

/// The path of the first number in `text` (a JSON value, possibly followed by other text)
/// that no `f64` holds (`1e400`), in document order. Called on the error path only, after
/// a parse into `Value` failed; nesting is bounded by serde_json's recursion limit.
pub(crate) fn out_of_range(text: &str) -> Option<Vec<PathSegment>> {
    let mut de = serde_json::Deserializer::from_str(text);
    let raw = <&RawValue>::deserialize(&mut de).ok()?;
    let mut path = Vec::new();
    find_out_of_range(raw, &mut path).then_some(path)
}

fn find_out_of_range(raw: &RawValue, path: &mut Vec<PathSegment>) -> bool {
    let text = raw.get();
    match text.as_bytes().first() {
        Some(b'{') => {
            let Ok(entries) = entries(text) else {
                return false;
            };
            entries.into_iter().any(|(key, value)| {
                path.push(PathSegment::Key(key.into_owned()));
                find_out_of_range(value, path) || {
                    path.pop();
                    false
                }
            })
        }
        Some(b'[') => {
            let Ok(items) = serde_json::from_str::<Vec<&RawValue>>(text) else {
                return false;
            };
            items.into_iter().enumerate().any(|(i, item)| {
                path.push(PathSegment::Index(i));
                find_out_of_range(item, path) || {
                    path.pop();
                    false
                }
            })
        }
        Some(b'-' | b'0'..=b'9') => !text.parse::<f64>().is_ok_and(f64::is_finite),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_calls_tape_buffer_is_kept_for_the_next_call() {
        // On a thread of its own, so no other test's tapes come and go in between.
        std::thread::spawn(|| {
            let text = r#"{"a": [1, 2, {"b": "c"}], "d": "e"}"#;
            let (_, tape) = crate::scan::object_entries(text).unwrap();
            let (at, room) = (tape.0.as_ptr(), tape.0.capacity());
            let part = TapeValue::on(text, &tape, 0).part();
            drop(tape);
            // A smaller tape dropped after it (a captured value's part) does not take its place.
            drop(part);
            let kept = Tape::buffer(1);
            assert_eq!((kept.as_ptr(), kept.capacity(), kept.len()), (at, room, 0));
            // Taken, it is gone: the next buffer is new.
            assert_eq!(Tape::buffer(0).capacity(), 0);
            // A buffer past the bound is let go, one at the bound kept.
            drop(Tape(Vec::with_capacity(KEPT_TAPE_PARTS + 1)));
            assert_eq!(Tape::buffer(0).capacity(), 0);
            drop(Tape(Vec::with_capacity(KEPT_TAPE_PARTS)));
            assert_eq!(Tape::buffer(0).capacity(), KEPT_TAPE_PARTS);
        })
        .join()
        .unwrap();
    }

    /// A value as written from its tape and from its text alone.
    fn both_ways(text: &str) -> (String, String, Option<(String, String)>) {
        let raw: RawJson = serde_json::from_str(text).unwrap();
        let from_tape = (
            serde_json::to_string(&raw).unwrap(),
            crate::to_markdown(&raw).unwrap(),
        );
        let from_text = (
            serde_json::to_string(&Walk(text)).unwrap(),
            crate::to_markdown(&Walk(text)).unwrap(),
        );
        assert_eq!(from_tape, from_text, "{text}");
        (from_tape.0, from_tape.1, raw.value().map(|_| from_text))
    }

    #[test]
    fn a_tape_builds_the_value_serde_json_builds() {
        for text in [
            r#"{"b": 0.60, "a": [1e5, -0, "x\"\\\n", {"c": null, "d": true, "e": false}], "f": {}, "g": []}"#,
            "[0, 7, -5, 1.5, -1.5, 10, 1E2, 1e-2, -9223372036854775808, -9223372036854775809]",
            "[9999999999999999999, 18446744073709551615, 18446744073709551616, 123456789012345678901]",
            " [ \"é\\u00e9\" , \"plain\" ] ",
            r#"{"z": {"y": [[], {}, [{"x": "w"}]]}, "a": 1}"#,
            "\"only a string\"",
            "12.50",
        ] {
            let tape = Tape::read(text).expect("a tape");
            let built = TapeValue::on(text, &tape, 0).to_value().unwrap();
            let read: Value = serde_json::from_str(text).unwrap();
            assert_eq!(built, read, "{text}");
            // Each number of the same kind (u64, i64, f64) as serde_json's, not only equal.
            assert_eq!(built.to_string(), read.to_string(), "{text}");
        }
    }

    #[test]
    fn a_value_reads_the_same_from_its_tape_and_its_text() {
        for text in [
            r#"{"b": 0.60, "a": [1e5, -0, "x\"\\\n", {"c": null, "d": true, "e": false}], "f": {}, "g": []}"#,
            " [ \"é\\u00e9\" , 1 ] ",
            "\"only a string\"",
            "12.50",
        ] {
            assert!(both_ways(text).2.is_some(), "{text} has a tape");
        }
        // Repeated or escaped keys: no tape, the text is walked (first place, last value).
        for text in [r#"{"a": 1, "b": 2, "a": 3}"#, r#"{"\u0061": 1}"#] {
            let (json, _, tape) = both_ways(text);
            assert!(tape.is_none(), "{text}");
            assert!(json.starts_with("{\"a\":"), "{json}");
        }
        let many: String = (0..=TAPE_KEYS)
            .map(|i| format!("\"k{i}\": {i}, "))
            .collect();
        assert!(both_ways(&format!("{{{many}\"z\": 0}}")).2.is_none());
        // An untyped object has its tape too, and so has either through a reference.
        let text = r#"{"k": [1, {"x": "y"}], "n": null}"#;
        let object: RawObject = serde_json::from_str(text).unwrap();
        let json: RawJson = serde_json::from_str(text).unwrap();
        let by_ref = (&object, &json);
        for value in [
            object.value(),
            Captured::value(&by_ref.0),
            Captured::value(&by_ref.1),
        ] {
            assert_eq!(
                written(value.unwrap()).unwrap(),
                r#"{"k":[1,{"x":"y"}],"n":null}"#
            );
        }
    }

    #[derive(Debug, PartialEq, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Probe {
        name: String,
        count: Option<u8>,
        #[serde(default)]
        tags: Vec<Level>,
        #[serde(default)]
        extra: Option<RawObject>,
        #[serde(default)]
        any: Option<RawJson>,
        #[serde(default)]
        ratio: Option<f64>,
        #[serde(default)]
        flag: Option<bool>,
        #[serde(default)]
        misc: Option<Value>,
    }

    #[derive(Debug, PartialEq, serde::Deserialize)]
    enum Level {
        A,
        #[serde(rename = "AA")]
        Aa,
    }

    /// `Probe` read from a value's tape and from its text: the same value or both an error.
    fn same_read(text: &str) -> Option<Probe> {
        let raw: RawJson = serde_json::from_str(text).unwrap();
        let from_tape = raw
            .value()
            .map(|value| crate::checks::deserialize::<Probe, _>(value).ok());
        let mut reader = serde_json::Deserializer::from_str(text);
        let from_text = crate::checks::deserialize::<Probe, _>(&mut reader).ok();
        if let Some(from_tape) = from_tape {
            assert_eq!(from_tape, from_text, "{text}");
        }
        from_text
    }

    #[test]
    fn a_type_reads_the_same_from_a_tape_and_from_text() {
        let read = same_read(
            r#"{"name": "n\u00e9", "count": 3, "tags": ["A", "AA"], "extra": {"x": [1, {"y": 2}]}, "any": [0.60], "ratio": 1e2}"#,
        )
        .unwrap();
        assert_eq!(read.extra.unwrap().get(), r#"{"x": [1, {"y": 2}]}"#);
        assert_eq!(read.any.unwrap().get(), "[0.60]");
        assert_eq!(
            same_read(r#"{"name": "n", "count": null}"#).unwrap().count,
            None
        );
        // Plain strings, booleans and null, which the tape visits itself.
        let read = same_read(
            r#"{"name": "plain", "flag": false, "tags": ["AA"], "misc": {"a": "b", "c": [true, false, null, "x\ny", 1, -0]}}"#,
        )
        .unwrap();
        assert_eq!(
            (read.name.as_str(), read.flag, &read.tags[..]),
            ("plain", Some(false), &[Level::Aa][..])
        );
        assert_eq!(
            read.misc.unwrap().to_string(),
            r#"{"a":"b","c":[true,false,null,"x\ny",1,-0.0]}"#
        );
        for wrong in [
            r#"{"name": "n", "count": 300}"#,
            r#"{"name": "n", "count": -1}"#,
            r#"{"name": "n", "count": 1.5}"#,
            r#"{"name": 1}"#,
            r#"{"name": "n", "tags": ["B"]}"#,
            r#"{"name": "n", "tags": "A"}"#,
            r#"{"name": "n", "tags": ["C"]}"#,
            r#"{"name": "n", "tags": [true]}"#,
            r#"{"name": "n", "tags": [{"A": 1}]}"#,
            r#"{"name": "n", "flag": "true"}"#,
            r#"{"name": "n", "flag": 1}"#,
            r#"{"name": true}"#,
            r#"{"name": null}"#,
            r#"{"name": "n", "extra": [1]}"#,
            r#"{"name": "n", "other": 1}"#,
            r#"{"count": 1}"#,
            r#"["n", 1]"#,
            r#""n""#,
        ] {
            assert_eq!(same_read(wrong), None, "{wrong}");
        }
    }

    #[test]
    fn text_handed_over_by_serde_json_is_taken_as_read() {
        let text = r#"{"z": [1, {"b": 0.60}], "a": "x\ny"}"#;
        let raw: RawObject = serde_json::from_str(text).unwrap();
        assert_eq!(raw.get(), text);
        let from_value: RawJson = serde_json::from_value(serde_json::json!({"k": [1]})).unwrap();
        assert_eq!(from_value.get(), r#"{"k":[1]}"#);
    }

    #[test]
    fn the_raw_value_key_in_somebodys_data_is_checked() {
        // A map that knows its size is data (serde's own map deserializer here, as a format
        // might hand one over): its text is read as JSON before it is kept.
        let map = |text: &'static str| {
            de::value::MapDeserializer::<_, serde_json::Error>::new(std::iter::once((
                RAW_TOKEN, text,
            )))
        };
        assert!(RawJson::deserialize(map("not json")).is_err());
        assert!(RawJson::deserialize(map("[1, 2")).is_err());
        assert_eq!(RawJson::deserialize(map("[1, 2]")).unwrap().get(), "[1, 2]");
    }

    #[test]
    fn a_repeated_key_keeps_its_first_place_and_last_value() {
        for n in [3, 20] {
            let mut text = String::from("{\"a\": 1, \"b\": 2");
            for i in 0..n {
                text.push_str(&format!(", \"k{i}\": {i}"));
            }
            text.push_str(", \"a\": 3, \"a\": 4}");
            let got: Vec<(String, String)> = entries(&text)
                .unwrap()
                .into_iter()
                .map(|(k, v)| (k.into_owned(), v.get().to_owned()))
                .collect();
            assert_eq!(got.len(), n + 2);
            assert_eq!(got[0], ("a".to_owned(), "4".to_owned()));
            assert_eq!(got[1], ("b".to_owned(), "2".to_owned()));
        }
    }

    #[test]
    fn numbers_and_order_survive_a_round_trip() {
        let text = r#"{"z": [0.60, 1e5, 0.000001, -0.0, 123456789012345678901234567890], "a": {"y": "\u00e9\n", "x": null, "w": true}}"#;
        let raw: RawJson = serde_json::from_str(text).unwrap();
        assert_eq!(
            serde_json::to_string(&raw).unwrap(),
            r#"{"z":[0.60,1e5,0.000001,-0.0,123456789012345678901234567890],"a":{"y":"é\n","x":null,"w":true}}"#
        );
    }

    #[test]
    fn the_walk_reads_the_text_once_as_serde_json_would() {
        let text = " {\"k\\\"ey\": {\"d\": 1, \"e\": [ 2 , \"a\\u00e9\\\\\" ], \"d\": {\"x\": -2.50E+3}},\n\t\"b\": [], \"c\": {}, \"k\\\"ey\": {\"z\": false, \"z\": true}, \"n\": null } ";
        let walked = serde_json::to_string(&Walk(text)).unwrap();
        assert_eq!(walked, r#"{"k\"ey":{"z":true},"b":[],"c":{},"n":null}"#);
        let nested = r#"{"d": 1, "e": [2, "é\\"], "d": {"x": -2.50E+3}}"#;
        assert_eq!(
            serde_json::to_string(&Walk(nested)).unwrap(),
            r#"{"d":{"x":-2.50E+3},"e":[2,"é\\"]}"#
        );
        // serde_json's map agrees on the values (it sorts keys and reads numbers as `f64`).
        let ours: Value =
            serde_json::from_str(&serde_json::to_string(&Walk(text)).unwrap()).unwrap();
        let theirs: Value = serde_json::from_str(text).unwrap();
        assert_eq!(ours, theirs);
        // Text that is not one JSON value is an error, never a panic.
        for bad in [
            "",
            "{",
            "[1,",
            "[1 2]",
            r#"{"a" 1}"#,
            r#"{"a": 1,}"#,
            r#""abc"#,
            r#""a\"#,
            "nul",
            "[1] [2]",
            r#"{1: 2}"#,
            r#""\é""#,
        ] {
            assert!(serde_json::to_string(&Walk(bad)).is_err(), "{bad:?}");
        }
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        assert!(serde_json::to_string(&Walk(&deep)).is_err());
    }

    #[test]
    fn the_first_number_beyond_f64_is_found() {
        assert_eq!(
            out_of_range(r#"{"a": [1, {"b": 1e400}], "c": -1e999} trailing"#),
            Some(vec![
                PathSegment::Key("a".into()),
                PathSegment::Index(1),
                PathSegment::Key("b".into())
            ])
        );
        assert_eq!(out_of_range(r#"{"a": 1e300}"#), None);
    }

    #[test]
    fn raw_json_deserializes_inside_untagged_enums_and_flatten() {
        #[derive(serde::Deserialize, Debug)]
        #[serde(untagged)]
        enum Scope {
            Flag(bool),
            Object(RawObject),
        }
        #[derive(serde::Deserialize, Debug)]
        struct Outer {
            #[serde(flatten)]
            rest: std::collections::BTreeMap<String, RawJson>,
        }
        let scope: Scope = serde_json::from_str(r#"{"b": [1, 0.5], "a": true}"#).unwrap();
        let Scope::Object(object) = scope else {
            panic!("{scope:?}")
        };
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(object.get()).unwrap()["b"],
            serde_json::json!([1, 0.5])
        );
        assert!(matches!(
            serde_json::from_str(" true").unwrap(),
            Scope::Flag(true)
        ));
        let outer: Outer = serde_json::from_str(r#"{"x": {"y": [null, "s"]}, "n": 2}"#).unwrap();
        assert_eq!(outer.rest["x"].get(), r#"{"y":[null,"s"]}"#);
        assert_eq!(outer.rest["n"].get(), "2");
        // From a `Value`, as the output side deserializes.
        let value = serde_json::json!({"k": [1, {"z": 1.5}]});
        let raw = RawJson::deserialize(&value).unwrap();
        assert_eq!(serde_json::from_str::<Value>(raw.get()).unwrap(), value);
    }

    /// The handed-over place is taken only by the visitor of that very slice (same place,
    /// same bytes), and only from a map of unknown size, as serde_json hands a raw value over.
    #[test]
    fn a_handed_tape_is_taken_only_for_its_own_slice() {
        let plant = |at: &str, raw: &str| {
            // A call of its own holding `raw`: taken, the value stands on it.
            let shared = Arc::new(Shared {
                text: Arc::from(raw),
                tape: Tape::read(raw).unwrap(),
            });
            let handed = Handed {
                at: at.as_ptr() as usize,
                captive: Captive::Call(shared, 0),
            };
            HANDED.with(|slot| *slot.borrow_mut() = Some(handed));
        };
        let read = |raw: RawJson| (raw.get().to_owned(), matches!(raw.0, Captive::Call(..)));
        let text = r#"[1,"a"]"#;
        let own = (text.to_owned(), false);
        plant(text, text);
        let taken = (text.to_owned(), true);
        assert_eq!(read(serde_json::from_str(text).unwrap()), taken);
        // The same place with other bytes (a buffer used again): the text is copied.
        plant(text, "[2]");
        assert_eq!(read(serde_json::from_str(text).unwrap()), own);
        // The same bytes elsewhere.
        let elsewhere = text.to_owned();
        plant(&elsewhere, text);
        assert_eq!(read(serde_json::from_str(text).unwrap()), own);
        // A map that knows its size is somebody's data: checked, and the tape left in place.
        plant(text, text);
        let map = de::value::MapDeserializer::<_, serde_json::Error>::new(std::iter::once((
            RAW_TOKEN, text,
        )));
        assert_eq!(read(RawJson::deserialize(map).unwrap()), own);
        assert!(HANDED.with(|slot| slot.borrow_mut().take()).is_some());
    }

    /// The call of `text`, whose untyped parts share its text and tape.
    fn call_of(text: &str) -> Arc<Shared> {
        Arc::new(Shared {
            text: Arc::from(text),
            tape: Tape::read(text).unwrap(),
        })
    }

    /// An untyped part of a call's typed input stands on the call's text and tape, shared:
    /// written from it as from its own text; a value read for a check (no call to share)
    /// takes a copy.
    #[test]
    fn an_untyped_part_stands_on_the_calls_tape() {
        let text = r#" {"name": "n", "tags": ["A"], "extra": {"x": [1, {"y": "\u00e9"}], "z": {}}, "any": [true, [null, 0.60]], "ratio": 2}"#;
        let call = call_of(text);
        let probe: Probe = crate::checks::deserialize(TapeValue::shared(&call, 0)).unwrap();
        let extra = probe.extra.unwrap();
        let any = probe.any.unwrap();
        assert!(matches!(
            (&extra.0, &any.0),
            (Captive::Call(..), Captive::Call(..))
        ));
        // Each part holds the call, which the probe's drop does not end.
        assert_eq!(Arc::strong_count(&call), 3);
        let read: Probe =
            crate::checks::deserialize(TapeValue::on(&call.text, &call.tape, 0)).unwrap();
        assert!(matches!(read.extra.as_ref().unwrap().0, Captive::Own(..)));
        assert_eq!(read.extra.unwrap().get(), extra.get());
        assert_eq!(extra.get(), r#"{"x": [1, {"y": "\u00e9"}], "z": {}}"#);
        assert_eq!(any.get(), "[true, [null, 0.60]]");
        assert_eq!(
            written(extra.value().unwrap()).unwrap(),
            serde_json::to_string(&Walk(extra.get())).unwrap()
        );
        assert_eq!(
            written(any.value().unwrap()).unwrap(),
            r#"[true,[null,0.60]]"#
        );
        assert_eq!(
            crate::to_markdown(&extra).unwrap(),
            crate::to_markdown(&Walk(extra.get())).unwrap()
        );
    }

    /// The tape's bounds: an object of `TAPE_KEYS` keys has one, of one more key not; the
    /// count is per object, and the deepest value serde_json reads still has one.
    #[test]
    fn the_tape_bounds_are_exact() {
        let keys = |n: usize| {
            (0..n)
                .map(|i| format!("\"k{i}\": {i}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let has_tape = |text: &str| Tape::read(text).is_some();
        assert!(has_tape(&format!("{{{}}}", keys(TAPE_KEYS))));
        assert!(!has_tape(&format!("{{{}}}", keys(TAPE_KEYS + 1))));
        assert!(has_tape(&format!(
            "{{{}, \"in\": {{\"a\": 1, \"b\": {{\"c\": 2}}}}}}",
            keys(TAPE_KEYS - 1)
        )));
        assert!(has_tape(&format!(
            "[{{{}}}, {{{}}}]",
            keys(TAPE_KEYS),
            keys(TAPE_KEYS)
        )));
        let deepest = (1..200)
            .map(|n| format!("{}1{}", "[".repeat(n), "]".repeat(n)))
            .take_while(|text| serde_json::from_str::<Value>(text).is_ok())
            .last()
            .unwrap();
        assert!(has_tape(&deepest), "{}", deepest.len());
        let tape = Tape::read(&deepest).unwrap();
        assert_eq!(written(TapeValue::on(&deepest, &tape, 0)).unwrap(), deepest);
        // Its own guard: a scalar at `SCAN_DEPTH` levels is read, one level more is not.
        let nested = |n: usize| format!("{}1{}", "[".repeat(n), "]".repeat(n));
        assert!(has_tape(&nested(SCAN_DEPTH)));
        assert!(!has_tape(&nested(SCAN_DEPTH + 1)));
        // In objects alike.
        let in_objects = |n: usize| format!("{}1{}", "{\"a\": ".repeat(n), "}".repeat(n));
        assert!(has_tape(&in_objects(SCAN_DEPTH)));
        assert!(!has_tape(&in_objects(SCAN_DEPTH + 1)));
    }

    /// Untyped parts keep their part of the tape whichever way the walk reaches them: a map
    /// type's values, and a visitor that asks for anything (an object or an array).
    #[test]
    fn untyped_parts_keep_their_tape_through_maps_and_any() {
        /// What a visitor of anything reads: an object's or an array's untyped parts.
        struct Parts(Vec<RawObject>);
        impl<'de> Deserialize<'de> for Parts {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> Visitor<'de> for V {
                    type Value = Parts;
                    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                        f.write_str("an object or an array of objects")
                    }
                    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Parts, A::Error> {
                        let mut parts = Vec::new();
                        while let Some((_, part)) = map.next_entry::<&str, RawObject>()? {
                            parts.push(part);
                        }
                        Ok(Parts(parts))
                    }
                    fn visit_seq<A: de::SeqAccess<'de>>(
                        self,
                        mut seq: A,
                    ) -> Result<Parts, A::Error> {
                        let mut parts = Vec::new();
                        while let Some(part) = seq.next_element::<RawObject>()? {
                            parts.push(part);
                        }
                        Ok(Parts(parts))
                    }
                }
                deserializer.deserialize_any(V)
            }
        }
        let kept = |parts: &[RawObject]| {
            assert_eq!(parts.len(), 2);
            for part in parts {
                assert!(part.tape_read(), "{}", part.get());
                assert_eq!(
                    written(part.value().unwrap()).unwrap(),
                    serde_json::to_string(&Walk(part.get())).unwrap()
                );
            }
        };
        for text in [
            r#"{"a": {"x": 1}, "b": {"y": [2, {}]}}"#,
            r#"[{"x": 1}, {"y": [2, {}]}]"#,
        ] {
            let call = call_of(text);
            let Parts(parts) = Parts::deserialize(TapeValue::shared(&call, 0)).unwrap();
            kept(&parts);
        }
        let text = r#"{"a": {"x": 1}, "b": {"y": [2, {}]}}"#;
        let call = call_of(text);
        let map: std::collections::BTreeMap<&str, RawObject> =
            Deserialize::deserialize(TapeValue::shared(&call, 0)).unwrap();
        kept(&map.into_values().collect::<Vec<_>>());
    }
}
