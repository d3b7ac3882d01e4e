//! Untyped values kept as their text: `RawJson`, `RawObject`, and what reads an object's
//! entries in order.

use super::read::Walk;
use super::tape::{
    Kind, RAW_TOKEN, SHARED_TOKEN, Shared, Tape, TapeValue, TapeWalk, Text, dedupe, shared_part,
};
use crate::retry::PathSegment;
use serde::de::{self, Deserialize, Deserializer, MapAccess, Visitor};
use serde::ser::{Serialize, Serializer};
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::borrow::Cow;
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
pub struct RawJson(pub(crate) Captive);

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
pub struct RawObject(pub(crate) Captive);

/// Where an untyped value's text stands.
#[derive(Clone)]
pub(crate) enum Captive {
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
                let tok = shared.tape.toks[*at as usize];
                &shared.text[tok.start as usize..tok.end as usize]
            }
        }
    }

    fn value(&self) -> Option<TapeValue<'_>> {
        match self {
            Self::Own(raw, tape) => tape_value(raw.get(), tape),
            Self::Call(shared, at) => Some(TapeValue::on(&shared.text, &shared.tape, *at as usize)),
        }
    }
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

/// What `RawJson` and `RawObject` share, each over its [`Captive`]: its text, its tape, its
/// JSON as written (serialized from the tape), equality as JSON and serde_json's `Debug`.
macro_rules! captive {
    ($($ty:ident),*) => {$(
        impl $ty {
            /// The text as written.
            pub fn get(&self) -> &str {
                self.0.text()
            }
        }

        impl Captured for $ty {
            fn text(&self) -> &str {
                self.0.text()
            }

            fn value(&self) -> Option<TapeValue<'_>> {
                self.0.value()
            }
        }

        impl Serialize for $ty {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                match self.0.value() {
                    Some(value) => TapeWalk(value).serialize(serializer),
                    None => Walk(self.0.text()).serialize(serializer),
                }
            }
        }

        /// Equal when the JSON is: the same text, or text that parses to the same value.
        impl PartialEq for $ty {
            fn eq(&self, other: &Self) -> bool {
                same_json(self.get(), other.get())
            }
        }

        impl fmt::Debug for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_tuple(stringify!($ty)).field(&self.0).finish()
            }
        }
    )*};
}
captive!(RawJson, RawObject);

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
    Some(TapeValue::on(text, tape, 0))
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

/// Visitor methods that keep a scalar as its JSON.
macro_rules! visit_as_json {
    ($($method:ident($ty:ty)),*) => {$(
        fn $method<E: de::Error>(self, v: $ty) -> Result<Captive, E> {
            Ok(Captive::own(raw_of(&v)))
        }
    )*};
}

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
        if first == SHARED_TOKEN && handed_over {
            // A call's tape hands this value over with its place on the call: it stands on
            // the call being read when its text is that very slice (see `tape::Reading`).
            let index = map.next_value::<u32>()?;
            if map
                .next_key::<Text<'de>>()?
                .is_none_or(|Text(key)| key != RAW_TOKEN)
            {
                return Err(de::Error::custom("a shared value without its text"));
            }
            let Text(text) = map.next_value::<Text<'de>>()?;
            if let Cow::Borrowed(text) = text
                && let Some((call, index)) = shared_part(text, index)
            {
                return Ok(Captive::Call(call, index));
            }
            return RawValue::from_string(text.into_owned())
                .map(Captive::own)
                .map_err(de::Error::custom);
        }
        if first == RAW_TOKEN {
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

    visit_as_json!(
        visit_bool(bool),
        visit_i64(i64),
        visit_u64(u64),
        visit_str(&str)
    );

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
        Ok(Captive::own(raw_of(&Value::from(v))))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Captive::own(raw_of(&Value::Null)))
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        self.visit_unit()
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

/// The path of the first number in `text` (a JSON value, possibly followed by other text)
/// that no `f64` holds (`1e400`), in document order. Called on the error path only, after
/// a parse into `Value` failed.
pub(crate) fn out_of_range(text: &str) -> Option<Vec<PathSegment>> {
    let mut de = serde_json::Deserializer::from_str(text);
    let raw = <&RawValue>::deserialize(&mut de).ok()?;
    let tape = Tape::read(raw.get())?;
    let mut path = Vec::new();
    find_out_of_range(TapeValue::on(raw.get(), &tape, 0), &mut path).then_some(path)
}

fn find_out_of_range(value: TapeValue<'_>, path: &mut Vec<PathSegment>) -> bool {
    if value.kind() == Kind::Number {
        return !value.text().parse::<f64>().is_ok_and(f64::is_finite);
    }
    value.parts().enumerate().any(|(i, (key, part))| {
        path.push(key.map_or(PathSegment::Index(i), |key| PathSegment::Key(key.into())));
        find_out_of_range(part, path) || {
            path.pop();
            false
        }
    })
}
