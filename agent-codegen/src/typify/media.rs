//! Media fields of an input contract: a top-level string property with
//! `contentEncoding: "base64"` and a `contentMediaType` of `image/*`, `application/pdf` or
//! `audio/*`, or with `format: "uri"` and a `contentMediaType`, is typed as the runtime's
//! `MediaInput` instead of `String`, and listed for the `AgentInput` impl (`MEDIA`).

use agent_contracts_schema::strict::Dialect;
use serde_json::Value;
use syn::visit_mut::VisitMut;

use crate::typify::properties::Property;

/// One media field of the root struct.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct MediaField {
    /// The property's name in the JSON document.
    pub(crate) json_name: String,
    /// The Rust field.
    pub(crate) rust_name: String,
    /// Its `contentMediaType`.
    pub(crate) accepts: String,
    /// Inline (`contentEncoding: "base64"`) rather than by URL.
    pub(crate) base64: bool,
    /// Typed `Option<MediaInput>` (the property is not required).
    pub(crate) optional: bool,
}

/// What the property schema `node` declares, if it is a media field: its media type and
/// whether it is inline.
pub(crate) fn media_of(node: &Value) -> Option<(String, bool)> {
    let is_string = match node.get("type") {
        Some(Value::String(t)) => t == "string",
        _ => false,
    };
    let accepts = node.get("contentMediaType").and_then(Value::as_str)?;
    if !is_string || !accepts.contains('/') {
        return None;
    }
    let base64 = node.get("contentEncoding").and_then(Value::as_str) == Some("base64");
    let uri = node.get("format").and_then(Value::as_str) == Some("uri");
    let inline_type = accepts.starts_with("image/")
        || accepts.starts_with("audio/")
        || accepts == "application/pdf";
    match (base64, uri) {
        (true, _) if inline_type => Some((accepts.to_owned(), true)),
        (false, true) => Some((accepts.to_owned(), false)),
        _ => None,
    }
}

/// The media fields among the root's `properties` of `schema`, in schema order.
pub(crate) fn media_fields(schema: &Value, properties: &[Property]) -> Vec<MediaField> {
    let declared = schema.get("properties").and_then(Value::as_object);
    properties
        .iter()
        .filter_map(|property| {
            let node = declared?.get(&property.json_name)?;
            let (accepts, base64) = media_of(node)?;
            Some(MediaField {
                json_name: property.json_name.clone(),
                rust_name: property.rust_name.clone(),
                accepts,
                base64,
                optional: false,
            })
        })
        .collect()
}

/// Types each of `fields` in the struct `root` as `<runtime>::__private::MediaInput` (kept
/// in its `Option`), noting which are optional. A field typify did not type `String` (a
/// string with constraints becomes a newtype) is dropped from `fields` and its JSON name
/// returned: the caller refuses it, so no declared media goes unchecked.
pub(crate) fn type_media_fields(
    file: &mut syn::File,
    root: &syn::Ident,
    fields: &mut Vec<MediaField>,
    runtime: &syn::Path,
) -> Vec<String> {
    let mut untyped = Vec::new();
    let media: syn::Type = syn::parse_quote!(#runtime::__private::MediaInput);
    let Some(root) = file.items.iter_mut().find_map(|item| match item {
        syn::Item::Struct(s) if s.ident == *root => Some(s),
        _ => None,
    }) else {
        untyped.extend(fields.drain(..).map(|field| field.json_name));
        return untyped;
    };
    fields.retain_mut(|field| {
        let Some(member) = root.fields.iter_mut().find(|f| {
            f.ident
                .as_ref()
                .is_some_and(|i| syn::ext::IdentExt::unraw(i) == field.rust_name)
        }) else {
            untyped.push(field.json_name.clone());
            return false;
        };
        let mut swap = Swap {
            media: media.clone(),
            swapped: false,
            optional: false,
            depth: 0,
        };
        swap.visit_type_mut(&mut member.ty);
        field.optional = swap.optional;
        if !swap.swapped {
            untyped.push(field.json_name.clone());
        }
        swap.swapped
    });
    untyped
}

/// Replaces `String` by the media type in a field's type, directly or inside one `Option`.
struct Swap {
    media: syn::Type,
    swapped: bool,
    optional: bool,
    depth: usize,
}

impl VisitMut for Swap {
    fn visit_type_mut(&mut self, ty: &mut syn::Type) {
        let syn::Type::Path(path) = ty else { return };
        let Some(last) = path.path.segments.last() else {
            return;
        };
        if last.ident == "String" && last.arguments.is_none() {
            *ty = self.media.clone();
            self.swapped = true;
            return;
        }
        if last.ident == "Option" && self.depth == 0 {
            self.optional = true;
            self.depth += 1;
            syn::visit_mut::visit_type_mut(self, ty);
        }
    }
}

/// Whether the provider of `dialect` takes media of type `accepts`, inline (`base64`) or by
/// URL, in a user message: `Err` says why not.
pub(crate) fn verdict(dialect: Dialect, accepts: &str, base64: bool) -> Result<(), String> {
    let image = accepts == "image/*"
        || matches!(
            accepts,
            "image/png" | "image/jpeg" | "image/jpg" | "image/gif" | "image/webp"
        );
    let pdf = accepts == "application/pdf";
    let audio = accepts.starts_with("audio/");
    let taken = match dialect {
        // `image_url` (inline as a data URL), `file` (inline only), `input_audio` (inline WAV or
        // MP3 only).
        Dialect::OpenAi => {
            image
                || (pdf && base64)
                || (base64
                    && matches!(
                        accepts,
                        "audio/wav" | "audio/x-wav" | "audio/wave" | "audio/mpeg" | "audio/mp3"
                    ))
        }
        // `image` and `document` blocks, inline or by URL; no audio.
        Dialect::Anthropic => image || pdf,
        _ => false,
    };
    match taken {
        true => Ok(()),
        false if audio && dialect == Dialect::OpenAi => Err(format!(
            "takes only inline audio/wav and audio/mpeg, not {accepts} {}",
            form(base64)
        )),
        false => Err(format!("takes no {accepts} {}", form(base64))),
    }
}

fn form(base64: bool) -> &'static str {
    match base64 {
        true => "inline",
        false => "by URL",
    }
}

