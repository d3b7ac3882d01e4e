//! A contract's checks as code: what the typed input alone cannot say about the schema.
//!
//! The generated types hold a value's shape; the schema also bounds numbers, lengths, item
//! counts, patterns and the like, which the types leave to the validator. The code generator
//! writes those checks as an [`ContractChecks`] impl for every generated type, so that a call
//! whose typed input deserialized **through [`deserialize`]** and whose
//! [`ContractChecks::satisfies_contract`] is `true` is one the validator accepts too: the
//! validator then runs only to explain a refusal.
//!
//! The checks are conservative: a schema part the generator cannot compile (a union, a
//! `not`, a fractional `multipleOf`, ...) makes them answer `false`, which means "ask the
//! validator", never "invalid". So `false` on a valid value costs a validation; `true` on an
//! invalid one would be a bug.

use serde::de::{
    self, Deserialize, DeserializeSeed, Deserializer, EnumAccess, MapAccess, SeqAccess,
    VariantAccess, Visitor,
};
use std::cmp::Ordering;
use std::fmt;

use crate::json::{Captured, RawJson, RawObject};

/// The checks of a contract that a generated type does not express in its shape.
///
/// `true` means the validator accepts the JSON this value was deserialized from, provided it
/// was deserialized through [`deserialize`]; `false` means the checks failed or could not
/// decide, and the validator must. Generated for every type of a contract.
pub trait ContractChecks {
    /// Whether the value satisfies every check of its schema node.
    fn satisfies_contract(&self) -> bool;
}

/// An untyped part states no checks of its own: the generated code of the schema node around
/// it decides what its schema states (and answers `false` where that is more than "any JSON").
impl ContractChecks for RawJson {
    fn satisfies_contract(&self) -> bool {
        true
    }
}

/// See the impl for [`RawJson`].
impl ContractChecks for RawObject {
    fn satisfies_contract(&self) -> bool {
        true
    }
}

impl<T: ContractChecks + ?Sized> ContractChecks for Box<T> {
    fn satisfies_contract(&self) -> bool {
        (**self).satisfies_contract()
    }
}

/// Deserializes `T` as the checks assume: a struct only from a JSON object.
///
/// serde's derived structs also read their fields from an array (`["a", 1]`), which no
/// `"type": "object"` schema accepts and which the value no longer shows. Everything else
/// passes through unchanged.
///
/// ```
/// #[derive(serde::Deserialize)]
/// struct Pair { a: String, b: u8 }
/// let from = |text| agent_contracts_contract::__private::deserialize_strict::<Pair, _>(&mut serde_json::Deserializer::from_str(text));
/// assert!(from(r#"{"a": "x", "b": 1}"#).is_ok());
/// assert!(from(r#"["x", 1]"#).is_err());
/// ```
#[doc(hidden)]
pub fn deserialize<'de, T: Deserialize<'de>, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<T, D::Error> {
    T::deserialize(Strict(deserializer))
}

/// A deserializer whose structs come from maps only, at every depth.
struct Strict<D>(D);

/// A visitor that hands the wrapped deserializer on to nested values; `object` refuses
/// sequences (the visitor of a struct).
struct Wrap<V> {
    inner: V,
    object: bool,
}

impl<V> Wrap<V> {
    fn any(inner: V) -> Self {
        Self {
            inner,
            object: false,
        }
    }
}

struct Seed<S>(S);
struct Seq<A>(A);
struct Map<A>(A);
struct Enum<A>(A);
struct Variant<A>(A);

macro_rules! forward_deserialize {
    ($($method:ident($($arg:ident: $ty:ty),*)),* $(,)?) => {$(
        fn $method<V: Visitor<'de>>(self, $($arg: $ty,)* visitor: V) -> Result<V::Value, D::Error> {
            self.0.$method($($arg,)* Wrap::any(visitor))
        }
    )*};
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for Strict<D> {
    type Error = D::Error;

    forward_deserialize!(
        deserialize_any(),
        deserialize_bool(),
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
        deserialize_str(),
        deserialize_string(),
        deserialize_bytes(),
        deserialize_byte_buf(),
        deserialize_option(),
        deserialize_unit(),
        deserialize_unit_struct(name: &'static str),
        deserialize_newtype_struct(name: &'static str),
        deserialize_seq(),
        deserialize_tuple(len: usize),
        deserialize_tuple_struct(name: &'static str, len: usize),
        deserialize_map(),
        deserialize_identifier(),
        deserialize_ignored_any(),
    );

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        let visitor = Wrap {
            inner: visitor,
            object: true,
        };
        self.0.deserialize_struct(name, fields, visitor)
    }

    /// An enum from a string (a unit variant) or a one-entry object (a variant with data):
    /// serde_json also reads a unit variant from `{"name": null}`, which no schema of an
    /// enum of strings accepts.
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_any(EnumVisitor(visitor))
    }

    fn is_human_readable(&self) -> bool {
        self.0.is_human_readable()
    }
}

/// Reads an enum as JSON writes one: see [`Strict::deserialize_enum`].
struct EnumVisitor<V>(V);

impl<'de, V: Visitor<'de>> Visitor<'de> for EnumVisitor<V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.expecting(f)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        self.0.visit_enum(de::value::StrDeserializer::new(v))
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        self.0
            .visit_enum(de::value::BorrowedStrDeserializer::new(v))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
        self.0.visit_enum(de::value::StringDeserializer::new(v))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        self.0.visit_enum(MapEnum(Map(map)))
    }
}

