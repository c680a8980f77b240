//! Lexical checks quick-xml leaves to its caller: XML names (with the
//! namespace rule of at most one colon), the items of a start tag with their
//! exact layout, and end tags.

/// A lexical error at a byte offset of the source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ScanError {
    pub(crate) offset: usize,
    pub(crate) message: String,
}

fn fail<T>(offset: usize, message: String) -> Result<T, ScanError> {
    Err(ScanError { offset, message })
}

/// One attribute or namespace declaration of a start tag, as byte ranges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RawItem {
    pub(crate) ws_start: u32,
    pub(crate) name_start: u32,
    pub(crate) name_end: u32,
    /// Length of the prefix (0 when un-prefixed).
    pub(crate) colon: u32,
    pub(crate) value_start: u32,
    pub(crate) value_end: u32,
    pub(crate) quote: u8,
}

/// A start tag split into its parts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RawTag {
    pub(crate) name_end: u32,
    /// Length of the element prefix (0 when un-prefixed).
    pub(crate) colon: u32,
    /// Where the whitespace before `>` or `/>` starts.
    pub(crate) tail_start: u32,
}

fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// Whether `c` may start an XML name (XML 1.0 fifth edition).
fn is_name_start(c: char) -> bool {
    matches!(c,
        'A'..='Z' | '_' | 'a'..='z' | ':'
        | '\u{C0}'..='\u{D6}' | '\u{D8}'..='\u{F6}' | '\u{F8}'..='\u{2FF}'
        | '\u{370}'..='\u{37D}' | '\u{37F}'..='\u{1FFF}' | '\u{200C}'..='\u{200D}'
        | '\u{2070}'..='\u{218F}' | '\u{2C00}'..='\u{2FEF}' | '\u{3001}'..='\u{D7FF}'
        | '\u{F900}'..='\u{FDCF}' | '\u{FDF0}'..='\u{FFFD}' | '\u{10000}'..='\u{EFFFF}')
}

/// Whether `c` may continue an XML name.
fn is_name_char(c: char) -> bool {
    is_name_start(c)
        || matches!(c,
            '-' | '.' | '0'..='9' | '\u{B7}' | '\u{300}'..='\u{36F}' | '\u{203F}'..='\u{2040}')
}

/// [`is_name_char`] for ASCII, as a table for the hot loop.
const ASCII_NAME_CHAR: [bool; 128] = {
    let mut table = [false; 128];
    let mut b = 0;
    while b < 128 {
        table[b] =
            matches!(b as u8, b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'_' | b':' | b'-' | b'.');
        b += 1;
    }
    table
};

/// The character at `at` (the source is valid UTF-8) and its length.
fn char_at(src: &[u8], at: usize) -> Option<(char, usize)> {
    let b = *src.get(at)?;
    if b < 0x80 {
        return Some((b as char, 1));
    }
    let len = match b {
        0xF0.. => 4,
        0xE0.. => 3,
        _ => 2,
    };
    let c = std::str::from_utf8(src.get(at..at + len)?)
        .ok()?
        .chars()
        .next()?;
    Some((c, len))
}

/// Describes the byte at `at` for a message.
fn found(src: &[u8], at: usize) -> String {
    match src.get(at) {
        None => "the end of the tag".to_owned(),
        Some(b) if b.is_ascii_graphic() => format!("`{}`", *b as char),
        Some(_) => match char_at(src, at) {
            Some((c, _)) => format!("`{c}` (U+{:04X})", c as u32),
            None => "an invalid byte".to_owned(),
        },
    }
}

/// Scans a qualified name starting at `start`, ending before `limit` at the
/// latest; returns its end and prefix length.
pub(crate) fn scan_qname(
    src: &[u8],
    start: usize,
    limit: usize,
    what: &str,
) -> Result<(usize, u32), ScanError> {
    let first = char_at(src, start).filter(|&(c, _)| start < limit && c != ':' && is_name_start(c));
    let Some((_, first_len)) = first else {
        return fail(
            start,
            format!("expected {what}, found {}", found(src, start)),
        );
    };
    let mut end = start + first_len;
    let mut colon = 0;
    while end < limit {
        let b = src[end];
        if b < 0x80 && ASCII_NAME_CHAR[b as usize] && b != b':' {
            end += 1;
            continue;
        }
        let Some((c, len)) = char_at(src, end).filter(|&(c, _)| is_name_char(c)) else {
            break;
        };
        if c == ':' {
            if colon != 0 {
                return fail(end, format!("{what} has more than one `:`"));
            }
            colon = (end - start) as u32;
        }
        end += len;
    }
    let local = start + colon as usize + 1;
    if colon != 0 && end == local {
        return fail(end, format!("{what} has an empty local part after `:`"));
    }
    if colon != 0 && !char_at(src, local).is_some_and(|(c, _)| is_name_start(c)) {
        return fail(
            local,
            format!(
                "the local part of {what} must start with a letter or `_`, found {}",
                found(src, local)
            ),
        );
    }
    Ok((end, colon))
}

