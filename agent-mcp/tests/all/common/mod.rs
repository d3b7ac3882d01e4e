//! What the transport tests share: the plan generator's fixture and prompts, and the client's
//! bytes as written.

#![allow(dead_code)]

use rmcp::model::JsonObject;
use std::sync::{Arc, Mutex};

/// The plan generator's kwargs as a parent wrote them (`0.60`, keys in no sorted order).
pub const FIXTURE: &str = include_str!("../../../../tests/fixtures/plan_generator/kwargs.json");

/// The plan generator's prompt for [`FIXTURE`].
pub const GOLDEN_PROMPT: &str =
    include_str!("../../../../tests/fixtures/plan_generator/expected_user_prompt.md");

/// A plan generator call whose untyped part (an agent's `output`) has numbers written in ways
/// serde_json would print otherwise, and keys out of sorted order.
pub const NUMBERS: &str = r#"{"task": "Generate Crawl Plan", "task_name": "numbers", "target_url": "https://a.example/form",
  "collected_information": [{"description": "Found the form", "agent_name": "discovery_agent",
    "output": {"page_title": "Form", "discovered_elements": [{"id": "f", "weight": 1.50}]}},
    {"description": "Numbers as written", "agent_name": "selector_agent",
    "output": {"strategy": "numbers", "selectors": {"zeta": 0.60, "alpha": 1e5, "mid": {"small": 0.000001, "big": -2.50E+3, "id": 12345678901234567890}, "list": [1.0, 0, -0.0]}}}]}"#;

/// The plan generator's prompt for [`NUMBERS`].
pub const NUMBERS_PROMPT: &str = "Generate Crawl Plan

# Collected information for https://a.example/form - Task: numbers

## From discovery_agent

### Description
Found the form

### Output

- **page_title**: Form
- **discovered_elements**:
  - [0]:
    - **id**: f
    - **weight**: 1.50

---

## From selector_agent

### Description
Numbers as written

### Output

- **strategy**: numbers
- **selectors**:
  - **zeta**: 0.60
  - **alpha**: 1e5
  - **mid**:
    - **small**: 0.000001
    - **big**: -2.50E+3
    - **id**: 12345678901234567890
  - **list**:
    - 1.0
    - 0
    - -0.0
";

/// The bytes a client that keeps its arguments' text sends. rmcp's client can only write a
/// serde_json map (sorted keys, `0.6` for `0.60`), so the tests put the text back between the
/// client and the server: each swap turns the first message that holds its map, as rmcp's
/// client writes it, into the text.
#[derive(Clone, Default)]
pub struct Wire(Arc<Mutex<Vec<(String, String)>>>);

impl Wire {
    /// The next call whose arguments are `text`'s map carries `text` itself; the map is what
    /// the call is made with.
    pub fn as_written(&self, text: &str) -> JsonObject {
        let map: JsonObject = serde_json::from_str(text).unwrap();
        self.swap(&map, text);
        map
    }

    /// The next call whose arguments are `map` carries `text` instead, JSON or not.
    pub fn swap(&self, map: &JsonObject, text: &str) {
        let from = format!("\"arguments\":{}", serde_json::to_string(map).unwrap());
        let to = format!("\"arguments\":{text}");
        self.0.lock().unwrap().push((from, to));
    }

    /// `message` with the first waiting swap that fits it made, if one does.
    pub fn apply(&self, message: &str) -> Option<String> {
        let mut swaps = self.0.lock().unwrap();
        let at = swaps.iter().position(|(from, _)| message.contains(from))?;
        let (from, to) = swaps.remove(at);
        Some(message.replacen(&from, &to, 1))
    }

    /// Every swap was made.
    pub fn all_sent(&self) -> bool {
        self.0.lock().unwrap().is_empty()
    }
}
