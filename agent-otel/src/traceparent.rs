//! W3C Trace Context `traceparent` headers: read from an untrusted peer (strictly: anything
//! else is no parent), and written for the current span.

use opentelemetry::trace::{SpanContext, SpanId, TraceFlags, TraceId, TraceState};

/// The longest `traceparent` read: version 00 is 55 bytes; a later version may append fields.
const MAX_LEN: usize = 512;

/// A `traceparent`'s span context (remote), or `None` for text that is not one: a wrong
/// length or version, a non-hex or upper-case digit, an all-zero trace or span ID.
pub(crate) fn parse(text: &str) -> Option<SpanContext> {
    let text = text.trim();
    if text.len() > MAX_LEN || !text.is_ascii() {
        return None;
    }
    let mut parts = text.split('-');
    let version = parts.next()?;
    let trace_id = parts.next()?;
    let span_id = parts.next()?;
    let flags = parts.next()?;
    let rest = parts.next();
    let lower_hex = |s: &str, len: usize| {
        s.len() == len
            && s.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    };
    if !lower_hex(version, 2) || version == "ff" || !lower_hex(trace_id, 32) {
        return None;
    }
    if !lower_hex(span_id, 16) || !lower_hex(flags, 2) {
        return None;
    }
    // Version 00 has exactly four fields; a later version may have more.
    if version == "00" && rest.is_some() {
        return None;
    }
    let trace_id = TraceId::from_hex(trace_id).ok()?;
    let span_id = SpanId::from_hex(span_id).ok()?;
    if trace_id == TraceId::INVALID || span_id == SpanId::INVALID {
        return None;
    }
    let flags = u8::from_str_radix(flags, 16).ok()?;
    Some(SpanContext::new(
        trace_id,
        span_id,
        TraceFlags::new(flags) & TraceFlags::SAMPLED,
        true,
        TraceState::default(),
    ))
}

/// The `traceparent` of `context`, if it is valid.
pub(crate) fn format(context: &SpanContext) -> Option<String> {
    context.is_valid().then(|| {
        format!(
            "00-{}-{}-{:02x}",
            context.trace_id(),
            context.span_id(),
            context.trace_flags().to_u8()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn a_good_traceparent_round_trips() {
        let context = parse(GOOD).expect("a valid traceparent");
        assert!(context.is_remote());
        assert!(context.is_sampled());
        assert_eq!(
            context.trace_id().to_string(),
            "4bf92f3577b34da6a3ce929d0e0e4736"
        );
        assert_eq!(format(&context).as_deref(), Some(GOOD));
    }

    #[test]
    fn anything_else_is_no_parent() {
        for bad in [
            "",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-1",
            "é0-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        ] {
            assert!(parse(bad).is_none(), "{bad:?} was read as a traceparent");
        }
        let long = format!(
            "01-{}-00f067aa0ba902b7-01-{}",
            "a".repeat(32),
            "x".repeat(600)
        );
        assert!(parse(&long).is_none());
        // A later version may carry more fields.
        assert!(parse("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-more").is_some());
    }
}