/// A variant with data, from a one-entry object.
struct MapEnum<A>(A);

impl<'de, A: MapAccess<'de>> EnumAccess<'de> for MapEnum<A> {
    type Error = A::Error;
    type Variant = Self;

    fn variant_seed<S: DeserializeSeed<'de>>(
        mut self,
        seed: S,
    ) -> Result<(S::Value, Self), A::Error> {
        match self.0.next_key_seed(seed)? {
            Some(key) => Ok((key, self)),
            None => Err(de::Error::invalid_type(de::Unexpected::Map, &"an enum")),
        }
    }
}

impl<'de, A: MapAccess<'de>> MapEnum<A> {
    /// The entry's value, and no second entry.
    fn only<S: DeserializeSeed<'de>>(mut self, seed: S) -> Result<S::Value, A::Error> {
        let value = self.0.next_value_seed(seed)?;
        match self.0.next_key::<de::IgnoredAny>()? {
            None => Ok(value),
            Some(_) => Err(de::Error::invalid_length(2, &"an object of one entry")),
        }
    }
}

impl<'de, A: MapAccess<'de>> VariantAccess<'de> for MapEnum<A> {
    type Error = A::Error;

    fn unit_variant(self) -> Result<(), A::Error> {
        Err(de::Error::invalid_type(
            de::Unexpected::Map,
            &"a unit variant, written as a string",
        ))
    }

    fn newtype_variant_seed<S: DeserializeSeed<'de>>(self, seed: S) -> Result<S::Value, A::Error> {
        self.only(seed)
    }

    fn tuple_variant<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, A::Error> {
        self.only(TupleSeed(len, visitor))
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, A::Error> {
        self.only(StructSeed(fields, visitor))
    }
}

struct TupleSeed<V>(usize, V);

impl<'de, V: Visitor<'de>> DeserializeSeed<'de> for TupleSeed<V> {
    type Value = V::Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<V::Value, D::Error> {
        d.deserialize_tuple(self.0, self.1)
    }
}

struct StructSeed<V>(&'static [&'static str], V);

impl<'de, V: Visitor<'de>> DeserializeSeed<'de> for StructSeed<V> {
    type Value = V::Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<V::Value, D::Error> {
        d.deserialize_struct("", self.0, self.1)
    }
}

macro_rules! forward_visit {
    ($($method:ident($ty:ty)),* $(,)?) => {$(
        fn $method<E: de::Error>(self, v: $ty) -> Result<Self::Value, E> {
            self.inner.$method(v)
        }
    )*};
}

impl<'de, V: Visitor<'de>> Visitor<'de> for Wrap<V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.inner.expecting(f)
    }

    forward_visit!(
        visit_bool(bool),
        visit_i8(i8),
        visit_i16(i16),
        visit_i32(i32),
        visit_i64(i64),
        visit_i128(i128),
        visit_u8(u8),
        visit_u16(u16),
        visit_u32(u32),
        visit_u64(u64),
        visit_u128(u128),
        visit_f32(f32),
        visit_f64(f64),
        visit_char(char),
        visit_str(&str),
        visit_borrowed_str(&'de str),
        visit_string(String),
        visit_bytes(&[u8]),
        visit_borrowed_bytes(&'de [u8]),
        visit_byte_buf(Vec<u8>),
    );

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        self.inner.visit_none()
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        self.inner.visit_unit()
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        self.inner.visit_some(Strict(d))
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        self.inner.visit_newtype_struct(Strict(d))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        if self.object {
            return Err(de::Error::invalid_type(
                de::Unexpected::Seq,
                &"a JSON object",
            ));
        }
        self.inner.visit_seq(Seq(seq))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        self.inner.visit_map(Map(map))
    }

    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<Self::Value, A::Error> {
        self.inner.visit_enum(Enum(data))
    }
}

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for Seed<S> {
    type Value = S::Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        self.0.deserialize(Strict(d))
    }
}

impl<'de, A: SeqAccess<'de>> SeqAccess<'de> for Seq<A> {
    type Error = A::Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, A::Error> {
        self.0.next_element_seed(Seed(seed))
    }

    fn size_hint(&self) -> Option<usize> {
        self.0.size_hint()
    }
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for Map<A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        self.0.next_key_seed(Seed(seed))
    }

    fn next_value_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<T::Value, A::Error> {
        self.0.next_value_seed(Seed(seed))
    }

    fn size_hint(&self) -> Option<usize> {
        self.0.size_hint()
    }
}

