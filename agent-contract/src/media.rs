//! Media: images, audio and documents a message carries beside its text, and the media
//! fields of an input contract.
//!
//! A contract declares a media field as a string with `contentEncoding: "base64"` and a
//! `contentMediaType` of `image/*`, `application/pdf` or `audio/*` (the bytes inline), or
//! with `format: "uri"` and a `contentMediaType` (the bytes at a URL the provider fetches).
//! The generated input type holds a [`MediaInput`] for it; the call's check decodes it
//! ([`MediaInput::check`]) against the field's [`MediaSpec`]: the declared type against the
//! bytes' signature, the size against [`Limits::max_media_bytes`], a URL's scheme against
//! [`Limits::media_schemes`] (`file:` never). A template that prints the field places a
//! marker; [`place_media`] turns the rendered text into the text and the [`Media`] placed in
//! it, so the bytes never stand in the text.

use crate::limits::Limits;
use crate::retry::{ErrorKind, PathSegment, RetryDetails, RetryError, Violation};
use base64::Engine as _;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Media a message carries beside its text: an image, audio or a document, by its media type,
/// inline or at a URL. A tool's result brings it (an MCP tool's image, audio and resource
/// blocks), a contract's media field becomes one, and the providers hand it to the model in
/// the form their wire format takes.
///
/// ```
/// use agent_contracts_contract::{Media, MediaData, MediaKind};
/// let chart = Media::new(MediaKind::Image, "image/png", MediaData::Base64("iVBORw0KGgo=".into()));
/// assert_eq!(chart.media_type, "image/png");
/// ```
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Media {
    /// What it is.
    pub kind: MediaKind,
    /// Its type (`image/png`, `audio/wav`, `application/pdf`, ...).
    pub media_type: String,
    /// Its bytes, or where they are.
    pub data: MediaData,
    /// The resource it is, for a document a tool read (an MCP resource's URI).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uri: Option<String>,
    /// Where it stands in the text of its message: a byte offset (on a `char` boundary).
    /// `None`: after the text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<usize>,
}

impl Media {
    /// `kind` media of `media_type`.
    pub fn new(kind: MediaKind, media_type: impl Into<String>, data: MediaData) -> Self {
        Self {
            kind,
            media_type: media_type.into(),
            data,
            uri: None,
            at: None,
        }
    }

    /// Media of `media_type`, its kind read from the type (`image/...`, `audio/...`, else a
    /// document).
    pub fn of_type(media_type: impl Into<String>, data: MediaData) -> Self {
        let media_type = media_type.into();
        Self::new(MediaKind::of(&media_type), media_type, data)
    }

    /// This media with the URI of the resource it is.
    pub fn with_uri(mut self, uri: impl Into<String>) -> Self {
        self.uri = Some(uri.into());
        self
    }

    /// This media placed at byte `at` of its message's text.
    pub fn at(mut self, at: usize) -> Self {
        self.at = Some(at);
        self
    }

    /// How many bytes it holds, when inline (base64's length, decoded).
    pub fn byte_len(&self) -> Option<usize> {
        match &self.data {
            MediaData::Base64(data) => Some(decoded_len(data)),
            MediaData::Url(_) => None,
        }
    }

    /// What stands for it where text is shown instead (`[image/png, 34 KB]`, `[application/pdf
    /// at https://...]`): never its bytes.
    pub fn label(&self) -> String {
        match &self.data {
            MediaData::Base64(data) => {
                let bytes = decoded_len(data);
                let size = match bytes {
                    0..1024 => format!("{bytes} B"),
                    1024..1_048_576 => format!("{} KB", bytes.div_ceil(1024)),
                    _ => format!("{:.1} MB", bytes as f64 / 1_048_576.0),
                };
                format!("[{}, {size}]", self.media_type)
            }
            MediaData::Url(url) => format!("[{} at {url}]", self.media_type),
        }
    }
}

/// What kind of [`Media`] a message carries.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MediaKind {
    /// A picture.
    Image,
    /// Sound.
    Audio,
    /// A document or another resource (a PDF, a file).
    Document,
}

impl MediaKind {
    /// The kind a media type names: `image/...`, `audio/...`, else a document.
    pub fn of(media_type: &str) -> Self {
        match media_type.split('/').next() {
            Some("image") => Self::Image,
            Some("audio") => Self::Audio,
            _ => Self::Document,
        }
    }
}

/// Where the bytes of [`Media`] are.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MediaData {
    /// Inline, base64-encoded.
    Base64(String),
    /// At a URL the provider fetches.
    Url(String),
}

