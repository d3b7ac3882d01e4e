//! The tape: JSON text read once into a flat list of its parts, and its readers.

use serde::de::{self, Deserialize, Deserializer, MapAccess, Visitor};
use serde::ser::{self, Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::Value;
use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

/// JSON text read once into a flat list of its parts, in document order: each container is
/// followed by its parts (an object's as key, value, key, value, ...) and knows where it ends,
/// so a walk steps over a whole value without reading it. Every object holds each key once,
/// as serde_json's map does: a repeated key keeps its first place and its last value (the
/// reader writes such an object again when it closes). Written by one reader, `read::Pass`.
#[derive(Clone, Debug, Default)]
pub(crate) struct Tape {
    /// The parts.
    pub(crate) toks: Vec<Tok>,
    /// The keys written with an escape, decoded (an escaped key's [`Tok::len`] is its place
    /// here), so every key is a `&str` however it was written.
    pub(crate) keys: Vec<Box<str>>,
}

/// One part of a [`Tape`]: where it stands in the text (a string with its quotes), how many
/// entries or items a container has, and the index just past it and its parts.
///
/// For a key, `kind` is [`Kind::Str`] or [`Kind::Escaped`], and an escaped key's `len` is its
/// place among the tape's decoded keys.
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

/// Up to this many keys, an object's keys are compared one by one as they are read, to find a
/// repeated one; past it, once, when the object closes (so the check stays linear).
pub(crate) const TAPE_KEYS: usize = 32;

/// The most parts a tape's buffer may hold to be kept for the thread's next call (1 MiB).
pub(crate) const KEPT_TAPE_PARTS: usize = (1 << 20) / std::mem::size_of::<Tok>();

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
        let toks = std::mem::take(&mut self.toks);
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

/// A call's text and its tape, which the untyped parts of its typed input share
/// ([`Captive::Call`]) rather than copy.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) text: Arc<str>,
    pub(crate) tape: Tape,
}

/// serde's name for a value of a call's tape handed over with its place: the first key of the
/// map a shared [`TapeValue`] hands an untyped part over as (its place, then the raw-value
/// token and its text).
pub(crate) const SHARED_TOKEN: &str = "$agent_contracts_contract::private::Shared";

thread_local! {
    /// The call whose typed input this thread is reading, while a [`Reading`] lives.
    static READING: std::cell::RefCell<Option<Arc<Shared>>> = const { std::cell::RefCell::new(None) };
}

/// A typed read of a call's input, scoped: while it lives, an untyped part read from the call's
/// tape ([`TapeValue::shared`]) stands on the call's text and tape, shared rather than copied.
/// serde hands a visitor nothing but data, so the value's place comes with its data (see
/// [`SHARED_TOKEN`]) and the call from here. Dropped (at the read's end, or when it panics), it
/// puts back the read it interrupted, if any.
#[must_use = "the read shares the call only while the guard lives"]
pub(crate) struct Reading(Option<Arc<Shared>>);

impl Reading {
    /// The read of `call`'s typed input, from now until the guard is dropped.
    pub(crate) fn of(call: &Arc<Shared>) -> Self {
        Self(READING.with(|reading| reading.replace(Some(Arc::clone(call)))))
    }
}

impl Drop for Reading {
    fn drop(&mut self) {
        let before = self.0.take();
        let _ = READING.try_with(|reading| *reading.borrow_mut() = before);
    }
}

/// The call being read and `index`, if the value at `index` on its tape is `text` itself (the
/// same place, not only the same bytes): what an untyped part handed over with its place
/// stands on.
pub(crate) fn shared_part(text: &str, index: u32) -> Option<(Arc<Shared>, u32)> {
    READING.with(|reading| {
        let reading = reading.borrow();
        let call = reading.as_ref()?;
        let tok = call.tape.toks.get(index as usize)?;
        let part = call.text.get(tok.start as usize..tok.end as usize)?;
        (std::ptr::eq(part, text)).then(|| (Arc::clone(call), index))
    })
}

/// serde_json's name for the text of a `RawValue`, which its deserializers hand over as a
/// one-entry map.
pub(crate) const RAW_TOKEN: &str = "$serde_json::private::RawValue";

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

/// A number's text, serialized the way serde_json serializes a `RawValue`: a struct named by
/// its raw-value token, so its serializers (and `|markdown`) write the text verbatim.
pub(crate) struct RawToken<'a>(pub(crate) &'a str);

impl Serialize for RawToken<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut s = serializer.serialize_struct(RAW_TOKEN, 1)?;
        s.serialize_field(RAW_TOKEN, self.0)?;
        s.end()
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
    tape: &'t Tape,
    at: usize,
    /// The call whose text and tape these are, when an untyped part read from here is to
    /// share them (a call's typed input does; a check that reads and drops a value does not).
    share: Option<&'t Arc<Shared>>,
}

impl<'t> TapeValue<'t> {
    fn tok(&self) -> Tok {
        self.tape.toks[self.at]
    }