impl<'de, A: EnumAccess<'de>> EnumAccess<'de> for Enum<A> {
    type Error = A::Error;
    type Variant = Variant<A::Variant>;

    fn variant_seed<S: DeserializeSeed<'de>>(
        self,
        seed: S,
    ) -> Result<(S::Value, Self::Variant), A::Error> {
        self.0
            .variant_seed(Seed(seed))
            .map(|(value, variant)| (value, Variant(variant)))
    }
}

impl<'de, A: VariantAccess<'de>> VariantAccess<'de> for Variant<A> {
    type Error = A::Error;

    fn unit_variant(self) -> Result<(), A::Error> {
        self.0.unit_variant()
    }

    fn newtype_variant_seed<S: DeserializeSeed<'de>>(self, seed: S) -> Result<S::Value, A::Error> {
        self.0.newtype_variant_seed(Seed(seed))
    }

    fn tuple_variant<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, A::Error> {
        self.0.tuple_variant(len, Wrap::any(visitor))
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, A::Error> {
        let visitor = Wrap {
            inner: visitor,
            object: true,
        };
        self.0.struct_variant(fields, visitor)
    }
}

/// What generated checks call; not part of the public API.
#[doc(hidden)]
pub mod support {
    use super::*;
    pub use crate::json::TapeValue;
    use std::num::{
        NonZeroI8, NonZeroI16, NonZeroI32, NonZeroI64, NonZeroU8, NonZeroU16, NonZeroU32,
        NonZeroU64,
    };
    pub use std::sync::LazyLock;

    use crate::json::Kind;
    use serde_json::value::RawValue;
    use std::borrow::Cow;
    use std::cell::Cell;

    /// A number as the checks compare it: exactly, as the validator does.
    #[derive(Clone, Copy, Debug)]
    pub enum Number {
        /// An integer.
        Int(i128),
        /// A float.
        Float(f64),
    }

    /// Largest magnitude below which every integer is an exact `f64`.
    const EXACT: f64 = 9_007_199_254_740_992.0;

    /// A typed number as a [`Number`].
    pub trait AsNumber {
        /// The number.
        fn number(&self) -> Number;
    }

    macro_rules! ints {
        ($($ty:ty),*) => {$(
            impl AsNumber for $ty {
                fn number(&self) -> Number {
                    Number::Int(*self as i128)
                }
            }
        )*};
    }
    macro_rules! non_zero {
        ($($ty:ty),*) => {$(
            impl AsNumber for $ty {
                fn number(&self) -> Number {
                    Number::Int(self.get() as i128)
                }
            }
        )*};
    }
    ints!(i8, i16, i32, i64, isize, u8, u16, u32, u64, usize);
    non_zero!(
        NonZeroI8, NonZeroI16, NonZeroI32, NonZeroI64, NonZeroU8, NonZeroU16, NonZeroU32,
        NonZeroU64
    );

    impl AsNumber for f64 {
        fn number(&self) -> Number {
            Number::Float(*self)
        }
    }

    impl AsNumber for f32 {
        fn number(&self) -> Number {
            Number::Float(f64::from(*self))
        }
    }

    impl AsNumber for Number {
        fn number(&self) -> Number {
            *self
        }
    }

    /// The first byte of a raw value's text.
    fn first(raw: &RawJson) -> Option<u8> {
        raw.get().trim_start().bytes().next()
    }

    /// Whether an untyped value's text (a contract ties it to a typed schema by a condition)
    /// reads as `T`, as a typed input does, and passes `T`'s checks: the same guarantee as
    /// for a typed field.
    ///
    /// The value is read from its tape (see `Captured`), which the render then walks too, so
    /// its text is scanned once for both; a text without a tape is read by serde_json.
    pub fn raw_satisfies<T>(raw: &impl Captured) -> bool
    where
        T: serde::de::DeserializeOwned + ContractChecks,
    {
        if let Some(value) = raw.value() {
            return deserialize::<T, _>(value).is_ok_and(|value| value.satisfies_contract());
        }
        let mut reader = serde_json::Deserializer::from_str(raw.text());
        deserialize::<T, _>(&mut reader)
            .is_ok_and(|value| reader.end().is_ok() && value.satisfies_contract())
    }

