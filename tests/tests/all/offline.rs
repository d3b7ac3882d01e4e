//! Contracts are offline and sandboxed: a remote `$ref`, a `$ref` to a file, or a custom
//! meta-schema is refused both at build time (`agent_contracts_codegen::generate_types`) and at run time
//! (`agent_contracts::Contract::new`), and neither ever opens a connection or a file to resolve it.
//!
//! The proofs: an HTTP `$ref` points at a listener on 127.0.0.1 that must have accepted no
//! connection afterwards; a file `$ref` points at a named pipe, whose opening for reading
//! would block until a writer came (so a build that read it would never return), and which
//! has no reader afterwards.

use agent_contracts::{Contract, contract::ContractError, contract::ContractKind};
use serde_json::{Value, json};
use std::net::TcpListener;
use std::sync::mpsc;
use std::time::Duration;

/// The validator's offline retriever says this for every external document.
const OFFLINE: &str = "Retrieval is disabled, cannot fetch";

fn runtime(schema: &Value) -> Result<Contract, ContractError> {
    Contract::new("offline", ContractKind::Input, schema.clone())
}

fn runtime_error(schema: &Value) -> String {
    match runtime(schema) {
        Ok(_) => panic!("the contract was accepted: {schema}"),
        Err(e) => e.to_string(),
    }
}

fn build_errors(schema: &Value) -> Vec<String> {
    let text = serde_json::to_string_pretty(schema).unwrap();
    match agent_contracts_codegen::generate_types(&text, "offline.schema.json", "Root") {
        Ok(_) => panic!("the schema generated types: {text}"),
        Err(errors) => errors.into_iter().map(|e| e.to_string()).collect(),
    }
}

fn with_ref(reference: &str) -> Value {
    json!({
        "type": "object",
        "properties": {"x": {"$ref": reference}}
    })
}

/// A listener on a free loopback port that never blocks.
fn listener() -> (TcpListener, u16) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    (listener, port)
}

fn assert_no_connection(listener: &TcpListener) {
    match listener.accept() {
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
        Ok((_, peer)) => panic!("something connected from {peer}"),
        Err(e) => panic!("accept failed: {e}"),
    }
}

#[test]
fn a_remote_ref_is_refused_without_a_connection() {
    let (listener, port) = listener();
    let url = format!("http://127.0.0.1:{port}/s.json");
    for schema in [
        with_ref(&url),
        with_ref(&format!("{url}#/$defs/x")),
        json!({"type": "object", "$ref": url}),
        json!({"type": "object", "allOf": [{"$ref": url}]}),
        // A relative reference against a remote base.
        json!({
            "$id": format!("http://127.0.0.1:{port}/root.json"),
            "type": "object",
            "properties": {"x": {"$ref": "other.json"}}
        }),
    ] {
        let message = runtime_error(&schema);
        assert!(
            message.contains(OFFLINE) && message.contains(&format!("127.0.0.1:{port}")),
            "{message}"
        );
        let errors = build_errors(&schema);
        assert!(
            errors
                .iter()
                .any(|e| e.contains("is not supported: contracts are self-contained")),
            "{errors:#?}"
        );
    }
    assert_no_connection(&listener);
    // The usual remote example is refused the same way (no listener: nothing to observe).
    let message = runtime_error(&with_ref("https://example.com/s.json"));
    assert!(
        message.contains(&format!("{OFFLINE} https://example.com/s.json")),
        "{message}"
    );
}

#[test]
fn a_custom_meta_schema_is_refused_without_a_connection() {
    let (listener, port) = listener();
    let schema = json!({
        "$schema": format!("http://127.0.0.1:{port}/meta.json"),
        "type": "object",
        "properties": {"x": {"type": "string"}}
    });
    let message = runtime_error(&schema);
    assert!(
        message.contains(&format!(
            "Unknown meta-schema: 'http://127.0.0.1:{port}/meta.json'"
        )),
        "{message}"
    );
    let errors = build_errors(&schema);
    assert!(
        errors
            .iter()
            .any(|e| e.contains("is not a published JSON Schema draft")),
        "{errors:#?}"
    );
    assert_no_connection(&listener);
}

#[test]
fn a_file_ref_is_refused() {
    for reference in [
        "file:///etc/passwd",
        "../../etc/passwd",
        "/etc/passwd",
        "../schemas/plan_generator_agent/input.schema.json",
    ] {
        // An absolute URI gets the offline retriever's refusal; a relative one has no base to
        // resolve against. Either way the resource "is not present in a registry".
        let message = runtime_error(&with_ref(reference));
        assert!(
            message.contains("is not present in a registry"),
            "{reference}: {message}"
        );
        if reference.starts_with("file:") {
            assert!(message.contains(OFFLINE), "{reference}: {message}");
        }
        let errors = build_errors(&with_ref(reference));
        assert!(
            errors.iter().any(|e| e.contains(&format!(
                "external `$ref` `{reference}` at `/properties/x` is not supported"
            ))),
            "{errors:#?}"
        );
    }
}

/// Runs `job` on its own thread; `None` if it has not returned after a minute (it blocked).
fn returns<T: Send + 'static>(job: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    let (send, receive) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = send.send(job());
    });
    receive.recv_timeout(Duration::from_secs(60)).ok()
}

