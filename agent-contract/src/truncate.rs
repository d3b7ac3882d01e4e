//! Cutting echoed text to a byte budget: every message that repeats something untrusted (a
//! field name, a run id, a provider's error body) repeats at most a bounded prefix of it.

/// Cuts `text` to at most `max` bytes on a char boundary, marking the cut with `…`.
#[doc(hidden)]
pub fn truncate(text: &str, max: usize) -> std::borrow::Cow<'_, str> {
    if text.len() <= max {
        return text.into();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end]).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncate_respects_char_boundaries() {
        assert_eq!(truncate("héllo", 2), "h…");
        assert_eq!(truncate("abc", 3), "abc");
    }
}
