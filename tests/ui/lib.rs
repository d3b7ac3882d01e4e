//! Nothing: this package holds the derives' compile-fail cases (`<category>/*.rs`, each with
//! its `.stderr`), run by `ui.rs`.
