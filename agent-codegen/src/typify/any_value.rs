//! The last fallback: schema nodes typify cannot type (it panics or refuses) are typed as
//! `serde_json::Value`, with a warning, and left to the validator.
//!
//! typify's failures carry no location. The search below finds the smallest nodes whose
//! replacement by `{}` (any value) lets typify type the document: from the root down, all of a
//! node's child schemas are replaced, then restored one by one; a child whose restoring makes
//! typify fail again holds a failure, and the search goes on inside it. Several independent
//! failures are found in one search.

use serde_json::{Map, Value};

use crate::schema::walk;

/// Most typify runs one search may spend; a schema that needs more is refused.
const MAX_RUNS: usize = 400;

/// The pointers of the smallest nodes of `input` to type as any value so that `typifies`
/// holds, or `None` when there are none (the root itself fails, or the search ran out).
pub(crate) fn culprits(input: &Value, typifies: &dyn Fn(&Value) -> bool) -> Option<Vec<String>> {
    let mut search = Search {
        original: input,
        doc: input.clone(),
        typifies,
        runs: 0,
        found: Vec::new(),
    };
    let children = search.children("");
    for child in &children {
        search.replace(child);
    }
    if !search.run()? {
        return None;
    }
    search.restore_each(&children)?;
    Some(search.found)
}

struct Search<'a> {
    original: &'a Value,
    /// The document with the nodes found so far (and those under test) replaced.
    doc: Value,
    typifies: &'a dyn Fn(&Value) -> bool,
    runs: usize,
    found: Vec<String>,
}

impl Search<'_> {
    fn run(&mut self) -> Option<bool> {
        self.runs += 1;
        (self.runs <= MAX_RUNS).then(|| (self.typifies)(&self.doc))
    }

    /// The child schemas of the node at `pointer` in the original document that can be
    /// loosened: not the schema of a `not`, where `{}` would match nothing instead of anything.
    fn children(&self, pointer: &str) -> Vec<String> {
        match self.original.pointer(pointer) {
            Some(Value::Object(schema)) => walk::children(pointer, schema)
                .into_iter()
                .filter(|(p, v)| v.is_object() && !p.ends_with("/not"))
                .map(|(p, _)| p)
                .collect(),
            _ => Vec::new(),
        }
    }

    fn replace(&mut self, pointer: &str) {
        if let Some(slot) = self.doc.pointer_mut(pointer) {
            *slot = Value::Object(Map::new());
        }
    }

    fn restore(&mut self, pointer: &str) {
        let original = self.original.pointer(pointer).cloned();
        if let (Some(slot), Some(original)) = (self.doc.pointer_mut(pointer), original) {
            *slot = original;
        }
    }

    /// With `nodes` replaced and the document typing, restores them one by one; each whose
    /// restoring breaks typing is searched further.
    fn restore_each(&mut self, nodes: &[String]) -> Option<()> {
        let mut failing = Vec::new();
        for node in nodes {
            self.restore(node);
            if !self.run()? {
                self.replace(node);
                failing.push(node.clone());
            }
        }
        for node in failing {
            self.search_inside(&node)?;
        }
        Some(())
    }

    /// `node` is replaced and the document types: finds what inside it typify cannot type.
    fn search_inside(&mut self, node: &str) -> Option<()> {
        let children = self.children(node);
        if children.is_empty() {
            self.found.push(node.to_owned());
            return Some(());
        }
        self.restore(node);
        for child in &children {
            self.replace(child);
        }
        if !self.run()? {
            // The node fails even with its children loosened: it is the culprit.
            self.replace(node);
            self.found.push(node.to_owned());
            return Some(());
        }
        self.restore_each(&children)
    }
}

/// The document with the nodes at `pointers` typed as any value.
pub(crate) fn loosened(input: &Value, pointers: &[String]) -> Value {
    let mut doc = input.clone();
    for pointer in pointers {
        if let Some(slot) = doc.pointer_mut(pointer) {
            *slot = Value::Object(Map::new());
        }
    }
    doc
}

thread_local! {
    static QUIET: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f` with the panic messages of this thread silenced: typify's panics are caught and
/// become located errors, and the search may panic it hundreds of times. Other threads'
/// panics still reach the previous hook. Inside a proc macro, rustc's own hook already keeps
/// the macro's caught panics quiet, and is left alone.
pub(crate) fn quietly<T>(f: impl FnOnce() -> T) -> T {
    if proc_macro::is_available() {
        return f();
    }
    static INSTALL: std::sync::Once = std::sync::Once::new();
    INSTALL.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !QUIET.with(std::cell::Cell::get) {
                previous(info);
            }
        }));
    });
    let was = QUIET.with(|q| q.replace(true));
    let out = f();
    QUIET.with(|q| q.set(was));
    out
}
