//! Classes of JSON Schema keywords that more than one stage sorts a schema's keywords by.
//!
//! The type view (`conditions.rs`) and the generated checks (`emit/checks.rs`) must agree on
//! them: a keyword the view drops as a condition is one the checks leave to the validator.
//! Both read these lists, so they live below both.

/// Keywords that never change validity.
pub(crate) const ANNOTATIONS: &[&str] = &[
    "title",
    "description",
    "default",
    "examples",
    "$comment",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$defs",
    "definitions",
    "$schema",
    // Who gives the field (`"user"`: a person, asked when a call omits it).
    "x-source",
];

/// Keywords that only narrow what an already shaped value may be.
pub(crate) const CONDITIONS: &[&str] = &[
    "if",
    "then",
    "else",
    "contains",
    "minContains",
    "maxContains",
];
