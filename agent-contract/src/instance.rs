//! A call's context as the validator's instance, read from the call's tape: jsonschema (0.60)
//! validates any representation that implements its `json` traits, so a call whose entries
//! all stand on its tape is validated without building its `Value`. A bad call then builds
//! only what its retry error reads: the instance of an error is written from the node's own
//! text, and only when the error's message needs it.
//!
//! The nodes answer as the `Value` serde_json builds from the same text would: an object lists
//! its members in sorted key order (a `Value`'s map is sorted, and the validator's errors follow
//! the order it walks), numbers are serde_json's `Number` read from their text, strings are
//! borrowed when they have no escape. The tape holds no repeated key, and the context's keys are
//! the call's merged keys, each once.

use crate::json::{Kind, TapeIter, TapeValue};
use jsonschema::json::{Array, Json, Node, NodeIdentity, Object, cmp};
use jsonschema::types::JsonType;
use serde_json::{Number, Value};
use std::borrow::Cow;
use std::cell::OnceCell;

/// The representation: a call's context and the values on its tape.
pub(crate) struct TapeJson;

impl Json for TapeJson {
    type Node<'a> = Instance<'a>;
    type PreparedKey = String;
    type StringBuffer = ();

    fn prepare_key(key: &str) -> String {
        key.to_owned()
    }

    fn with_string_node<T>(_: &mut (), string: &str, f: impl FnOnce(Instance<'_>) -> T) -> T {
        f(Instance::Name(string))
    }
}

/// The context of a call: its entries sorted by key, and its JSON text written when first
/// needed (an error about the whole context keeps it, to build the `Value` if it is read).
pub(crate) struct Context<'a> {
    entries: Vec<(&'a str, TapeValue<'a>)>,
    text: OnceCell<String>,
}

impl<'a> Context<'a> {
    /// The context of these entries (keys distinct, as a call's merged entries are).
    pub(crate) fn new(mut entries: Vec<(&'a str, TapeValue<'a>)>) -> Self {
        entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
        Self {
            entries,
            text: OnceCell::new(),
        }
    }

    /// The context's keys, sorted (as a `Value`'s map lists them).
    pub(crate) fn keys(&self) -> impl Iterator<Item = &'a str> + '_ {
        self.entries.iter().map(|(key, _)| *key)
    }

    /// How many values the context holds, each container and scalar counted once.
    pub(crate) fn values(&self) -> usize {
        self.entries
            .iter()
            .map(|(_, value)| value.count())
            .sum::<usize>()
            + 1
    }

    fn text(&self) -> &str {
        self.text.get_or_init(|| {
            let mut text = String::from("{");
            for (i, (key, value)) in self.entries.iter().enumerate() {
                if i > 0 {
                    text.push(',');
                }
                // A key written by serde_json: escaped as JSON needs.
                text.push_str(&Value::from(*key).to_string());
                text.push(':');
                text.push_str(value.text());
            }
            text.push('}');
            text
        })
    }
}

