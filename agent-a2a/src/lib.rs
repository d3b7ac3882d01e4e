//! Agents and workflows as A2A agents, with their input and output contracts enforced.
//!
//! [A2A](https://a2a-protocol.org) (Agent2Agent, v1.0) is how agents of different stacks call
//! each other. [`A2aServer`] serves any set of agents and workflows over A2A's JSON-RPC
//! binding:
//!
//! - the agent card at [`CARD_PATH`] has one skill per agent and workflow; A2A's skill has no
//!   place for schemas, so the card declares the extension [`CONTRACTS_EXTENSION`], whose
//!   params hold, per skill id, `skills.<id>.input_schema` and `skills.<id>.output_schema`,
//!   the contracts as written;
//! - `SendMessage` names its skill in the message's `metadata.skill` (a server of one skill
//!   needs none); its data part is the skill's arguments (its text parts the `task`), and goes
//!   through the contract path: a broken call ends the task `TASK_STATE_REJECTED` with the
//!   retry error as a data part, which the caller's model can act on; a valid call ends
//!   `TASK_STATE_COMPLETED` with the checked output as a data part artifact. Data parts are
//!   protobuf values, so integers arrive as `234.0`: the contract path takes an integral
//!   number for an integer field;
//! - a workflow that asks the user a question sets its task to `TASK_STATE_INPUT_REQUIRED`
//!   with the question; the next message on the task (text, or a data part `{"answer": ...}`)
//!   is checked against the answer's contract and resumes the run. With
//!   [`A2aServer::with_store`], any server on the same store and key resumes it;
//! - `SendStreamingMessage` sends the task, a status update at each model call (each step of
//!   a workflow), an agent's answer as it is written (the `partial` artifact), then the
//!   output and the final status, as server-sent events;
//! - `GetTask` and `CancelTask` read and stop a task; each bearer token sees its own tasks.
//!
//! The [`client`] module goes the other way: a remote A2A agent's skills as an agent's tools,
//! their calls and answers checked against the schemas its card declares; a remote task that
//! asks for input pauses the calling run (a workflow step) with its question, and the
//! person's answer goes back to that task.
//!
//! ```no_run
//! # async fn demo(agents: Vec<&'static dyn agent_contracts_runtime::DynAgent>) -> std::io::Result<()> {
//! use agent_contracts_a2a::A2aServer;
//! use std::sync::Arc;
//!
//! let model = Arc::new(agent_contracts_runtime::ScriptedModel::default());
//! let server = A2aServer::new(agents, model);
//! server.serve_http("127.0.0.1:8080".parse().unwrap()).await?;
//! # Ok(()) }
//! ```

pub mod client;
mod guard;
mod report;
mod server;
mod settings;
mod skills;
mod tasks;
mod wire;

pub use server::{A2aServer, CARD_PATH, DEFAULT_MAX_CALLS, MAX_ENVELOPE_BYTES, RPC_PATH, WeakKey};
pub use settings::HttpSettings;
pub use skills::MAX_ANSWER_CHARS;
pub use tasks::DEFAULT_MAX_TASKS;
pub use wire::{CONTRACTS_EXTENSION, PROTOCOL_VERSION, TaskState};
