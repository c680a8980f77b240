//! The credential profile of geni-xml's hardened parse: at most
//! [`MAX_DOCUMENT_BYTES`], nesting at most [`MAX_DEPTH`], IDs indexed and
//! unique (so a signature reference resolves to exactly one element), no
//! DOCTYPE, no entities, no network.

use geni_xml::{ParseOptions, XmlError};
use std::ops::Deref;

/// The largest document accepted (credentials with long delegation chains
/// are tens of kilobytes).
pub const MAX_DOCUMENT_BYTES: usize = 1 << 20;

/// The deepest element nesting accepted.
pub const MAX_DEPTH: usize = 64;

/// A credential document parsed for signature work; reads through
/// [`geni_xml::Document`].
#[derive(Debug)]
pub struct Document(geni_xml::Document);

impl Document {
    /// Parses `bytes`: size limit first, then libxml2 with network access
    /// off and no entity substitution, then no DOCTYPE, the depth limit and
    /// unique IDs. Line numbers and namespace leniency are libxml2's
    /// defaults, as in the XML-DSig tools credentials come from.
    pub fn parse(bytes: &[u8]) -> Result<Self, XmlError> {
        let options = ParseOptions::default()
            .named(c"credential.xml")
            .max_bytes(MAX_DOCUMENT_BYTES)
            .max_depth(MAX_DEPTH)
            .index_ids()
            .short_lines()
            .lenient_namespaces();
        geni_xml::Document::parse_with(bytes, &options).map(Self)
    }
}

impl Deref for Document {
    type Target = geni_xml::Document;

    fn deref(&self) -> &geni_xml::Document {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_credential_profile_refuses_doctype_colliding_ids_and_excess() {
        let bomb = br#"<!DOCTYPE r [<!ENTITY a "aaaa">]><r>&a;</r>"#;
        assert_eq!(Document::parse(bomb).unwrap_err(), XmlError::Doctype);
        let twice = b"<r>\n<a xml:id=\"x\"/>\n<b id=\"x\"/></r>";
        assert!(matches!(
            Document::parse(twice),
            Err(XmlError::DuplicateId { .. })
        ));
        let big = vec![b' '; MAX_DOCUMENT_BYTES + 1];
        assert!(matches!(
            Document::parse(&big),
            Err(XmlError::TooLarge { .. })
        ));
        let deep = format!(
            "{}{}",
            "<a>".repeat(MAX_DEPTH + 1),
            "</a>".repeat(MAX_DEPTH + 1)
        );
        assert!(matches!(
            Document::parse(deep.as_bytes()),
            Err(XmlError::TooDeep { .. })
        ));
    }

    #[test]
    fn ids_resolve_to_their_element() {
        let doc = Document::parse(br#"<r><c xml:id="k">a&amp;b</c></r>"#).unwrap();
        let c = doc.element_by_id("k").unwrap();
        assert_eq!(c.text(), "a&b");
        assert!(c.parent().unwrap().same(doc.root().unwrap()));
    }
}
