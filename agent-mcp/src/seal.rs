//! Signed resume states, for states kept outside the user's trust boundary (a browser, a
//! queue, a shared bucket): an HMAC-SHA256 over the workflow's name and the state's JSON text,
//! so a state that was edited, or signed with another key or for another workflow, is refused
//! before it is even parsed. A paused run kept on the server is named the same way by a short
//! resume handle ([`seal_pause`]), so a handle cannot be guessed or forged.
//!
//! The signing lives with the server that hands states and handles to clients: agent-core, which
//! only runs and stores workflows, needs no crypto.

use agent_contracts_runtime::{Error, Workflow, workflow::PausedRun, workflow::WorkflowState};
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

type HmacSha256 = Hmac<Sha256>;

/// Hex digits of a signature.
const SIGNATURE_HEX: usize = 64;

/// Fewest distinct byte values a signing key may have: a random 32-byte key has 30.1 on average
/// (256 × (1 − (255/256)^32)), fewer than 12 with a probability far below 10^-9, and a key made
/// by hand (all zeros, one repeated byte, a short pattern) far fewer.
const MIN_DISTINCT_BYTES: usize = 12;

/// A signing key too regular to be secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WeakKey {
    /// Distinct byte values in the key.
    pub distinct: usize,
}

impl std::fmt::Display for WeakKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the signing key has {} distinct byte values (a random 32-byte key has about 30, at least {MIN_DISTINCT_BYTES} are needed): use random bytes, such as the output of `openssl rand -hex 32`",
            self.distinct
        )
    }
}

impl std::error::Error for WeakKey {}

/// Refuses a signing key too regular to be secret (all zeros, one repeated byte, a short
/// pattern).
///
/// ```
/// use agent_contracts_mcp::seal::check_key;
/// assert!(check_key(&[0u8; 32]).is_err());
/// let random: [u8; 32] = std::array::from_fn(|i| (i as u8).wrapping_mul(97).wrapping_add(13));
/// assert!(check_key(&random).is_ok());
/// ```
pub fn check_key(key: &[u8; 32]) -> Result<(), WeakKey> {
    let mut seen = [false; 256];
    for &byte in key {
        seen[usize::from(byte)] = true;
    }
    let distinct = seen.iter().filter(|&&s| s).count();
    match distinct >= MIN_DISTINCT_BYTES {
        true => Ok(()),
        false => Err(WeakKey { distinct }),
    }
}

/// The state as `<signature>.<JSON>`: 64 hex digits of HMAC-SHA256 under `key` over the
/// workflow's name and the JSON text, a dot, and the JSON.
///
/// ```
/// # use agent_contracts_runtime::{Workflow, workflow::WorkflowState};
/// # use agent_contracts_mcp::seal::{open_state, seal_state};
/// # fn demo(workflow: &Workflow, state: &WorkflowState) -> Result<(), agent_contracts_runtime::Error> {
/// let key = b"a secret of at least 32 bytes, kept by the server";
/// let sealed = seal_state(workflow, state, key);
/// let opened = open_state(workflow, &sealed, key)?;
/// assert_eq!(&opened, state);
/// # Ok(()) }
/// ```
pub fn seal_state(workflow: &Workflow, state: &WorkflowState, key: &[u8]) -> String {
    let json = serde_json::to_string(state).unwrap_or_default();
    signed(mac(workflow, key, &[json.as_bytes()]), &json)
}

/// Checks the signature of a sealed state (in constant time), then parses and checks the
/// state as [`Workflow::parse_state`] does.
pub fn open_state(workflow: &Workflow, sealed: &str, key: &[u8]) -> Result<WorkflowState, Error> {
    let refused = || {
        bad_state(
            workflow,
            "the state's signature does not match: it was changed, or signed with another key or for another workflow".into(),
        )
    };
    let Some((signature, json)) = sealed.split_once('.') else {
        return Err(refused());
    };
    let tag = decode_hex(signature).ok_or_else(refused)?;
    mac(workflow, key, &[json.as_bytes()])
        .verify_slice(&tag)
        .map_err(|_| refused())?;
    workflow.parse_state(json)
}

