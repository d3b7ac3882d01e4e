//! The guide's longer examples are whole programs under `examples/examples/`, which `cargo
//! test` compiles and `cargo run --example` runs: a chapter of `guide/` shows each file as it
//! is (below its `//!` doc lines), so what a reader copies is what compiles here (the chapters'
//! blocks also run as doc tests of the tests crate).

#[test]
fn the_guide_shows_each_example_program_as_it_is() {
    let here = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut guide = String::new();
    for entry in std::fs::read_dir(here.join("../guide")).expect("guide/") {
        let path = entry.expect("a folder entry").path();
        if path.extension().is_some_and(|e| e == "md") {
            guide.push_str(&std::fs::read_to_string(&path).expect("a chapter"));
        }
    }
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
        let block = format!("```rust\n{body}```\n");
        assert!(
            guide.contains(&block),
            "no chapter of guide/ shows {} as it is; paste it in as:\n{block}",
            path.display()
        );
        shown += 1;
    }
    assert!(shown > 0, "no example programs found");
}