/// How a contract's media field carries its bytes.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MediaForm {
    /// `contentEncoding: "base64"`: the bytes inline (a `data:` URL's base64 is taken too).
    Base64,
    /// `format: "uri"`: a URL the provider fetches.
    Uri,
}

/// A media field of an input contract, as the codegen read it from the schema.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MediaSpec {
    /// The property's name (the field is `/<name>` of the call's context).
    pub name: &'static str,
    /// Its `contentMediaType`: `image/png`, `image/*`, `application/pdf`, `audio/*`, ...
    pub accepts: &'static str,
    /// Inline or by URL.
    pub form: MediaForm,
}

impl MediaSpec {
    /// The field `name` of `accepts` media, carried as `form`.
    pub const fn new(name: &'static str, accepts: &'static str, form: MediaForm) -> Self {
        Self {
            name,
            accepts,
            form,
        }
    }
}

/// Whether the media type `actual` is one `accepts` (`image/*` takes every image).
pub fn accepts(accepts: &str, actual: &str) -> bool {
    match accepts.strip_suffix("/*") {
        Some(top) => actual.split('/').next() == Some(top),
        None => accepts.eq_ignore_ascii_case(actual) || same_type(accepts, actual),
    }
}

/// Spellings of one type.
fn same_type(a: &str, b: &str) -> bool {
    fn canon(t: &str) -> &str {
        match t {
            "image/jpg" => "image/jpeg",
            "audio/mp3" => "audio/mpeg",
            "audio/x-wav" | "audio/wave" => "audio/wav",
            "audio/x-flac" => "audio/flac",
            other => other,
        }
    }
    canon(a) == canon(b)
}

/// The media type the bytes' signature (their first bytes) says, for the types a provider
/// takes: PNG, JPEG, GIF, WebP, PDF, WAV, MP3, Ogg and FLAC.
///
/// ```
/// use agent_contracts_contract::__private::sniff_media;
/// assert_eq!(sniff_media(b"\x89PNG\r\n\x1a\n...."), Some("image/png"));
/// assert_eq!(sniff_media(b"%PDF-1.4"), Some("application/pdf"));
/// assert_eq!(sniff_media(b"hello"), None);
/// ```
pub fn sniff(bytes: &[u8]) -> Option<&'static str> {
    const TABLE: &[(&[u8], &str)] = &[
        (b"\x89PNG\r\n\x1a\n", "image/png"),
        (b"\xff\xd8\xff", "image/jpeg"),
        (b"GIF87a", "image/gif"),
        (b"GIF89a", "image/gif"),
        (b"%PDF-", "application/pdf"),
        (b"OggS", "audio/ogg"),
        (b"fLaC", "audio/flac"),
        (b"ID3", "audio/mpeg"),
    ];
    if let Some((_, media_type)) = TABLE.iter().find(|(magic, _)| bytes.starts_with(magic)) {
        return Some(media_type);
    }
    match bytes {
        [
            b'R',
            b'I',
            b'F',
            b'F',
            _,
            _,
            _,
            _,
            b'W',
            b'E',
            b'B',
            b'P',
            ..,
        ] => Some("image/webp"),
        [
            b'R',
            b'I',
            b'F',
            b'F',
            _,
            _,
            _,
            _,
            b'W',
            b'A',
            b'V',
            b'E',
            ..,
        ] => Some("audio/wav"),
        // An MPEG audio frame's sync word (11 set bits) and a layer other than reserved.
        [0xff, second, ..] if second & 0xe0 == 0xe0 && second & 0x06 != 0 => Some("audio/mpeg"),
        _ => None,
    }
}

/// The decoded length of base64 text (padding and whitespace not counted).
fn decoded_len(data: &str) -> usize {
    let chars = data
        .bytes()
        .filter(|b| !b.is_ascii_whitespace() && *b != b'=')
        .count();
    chars / 4 * 3 + (chars % 4).saturating_sub(1)
}

/// The value of a contract's media field: the string the caller sent (base64 or a URL), and
/// once checked ([`MediaInput::check`]) the [`Media`] it is. Serialized back as that string.
///
/// In a prompt template, `{{ field }}` places the media there: it prints a marker that
/// [`place_media`] replaces by the media part.
#[derive(Debug, Clone, Default)]
pub struct MediaInput {
    text: String,
    checked: Option<(&'static str, Media)>,
}

/// Values are compared as the strings the caller sent.
impl PartialEq for MediaInput {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}

impl Eq for MediaInput {}

impl std::hash::Hash for MediaInput {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.text.hash(state);
    }
}

