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
//!
//! The module, bottom up: `tape` (a value's parts in one flat list, and its readings: a serde
//! `Deserializer`, a `Serialize`, the validator's `Value`), `measure` (depth, value counts and
//! number ranges of text and values), `read` (the one reader: the one pass over JSON text that
//! checks its grammar as serde_json does and writes the tape of every document serde_json
//! accepts; `Walk`, text serialized as written through its tape), `raw` (`RawJson`,
//! `RawObject`: untyped values kept as their text, with their tape).

mod measure;
mod raw;
mod read;
mod tape;

pub use measure::*;
pub use raw::*;
pub(crate) use read::*;
pub use tape::*;

#[cfg(test)]
pub(crate) mod tests;
