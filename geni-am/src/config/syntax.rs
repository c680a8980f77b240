//! Naming the key a TOML reading error is about: the reader reports a
//! position; the dotted key is rebuilt from the table header above it and
//! the key on its line, so messages about a wrong type or an unknown value
//! say which key holds it.

/// The dotted key at byte `offset` of `text` (`backend.kind`), or the
/// table (`store`) when the position is not on a `key = value` line.
pub(super) fn key_at(text: &str, offset: usize) -> Option<String> {
    let offset = offset.min(text.len());
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[offset..].find('\n').map_or(text.len(), |i| offset + i);
    let line = text[line_start..line_end].trim();
    let table = text[..line_start]
        .lines()
        .rev()
        .map(str::trim)
        .find_map(header)
        .unwrap_or_default();
    if let Some(own) = header(line) {
        return Some(own.to_owned());
    }
    let key = line.split_once('=')?.0.trim().trim_matches('"');
    Some(if table.is_empty() {
        key.to_owned()
    } else {
        format!("{table}.{key}")
    })
}

/// The table name of a `[table]` or `[[array.of.tables]]` line.
fn header(line: &str) -> Option<&str> {
    let inner = line.strip_prefix('[')?.split(']').next()?;
    Some(inner.trim_start_matches('[').trim())
}
