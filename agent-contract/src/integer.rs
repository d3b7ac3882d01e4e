//! Integer fields that accept integral floats.
//!
//! JSON Schema counts `5.0` as an integer, and so does the validator; serde's `i64` does not.
//! Generated types deserialize every integer field through [`deserialize`], so a value the
//! schema accepts deserializes. An integer the schema accepts but the Rust type cannot hold
//! (beyond `i64`/`u64`, or a bounded type's range) is an error naming the value.
//!
//! Numbers are read as [`serde_json::Number`], which works with and without serde_json's
//! `arbitrary_precision` feature.

use serde::de::{Deserialize, Deserializer, Error};
use serde_json::Number;
use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasher, Hash};
use std::num::{
    NonZeroI8, NonZeroI16, NonZeroI32, NonZeroI64, NonZeroU8, NonZeroU16, NonZeroU32, NonZeroU64,
};

/// A field type whose integers accept integral floats: an integer, or an `Option`, `Vec`,
/// `Box` or map of such.
#[doc(hidden)]
pub trait Lenient<'de>: Sized {
    /// Deserializes the value, integers leniently.
    fn deserialize_lenient<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error>;
}

/// The `deserialize_with` function of generated integer fields.
///
/// ```
/// # use agent_contracts_contract::__private::integer;
/// #[derive(serde::Deserialize)]
/// struct Call {
///     #[serde(deserialize_with = "integer::deserialize")]
///     n: i64,
/// }
/// let call: Call = serde_json::from_str(r#"{"n": 5.0}"#).unwrap();
/// assert_eq!(call.n, 5);
/// ```
#[doc(hidden)]
pub fn deserialize<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Lenient<'de>,
{
    T::deserialize_lenient(deserializer)
}

/// The exact integer a number stands for, if it is integral and within `i128`.
fn integral(number: &Number) -> Option<i128> {
    if let Some(i) = number.as_i64() {
        return Some(i.into());
    }
    if let Some(u) = number.as_u64() {
        return Some(u.into());
    }
    let f = number.as_f64()?;
    // `i128::MAX` is about 1.7e38; the cast of an integral value below it is exact.
    (f.is_finite() && f.fract() == 0.0 && f.abs() < 1.0e38).then_some(f as i128)
}

fn read<'de, D: Deserializer<'de>, T>(
    deserializer: D,
    name: &str,
    convert: impl FnOnce(i128) -> Option<T>,
) -> Result<T, D::Error> {
    let number = Number::deserialize(deserializer)?;
    integral(&number).and_then(convert).ok_or_else(|| {
        D::Error::custom(format_args!(
            "{number} is not an integer that fits in `{name}`"
        ))
    })
}

macro_rules! integers {
    ($($ty:ty),*) => {$(
        impl<'de> Lenient<'de> for $ty {
            fn deserialize_lenient<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                read(d, stringify!($ty), |i| <$ty>::try_from(i).ok())
            }
        }
    )*};
}

macro_rules! non_zero {
    ($($ty:ty => $base:ty),*) => {$(
        impl<'de> Lenient<'de> for $ty {
            fn deserialize_lenient<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                read(d, stringify!($ty), |i| <$ty>::new(<$base>::try_from(i).ok()?))
            }
        }
    )*};
}

integers!(i8, i16, i32, i64, isize, u8, u16, u32, u64, usize);
non_zero!(
    NonZeroI8 => i8, NonZeroI16 => i16, NonZeroI32 => i32, NonZeroI64 => i64,
    NonZeroU8 => u8, NonZeroU16 => u16, NonZeroU32 => u32, NonZeroU64 => u64
);

/// Deserializes a `T: Lenient` where serde wants `Deserialize` (container elements).
struct Wrap<T>(T);

impl<'de, T: Lenient<'de>> Deserialize<'de> for Wrap<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        T::deserialize_lenient(deserializer).map(Wrap)
    }
}

impl<'de, T: Lenient<'de>> Lenient<'de> for Option<T> {
    fn deserialize_lenient<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Option::<Wrap<T>>::deserialize(d)?.map(|w| w.0))
    }
}

impl<'de, T: Lenient<'de>> Lenient<'de> for Box<T> {
    fn deserialize_lenient<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        T::deserialize_lenient(d).map(Box::new)
    }
}

impl<'de, T: Lenient<'de>> Lenient<'de> for Vec<T> {
    fn deserialize_lenient<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Vec::<Wrap<T>>::deserialize(d)?
            .into_iter()
            .map(|w| w.0)
            .collect())
    }
}

impl<'de, K, V> Lenient<'de> for BTreeMap<K, V>
where
    K: Deserialize<'de> + Ord,
    V: Lenient<'de>,
{
    fn deserialize_lenient<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(BTreeMap::<K, Wrap<V>>::deserialize(d)?
            .into_iter()
            .map(|(k, w)| (k, w.0))
            .collect())
    }
}

impl<'de, K, V, S> Lenient<'de> for HashMap<K, V, S>
where
    K: Deserialize<'de> + Eq + Hash,
    V: Lenient<'de>,
    S: BuildHasher + Default,
{
    fn deserialize_lenient<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(HashMap::<K, Wrap<V>, S>::deserialize(d)?
            .into_iter()
            .map(|(k, w)| (k, w.0))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn read<T: for<'de> Lenient<'de>>(value: Value) -> Result<T, serde_json::Error> {
        deserialize(&value)
    }

    #[test]
    fn integral_floats_are_integers() {
        assert_eq!(read::<i64>(json!(5.0)).unwrap(), 5);
        assert_eq!(read::<i64>(json!(-3)).unwrap(), -3);
        assert_eq!(read::<u64>(json!(u64::MAX)).unwrap(), u64::MAX);
        assert_eq!(read::<NonZeroU64>(json!(2.0)).unwrap().get(), 2);
        let parsed: Value = serde_json::from_str("[1.0, 2.00, 3e0]").unwrap();
        assert_eq!(read::<Vec<i32>>(parsed).unwrap(), [1, 2, 3]);
        assert_eq!(
            read::<Option<BTreeMap<String, u8>>>(json!({"a": 1.0})).unwrap(),
            Some(BTreeMap::from([("a".to_owned(), 1)]))
        );
        assert_eq!(read::<Option<i64>>(Value::Null).unwrap(), None);
    }

    #[test]
    fn out_of_range_and_fractions_are_errors() {
        let big: Value = serde_json::from_str("123456789012345678901234567890").unwrap();
        let error = read::<i64>(big).unwrap_err().to_string();
        assert!(
            error.ends_with("is not an integer that fits in `i64`"),
            "{error}"
        );
        assert!(read::<u8>(json!(256)).is_err());
        assert!(read::<i64>(json!(5.5)).is_err());
        assert!(read::<NonZeroU64>(json!(0)).is_err());
        assert!(read::<u64>(json!(-1)).is_err());
    }
}