    /// Whether an untyped value satisfies a producer's contract, decided by `verdict` on its
    /// tape in place (the verdict-only read: nothing of `T` is built); a text without a tape
    /// is read as `T` by [`raw_satisfies`].
    pub fn raw_verdict<T, C>(raw: &C, verdict: impl FnOnce(TapeValue<'_>) -> bool) -> bool
    where
        T: serde::de::DeserializeOwned + ContractChecks,
        C: Captured,
    {
        match raw.value() {
            Some(value) => verdict(value),
            None => raw_satisfies::<T>(raw),
        }
    }

    /// `verdict` on the tape of `text`, one JSON value; `None` when the text has no tape (see
    /// `Captured::value`). For tests of generated verdicts.
    pub fn text_verdict(text: &str, verdict: impl FnOnce(TapeValue<'_>) -> bool) -> Option<bool> {
        let raw = RawJson::from(RawValue::from_string(text.to_owned()).ok()?);
        raw.value().map(verdict)
    }

    /// What a verdict could not decide exactly (a number no `f64` holds exactly, a string
    /// serde_json cannot decode): once set, the verdict is `false` ("the validator decides"),
    /// whatever the keyword's place, so a `not` or a `oneOf` never turns "cannot tell" into
    /// "passes".
    #[derive(Debug, Default)]
    pub struct Unsure(Cell<bool>);

    impl Unsure {
        /// Records that something could not be decided; `false`, the answer to give.
        pub fn set(&self) -> bool {
            self.0.set(true);
            false
        }

        /// Whether everything was decided.
        pub fn decided(&self) -> bool {
            !self.0.get()
        }
    }

    /// JSON Schema's type names as bits, for [`tape_type`].
    pub const OBJECT: u8 = 1;
    /// `"array"`.
    pub const ARRAY: u8 = 2;
    /// `"string"`.
    pub const STRING: u8 = 4;
    /// `"number"`.
    pub const NUMBER: u8 = 8;
    /// `"integer"`: a number with no fraction (`5.0` is one).
    pub const INTEGER: u8 = 16;
    /// `"boolean"`.
    pub const BOOLEAN: u8 = 32;
    /// `"null"`.
    pub const NULL: u8 = 64;

    /// Whether a value on a tape has one of the `types` (bits above).
    pub fn tape_type(value: TapeValue<'_>, types: u8, unsure: &Unsure) -> bool {
        let bit = match value.kind() {
            Kind::Object => OBJECT,
            Kind::Array => ARRAY,
            Kind::Str | Kind::Escaped => STRING,
            Kind::True | Kind::False => BOOLEAN,
            Kind::Null => NULL,
            Kind::Number if types & NUMBER != 0 => return true,
            Kind::Number if types & INTEGER == 0 => return false,
            Kind::Number => {
                return match tape_number(value, unsure) {
                    Some(Number::Int(_)) => true,
                    Some(Number::Float(f)) => f.fract() == 0.0,
                    None => false,
                };
            }
        };
        types & bit != 0
    }

    /// An object's entries, in document order (a tape's keys are plain strings, none
    /// repeated); `None` for anything else.
    pub fn tape_entries<'t>(
        value: TapeValue<'t>,
    ) -> Option<impl Iterator<Item = (&'t str, TapeValue<'t>)>> {
        (value.kind() == Kind::Object).then(|| value.entries())
    }

    /// An array's items; `None` for anything else.
    pub fn tape_items<'t>(value: TapeValue<'t>) -> Option<impl Iterator<Item = TapeValue<'t>>> {
        (value.kind() == Kind::Array).then(|| value.items())
    }

    /// How many entries or items a container has.
    pub fn tape_len(value: TapeValue<'_>) -> usize {
        value.len()
    }

