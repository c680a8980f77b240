//! A small streaming XML writer: elements with escaped attributes and text,
//! indented two spaces per level, written straight into one `String`.

/// Writes XML into a growing string.
#[derive(Debug, Default)]
pub(crate) struct XmlWriter {
    out: String,
}

/// An attribute to write; `None` values are left out.
pub(crate) type Attr<'a> = (&'a str, Option<&'a str>);

impl XmlWriter {
    /// A writer with `capacity` bytes reserved, starting with the XML declaration.
    pub(crate) fn with_capacity(capacity: usize) -> Self {
        let mut out = String::with_capacity(capacity);
        out.push_str("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        Self { out }
    }

    /// `<name attrs…>` on its own line at `depth`.
    pub(crate) fn open(&mut self, depth: usize, name: &str, attrs: &[Attr<'_>]) {
        self.start_tag(depth, name, attrs);
        self.out.push_str(">\n");
    }

    /// `<name attrs…/>` on its own line at `depth`.
    pub(crate) fn empty(&mut self, depth: usize, name: &str, attrs: &[Attr<'_>]) {
        self.start_tag(depth, name, attrs);
        self.out.push_str("/>\n");
    }

    /// `</name>` on its own line at `depth`.
    pub(crate) fn close(&mut self, depth: usize, name: &str) {
        self.indent(depth);
        self.out.push_str("</");
        self.out.push_str(name);
        self.out.push_str(">\n");
    }

    /// `<name>text</name>` on its own line at `depth`.
    pub(crate) fn text_element(&mut self, depth: usize, name: &str, text: &str) {
        self.start_tag(depth, name, &[]);
        self.out.push('>');
        escape_into(&mut self.out, text, false);
        self.out.push_str("</");
        self.out.push_str(name);
        self.out.push_str(">\n");
    }

    /// The document written so far.
    pub(crate) fn finish(self) -> String {
        self.out
    }

    fn indent(&mut self, depth: usize) {
        for _ in 0..depth {
            self.out.push_str("  ");
        }
    }

    fn start_tag(&mut self, depth: usize, name: &str, attrs: &[Attr<'_>]) {
        self.indent(depth);
        self.out.push('<');
        self.out.push_str(name);
        for (key, value) in attrs {
            if let Some(value) = value {
                self.out.push(' ');
                self.out.push_str(key);
                self.out.push_str("=\"");
                escape_into(&mut self.out, value, true);
                self.out.push('"');
            }
        }
    }
}

/// Appends `value` to `out` with the characters XML reserves escaped; in
/// attribute values also quotes and the whitespace an XML parser would
/// otherwise normalise away. Control characters XML 1.0 cannot carry
/// become U+FFFD.
fn escape_into(out: &mut String, value: &str, attribute: bool) {
    // Every character escaped is ASCII, and ASCII bytes never occur inside
    // a multi-byte UTF-8 sequence, so slicing at their positions is sound.
    let mut start = 0;
    for (i, byte) in value.bytes().enumerate() {
        let replacement = match byte {
            b'&' => "&amp;",
            b'<' => "&lt;",
            b'>' => "&gt;",
            b'\r' => "&#13;",
            b'"' if attribute => "&quot;",
            b'\t' if attribute => "&#9;",
            b'\n' if attribute => "&#10;",
            b'\t' | b'\n' => continue,
            0..=0x1f => "\u{FFFD}",
            _ => continue,
        };
        out.push_str(&value[start..i]);
        out.push_str(replacement);
        start = i + 1;
    }
    out.push_str(&value[start..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_attributes_and_text() {
        let mut w = XmlWriter::default();
        w.open(0, "a", &[("x", Some("1 < 2 & \"q\"\n")), ("skip", None)]);
        w.text_element(1, "t", "a<b>&c\u{1}é");
        w.close(0, "a");
        assert_eq!(
            w.finish(),
            "<a x=\"1 &lt; 2 &amp; &quot;q&quot;&#10;\">\n  <t>a&lt;b&gt;&amp;c\u{FFFD}é</t>\n</a>\n"
        );
    }
}