impl PartialOrd for MediaInput {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for MediaInput {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.text.cmp(&other.text)
    }
}

/// The string as sent, for a contract's checks (`maxLength`, `pattern`).
impl std::ops::Deref for MediaInput {
    type Target = str;
    fn deref(&self) -> &str {
        &self.text
    }
}

impl MediaInput {
    /// The string as the caller sent it.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The media, once the call's check read it.
    pub fn media(&self) -> Option<&Media> {
        self.checked.as_ref().map(|(_, media)| media)
    }

    /// Reads the value as the media field `spec`: the bytes' signature must be a type
    /// `spec.accepts` names (and the one a `data:` URL declares), within
    /// [`Limits::max_media_bytes`]; a URL's scheme must be one of [`Limits::media_schemes`]
    /// and never `file`. The retry error names the field by its JSON pointer (`/screenshot`).
    pub fn check(&mut self, spec: &MediaSpec, limits: &Limits) -> Result<(), RetryError> {
        let pointer = format!("/{}", spec.name.replace('~', "~0").replace('/', "~1"));
        let pointer = pointer.as_str();
        let refuse = |message: String| Err(media_error(spec, message));
        let text = self.text.trim();
        let media = match spec.form {
            MediaForm::Uri => {
                let Some((scheme, _)) = text.split_once(':').filter(|(s, _)| is_scheme(s)) else {
                    return refuse(format!(
                        "`{pointer}` must be a URL of {} media",
                        spec.accepts
                    ));
                };
                let scheme = scheme.to_ascii_lowercase();
                if scheme == "file"
                    || !limits
                        .media_schemes
                        .iter()
                        .any(|allowed| allowed.eq_ignore_ascii_case(&scheme))
                {
                    return refuse(format!(
                        "`{pointer}`: a `{scheme}:` URL is not taken (schemes taken: {})",
                        limits.media_schemes.join(", ")
                    ));
                }
                let media_type = match spec.accepts.ends_with("/*") {
                    true => type_of_path(text)
                        .filter(|t| accepts(spec.accepts, t))
                        .unwrap_or(spec.accepts),
                    false => spec.accepts,
                };
                Media::of_type(media_type, MediaData::Url(text.to_owned()))
            }
            MediaForm::Base64 => {
                let (declared, data) = match text.strip_prefix("data:") {
                    Some(rest) => match rest.split_once(";base64,") {
                        Some((declared, data)) => (Some(declared), data),
                        None => {
                            return refuse(format!(
                                "`{pointer}`: a data URL must be base64 (`data:<type>;base64,...`)"
                            ));
                        }
                    },
                    None => (None, text),
                };
                let size = decoded_len(data);
                if size > limits.max_media_bytes {
                    return refuse(format!(
                        "`{pointer}` holds {size} bytes, over the limit of {} bytes a media value",
                        limits.max_media_bytes
                    ));
                }
                let compact: String;
                let data = match data.bytes().any(|b| b.is_ascii_whitespace()) {
                    true => {
                        compact = data.split_ascii_whitespace().collect();
                        compact.as_str()
                    }
                    false => data,
                };
                let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(data) else {
                    return refuse(format!("`{pointer}` is not valid base64"));
                };
                let Some(found) = sniff(&bytes) else {
                    return refuse(format!(
                        "`{pointer}`: the bytes are no {} this runtime knows (PNG, JPEG, GIF, WebP, PDF, WAV, MP3, Ogg, FLAC)",
                        spec.accepts
                    ));
                };
                if !accepts(spec.accepts, found) {
                    return refuse(format!(
                        "`{pointer}` must be {}, but its bytes are {found}",
                        spec.accepts
                    ));
                }
                if let Some(declared) = declared.filter(|d| !accepts(d, found)) {
                    return refuse(format!(
                        "`{pointer}` is declared {declared}, but its bytes are {found}"
                    ));
                }
                Media::of_type(found, MediaData::Base64(data.to_owned()))
            }
        };
        self.checked = Some((spec.name, media));
        Ok(())
    }
}

/// A URL scheme: a letter, then letters, digits, `+`, `-` or `.`.
fn is_scheme(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

/// The media type a URL's file extension names, for the types [`sniff`] knows.
fn type_of_path(url: &str) -> Option<&'static str> {
    let path = url.split(['?', '#']).next()?;
    let extension = path.rsplit_once('.')?.1.to_ascii_lowercase();
    Some(match extension.as_str() {
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "pdf" => "application/pdf",
        "wav" => "audio/wav",
        "mp3" => "audio/mpeg",
        "ogg" => "audio/ogg",
        "flac" => "audio/flac",
        _ => return None,
    })
}