#[cfg(target_os = "linux")]
#[test]
fn a_file_ref_never_opens_the_file() {
    use std::os::unix::fs::OpenOptionsExt;
    let dir = std::env::temp_dir().join(format!("agent-contracts-offline-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let fifo = dir.join("schema.json");
    let _ = std::fs::remove_file(&fifo);
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let uri = format!("file://{}", fifo.display());
    // Opening a FIFO for reading blocks until a writer opens it, and nothing here writes: a
    // build that tried to read the `$ref` would never return.
    let schema = with_ref(&uri);
    let runtime = returns(move || runtime(&schema).map(drop).map_err(|e| e.to_string()))
        .expect("building the contract blocked: it opened the file");
    let message = runtime.unwrap_err();
    assert!(message.contains(OFFLINE), "{message}");
    let schema = with_ref(&uri);
    let build =
        returns(move || build_errors(&schema)).expect("codegen blocked: it opened the file");
    assert!(
        build.iter().any(|e| e.contains("is not supported")),
        "{build:#?}"
    );
    // And no reader holds it open now: a non-blocking open for writing fails with ENXIO
    // exactly when the FIFO has no reader.
    const O_NONBLOCK: i32 = 0o4000;
    const ENXIO: i32 = 6;
    let writer = std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(O_NONBLOCK)
        .open(&fifo);
    assert_eq!(writer.err().and_then(|e| e.raw_os_error()), Some(ENXIO));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn local_refs_and_the_published_meta_schemas_need_no_fetch() {
    // The same machinery resolves everything a self-contained contract uses, offline.
    let schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://example.com/contracts/root.json",
        "type": "object",
        "properties": {
            "a": {"$ref": "#/$defs/a"},
            "b": {"$ref": "https://example.com/contracts/root.json#/$defs/a"},
            "meta": {"$ref": "https://json-schema.org/draft/2020-12/schema"}
        },
        "$defs": {"a": {"type": "string"}}
    });
    let contract = runtime(&schema).unwrap();
    assert!(
        contract
            .check(
                &json!({"a": "x", "b": "y", "meta": {"type": "string"}}),
                &agent_contracts::Limits::default()
            )
            .is_ok()
    );
    assert!(
        contract
            .check(
                &json!({"meta": {"type": 12}}),
                &agent_contracts::Limits::default()
            )
            .is_err()
    );
    // Every contract of `schemas/` compiles offline.
    for agent in agent_examples::agents::AGENTS {
        let _ = agent.input_contract();
        let _ = agent.output_contract();
    }
}

#[test]
fn the_validator_is_built_without_resolvers() {
    // The features that would let the validator fetch: HTTP (reqwest) and files.
    let manifest = include_str!("../../../Cargo.toml");
    let line = manifest
        .lines()
        .find(|l| l.starts_with("jsonschema"))
        .expect("the workspace names jsonschema");
    assert!(line.contains("default-features = false"), "{line}");
    assert!(!line.contains("resolve"), "{line}");
    // agent-llm brings reqwest and hyper to the workspace: neither the validator nor
    // agent-core may depend on them.
    let lock = include_str!("../../../Cargo.lock");
    for package in ["jsonschema", "referencing", "agent-contracts-runtime"] {
        let dependencies = locked_dependencies(lock, package);
        for crate_name in ["reqwest", "ureq", "hyper"] {
            assert!(
                !dependencies.iter().any(|d| d.starts_with(crate_name)),
                "{package} depends on {crate_name} in Cargo.lock"
            );
        }
    }
    assert!(!lock.contains("name = \"ureq\""), "ureq is in Cargo.lock");
    let llm = locked_dependencies(lock, "agent-contracts-llm");
    assert!(
        llm.iter().any(|d| d.starts_with("reqwest")),
        "the check reads the lock"
    );
}

/// The dependency lines of `package`'s entries in a Cargo.lock.
fn locked_dependencies<'a>(lock: &'a str, package: &str) -> Vec<&'a str> {
    let header = format!("name = \"{package}\"\n");
    let found: Vec<&str> = lock
        .split("[[package]]")
        .filter(|entry| entry.trim_start().starts_with(header.as_str()))
        .flat_map(|entry| entry.lines())
        .filter_map(|line| line.trim().strip_prefix('"'))
        .collect();
    assert!(lock.contains(&header), "{package} is in Cargo.lock");
    found
}

#[test]
fn documents_held_in_memory_are_the_only_ones_resolved() {
    let (listener, port) = listener();
    let held = "https://example.com/contracts/word.json";
    let documents = || vec![(held.to_owned(), json!({"type": "string", "minLength": 1}))];
    let contract =
        Contract::with_documents("docs", ContractKind::Input, with_ref(held), documents()).unwrap();
    assert!(
        contract
            .check(&json!({"x": "a"}), &agent_contracts::Limits::default())
            .is_ok()
    );
    assert!(
        contract
            .check(&json!({"x": ""}), &agent_contracts::Limits::default())
            .is_err()
    );
    // A document that is not held is refused, not fetched; also from inside a held document.
    let missing = format!("http://127.0.0.1:{port}/s.json");
    let error =
        Contract::with_documents("docs", ContractKind::Input, with_ref(&missing), documents())
            .unwrap_err()
            .to_string();
    assert!(error.contains(OFFLINE), "{error}");
    let chained = vec![(held.to_owned(), json!({"$ref": missing}))];
    let error = Contract::with_documents("docs", ContractKind::Input, with_ref(held), chained)
        .unwrap_err()
        .to_string();
    assert!(error.contains(OFFLINE), "{error}");
    assert_no_connection(&listener);
}
