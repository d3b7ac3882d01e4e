//! Compile-fail tests: the diagnostics of the derives are part of their contract. One minimal
//! case per failure under `<category>/`, each with its checked-in `.stderr`; regenerate them
//! with `TRYBUILD=overwrite cargo test -p agent-tests-ui`.
//!
//! The gotcha: trybuild compiles the cases as binaries of a crate of its own, in
//! `<target>/tests/trybuild/agent-tests-ui/`, and cargo gives them that directory as
//! `CARGO_MANIFEST_DIR`. The derive resolves schema paths against it, and askama looks there
//! for `askama.toml` (and, without one, for `templates/`). So before running the cases, this
//! test mirrors what they name into that directory: `schemas/` (so `input =
//! "schemas/x.json"` means the same there as here), the template folders of `agent-tests`
//! (which shares the schemas and templates with its own tests), and an `askama.toml` naming
//! the mirrored folders by relative paths. Template paths in the
//! diagnostics are then the same wherever the target directory is (askama shows them relative
//! to the crate, which an absolute folder outside the repository would leak into the
//! `.stderr` files).

use std::path::{Path, PathBuf};

#[test]
fn ui() {
    mirror_into_trybuild_project();
    let cases = trybuild::TestCases::new();
    cases.compile_fail("*/*.rs");
}

/// Where trybuild puts its crate: `<target>/tests/trybuild/<this crate's name>/`.
fn trybuild_project() -> PathBuf {
    let target_tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let target = target_tmp
        .parent()
        .expect("CARGO_TARGET_TMPDIR is `<target>/tmp`");
    target.join("tests/trybuild").join(env!("CARGO_PKG_NAME"))
}

fn mirror_into_trybuild_project() {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let project = trybuild_project();
    copy_dir(&here.join("schemas"), &project.join("schemas"));
    // The folders of `agent-tests`' `askama.toml`, in the same order, but for the runtime's
    // templates, which no case names.
    copy_dir(
        &here.join("../../templates"),
        &project.join("workspace_templates"),
    );
    copy_dir(&here.join("../templates"), &project.join("templates"));
    let config = "[general]\ndirs = [\"workspace_templates\", \"templates\"]\n";
    write_if_changed(&project.join("askama.toml"), config);
}

/// Copies a folder tree, files only where they changed.
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create the mirrored folder");
    for entry in std::fs::read_dir(from).expect("read the folder to mirror") {
        let path = entry.expect("read a folder entry").path();
        let target = to.join(path.file_name().expect("a file name"));
        if path.is_dir() {
            copy_dir(&path, &target);
        } else {
            let text = std::fs::read_to_string(&path).expect("read a file to mirror");
            write_if_changed(&target, &text);
        }
    }
}

/// Writes only on change, so trybuild's crate is not rebuilt for nothing.
fn write_if_changed(path: &Path, text: &str) {
    if std::fs::read_to_string(path).ok().as_deref() != Some(text) {
        std::fs::write(path, text).expect("write into trybuild's crate");
    }
}