/// A resume handle for a paused run whose state stays on the server:
/// `<signature>.<sequence>.<run id>`, the signature an HMAC-SHA256 under `key` over the
/// workflow's name and the rest. It names the run; it carries none of its state.
///
/// ```
/// # use agent_contracts_runtime::{workflow::PausedRun, Workflow};
/// # use agent_contracts_mcp::seal::{open_pause, seal_pause};
/// let workflow = Workflow::new("venues");
/// let key = b"a secret of at least 32 bytes, kept by the server";
/// let paused = PausedRun { run_id: "run-1".into(), sequence: 3 };
/// let handle = seal_pause(&workflow, &paused, key);
/// assert_eq!(open_pause(&workflow, &handle, key).unwrap(), paused);
/// assert!(open_pause(&workflow, &handle.replace(".3.", ".4."), key).is_err());
/// ```
pub fn seal_pause(workflow: &Workflow, paused: &PausedRun, key: &[u8]) -> String {
    let text = format!("{}.{}", paused.sequence, paused.run_id);
    signed(mac(workflow, key, &[PAUSE_DOMAIN, text.as_bytes()]), &text)
}

/// Checks a resume handle's signature (in constant time) and reads the paused run it
/// names; a handle that was changed, or issued under another key or by another workflow,
/// is [`Error::BadState`].
pub fn open_pause(workflow: &Workflow, handle: &str, key: &[u8]) -> Result<PausedRun, Error> {
    let refused = || {
        bad_state(
            workflow,
            "the resume handle's signature does not match: it was changed, or issued with another key or by another workflow".into(),
        )
    };
    let (signature, text) = handle.split_once('.').ok_or_else(refused)?;
    let tag = decode_hex(signature).ok_or_else(refused)?;
    mac(workflow, key, &[PAUSE_DOMAIN, text.as_bytes()])
        .verify_slice(&tag)
        .map_err(|_| refused())?;
    let (sequence, run_id) = text.split_once('.').ok_or_else(refused)?;
    Ok(PausedRun {
        run_id: run_id.to_owned(),
        sequence: sequence.parse().map_err(|_| refused())?,
    })
}

fn mac(workflow: &Workflow, key: &[u8], parts: &[&[u8]]) -> HmacSha256 {
    // HMAC takes keys of any length: this cannot fail.
    let mut mac = <HmacSha256 as KeyInit>::new_from_slice(key)
        .unwrap_or_else(|_| unreachable!("HMAC accepts keys of any length"));
    mac.update(workflow.name().as_bytes());
    mac.update(&[0]);
    for part in parts {
        mac.update(part);
    }
    mac
}

/// What a handle's signature covers before its text, so that no handle is ever a valid sealed
/// state and no sealed state a valid handle (a state's JSON never holds a NUL byte).
const PAUSE_DOMAIN: &[u8] = b"pause\0";

/// `<hex signature>.<text>`.
fn signed(mac: HmacSha256, text: &str) -> String {
    let tag = mac.finalize().into_bytes();
    let mut sealed = String::with_capacity(SIGNATURE_HEX + 1 + text.len());
    for byte in tag.iter() {
        sealed.push_str(&format!("{byte:02x}"));
    }
    sealed.push('.');
    sealed.push_str(text);
    sealed
}

/// 64 hex digits as 32 bytes.
fn decode_hex(text: &str) -> Option<Vec<u8>> {
    if text.len() != SIGNATURE_HEX || !text.is_ascii() {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).ok())
        .collect()
}

/// The error for a state or handle that does not belong to `workflow`.
fn bad_state(workflow: &Workflow, reason: String) -> Error {
    Error::BadState {
        workflow: workflow.name().to_owned(),
        reason,
    }
}