/// The media fields of the input contract `text` (its top-level properties), in the order it
/// writes them: name, media type, inline.
pub fn media_properties(text: &str) -> Vec<(String, String, bool)> {
    let Ok(schema) = serde_json::from_str::<Value>(text) else {
        return Vec::new();
    };
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    let mut fields: Vec<(String, String, bool)> = properties
        .iter()
        .filter_map(|(name, node)| {
            let (accepts, base64) = media_of(node)?;
            Some((name.clone(), accepts, base64))
        })
        .collect();
    fields.sort_by_key(|(name, _, _)| {
        let pointer = format!("/properties/{}", name.replace('~', "~0").replace('/', "~1"));
        crate::schema::locate::locate(text, &pointer)
    });
    fields
}

/// Per media field of the input contract `text` and provider, whether the provider takes it.
pub(crate) fn verdicts(text: &str) -> Vec<(String, Dialect, Result<(), String>)> {
    let mut out = Vec::new();
    for (name, accepts, base64) in media_properties(text) {
        for dialect in Dialect::ALL {
            out.push((name.clone(), dialect, verdict(dialect, &accepts, base64)));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn which_strings_are_media() {
        let png =
            json!({"type": "string", "contentEncoding": "base64", "contentMediaType": "image/png"});
        assert_eq!(media_of(&png), Some(("image/png".into(), true)));
        let pdf = json!({"type": "string", "format": "uri", "contentMediaType": "application/pdf"});
        assert_eq!(media_of(&pdf), Some(("application/pdf".into(), false)));
        for plain in [
            json!({"type": "string"}),
            json!({"type": "string", "contentEncoding": "base64", "contentMediaType": "text/plain"}),
            json!({"type": "string", "contentMediaType": "image/png"}),
            json!({"type": "integer", "contentMediaType": "image/png", "contentEncoding": "base64"}),
        ] {
            assert_eq!(media_of(&plain), None, "{plain}");
        }
    }

    #[test]
    fn each_provider_takes_its_media() {
        assert_eq!(verdict(Dialect::OpenAi, "image/*", false), Ok(()));
        assert_eq!(
            verdict(Dialect::Anthropic, "application/pdf", false),
            Ok(())
        );
        assert_eq!(verdict(Dialect::OpenAi, "audio/wav", true), Ok(()));
        assert!(verdict(Dialect::OpenAi, "application/pdf", false).is_err());
        assert!(verdict(Dialect::OpenAi, "audio/ogg", true).is_err());
        assert_eq!(
            verdict(Dialect::Anthropic, "audio/wav", true),
            Err("takes no audio/wav inline".into())
        );
    }
}
