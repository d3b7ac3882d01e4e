//! Stage 1, schema: a contract as JSON, before anything is typed. Its text is parsed
//! (`parse.rs`), its `$ref`s to sibling contract files bundled in (`bundle.rs`), and it is
//! checked against the rules of what the later stages can type faithfully (`reject.rs`, with
//! the size bounds of `bounds.rs` and the conditions of `conditions.rs`). Problems are found
//! by JSON pointer (`problem.rs`) and reported at `path:line:col` (`locate.rs`).
//!
//! The helpers the rules share sit below them: the schema-aware traversal (`walk.rs`), local
//! `$ref` resolution (`refs.rs`), the keyword classes (`keywords.rs`) and the scalar types of a
//! union (`scalars.rs`).
//!
//! The contract lints (`lints.rs`) refuse what JSON Schema allows but a contract almost never
//! means (a `required` name no property declares, an `enum` value listed twice), and say the
//! validator's refusal of a schema at its keyword.
//!
//! May import: the crate's leaf modules (`error`, `naming`, `suggest`) only. Nothing here knows typify,
//! generated code or the front ends.

pub(crate) mod bounds;
pub(crate) mod bundle;
pub(crate) mod conditions;
pub(crate) mod keywords;
pub(crate) mod lints;
pub(crate) mod locate;
pub(crate) mod parse;
pub(crate) mod problem;
pub(crate) mod refs;
pub(crate) mod reject;
pub(crate) mod scalars;
pub(crate) mod walk;