    /// A string's value; `None` for anything else, or for an escape serde_json does not
    /// decode (then `unsure` is set).
    pub fn tape_str<'t>(value: TapeValue<'t>, unsure: &Unsure) -> Option<Cow<'t, str>> {
        match value.kind() {
            Kind::Str => Some(Cow::Borrowed(value.unquoted())),
            Kind::Escaped => match serde_json::from_str(value.text()) {
                Ok(s) => Some(Cow::Owned(s)),
                Err(_) => {
                    unsure.set();
                    None
                }
            },
            _ => None,
        }
    }

    /// A number as the checks compare it; `None` for anything else, or for a number no `f64`
    /// holds (then `unsure` is set).
    pub fn tape_number(value: TapeValue<'_>, unsure: &Unsure) -> Option<Number> {
        if value.kind() != Kind::Number {
            return None;
        }
        let text = value.text();
        let number = crate::json::number(text).ok();
        let number = number.and_then(|n| match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => Some(Number::Int(i.into())),
            (_, Some(u), _) => Some(Number::Int(u.into())),
            (_, _, f) => f
                .filter(|f| f.is_finite() && !rounded(text, *f))
                .map(Number::Float),
        });
        if number.is_none() {
            unsure.set();
        }
        number
    }

    /// Whether the float `f` read from `text` may not be the number written: more significant
    /// digits than an `f64` keeps, or a value rounded to zero or below the normal range. A
    /// validator that reads numbers exactly (serde_json's `arbitrary_precision`) may then
    /// decide otherwise, so the verdict does not decide.
    fn rounded(text: &str, f: f64) -> bool {
        let mantissa = text.split(['e', 'E']).next().unwrap_or(text);
        let digits = mantissa.bytes().filter(u8::is_ascii_digit);
        let significant = digits.skip_while(|d| *d == b'0').count();
        let trailing = mantissa.bytes().rev().take_while(|d| *d == b'0').count();
        significant.saturating_sub(trailing) > 15
            || (f == 0.0 && significant > 0)
            || f.is_subnormal()
    }

    /// A boolean's value; `None` for anything else.
    pub fn tape_bool(value: TapeValue<'_>) -> Option<bool> {
        match value.kind() {
            Kind::True => Some(true),
            Kind::False => Some(false),
            _ => None,
        }
    }

    /// Whether the value is `null`.
    pub fn tape_null(value: TapeValue<'_>) -> bool {
        value.kind() == Kind::Null
    }

    /// [`bound`], with "cannot tell" recorded in `unsure`.
    pub fn tape_bound(value: Number, limit: Number, accept: &[Ordering], unsure: &Unsure) -> bool {
        match compare(value, limit) {
            Some(o) => accept.contains(&o),
            None => unsure.set(),
        }
    }

    /// [`equal`], with "cannot tell" recorded in `unsure`.
    pub fn tape_equal(value: Number, other: Number, unsure: &Unsure) -> bool {
        tape_bound(value, other, &[Ordering::Equal], unsure)
    }

    /// [`multiple_of`], with "cannot tell" recorded in `unsure`.
    pub fn tape_multiple_of(value: Number, divisor: u64, unsure: &Unsure) -> bool {
        match value {
            Number::Float(v) if v.abs() >= EXACT => unsure.set(),
            _ => multiple_of(value, divisor),
        }
    }

    /// An untyped value's string, if it is one.
    pub fn raw_str(raw: &RawJson) -> Option<String> {
        (first(raw) == Some(b'"'))
            .then(|| serde_json::from_str(raw.get()).ok())
            .flatten()
    }

    /// An untyped value's number, if it is one, as the validator's `Value` holds it.
    pub fn raw_number(raw: &RawJson) -> Option<Number> {
        if !matches!(first(raw), Some(b'-' | b'0'..=b'9')) {
            return None;
        }
        let n: serde_json::Number = serde_json::from_str(raw.get()).ok()?;
        match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => Some(Number::Int(i.into())),
            (_, Some(u), _) => Some(Number::Int(u.into())),
            (_, _, f) => f.map(Number::Float),
        }
    }

    /// An untyped value's item count, if it is an array; `Err` if its text cannot be read
    /// (the checks then fail).
    pub fn raw_len(raw: &RawJson) -> Result<Option<usize>, serde_json::Error> {
        if first(raw) != Some(b'[') {
            return Ok(None);
        }
        serde_json::from_str::<Vec<&serde_json::value::RawValue>>(raw.get())
            .map(|items| Some(items.len()))
    }

    /// Whether an untyped value has one of the JSON Schema `types`.
    pub fn raw_type(raw: &RawJson, types: &[&str]) -> bool {
        let kind = match first(raw) {
            Some(b'{') => "object",
            Some(b'[') => "array",
            Some(b'"') => "string",
            Some(b't' | b'f') => "boolean",
            Some(b'n') => "null",
            Some(_) => {
                let integral = match raw_number(raw) {
                    Some(Number::Int(_)) => true,
                    Some(Number::Float(f)) => f.fract() == 0.0,
                    None => return false,
                };
                if types.contains(&"number") || (integral && types.contains(&"integer")) {
                    return true;
                }
                return false;
            }
            None => return false,
        };
        types.contains(&kind)
    }

    /// `value` against `limit`, exactly; `None` where the typed value may not be the number
    /// the validator saw (a float at or past 2^53, which may stand for a longer integer) or
    /// where no exact answer is at hand.
    pub fn compare(value: Number, limit: Number) -> Option<Ordering> {
        match (value, limit) {
            (Number::Int(v), Number::Int(l)) => Some(v.cmp(&l)),
            (Number::Float(v), _) if v.is_nan() || v.abs() >= EXACT => None,
            (Number::Float(v), Number::Float(l)) => v.partial_cmp(&l),
            (Number::Float(v), Number::Int(l)) => exact(l).and_then(|l| v.partial_cmp(&l)),
            (Number::Int(v), Number::Float(l)) => match exact(v) {
                Some(v) => v.partial_cmp(&l),
                // |v| >= 2^53: every float that large is integral.
                None if l.is_finite() && l.abs() < 1e38 => Some(v.cmp(&(l as i128))),
                None => None,
            },
        }
    }

    fn exact(i: i128) -> Option<f64> {
        let f = i as f64;
        (f.abs() < EXACT).then_some(f)
    }

    /// Whether `value` passes `minimum`-style bounds: `ordering` lists the accepted answers.
    pub fn bound(value: Number, limit: Number, accept: &[Ordering]) -> bool {
        compare(value, limit).is_some_and(|o| accept.contains(&o))
    }

    /// Whether `value` equals `other` as JSON numbers do (`1 == 1.0`).
    pub fn equal(value: Number, other: Number) -> bool {
        compare(value, other) == Some(Ordering::Equal)
    }

    /// `multipleOf` with a whole divisor (at most 2^53); `false` where that cannot be told
    /// exactly.
    pub fn multiple_of(value: Number, divisor: u64) -> bool {
        if divisor == 0 {
            return false;
        }
        match value {
            Number::Int(v) => v % i128::from(divisor) == 0,
            Number::Float(v) if v.abs() < EXACT => {
                v.fract() == 0.0 && (v as i128) % i128::from(divisor) == 0
            }
            Number::Float(_) => false,
        }
    }

    /// Length in characters (Unicode scalar values), as JSON Schema counts it.
    pub fn chars(s: &str) -> usize {
        s.chars().count()
    }

    /// A pattern, compiled once the way the validator compiles it; `None` if that engine
    /// refuses it (then the checks answer `false`).
    pub type Pattern = LazyLock<Option<regex::Regex>>;

    /// Compiles a pattern the generator translated as the validator does.
    pub fn pattern(translated: &str) -> Option<regex::Regex> {
        regex::Regex::new(translated).ok()
    }

    /// Whether `text` matches `pattern` (anywhere, as JSON Schema's `pattern` does).
    pub fn matches(pattern: &Pattern, text: &str) -> bool {
        pattern.as_ref().is_some_and(|re| re.is_match(text))
    }

    /// Most items compared pairwise for `uniqueItems`; past it the validator decides.
    const MAX_UNIQUE: usize = 64;

    /// `uniqueItems`, for item types whose equality is JSON equality's.
    pub fn unique<T: PartialEq>(items: &[T]) -> bool {
        items.len() <= MAX_UNIQUE
            && items
                .iter()
                .enumerate()
                .all(|(i, a)| items[i + 1..].iter().all(|b| a != b))
    }

    /// The `deserialize_with` of an optional field whose schema refuses `null`: present means
    /// `Some`, and `null` is the inner type's to refuse.
    pub fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
        d: D,
    ) -> Result<Option<T>, D::Error> {
        T::deserialize(d).map(Some)
    }

    /// [`present`] for integer fields, which accept integral floats.
    pub fn present_lenient<'de, D: Deserializer<'de>, T: crate::integer::Lenient<'de>>(
        d: D,
    ) -> Result<Option<T>, D::Error> {
        T::deserialize_lenient(d).map(Some)
    }

    /// The `deserialize_with` of a required field that may be `null`: with it, serde no
    /// longer reads an absent field as `None`.
    pub fn nullable<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
        d: D,
    ) -> Result<Option<T>, D::Error> {
        Option::<T>::deserialize(d)
    }
}