/// A node: the context, a value on a tape, or a property name (`propertyNames`).
#[derive(Clone, Copy)]
pub(crate) enum Instance<'a> {
    Context(&'a Context<'a>),
    Tape(TapeValue<'a>),
    Name(&'a str),
}

/// The `Value` of JSON text that was read before (a node's own text): serde_json's.
fn parsed(bytes: &[u8], _: u32) -> Value {
    serde_json::from_slice(bytes).unwrap_or(Value::Null)
}

impl<'a> Node<'a, TapeJson> for Instance<'a> {
    type Object = Members<'a>;
    type Array = TapeValue<'a>;
    type Number = Number;

    fn as_object(&self) -> Option<Members<'a>> {
        match *self {
            Instance::Context(context) => Some(Members::Context(context)),
            Instance::Tape(value) if value.kind() == Kind::Object => Some(Members::Tape(value)),
            _ => None,
        }
    }

    fn as_array(&self) -> Option<TapeValue<'a>> {
        match *self {
            Instance::Tape(value) if value.kind() == Kind::Array => Some(value),
            _ => None,
        }
    }

    fn as_string(&self) -> Option<Cow<'a, str>> {
        match *self {
            Instance::Tape(value) => match value.kind() {
                Kind::Str => Some(Cow::Borrowed(value.unquoted())),
                Kind::Escaped => serde_json::from_str(value.text()).ok().map(Cow::Owned),
                _ => None,
            },
            Instance::Name(name) => Some(Cow::Borrowed(name)),
            Instance::Context(_) => None,
        }
    }

    fn as_number(&self) -> Option<Number> {
        match *self {
            Instance::Tape(value) if value.kind() == Kind::Number => {
                crate::json::number(value.text()).ok()
            }
            _ => None,
        }
    }

    fn is_number(&self) -> bool {
        matches!(self, Instance::Tape(value) if value.kind() == Kind::Number)
    }

    fn as_boolean(&self) -> Option<bool> {
        match *self {
            Instance::Tape(value) => match value.kind() {
                Kind::True => Some(true),
                Kind::False => Some(false),
                _ => None,
            },
            _ => None,
        }
    }

    fn is_null(&self) -> bool {
        matches!(self, Instance::Tape(value) if value.kind() == Kind::Null)
    }

    fn json_type(&self) -> JsonType {
        match *self {
            Instance::Context(_) => JsonType::Object,
            Instance::Name(_) => JsonType::String,
            Instance::Tape(value) => match value.kind() {
                Kind::Object => JsonType::Object,
                Kind::Array => JsonType::Array,
                Kind::Str | Kind::Escaped => JsonType::String,
                Kind::Number => JsonType::Number,
                Kind::True | Kind::False => JsonType::Boolean,
                Kind::Null => JsonType::Null,
            },
        }
    }

    fn equals_value(&self, expected: &Value) -> bool {
        // A string, a boolean or `null` equals only the same (an enum or `const` of strings
        // is the common case): no `Value` is built for it.
        if let Some(string) = self.as_string() {
            return matches!(expected, Value::String(e) if *e == string);
        }
        if let Some(boolean) = self.as_boolean() {
            return expected.as_bool() == Some(boolean);
        }
        if self.is_null() {
            return expected.is_null();
        }
        cmp::equal(&self.to_value(), expected)
    }

    fn to_value(&self) -> Cow<'a, Value> {
        Cow::Owned(match *self {
            Instance::Context(context) => parsed(context.text().as_bytes(), 0),
            Instance::Tape(value) => value.to_value().unwrap_or(Value::Null),
            Instance::Name(name) => Value::from(name),
        })
    }

    fn lazy_value(&self) -> jsonschema_value::LazyInstance<'a> {
        let bytes = match *self {
            Instance::Context(context) => context.text().as_bytes(),
            Instance::Tape(value) => value.text().as_bytes(),
            Instance::Name(_) => return jsonschema_value::LazyInstance::Ready(self.to_value()),
        };
        jsonschema_value::LazyInstance::Deferred {
            bytes,
            tag: 0,
            make: parsed,
            cell: std::sync::OnceLock::new(),
        }
    }

    fn identity(&self) -> Option<NodeIdentity> {
        match *self {
            Instance::Context(context) => {
                Some(NodeIdentity::new(std::ptr::from_ref(context) as usize))
            }
            Instance::Tape(value) => {
                let (tape, at) = value.place();
                Some(NodeIdentity::tagged(tape, at as u32))
            }
            Instance::Name(_) => None,
        }
    }
}

/// An object's members: the context's, or a tape object's.
#[derive(Clone, Copy)]
pub(crate) enum Members<'a> {
    Context(&'a Context<'a>),
    Tape(TapeValue<'a>),
}

impl<'a> Object<'a, TapeJson> for Members<'a> {
    type Node = Instance<'a>;
    type MemberName = &'a str;
    type MembersIter = std::vec::IntoIter<(&'a str, Instance<'a>)>;

    fn len(&self) -> usize {
        match *self {
            Members::Context(context) => context.entries.len(),
            Members::Tape(value) => value.len(),
        }
    }

    fn get(&self, key: &String) -> Option<Instance<'a>> {
        match *self {
            Members::Context(context) => context
                .entries
                .binary_search_by(|(k, _)| (*k).cmp(key.as_str()))
                .ok()
                .map(|i| Instance::Tape(context.entries[i].1)),
            Members::Tape(value) => value
                .parts()
                .find(|(k, _)| *k == Some(key.as_str()))
                .map(|(_, value)| Instance::Tape(value)),
        }
    }

    fn members(&self) -> Self::MembersIter {
        let mut members: Vec<(&'a str, Instance<'a>)> = match *self {
            Members::Context(context) => {
                return context
                    .entries
                    .iter()
                    .map(|&(key, value)| (key, Instance::Tape(value)))
                    .collect::<Vec<_>>()
                    .into_iter();
            }
            Members::Tape(value) => value
                .parts()
                .map(|(key, value)| (key.unwrap_or_default(), Instance::Tape(value)))
                .collect(),
        };
        // A `Value`'s map lists its keys sorted.
        members.sort_unstable_by(|a, b| a.0.cmp(b.0));
        members.into_iter()
    }
}

impl<'a> Array<'a, TapeJson> for TapeValue<'a> {
    type Node = Instance<'a>;
    type ElementsIter = Items<'a>;

    fn len(&self) -> usize {
        TapeValue::len(self)
    }

    fn elements(&self) -> Items<'a> {
        Items(self.parts())
    }
}

/// An array's items as nodes.
pub(crate) struct Items<'a>(TapeIter<'a>);

impl<'a> Iterator for Items<'a> {
    type Item = Instance<'a>;

    fn next(&mut self) -> Option<Instance<'a>> {
        self.0.next().map(|(_, value)| Instance::Tape(value))
    }
}
