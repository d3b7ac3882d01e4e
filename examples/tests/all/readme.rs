//! README's longer examples are whole programs under `examples/examples/`, which `cargo test`
//! compiles: README shows each file as it is (below its `//!` doc lines), so what a reader
//! copies from the forge is what compiles here.

#[test]
fn readme_shows_each_example_program_as_it_is() {
    let here = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(here.join("../README.md")).expect("README.md");
    let mut shown = 0;
    for entry in std::fs::read_dir(here.join("examples")).expect("examples/examples") {
        let path = entry.expect("a folder entry").path();
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("an example");
        let body: String = text
            .lines()
            .skip_while(|line| line.starts_with("//!"))
            .skip_while(|line| line.is_empty())
            .map(|line| format!("{line}\n"))
            .collect();
        let block = format!("```rust,ignore\n{body}```\n");
        assert!(
            readme.contains(&block),
            "README.md does not show {} as it is; paste it in as:\n{block}",
            path.display()
        );
        shown += 1;
    }
    assert!(shown > 0, "no example programs found");
}
