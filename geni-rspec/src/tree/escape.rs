//! Entity and character references: checking them while parsing, resolving
//! them when values are read, and escaping values that edits write.

use std::borrow::Cow;

/// What is wrong with a reference, at a byte offset of the checked slice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RefError {
    /// `&name;` with a name other than the five predefined ones.
    Unknown(usize, String),
    /// Anything else: a bare `&`, a bad character reference, `<` in a value.
    Malformed(usize, String),
}

/// Whether `c` may appear in an XML 1.0 document.
pub(crate) fn is_xml_char(c: u32) -> bool {
    matches!(c, 0x9 | 0xA | 0xD | 0x20..=0xD7FF | 0xE000..=0xFFFD | 0x10000..=0x10FFFF)
}

/// Resolves the name of a reference (`amp`, `#38`, `#x26`) to its character.
fn resolve(name: &str) -> Option<char> {
    match name {
        "amp" => Some('&'),
        "lt" => Some('<'),
        "gt" => Some('>'),
        "apos" => Some('\''),
        "quot" => Some('"'),
        _ => {
            let num = name.strip_prefix('#')?;
            let code = match num.strip_prefix('x') {
                Some(hex) if !hex.is_empty() && hex.bytes().all(|b| b.is_ascii_hexdigit()) => {
                    u32::from_str_radix(hex, 16).ok()?
                }
                Some(_) => return None,
                None if !num.is_empty() && num.bytes().all(|b| b.is_ascii_digit()) => {
                    num.parse().ok()?
                }
                None => return None,
            };
            if is_xml_char(code) {
                char::from_u32(code)
            } else {
                None
            }
        }
    }
}

/// Checks one reference whose name is `name` (between `&` and `;`) at `at`.
pub(crate) fn check_ref(name: &str, at: usize) -> Result<(), RefError> {
    if resolve(name).is_some() {
        return Ok(());
    }
    if name.starts_with('#') {
        Err(RefError::Malformed(
            at,
            format!("`&{name};` is not a valid character reference"),
        ))
    } else {
        Err(RefError::Unknown(at, name.to_owned()))
    }
}

/// Checks an attribute value as written between its quotes: every `&` starts
/// a known reference and there is no `<`.
pub(crate) fn check_value(raw: &str) -> Result<(), RefError> {
    let bytes = raw.as_bytes();
    let mut from = 0;
    while let Some(i) = memchr::memchr2(b'&', b'<', &bytes[from..]) {
        let at = from + i;
        if bytes[at] == b'<' {
            return Err(RefError::Malformed(
                at,
                "`<` is not allowed in an attribute value; write &lt;".to_owned(),
            ));
        }
        let end = memchr::memchr(b';', &bytes[at..])
            .map(|j| at + j)
            .filter(|&end| end > at + 1 && end - at <= 64)
            .ok_or_else(|| {
                RefError::Malformed(
                    at,
                    "`&` must start a reference such as &amp; (write &amp; for a literal &)"
                        .to_owned(),
                )
            })?;
        check_ref(raw.get(at + 1..end).unwrap_or(""), at)?;
        from = end + 1;
    }
    Ok(())
}

/// Resolves the references of checked raw text (or value) and normalizes
/// line ends; attribute values also turn tabs and line ends into spaces.
fn unescape(raw: &str, attribute: bool) -> Cow<'_, str> {
    let special: &[u8] = if attribute { b"&\r\n\t" } else { b"&\r" };
    if !raw.bytes().any(|b| special.contains(&b)) {
        return Cow::Borrowed(raw);
    }
    let mut out = String::with_capacity(raw.len());
    let mut rest = raw;
    while let Some(i) = rest.find(['&', '\r', '\n', '\t']) {
        out.push_str(&rest[..i]);
        let c = rest.as_bytes()[i];
        rest = &rest[i + 1..];
        match c {
            b'&' => {
                let end = rest.find(';').unwrap_or(rest.len());
                if let Some(ch) = resolve(&rest[..end]) {
                    out.push(ch);
                }
                rest = rest.get(end + 1..).unwrap_or("");
            }
            b'\r' => {
                rest = rest.strip_prefix('\n').unwrap_or(rest);
                out.push(if attribute { ' ' } else { '\n' });
            }
            other => out.push(if attribute { ' ' } else { other as char }),
        }
    }
    out.push_str(rest);
    Cow::Owned(out)
}

/// The character data of checked raw text.
pub(crate) fn unescape_text(raw: &str) -> Cow<'_, str> {
    unescape(raw, false)
}

/// The normalized value of a checked raw attribute value.
pub(crate) fn unescape_value(raw: &str) -> Cow<'_, str> {
    unescape(raw, true)
}

/// Escapes `s` with the given replacements for special characters.
fn escape<'a>(s: &'a str, map: fn(char) -> Option<&'static str>) -> Cow<'a, str> {
    if !s.chars().any(|c| map(c).is_some()) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match map(c) {
            Some(rep) => out.push_str(rep),
            None => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Escapes character data so that it reads back as `s`.
pub(crate) fn escape_text(s: &str) -> Cow<'_, str> {
    escape(s, |c| match c {
        '&' => Some("&amp;"),
        '<' => Some("&lt;"),
        '>' => Some("&gt;"),
        '\r' => Some("&#13;"),
        _ => None,
    })
}

/// Escapes an attribute value written between `quote`s so that it reads back
/// as `s` (whitespace other than spaces survives as character references).
pub(crate) fn escape_value(s: &str, quote: u8) -> Cow<'_, str> {
    if quote == b'\'' {
        escape(s, |c| match c {
            '\'' => Some("&apos;"),
            other => value_char(other),
        })
    } else {
        escape(s, |c| match c {
            '"' => Some("&quot;"),
            other => value_char(other),
        })
    }
}

/// Replacement of a character in any attribute value.
fn value_char(c: char) -> Option<&'static str> {
    match c {
        '&' => Some("&amp;"),
        '<' => Some("&lt;"),
        '\t' => Some("&#9;"),
        '\n' => Some("&#10;"),
        '\r' => Some("&#13;"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_predefined_and_character_references() {
        assert_eq!(unescape_text("a&amp;b&lt;&#65;&#x42;"), "a&b<AB");
        assert!(matches!(unescape_text("plain"), Cow::Borrowed(_)));
    }

    #[test]
    fn normalizes_whitespace_in_values_but_not_in_text() {
        assert_eq!(unescape_value("a\tb\r\nc&#10;"), "a b c\n");
        assert_eq!(unescape_text("a\r\nb\rc"), "a\nb\nc");
    }

    #[test]
    fn refuses_unknown_and_malformed_references() {
        assert_eq!(
            check_value("x&foo;"),
            Err(RefError::Unknown(1, "foo".to_owned()))
        );
        assert!(matches!(
            check_value("a & b"),
            Err(RefError::Malformed(2, _))
        ));
        assert!(matches!(
            check_value("&#0;"),
            Err(RefError::Malformed(0, _))
        ));
        assert!(matches!(check_value("a<b"), Err(RefError::Malformed(1, _))));
    }

    #[test]
    fn escaped_values_read_back_unchanged() {
        let s = "a&b<c>\"d'\te\nf\rg";
        for quote in [b'"', b'\''] {
            let escaped = escape_value(s, quote);
            check_value(&escaped).unwrap();
            assert!(!escaped.contains(quote as char));
            assert_eq!(unescape_value(&escaped), s);
        }
        assert_eq!(unescape_text(&escape_text(s)), s);
    }
}
