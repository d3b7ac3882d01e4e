//! A parent's turn with one plain tool whose parameters schema is 7.4 KB: the model calls the
//! tool, the loop finds it by name and runs it, the model answers. Before the tools were built
//! once per loop, each lookup built the tool's whole definition (its schema copied) to read
//! its name.
//!
//! ```sh
//! cargo bench -p agent-examples --bench tool_turn
//! ```
//!
//! Divan's `AllocProfiler` is the global allocator, so the figures count allocations too.
//! `definition_only` is the floor the old lookup paid per call: one definition built.

use agent_contracts::contract::ToolDefinition;
use agent_contracts::model::{BoxFuture, ChatRequest, ChatResponse, ModelError, Role, tool_calls};
use agent_contracts::{ChatModel, Message, Runtime, Tool};
use divan::{AllocProfiler, Bencher, black_box};
use serde_json::{Map, Value, json};
use std::sync::{Arc, OnceLock};

#[global_allocator]
static ALLOC: AllocProfiler = AllocProfiler::system();

/// The tool's parameters: 60 documented string properties, about 7.4 KB as JSON.
fn parameters() -> &'static Value {
    static SCHEMA: OnceLock<Value> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        let mut properties = Map::new();
        for i in 0..60 {
            properties.insert(
                format!("field_{i:02}"),
                json!({"type": "string", "maxLength": 200,
                       "description": format!("Field {i} of the lookup: a value the search matches exactly")}),
            );
        }
        json!({"type": "object", "properties": properties, "required": ["field_00"],
               "additionalProperties": false})
    })
}

struct Lookup;

impl Tool for Lookup {
    fn definition(&self) -> ToolDefinition {
        ToolDefinition {
            name: "lookup".into(),
            description: "Looks a record up".into(),
            parameters: parameters().clone(),
        }
    }
    fn call<'a>(&'a self, _arguments: &'a str) -> BoxFuture<'a, Value> {
        Box::pin(async { json!({"found": true}) })
    }
}

/// Calls the tool on the first turn, answers once the tool result is in.
struct Parent;

impl ChatModel for Parent {
    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        let answered = request
            .messages
            .last()
            .is_some_and(|m| m.role == Role::Tool);
        let reply = match answered {
            true => Message::assistant("Found it."),
            false => tool_calls([("lookup", r#"{"field_00": "a"}"#)]),
        };
        Box::pin(async move { Ok(reply.into()) })
    }
}

fn main() {
    let size = serde_json::to_string(parameters()).map_or(0, |s| s.len());
    assert!((7_000..8_000).contains(&size), "the schema is {size} bytes");
    divan::main();
}

/// The whole parent loop: two model turns, one tool call.
#[divan::bench]
fn parent_turn(bencher: Bencher) {
    let executor = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime");
    bencher
        .with_inputs(|| Runtime::new(Parent).with_tool(Arc::new(Lookup)))
        .bench_local_values(|runtime| {
            let outcome = executor.block_on(runtime.run_loop("parent", "", "Find it", &[]));
            black_box(outcome.is_ok())
        });
}

/// One definition of the tool built: what each lookup by name cost before.
#[divan::bench]
fn definition_only(bencher: Bencher) {
    bencher.bench_local(|| black_box(Lookup.definition()).name.len());
}
