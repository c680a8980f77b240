//! Checks of the markup quick-xml passes through unchecked: the characters
//! of the whole input (UTF-8, XML characters only), comments, processing
//! instructions and the XML declaration.

use super::error::{ParseError, position};
use super::escape::is_xml_char;
use super::scan::scan_qname;

/// A syntax error at byte `offset` of `src`.
fn syntax(src: &[u8], offset: usize, message: String) -> ParseError {
    let (line, column) = position(src, offset);
    ParseError::Syntax {
        line,
        column,
        message,
    }
}

/// The error for an XML declaration that is not at the very start.
pub(crate) fn misplaced_declaration(src: &[u8], offset: usize) -> ParseError {
    syntax(
        src,
        offset,
        "the XML declaration `<?xml ...?>` is only allowed at the very start of the document"
            .to_owned(),
    )
}

/// Refuses anything but UTF-8 text made of XML characters.
pub(crate) fn check_characters(input: &[u8]) -> Result<&str, ParseError> {
    let encoding = |offset: usize, message: String| {
        let (line, column) = position(input, offset);
        ParseError::Encoding {
            line,
            column,
            message,
        }
    };
    if input.starts_with(b"\xFE\xFF")
        || input.starts_with(b"\xFF\xFE")
        || input.starts_with(b"<\0")
        || input.starts_with(b"\0<")
    {
        return Err(encoding(
            0,
            "the document is UTF-16; only UTF-8 is accepted (convert it to UTF-8)".to_owned(),
        ));
    }
    let text = std::str::from_utf8(input).map_err(|e| {
        let at = e.valid_up_to();
        encoding(
            at,
            format!(
                "byte 0x{:02x} is not valid UTF-8; the document must be UTF-8 encoded",
                input[at]
            ),
        )
    })?;
    for (i, chunk) in input.chunks(64).enumerate() {
        let bad = chunk.iter().fold(false, |acc, &b| {
            acc | (b < 0x20 && b != b'\t' && b != b'\n' && b != b'\r')
        });
        if bad {
            let at = chunk
                .iter()
                .position(|&b| !is_xml_char(u32::from(b)))
                .map_or(i * 64, |j| i * 64 + j);
            let message = format!(
                "control character U+{:04X} is not allowed in XML",
                input[at]
            );
            return Err(syntax(input, at, message));
        }
    }
    // U+FFFE and U+FFFF are not XML characters either (UTF-8 EF BF BE/BF).
    let noncharacter = memchr::memmem::find_iter(input, b"\xEF\xBF")
        .find(|&at| matches!(input.get(at + 2), Some(0xBE | 0xBF)));
    if let Some(at) = noncharacter {
        let message = format!(
            "character U+FF{:02X} is not allowed in XML",
            input[at + 2] + 0x40
        );
        return Err(syntax(input, at, message));
    }
    Ok(text)
}

/// Checks the body of a comment starting at `start`.
pub(crate) fn check_comment(src: &[u8], start: usize, body: &[u8]) -> Result<(), ParseError> {
    if let Some(i) = memchr::memmem::find(body, b"--") {
        return Err(syntax(
            src,
            start + 4 + i,
            "`--` is not allowed inside a comment".to_owned(),
        ));
    }
    if body.ends_with(b"-") {
        return Err(syntax(
            src,
            start,
            "a comment cannot end with `--->`".to_owned(),
        ));
    }
    Ok(())
}

/// Checks the processing instruction `src[start..end]`.
pub(crate) fn check_pi(src: &[u8], start: usize, end: usize) -> Result<(), ParseError> {
    let limit = end - 2;
    let (target_end, colon) = scan_qname(src, start + 2, limit, "a processing instruction target")
        .map_err(|e| syntax(src, e.offset, e.message))?;
    if colon != 0 {
        let message = "a processing instruction target cannot contain `:`".to_owned();
        return Err(syntax(src, start + 2 + colon as usize, message));
    }
    let target = &src[start + 2..target_end];
    if target.eq_ignore_ascii_case(b"xml") {
        return Err(misplaced_declaration(src, start));
    }
    if target_end < limit && !b" \t\r\n".contains(&src[target_end]) {
        return Err(syntax(
            src,
            target_end,
            "expected whitespace after the processing instruction target".to_owned(),
        ));
    }
    Ok(())
}

/// One pseudo-attribute `name="value"` of the XML declaration at `pos`
/// (after required whitespace): the value's range and where it ends.
fn pseudo_attribute(
    src: &[u8],
    pos: usize,
    limit: usize,
    name: &[u8],
) -> Option<(usize, usize, usize)> {
    let ws = |mut at: usize| {
        while at < limit && b" \t\r\n".contains(&src[at]) {
            at += 1;
        }
        at
    };
    let at = ws(pos);
    if at == pos || !src[at..limit].starts_with(name) {
        return None;
    }
    let at = ws(at + name.len());
    if src.get(at) != Some(&b'=') {
        return None;
    }
    let at = ws(at + 1);
    let quote = *src
        .get(at)
        .filter(|q| at < limit && matches!(q, b'"' | b'\''))?;
    let len = memchr::memchr(quote, &src[at + 1..limit])?;
    Some((at + 1, at + 1 + len, at + 2 + len))
}

/// Checks the XML declaration `src[start..end]`: `version="1.x"`, then an
/// optional `encoding` that must be UTF-8, then an optional `standalone`.
pub(crate) fn check_decl(src: &[u8], start: usize, end: usize) -> Result<(), ParseError> {
    let limit = end - 2;
    let bad = |at: usize, what: &str| syntax(src, at, format!("malformed XML declaration: {what}"));
    let Some((vs, ve, mut pos)) = pseudo_attribute(src, start + 5, limit, b"version") else {
        return Err(bad(start, "expected version=\"1.0\""));
    };
    let version = &src[vs..ve];
    if version.len() < 3
        || !version.starts_with(b"1.")
        || !version[2..].iter().all(u8::is_ascii_digit)
    {
        let version = String::from_utf8_lossy(version);
        return Err(bad(vs, &format!("unsupported version `{version}`")));
    }
    if let Some((es, ee, next)) = pseudo_attribute(src, pos, limit, b"encoding") {
        let encoding = &src[es..ee];
        if !encoding.eq_ignore_ascii_case(b"utf-8") && !encoding.eq_ignore_ascii_case(b"utf8") {
            let (line, column) = position(src, es);
            return Err(ParseError::Encoding {
                line,
                column,
                message: format!(
                    "the document declares encoding `{}`; only UTF-8 is accepted (convert it and declare encoding=\"UTF-8\")",
                    String::from_utf8_lossy(encoding)
                ),
            });
        }
        pos = next;
    }
    if let Some((ss, se, next)) = pseudo_attribute(src, pos, limit, b"standalone") {
        if !matches!(&src[ss..se], b"yes" | b"no") {
            return Err(bad(ss, "standalone must be \"yes\" or \"no\""));
        }
        pos = next;
    }
    match src[pos..limit].iter().position(|b| !b" \t\r\n".contains(b)) {
        None => Ok(()),
        Some(i) => Err(bad(
            pos + i,
            &format!(
                "unexpected {}",
                String::from_utf8_lossy(&src[pos + i..limit])
            ),
        )),
    }
}
