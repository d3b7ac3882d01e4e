//! The program's refusals, each said on stderr with a non-zero exit: no server URL, a context
//! that is not JSON, a scenario it does not know. (The suite itself runs it in
//! `scripts/mcp_conformance.sh`; this test also has `cargo test` build it, so CI's conformance
//! step finds it built.)

use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_mcp-conformance-client");
const URL: &str = "http://127.0.0.1:9/mcp";

fn run(command: &mut Command) -> (Option<i32>, String) {
    let output = command.output().expect("the program runs");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn it_refuses_what_it_cannot_run_and_says_why() {
    let (code, stderr) = run(Command::new(BIN).env_remove("MCP_CONFORMANCE_CONTEXT"));
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("give the server's URL"), "{stderr}");

    let (code, stderr) = run(Command::new(BIN)
        .arg(URL)
        .env("MCP_CONFORMANCE_SCENARIO", "initialize")
        .env("MCP_CONFORMANCE_CONTEXT", "{"));
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("MCP_CONFORMANCE_CONTEXT is not JSON"),
        "{stderr}"
    );

    let (code, stderr) = run(Command::new(BIN)
        .arg(URL)
        .env("MCP_CONFORMANCE_SCENARIO", "no-such-scenario")
        .env_remove("MCP_CONFORMANCE_CONTEXT"));
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("no-such-scenario: unknown scenario `no-such-scenario`"),
        "{stderr}"
    );
}