fn media_error(spec: &MediaSpec, message: String) -> RetryError {
    let path = vec![PathSegment::Key(spec.name.to_owned())];
    RetryDetails {
        success: false,
        error: ErrorKind::InputContract.to_string(),
        validation_message: message.clone(),
        path: path.clone(),
        required_fields: Vec::new(),
        missing_fields: Vec::new(),
        provided_fields: Vec::new(),
        hint: format!(
            "Send `{}` as {} of type {}",
            spec.name,
            match spec.form {
                MediaForm::Base64 => "base64 bytes",
                MediaForm::Uri => "a URL",
            },
            spec.accepts
        ),
        errors: vec![Violation {
            path,
            message,
            description: None,
        }],
        kind: ErrorKind::InputContract,
    }
    .into()
}

/// What a media field prints in a template: a marker [`place_media`] replaces, between two of
/// these.
const MARK: char = '\u{FFFC}';

/// A number drawn once per process that every marker holds, so text a caller sends cannot
/// forge one (markers never leave the process: [`place_media`] removes them).
fn nonce() -> &'static str {
    static NONCE: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    NONCE.get_or_init(|| {
        use std::hash::BuildHasher;
        let drawn = std::collections::hash_map::RandomState::new().hash_one(0x006d_6564_6961_u64);
        format!("{drawn:016x}:")
    })
}

impl fmt::Display for MediaInput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.checked {
            Some((name, _)) => write!(f, "{MARK}{}{name}{MARK}", nonce()),
            None => Ok(()),
        }
    }
}

impl Serialize for MediaInput {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.text)
    }
}

impl<'de> Deserialize<'de> for MediaInput {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(Self {
            text: String::deserialize(deserializer)?,
            checked: None,
        })
    }
}

/// The markers of a prompt with media fields, for the default prompt: one per field, in the
/// contract's order.
pub fn markers(media: &[&MediaInput]) -> String {
    media.iter().map(ToString::to_string).collect()
}