/// Scans the start tag `src[start..end]` (`<` to `>` inclusive), pushing its
/// items to `items`.
pub(crate) fn scan_start_tag(
    src: &[u8],
    start: usize,
    end: usize,
    self_closing: bool,
    items: &mut Vec<RawItem>,
) -> Result<RawTag, ScanError> {
    let limit = end - if self_closing { 2 } else { 1 };
    let (name_end, colon) = scan_qname(src, start + 1, limit, "an element name")?;
    let mut pos = name_end;
    loop {
        let ws_start = pos;
        while pos < limit && is_ws(src[pos]) {
            pos += 1;
        }
        if pos == limit {
            return Ok(RawTag {
                name_end: name_end as u32,
                colon,
                tail_start: ws_start as u32,
            });
        }
        if pos == ws_start {
            return fail(
                pos,
                format!(
                    "expected whitespace, `>` or `/>` after `{}`, found {}",
                    String::from_utf8_lossy(&src[start + 1..pos]),
                    found(src, pos)
                ),
            );
        }
        let (attr_end, attr_colon) = scan_qname(src, pos, limit, "an attribute name")?;
        let attr = String::from_utf8_lossy(&src[pos..attr_end]);
        let mut at = attr_end;
        while at < limit && is_ws(src[at]) {
            at += 1;
        }
        if at >= limit || src[at] != b'=' {
            return fail(
                at,
                format!(
                    "attribute `{attr}` has no value: expected `=`, found {}",
                    found(src, at)
                ),
            );
        }
        at += 1;
        while at < limit && is_ws(src[at]) {
            at += 1;
        }
        let quote = match src.get(at) {
            Some(&q @ (b'"' | b'\'')) if at < limit => q,
            _ => {
                return fail(
                    at,
                    format!(
                        "value of attribute `{attr}` must be in quotes, found {}",
                        found(src, at)
                    ),
                );
            }
        };
        let value_start = at + 1;
        let Some(len) = memchr::memchr(quote, &src[value_start..limit]) else {
            return fail(at, format!("value of attribute `{attr}` is not closed"));
        };
        items.push(RawItem {
            ws_start: ws_start as u32,
            name_start: pos as u32,
            name_end: attr_end as u32,
            colon: attr_colon,
            value_start: value_start as u32,
            value_end: (value_start + len) as u32,
            quote,
        });
        pos = value_start + len + 1;
    }
}

/// Checks the end tag `src[start..end]` (`</name ws>`): returns the name range.
pub(crate) fn scan_end_tag(
    src: &[u8],
    start: usize,
    end: usize,
) -> Result<(usize, usize), ScanError> {
    let name_start = start + 2;
    let (name_end, _) = scan_qname(src, name_start, end - 1, "an element name")?;
    match src[name_end..end - 1].iter().position(|&b| !is_ws(b)) {
        None => Ok((name_start, name_end)),
        Some(i) => fail(
            name_end + i,
            format!("unexpected {} in an end tag", found(src, name_end + i)),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tag(s: &str) -> Result<(RawTag, Vec<RawItem>), ScanError> {
        let mut items = Vec::new();
        let closing = s.ends_with("/>");
        scan_start_tag(s.as_bytes(), 0, s.len(), closing, &mut items).map(|t| (t, items))
    }

    #[test]
    fn splits_a_start_tag_keeping_layout() {
        let s = "<p:a  x = 'v'\n y=\"w\" />";
        let (t, items) = tag(s).unwrap();
        assert_eq!((t.name_end, t.colon, t.tail_start), (4, 1, 20));
        assert_eq!(items.len(), 2);
        assert_eq!(
            &s[items[0].ws_start as usize..items[0].name_start as usize],
            "  "
        );
        assert_eq!(
            &s[items[0].value_start as usize..items[0].value_end as usize],
            "v"
        );
        assert_eq!(items[0].quote, b'\'');
        assert_eq!(
            &s[items[1].name_start as usize..items[1].name_end as usize],
            "y"
        );
    }

    #[test]
    fn names_the_fault_in_a_start_tag() {
        assert!(tag("<a x>").unwrap_err().message.contains("expected `=`"));
        assert!(tag("<a x=y>").unwrap_err().message.contains("in quotes"));
        assert!(
            tag("<a x='1'y='2'>")
                .unwrap_err()
                .message
                .contains("whitespace")
        );
        assert!(
            tag("<a xmlns:\"u\">")
                .unwrap_err()
                .message
                .contains("empty local part")
        );
        assert!(
            tag("<a:b:c>")
                .unwrap_err()
                .message
                .contains("more than one")
        );
        assert!(tag("<1a>").unwrap_err().message.contains("element name"));
        assert!(tag("<p:-a>").unwrap_err().message.contains("local part"));
        assert!(
            tag("<a com\u{d7}ponent='1'>")
                .unwrap_err()
                .message
                .contains("U+00D7")
        );
        assert_eq!(tag("<\u{e9}t\u{e9} na\u{ef}ve='1'>").unwrap().1.len(), 1);
    }

    #[test]
    fn checks_end_tags() {
        assert_eq!(scan_end_tag(b"</a:b >", 0, 7).unwrap(), (2, 5));
        assert!(scan_end_tag(b"</a b>", 0, 6).is_err());
    }
}