    fn text_of(&self, tok: Tok) -> &'t str {
        &self.text[tok.start as usize..tok.end as usize]
    }

    /// The value at `at` on `tape`, read from `text`.
    pub(crate) fn on(text: &'t str, tape: &'t Tape, at: usize) -> Self {
        Self {
            text,
            tape,
            at,
            share: None,
        }
    }

    /// The value at `at` on a call's tape, whose untyped parts share the call's text and tape.
    pub(crate) fn shared(shared: &'t Arc<Shared>, at: usize) -> Self {
        Self {
            text: &shared.text,
            tape: &shared.tape,
            at,
            share: Some(shared),
        }
    }

    /// The value at `at` on the same tape.
    pub(crate) fn at(&self, at: usize) -> Self {
        Self { at, ..*self }
    }

    /// The key at `at`: a plain string without its quotes, an escaped one decoded.
    #[inline]
    pub(crate) fn key(&self, at: usize) -> &'t str {
        let tok = self.tape.toks[at];
        match tok.kind {
            Kind::Str => &self.text[tok.start as usize + 1..tok.end as usize - 1],
            _ => self.tape.keys.get(tok.len as usize).map_or("", |key| key),
        }
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
            self.at = value.tape.toks[self.at + 1].next as usize;
            Some((Some(key), part))
        } else {
            let part = value.at(self.at);
            self.at = value.tape.toks[self.at].next as usize;
            Some((None, part))
        }
    }
}

/// The parts of a value on a tape, for a writer that walks it without serde (`|markdown`).
impl<'t> TapeValue<'t> {
    /// The text, the tape and this value's place on it, for a writer that reads the parts
    /// itself (a [`Tok`]'s offsets are into the text).
    pub(crate) fn on_tape(&self) -> (&'t str, &'t [Tok], usize) {
        (self.text, &self.tape.toks, self.at)
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
        let tok = self.tok();
        &self.text[tok.start as usize + 1..tok.end as usize - 1]
    }

    /// An object's entries in document order (see [`Tape`]); none for anything else.
    pub(crate) fn entries(self) -> impl Iterator<Item = (&'t str, TapeValue<'t>)> {
        self.parts().filter_map(|(key, value)| Some((key?, value)))
    }

    /// An array's items; none for anything else.
    pub(crate) fn items(self) -> impl Iterator<Item = TapeValue<'t>> {
        self.parts()
            .filter_map(|(key, value)| key.is_none().then_some(value))
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
                Value::Array(self.items().map(Self::to_value).collect::<Result<_, _>>()?)
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
        let parts = &self.tape.toks[self.at..self.tok().next as usize];
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

    /// Its place on its tape.
    pub(crate) fn index(&self) -> u32 {
        self.at as u32
    }

    /// What tells this value from the others on its tape, and from those of other tapes.
    pub(crate) fn place(&self) -> (usize, usize) {
        (self.tape.toks.as_ptr() as usize, self.at)
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
                for (key, part) in value.entries() {
                    map.serialize_entry(key, &TapeWalk(part))?;
                }
                map.end()
            }
            Kind::Array => {
                let mut seq = serializer.serialize_seq(Some(tok.len as usize))?;
                for part in value.items() {
                    seq.serialize_element(&TapeWalk(part))?;
                }
                seq.end()
            }
            Kind::Str => serializer.serialize_str(value.unquoted()),
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
            // hands it (a map of unknown size), so it is not read again; after its place on
            // the call's tape when it shares the call (see [`Reading`]).
            let place = self.share.map(|_| self.at as u32);
            return visitor.visit_map(HandOver {
                place,
                text: Some(self.text_of(self.tok())),
            });
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

/// A container's parts on a tape, for serde: an object's entries or an array's items.
struct TapeParts<'t> {
    parts: TapeIter<'t>,
    /// The value of the entry whose key was just given.
    value: Option<TapeValue<'t>>,
}

impl<'t> TapeParts<'t> {
    fn new(value: TapeValue<'t>) -> Self {
        Self {
            parts: value.parts(),
            value: None,
        }
    }
}

impl<'t> MapAccess<'t> for TapeParts<'t> {
    type Error = serde_json::Error;

    fn next_key_seed<K: de::DeserializeSeed<'t>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, serde_json::Error> {
        let Some((key, value)) = self.parts.next() else {
            return Ok(None);
        };
        self.value = Some(value);
        seed.deserialize(de::value::BorrowedStrDeserializer::new(
            key.unwrap_or_default(),
        ))
        .map(Some)
    }

    fn next_value_seed<V: de::DeserializeSeed<'t>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, serde_json::Error> {
        let value = self.value.take();
        seed.deserialize(value.ok_or_else(|| de::Error::custom("a value before its key"))?)
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.parts.left as usize)
    }
}

impl<'t> de::SeqAccess<'t> for TapeParts<'t> {
    type Error = serde_json::Error;

    fn next_element_seed<T: de::DeserializeSeed<'t>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, serde_json::Error> {
        self.parts
            .next()
            .map(|(_, value)| seed.deserialize(value))
            .transpose()
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.parts.left as usize)
    }
}

/// A raw value's text handed over as serde_json hands it, a map of unknown size: the raw-value
/// token and the text; after [`SHARED_TOKEN`] and the value's place on the call's tape, when
/// it shares the call.
struct HandOver<'t> {
    place: Option<u32>,
    text: Option<&'t str>,
}

impl<'t> MapAccess<'t> for HandOver<'t> {
    type Error = serde_json::Error;

    fn next_key_seed<K: de::DeserializeSeed<'t>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, serde_json::Error> {
        let key = match (self.place, self.text) {
            (Some(_), _) => SHARED_TOKEN,
            (None, Some(_)) => RAW_TOKEN,
            (None, None) => return Ok(None),
        };
        seed.deserialize(de::value::BorrowedStrDeserializer::new(key))
            .map(Some)
    }

    fn next_value_seed<V: de::DeserializeSeed<'t>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, serde_json::Error> {
        if let Some(place) = self.place.take() {
            return seed.deserialize(de::value::U32Deserializer::new(place));
        }
        let text = self.text.take().unwrap_or("null");
        seed.deserialize(de::value::BorrowedStrDeserializer::new(text))
    }
}