/// A rendered prompt's text without its media markers, and the media placed where the markers
/// stood (each field's first marker; a field its template did not print goes after the text),
/// in `media`'s order.
pub fn place_media(text: &str, media: &[&MediaInput]) -> (String, Vec<Media>) {
    let mut placed: Vec<Option<usize>> = vec![None; media.len()];
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find(MARK) {
        out.push_str(&rest[..start]);
        let after = &rest[start + MARK.len_utf8()..];
        let name = after
            .strip_prefix(nonce())
            .and_then(|tail| tail.split_once(MARK));
        match name.and_then(|(name, tail)| {
            let index = media
                .iter()
                .position(|m| m.checked.as_ref().is_some_and(|(n, _)| *n == name))?;
            Some((index, tail))
        }) {
            Some((index, tail)) => {
                placed[index].get_or_insert(out.len());
                rest = tail;
            }
            None => {
                // Not a marker of this prompt's media: the character stays as written.
                out.push(MARK);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    let media = media
        .iter()
        .zip(placed)
        .filter_map(|(input, at)| {
            let mut media = input.media()?.clone();
            media.at = at;
            Some(media)
        })
        .collect();
    (out, media)
}

/// Text with each placed media's label in its place ([`Media::label`]), the rest after it:
/// what a prompt with media looks like where only text can be shown.
pub fn show_parts(text: &str, media: &[Media]) -> String {
    let mut placed: Vec<&Media> = media.iter().collect();
    placed.sort_by_key(|m| m.at.unwrap_or(usize::MAX));
    let mut out = String::with_capacity(text.len());
    let mut after_label = false;
    // Each label on a line of its own.
    let push_text = |out: &mut String, piece: &str, after_label: &mut bool| {
        if piece.is_empty() {
            return;
        }
        if *after_label && !piece.starts_with('\n') {
            out.push('\n');
        }
        out.push_str(piece);
        *after_label = false;
    };
    let mut from = 0;
    for media in placed {
        let at = media
            .at
            .filter(|&at| at <= text.len() && text.is_char_boundary(at))
            .unwrap_or(text.len())
            .max(from);
        push_text(&mut out, &text[from..at], &mut after_label);
        from = at;
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(&media.label());
        after_label = true;
    }
    push_text(&mut out, &text[from..], &mut after_label);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";

    fn b64(bytes: &[u8]) -> String {
        base64::engine::general_purpose::STANDARD.encode(bytes)
    }

    fn input(text: &str) -> MediaInput {
        serde_json::from_value(serde_json::Value::String(text.into())).unwrap()
    }

    const SHOT: MediaSpec = MediaSpec::new("shot", "image/*", MediaForm::Base64);

    #[test]
    fn the_signature_decides_the_type() {
        let mut shot = input(&b64(PNG));
        shot.check(&SHOT, &Limits::default()).unwrap();
        let media = shot.media().unwrap();
        assert_eq!(
            (media.kind, media.media_type.as_str()),
            (MediaKind::Image, "image/png")
        );
        assert_eq!(media.byte_len(), Some(PNG.len()));
        let jpeg = MediaSpec::new("shot", "image/jpeg", MediaForm::Base64);
        let error = input(&b64(PNG))
            .check(&jpeg, &Limits::default())
            .unwrap_err();
        assert_eq!(error.path, [PathSegment::Key("shot".into())]);
        assert!(
            error
                .validation_message
                .contains("must be image/jpeg, but its bytes are image/png"),
            "{error:?}"
        );
        let declared = input(&format!("data:image/jpeg;base64,{}", b64(PNG)))
            .check(&SHOT, &Limits::default())
            .unwrap_err();
        assert!(declared.validation_message.contains("declared image/jpeg"));
        for bad in ["not base64!", &b64(b"plain text")] {
            assert!(input(bad).check(&SHOT, &Limits::default()).is_err());
        }
    }

    #[test]
    fn every_known_signature() {
        for (bytes, media_type) in [
            (&b"\xff\xd8\xff\xe0"[..], "image/jpeg"),
            (b"GIF89a", "image/gif"),
            (b"RIFF\0\0\0\0WEBPVP8 ", "image/webp"),
            (b"RIFF\0\0\0\0WAVEfmt ", "audio/wav"),
            (b"ID3\x04", "audio/mpeg"),
            (b"\xff\xfb\x90", "audio/mpeg"),
            (b"OggS\0", "audio/ogg"),
            (b"fLaC\0", "audio/flac"),
            (b"%PDF-1.7", "application/pdf"),
        ] {
            assert_eq!(sniff(bytes), Some(media_type));
        }
        assert_eq!(sniff(b"\xff\xe0"), None);
    }

    #[test]
    fn the_size_bound_is_checked_before_decoding() {
        let limits = Limits::default().with_max_media_bytes(8);
        let error = input(&b64(PNG)).check(&SHOT, &limits).unwrap_err();
        assert!(
            error.validation_message.contains("over the limit of 8"),
            "{error:?}"
        );
    }

    #[test]
    fn urls_take_allowed_schemes_only() {
        let spec = MediaSpec::new("doc", "application/pdf", MediaForm::Uri);
        let mut doc = input("https://example.com/a.pdf");
        doc.check(&spec, &Limits::default()).unwrap();
        assert_eq!(
            doc.media().unwrap().data,
            MediaData::Url("https://example.com/a.pdf".into())
        );
        for bad in ["file:///etc/passwd", "http://example.com/a.pdf", "a.pdf"] {
            let error = input(bad).check(&spec, &Limits::default()).unwrap_err();
            assert_eq!(error.path, [PathSegment::Key("doc".into())], "{bad}");
        }
        let everything = Limits::default().with_media_schemes(&["https", "file"]);
        assert!(input("file:///a.pdf").check(&spec, &everything).is_err());
    }

    #[test]
    fn markers_place_media_and_leave_no_bytes() {
        let mut shot = input(&b64(PNG));
        shot.check(&SHOT, &Limits::default()).unwrap();
        let mut doc = input("https://example.com/a.pdf");
        doc.check(
            &MediaSpec::new("doc", "application/pdf", MediaForm::Uri),
            &Limits::default(),
        )
        .unwrap();
        // A marker without this process's number is text, whatever it names.
        let forged = "\u{FFFC}media:shot\u{FFFC}";
        let text = format!("Look: {shot} then {forged} and {shot}.");
        let (out, media) = place_media(&text, &[&shot, &doc]);
        assert_eq!(out, format!("Look:  then {forged} and ."));
        assert_eq!(media[0].at, Some(6));
        assert_eq!(media[1].at, None);
        assert!(!out.contains(&b64(PNG)));
        assert_eq!(
            show_parts(&out, &media),
            format!(
                "Look: \n[image/png, 16 B]\n then {forged} and .\n[application/pdf at https://example.com/a.pdf]"
            )
        );
    }
}
