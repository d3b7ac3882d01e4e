//! Signed resume states, for states kept outside the user's trust boundary (a browser, a
//! queue, a shared bucket): an HMAC-SHA256 over the workflow's name and the state's JSON text,
//! so a state that was edited, or signed with another key or for another workflow, is refused
//! before it is even parsed.

use super::Workflow;
use super::state::WorkflowState;
use crate::error::Error;
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

type HmacSha256 = Hmac<Sha256>;

/// Hex digits of a signature.
const SIGNATURE_HEX: usize = 64;

impl Workflow {
    /// The state as `<signature>.<JSON>`: 64 hex digits of HMAC-SHA256 under `key` over the
    /// workflow's name and the JSON text, a dot, and the JSON.
    ///
    /// ```
    /// # use agent_core::workflow::{Workflow, WorkflowState};
    /// # fn demo(workflow: &Workflow, state: &WorkflowState) -> Result<(), agent_core::Error> {
    /// let key = b"a secret of at least 32 bytes, kept by the server";
    /// let sealed = workflow.seal_state(state, key);
    /// let opened = workflow.open_state(&sealed, key)?;
    /// assert_eq!(&opened, state);
    /// # Ok(()) }
    /// ```
    pub fn seal_state(&self, state: &WorkflowState, key: &[u8]) -> String {
        let json = serde_json::to_string(state).unwrap_or_default();
        let tag = self.mac(key, &json).finalize().into_bytes();
        let mut sealed = String::with_capacity(SIGNATURE_HEX + 1 + json.len());
        for byte in tag.iter() {
            sealed.push_str(&format!("{byte:02x}"));
        }
        sealed.push('.');
        sealed.push_str(&json);
        sealed
    }

    /// Checks the signature of a sealed state (in constant time), then parses and checks the
    /// state as [`Workflow::parse_state`] does.
    pub fn open_state(&self, sealed: &str, key: &[u8]) -> Result<WorkflowState, Error> {
        let refused = || {
            self.bad_state(
                "the state's signature does not match: it was changed, or signed with another key or for another workflow".into(),
            )
        };
        let Some((signature, json)) = sealed.split_once('.') else {
            return Err(refused());
        };
        let tag = decode_hex(signature).ok_or_else(refused)?;
        self.mac(key, json)
            .verify_slice(&tag)
            .map_err(|_| refused())?;
        self.parse_state(json)
    }

    fn mac(&self, key: &[u8], json: &str) -> HmacSha256 {
        // HMAC takes keys of any length: this cannot fail.
        let mut mac = <HmacSha256 as KeyInit>::new_from_slice(key)
            .unwrap_or_else(|_| unreachable!("HMAC accepts keys of any length"));
        mac.update(self.name.as_bytes());
        mac.update(&[0]);
        mac.update(json.as_bytes());
        mac
    }
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