#[cfg(test)]
mod tape_tests;

#[cfg(test)]
mod tests {
    use super::support::*;
    use super::*;
    use std::collections::BTreeMap;

    #[derive(serde::Deserialize, Debug, PartialEq)]
    struct Inner {
        a: String,
    }

    #[derive(serde::Deserialize, Debug, PartialEq)]
    struct Outer {
        items: Vec<Inner>,
        map: BTreeMap<String, Option<Box<Inner>>>,
        raw: RawJson,
    }

    fn strict(text: &str) -> Result<Outer, serde_json::Error> {
        deserialize(&mut serde_json::Deserializer::from_str(text))
    }

    #[test]
    fn structs_come_from_objects_only_at_every_depth() {
        let ok =
            r#"{"items": [{"a": "x"}], "map": {"k": {"a": "y"}, "n": null}, "raw": [1, 0.50]}"#;
        let outer = strict(ok).unwrap();
        assert_eq!(outer.raw.get(), "[1, 0.50]");
        assert_eq!(outer.map["k"].as_deref(), Some(&Inner { a: "y".into() }));
        for bad in [
            r#"{"items": [["x"]], "map": {}, "raw": 1}"#,
            r#"{"items": [], "map": {"k": ["y"]}, "raw": 1}"#,
            r#"[[], {}, 1]"#,
        ] {
            assert!(strict(bad).is_err(), "{bad}");
            // What plain serde accepts.
            let _ = serde_json::from_str::<Outer>(bad);
        }
        assert!(
            serde_json::from_str::<Outer>(r#"{"items": [["x"]], "map": {}, "raw": 1}"#).is_ok()
        );
        let from_value: Outer =
            deserialize(&serde_json::json!({"items": [], "map": {}, "raw": {"z": 1}})).unwrap();
        assert_eq!(from_value.raw.get(), r#"{"z":1}"#);
    }

    #[test]
    fn unit_variants_come_from_strings_only() {
        #[derive(serde::Deserialize, Debug, PartialEq)]
        enum Mode {
            #[serde(rename = "fast")]
            Fast,
            Data(u8),
        }
        let from = |text| deserialize::<Mode, _>(&mut serde_json::Deserializer::from_str(text));
        assert_eq!(from(r#""fast""#).unwrap(), Mode::Fast);
        assert_eq!(from(r#"{"Data": 3}"#).unwrap(), Mode::Data(3));
        assert!(serde_json::from_str::<Mode>(r#"{"fast": null}"#).is_ok());
        assert!(from(r#"{"fast": null}"#).is_err());
        assert!(from(r#"{"Data": 3, "x": 1}"#).is_err());
        assert!(deserialize::<Mode, _>(&serde_json::json!("fast")).is_ok());
        assert!(deserialize::<Mode, _>(&serde_json::json!({"fast": null})).is_err());
    }

    #[test]
    fn numbers_compare_exactly_or_not_at_all() {
        assert!(bound(
            Number::Int(5),
            Number::Float(4.5),
            &[Ordering::Greater]
        ));
        assert!(equal(Number::Int(1), Number::Float(1.0)));
        assert!(!bound(
            Number::Float(9_007_199_254_740_992.0),
            Number::Int(0),
            &[Ordering::Greater]
        ));
        assert_eq!(
            compare(Number::Int(i128::from(u64::MAX)), Number::Float(1e19)),
            Some(Ordering::Greater)
        );
        assert!(multiple_of(Number::Int(-6), 3));
        assert!(!multiple_of(Number::Float(6.5), 3));
        assert!(multiple_of(Number::Float(6.0), 3));
        assert!(unique(&["a", "b"]) && !unique(&[1, 1]));
        assert_eq!(chars("é😀"), 2);
    }

    #[test]
    fn untyped_values_are_read_from_their_text() {
        let raw = |text: &str| -> RawJson { serde_json::from_str(text).unwrap() };
        assert_eq!(raw_str(&raw(r#""a\u00e9""#)).as_deref(), Some("aé"));
        assert_eq!(raw_str(&raw("1")), None);
        assert!(matches!(raw_number(&raw("1.0")), Some(Number::Float(f)) if f == 1.0));
        assert!(matches!(raw_number(&raw("-3")), Some(Number::Int(-3))));
        assert_eq!(raw_len(&raw("[1, [2, 3]]")).unwrap(), Some(2));
        assert_eq!(raw_len(&raw("{}")).unwrap(), None);
        assert!(raw_type(&raw("1.0"), &["integer"]));
        assert!(!raw_type(&raw("1.5"), &["integer"]));
        assert!(raw_type(&raw("null"), &["string", "null"]));
        assert!(!raw_type(&raw("[]"), &["object"]));
    }

    /// What a verdict reads off a tape, each helper on the values it answers for and on
    /// those it leaves alone.
    #[test]
    fn a_verdict_reads_values_on_their_tape() {
        let on = |text: &str, check: &dyn Fn(TapeValue<'_>, &Unsure) -> bool| {
            let unsure = Unsure::default();
            let answer = text_verdict(text, |v| check(v, &unsure)).expect("a tape");
            (answer, unsure.decided())
        };
        let types = |text: &str, types: u8| on(text, &|v, u| tape_type(v, types, u));
        assert_eq!(types("{}", OBJECT), (true, true));
        assert_eq!(types("[]", OBJECT), (false, true));
        assert_eq!(types("[]", ARRAY | NULL), (true, true));
        assert_eq!(types("null", NULL), (true, true));
        assert_eq!(types("false", BOOLEAN), (true, true));
        assert_eq!(types(r#""a\n""#, STRING), (true, true));
        assert_eq!(types("\"a\"", NUMBER | INTEGER), (false, true));
        assert_eq!(types("5.0", INTEGER), (true, true));
        assert_eq!(types("5.5", INTEGER), (false, true));
        assert_eq!(types("5.5", NUMBER), (true, true));
        assert_eq!(types("-7", INTEGER), (true, true));
        assert_eq!(types("7", STRING | BOOLEAN), (false, true));

        let string = |text: &str| {
            let unsure = Unsure::default();
            let s = text_verdict(text, |v| {
                tape_str(v, &unsure).map(|s| s.into_owned()) == Some("aé".into())
            });
            (s, unsure.decided())
        };
        assert_eq!(string(r#""aé""#), (Some(true), true));
        assert_eq!(string(r#""a\u00e9""#), (Some(true), true));
        assert_eq!(string("1"), (Some(false), true));
        // A lone surrogate, which serde_json does not decode.
        assert_eq!(string(r#""\ud800""#), (Some(false), false));

        let count = |text: &str| {
            text_verdict(text, |v| {
                let (entries, items) = (
                    tape_entries(v).map(Iterator::count),
                    tape_items(v).map(Iterator::count),
                );
                (entries, items) == (Some(tape_len(v)), None)
                    || (entries, items) == (None, Some(tape_len(v)))
            })
        };
        assert_eq!(count(r#"{"a": [1, 2], "b": {}}"#), Some(true));
        assert_eq!(count("[1, [2, 3], {}]"), Some(true));
        assert_eq!(count("3"), Some(false));
        assert_eq!(
            text_verdict(r#"{"b": 1, "a": {"c": 2}}"#, |v| {
                tape_entries(v).is_some_and(|e| e.map(|(k, _)| k).eq(["b", "a"]))
            }),
            Some(true)
        );
        assert_eq!(
            text_verdict("[true, false, null, 0]", |v| {
                let items: Vec<_> = tape_items(v).unwrap().collect();
                tape_bool(items[0]) == Some(true)
                    && tape_bool(items[1]) == Some(false)
                    && tape_bool(items[2]).is_none()
                    && tape_null(items[2])
                    && !tape_null(items[3])
            }),
            Some(true)
        );
        // A repeated key: on the tape once, with its last value.
        assert_eq!(
            text_verdict(r#"{"a": 1, "b": 0, "a": 2}"#, |v| {
                tape_entries(v)
                    .is_some_and(|e| e.map(|(k, v)| (k, v.text())).eq([("a", "2"), ("b", "0")]))
            }),
            Some(true)
        );
    }

    #[test]
    fn a_verdicts_numbers_are_compared_exactly_or_left_undecided() {
        let number = |text: &str| {
            let unsure = Unsure::default();
            let mut n = None;
            text_verdict(text, |v| {
                n = tape_number(v, &unsure);
                true
            });
            (n, unsure.decided())
        };
        assert!(matches!(number("12"), (Some(Number::Int(12)), true)));
        assert!(
            matches!(number("18446744073709551615"), (Some(Number::Int(i)), true) if i == i128::from(u64::MAX))
        );
        assert!(matches!(number("-0.5"), (Some(Number::Float(f)), true) if f == -0.5));
        assert!(matches!(number("\"12\""), (None, true)));
        // A float an `f64` does not hold as written: undecided.
        assert!(matches!(number("1e-400"), (None, false)));
        assert!(matches!(number("0.10000000000000000001"), (None, false)));
        assert!(
            matches!(number("1.5000000000000000000"), (Some(Number::Float(f)), true) if f == 1.5)
        );
        assert!(matches!(number("0.0e10"), (Some(Number::Float(f)), true) if f == 0.0));

        let decided = |f: &dyn Fn(&Unsure) -> bool| {
            let unsure = Unsure::default();
            (f(&unsure), unsure.decided())
        };
        let at_least = [Ordering::Greater, Ordering::Equal];
        assert_eq!(
            decided(&|u| tape_bound(Number::Int(3), Number::Int(3), &at_least, u)),
            (true, true)
        );
        assert_eq!(
            decided(&|u| tape_bound(Number::Int(2), Number::Int(3), &at_least, u)),
            (false, true)
        );
        assert_eq!(
            decided(&|u| tape_bound(Number::Float(2.5), Number::Int(2), &[Ordering::Greater], u)),
            (true, true)
        );
        // Past 2^53 a float may stand for another integer: undecided.
        assert_eq!(
            decided(&|u| tape_bound(Number::Float(1e17), Number::Int(0), &at_least, u)),
            (false, false)
        );
        assert_eq!(
            decided(&|u| tape_equal(Number::Float(1.0), Number::Int(1), u)),
            (true, true)
        );
        assert_eq!(
            decided(&|u| tape_equal(Number::Int(2), Number::Int(1), u)),
            (false, true)
        );
        assert_eq!(
            decided(&|u| tape_multiple_of(Number::Int(9), 3, u)),
            (true, true)
        );
        assert_eq!(
            decided(&|u| tape_multiple_of(Number::Float(7.0), 3, u)),
            (false, true)
        );
        assert_eq!(
            decided(&|u| tape_multiple_of(Number::Float(1e17), 3, u)),
            (false, false)
        );
        assert_eq!(decided(&|u| u.set()), (false, false));
    }

    /// A producer's contract on a captured value: decided by the verdict on the value's tape,
    /// or, with no tape (a repeated key), by reading the value as the producer's type.
    #[test]
    fn a_verdict_decides_on_the_tape_and_the_type_without_one() {
        #[derive(serde::Deserialize)]
        struct Named {
            name: String,
        }
        impl ContractChecks for Named {
            fn satisfies_contract(&self) -> bool {
                self.name == "ok"
            }
        }
        let raw = |text: &str| serde_json::from_str::<RawJson>(text).unwrap();
        // On its tape the verdict alone decides, and sees the value.
        assert!(raw_verdict::<Named, _>(&raw(r#"{"name": "no"}"#), |_| true));
        assert!(!raw_verdict::<Named, _>(&raw(r#"{"name": "ok"}"#), |_| {
            false
        }));
        let named = |v: TapeValue<'_>| {
            tape_entries(v).is_some_and(|mut e| {
                e.any(|(k, v)| {
                    k == "name" && tape_str(v, &Unsure::default()).as_deref() == Some("ok")
                })
            })
        };
        assert!(raw_verdict::<Named, _>(&raw(r#"{"name": "ok"}"#), named));
        assert!(!raw_verdict::<Named, _>(&raw(r#"{"name": "no"}"#), named));
        // An escaped key is on the tape, decoded: the verdict decides.
        assert!(raw_verdict::<Named, _>(
            &raw(r#"{"na\u006de": "ok"}"#),
            named
        ));
        assert!(!raw_verdict::<Named, _>(
            &raw(r#"{"na\u006de": "no"}"#),
            named
        ));
        // A repeated key is on the tape once, with its last value, as the validator's `Value`
        // holds it: the verdict decides on that value.
        assert!(raw_verdict::<Named, _>(
            &raw(r#"{"name": "no", "name": "ok"}"#),
            named
        ));
        assert!(!raw_verdict::<Named, _>(
            &raw(r#"{"name": "ok", "name": "no"}"#),
            named
        ));
    }
}
