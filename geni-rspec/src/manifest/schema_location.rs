//! Rewriting `xsi:schemaLocation` for a manifest: the core namespace's
//! pair points at `manifest.xsd` instead of `request.xsd`, extension pairs
//! the manifest needs are appended, every other pair and all the original
//! spacing stay as they were.

/// Returns the `xsi:schemaLocation` value for the manifest of a request
/// whose value was `existing`: the location paired with `core_ns` becomes
/// `core_schema` (a pair is appended when there was none), and each of
/// `extra` whose namespace is not listed yet is appended. A value with an odd
/// number of URIs is malformed: its last, unpaired URI is dropped so that the
/// pairs that follow line up.
pub fn for_manifest(
    existing: Option<&str>,
    core_ns: &str,
    core_schema: &str,
    extra: &[(&str, &str)],
) -> String {
    let text = existing.unwrap_or_default();
    let spans = token_spans(text);
    let complete = spans.len() / 2 * 2;
    let mut out = String::with_capacity(text.len() + core_schema.len());
    let mut copied = 0;
    let mut listed: Vec<&str> = Vec::new();
    for pair in spans[..complete].chunks(2) {
        let (ns, location) = (pair[0], pair[1]);
        let namespace = &text[ns.0..ns.1];
        listed.push(namespace);
        if namespace == core_ns {
            out.push_str(&text[copied..location.0]);
            out.push_str(core_schema);
            copied = location.1;
        }
    }
    let content_end = if complete == 0 {
        0
    } else {
        spans[complete - 1].1
    };
    out.push_str(&text[copied.min(content_end)..content_end]);
    let trailing = if complete == spans.len() {
        &text[content_end..]
    } else {
        ""
    };
    let missing = std::iter::once((core_ns, core_schema))
        .chain(extra.iter().copied())
        .filter(|(ns, _)| !listed.contains(ns));
    for (ns, schema) in missing {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(ns);
        out.push(' ');
        out.push_str(schema);
    }
    out.push_str(trailing);
    out
}

/// Byte ranges of the white-space separated tokens of `text`.
fn token_spans(text: &str) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut start = None;
    for (i, c) in text.char_indices() {
        match (c.is_whitespace(), start) {
            (true, Some(s)) => {
                spans.push((s, i));
                start = None;
            }
            (false, None) => start = Some(i),
            _ => {}
        }
    }
    if let Some(s) = start {
        spans.push((s, text.len()));
    }
    spans
}

#[cfg(test)]
mod tests {
    use super::for_manifest;

    const V3: &str = "http://www.geni.net/resources/rspec/3";
    const MANIFEST: &str = "http://www.geni.net/resources/rspec/3/manifest.xsd";

    #[test]
    fn swaps_only_the_core_pair_and_keeps_spacing() {
        let existing = "http://x/ext http://x/ext/request.xsd\n   http://www.geni.net/resources/rspec/3 http://www.geni.net/resources/rspec/3/request.xsd ";
        assert_eq!(
            for_manifest(Some(existing), V3, MANIFEST, &[]),
            "http://x/ext http://x/ext/request.xsd\n   http://www.geni.net/resources/rspec/3 http://www.geni.net/resources/rspec/3/manifest.xsd "
        );
    }

    #[test]
    fn adds_the_core_pair_and_extensions_when_missing() {
        assert_eq!(
            for_manifest(None, V3, MANIFEST, &[("http://u", "http://u/m.xsd")]),
            format!("{V3} {MANIFEST} http://u http://u/m.xsd")
        );
        assert_eq!(
            for_manifest(
                Some("http://u http://u/own.xsd"),
                V3,
                MANIFEST,
                &[("http://u", "http://u/m.xsd")]
            ),
            format!("http://u http://u/own.xsd {V3} {MANIFEST}")
        );
    }

    #[test]
    fn an_unpaired_uri_is_dropped_so_pairs_line_up() {
        assert_eq!(
            for_manifest(
                Some("http://www.geni.net/resources/rspec/3/request.xsd"),
                V3,
                MANIFEST,
                &[]
            ),
            format!("{V3} {MANIFEST}")
        );
        assert_eq!(
            for_manifest(
                Some(" http://a http://a/x.xsd http://lonely "),
                V3,
                MANIFEST,
                &[]
            ),
            format!(" http://a http://a/x.xsd {V3} {MANIFEST}")
        );
    }
}
