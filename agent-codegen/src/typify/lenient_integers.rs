//! Integer fields deserialize through the runtime's lenient reader, so `5.0` (an integer to
//! JSON Schema and to the validator) fills an `i64`: typify's fields would refuse it. So do
//! the newtypes typify writes for an integer `enum` (`{"type": "integer", "enum": [1, 2]}`),
//! whose own `Deserialize` reads the integer with `<i64>::deserialize`.

use syn::visit_mut::VisitMut;
use syn::{Attribute, Field, Path, Type};

/// Integer types typify emits, by the last segment of their path.
pub(crate) const INTEGERS: &[&str] = &[
    "i8",
    "i16",
    "i32",
    "i64",
    "isize",
    "u8",
    "u16",
    "u32",
    "u64",
    "usize",
    "NonZeroI8",
    "NonZeroI16",
    "NonZeroI32",
    "NonZeroI64",
    "NonZeroU8",
    "NonZeroU16",
    "NonZeroU32",
    "NonZeroU64",
];

/// Containers the runtime's reader looks through, with the index of their element type.
const CONTAINERS: &[(&str, usize)] = &[
    ("Option", 0),
    ("Vec", 0),
    ("Box", 0),
    ("BTreeMap", 1),
    ("HashMap", 1),
];

/// Adds `#[serde(deserialize_with = "<runtime>::__private::integer::deserialize")]` to every
/// field whose type is an integer or a container of integers (and `default` to an optional
/// one, which `deserialize_with` would otherwise make required).
pub(crate) fn lenient_integers(file: &mut syn::File, runtime: &Path) {
    let function = format!(
        "{}::__private::integer::deserialize",
        crate::typify::reroute::compact(runtime)
    );
    Lenient { function }.visit_file_mut(file);
}

struct Lenient {
    function: String,
}

impl VisitMut for Lenient {
    /// `<i64>::deserialize(d)` (typify's read of an integer newtype's inner value) becomes the
    /// lenient reader's `deserialize::<_, i64>(d)`.
    fn visit_expr_call_mut(&mut self, call: &mut syn::ExprCall) {
        syn::visit_mut::visit_expr_call_mut(self, call);
        let syn::Expr::Path(func) = &*call.func else {
            return;
        };
        let Some(qself) = &func.qself else {
            return;
        };
        // A bare integer type (`holds_integer` of one with no arguments) named alone.
        let reads = qself.position == 0
            && func.path.segments.len() == 1
            && func.path.segments[0].ident == "deserialize"
            && holds_integer(&qself.ty)
            && outer(&qself.ty).is_some_and(|o| INTEGERS.contains(&o));
        if !reads {
            return;
        }
        let ty = &qself.ty;
        let function: Path = match syn::parse_str(&self.function) {
            Ok(path) => path,
            Err(_) => return,
        };
        *call.func = syn::parse_quote!(#function::<_, #ty>);
    }

    fn visit_field_mut(&mut self, field: &mut Field) {
        if !holds_integer(&field.ty) {
            return;
        }
        let function = &self.function;
        field
            .attrs
            .push(syn::parse_quote!(#[serde(deserialize_with = #function)]));
        if outer(&field.ty) == Some("Option") && !has_serde_default(&field.attrs) {
            field.attrs.push(syn::parse_quote!(#[serde(default)]));
        }
    }
}

/// The last path segment's name of a type, if it is a path.
fn outer(ty: &Type) -> Option<&'static str> {
    let Type::Path(path) = ty else {
        return None;
    };
    let last = path.path.segments.last()?.ident.to_string();
    CONTAINERS
        .iter()
        .map(|(name, _)| *name)
        .chain(INTEGERS.iter().copied())
        .find(|name| *name == last)
}

/// Whether `ty` is an integer, or one of [`CONTAINERS`] around one.
fn holds_integer(ty: &Type) -> bool {
    let Type::Path(path) = ty else {
        return false;
    };
    let Some(last) = path.path.segments.last() else {
        return false;
    };
    let name = last.ident.to_string();
    if INTEGERS.contains(&name.as_str()) {
        return matches!(last.arguments, syn::PathArguments::None);
    }
    let Some((_, index)) = CONTAINERS.iter().find(|(c, _)| *c == name) else {
        return false;
    };
    let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
        return false;
    };
    let types: Vec<&Type> = args
        .args
        .iter()
        .filter_map(|a| match a {
            syn::GenericArgument::Type(t) => Some(t),
            _ => None,
        })
        .collect();
    types.get(*index).is_some_and(|t| holds_integer(t))
}

fn has_serde_default(attrs: &[Attribute]) -> bool {
    attrs
        .iter()
        .filter(|a| a.path().is_ident("serde"))
        .any(|a| {
            let mut found = false;
            let _ = a.parse_nested_meta(|meta| {
                found |= meta.path.is_ident("default");
                if meta.input.peek(syn::Token![=]) {
                    meta.value()?.parse::<syn::Expr>()?;
                }
                Ok(())
            });
            found
        })
}
