//! Editing a schema or a template rebuilds the crate that names it: the derive embeds the
//! schema with `include_str!` and askama the template with `include_bytes!`, so rustc lists
//! both in the crate's dep-info and cargo sees them change.
//!
//! The test writes a scratch crate under `CARGO_TARGET_TMPDIR`, builds it with cargo
//! (`--offline`, with this workspace's `Cargo.lock`, so nothing is fetched and versions
//! match), runs it, edits a file, and runs it again. The scratch crate's target directory is
//! kept between runs of the test: only the first run compiles the dependencies (a minute or
//! two); later runs rebuild the scratch crate alone.

use std::path::{Path, PathBuf};
use std::process::Command;

const MAIN: &str = r#"
use agent_core::DynAgent;

#[derive(agent_core::Agent)]
#[agent(name = "scratch", input = "contract.schema.json", user_prompt = "prompt.md")]
struct Scratch;

fn main() {
    let kwargs = std::env::args().nth(1).expect("kwargs as the first argument");
    match Scratch.prepare(&kwargs, &Default::default()) {
        Ok(prepared) => print!("{}", prepared.user_prompt),
        Err(agent_core::PrepareError::Retry(e)) => {
            print!("required {:?}, missing {:?}", e.required_fields, e.missing_fields)
        }
        Err(e) => panic!("{e}"),
    }
}
"#;

const SCHEMA: &str = r#"{
  "type": "object",
  "required": ["url"],
  "properties": { "url": { "type": "string" } }
}"#;

const SCHEMA_WITH_DEPTH: &str = r#"{
  "type": "object",
  "required": ["url", "depth"],
  "properties": { "url": { "type": "string" }, "depth": { "type": "integer" } }
}"#;

/// In askama's default template folder.
const TEMPLATE: &str = "templates/prompt.md";

const KWARGS: &str = r#"{"task": "Crawl", "url": "https://a.example"}"#;

#[test]
fn editing_a_template_or_a_schema_rebuilds() {
    let scratch = Scratch::create();
    scratch.write(TEMPLATE, "{{ task }} {{ url }}");
    scratch.write("contract.schema.json", SCHEMA);
    assert_eq!(scratch.run(KWARGS), "Crawl https://a.example");

    scratch.write(TEMPLATE, "{{ task }} the page at {{ url }}");
    assert_eq!(scratch.run(KWARGS), "Crawl the page at https://a.example");

    scratch.write("contract.schema.json", SCHEMA_WITH_DEPTH);
    assert_eq!(
        scratch.run(KWARGS),
        r#"required ["url", "depth"], missing ["depth"]"#
    );
}

struct Scratch {
    dir: PathBuf,
    target: PathBuf,
}

impl Scratch {
    /// The scratch crate, its files as a first run would find them.
    fn create() -> Self {
        let tmp = Path::new(env!("CARGO_TARGET_TMPDIR")).join("rebuild");
        let scratch = Self {
            dir: tmp.join("scratch"),
            target: tmp.join("target"),
        };
        let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let agent_core = workspace.join("agent-core");
        // `[workspace]`: the scratch crate sits under this workspace's folder, not in it.
        let manifest = format!(
            "[package]\nname = \"scratch\"\nversion = \"0.0.0\"\nedition = \"2024\"\n\
             publish = false\n\n[dependencies]\nagent-core = {{ path = {:?} }}\n\n[workspace]\n",
            agent_core.display().to_string()
        );
        scratch.write("Cargo.toml", &manifest);
        scratch.write("src/main.rs", MAIN);
        let lock = std::fs::read_to_string(workspace.join("Cargo.lock")).unwrap();
        scratch.write("Cargo.lock", &lock);
        scratch
    }

    fn write(&self, file: &str, text: &str) {
        let path = self.dir.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
    }

    /// Builds the scratch crate as it is now and runs it with `kwargs`.
    fn run(&self, kwargs: &str) -> String {
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let output = Command::new(cargo)
            .args(["run", "--quiet", "--offline", "--"])
            .arg(kwargs)
            .current_dir(&self.dir)
            .env("CARGO_TARGET_DIR", &self.target)
            // No debug info: the dependencies build faster and take less room.
            .env("CARGO_PROFILE_DEV_DEBUG", "0")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "scratch crate failed:\n{stderr}");
        String::from_utf8(output.stdout).unwrap()
    }
}
