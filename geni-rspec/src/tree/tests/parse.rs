//! Unit tests of parsing, navigation and serialization.

use super::super::*;

const GENI: &str = "http://www.geni.net/resources/rspec/3";
const EMULAB: &str = "http://www.protogeni.net/resources/rspec/ext/emulab/1";

const SAMPLE: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<!-- request -->
<rspec xmlns="http://www.geni.net/resources/rspec/3" type='request'
       xmlns:emulab="http://www.protogeni.net/resources/rspec/ext/emulab/1">
  <node client_id="n1" emulab:routable_control_ip="true">
    <sliver_type name="default-vm"><disk_image name="urn:a&amp;b"/></sliver_type>
    <emulab:fd name="x" weight='1'></emulab:fd>
    <![CDATA[raw <cdata>]]><?app hint?>text &lt;&#65;
  </node>
  <link client_id="l1"/>
</rspec>
"#;

fn sample() -> Document {
    Document::parse(SAMPLE.as_bytes()).unwrap()
}

fn parse_err(input: &str) -> ParseError {
    Document::parse(input.as_bytes()).unwrap_err()
}

#[test]
fn serializes_an_untouched_document_byte_for_byte() {
    let doc = sample();
    assert_eq!(doc.to_bytes(), SAMPLE.as_bytes());
}

#[test]
fn node_to_bytes_writes_one_subtree_as_in_place() {
    let doc = sample();
    let link = doc.elements_named(doc.root(), GENI, "link").next().unwrap();
    assert_eq!(doc.node_to_bytes(link), br#"<link client_id="l1"/>"#);
    let node = doc.elements(doc.root()).next().unwrap();
    let fd = doc.elements_named(node, EMULAB, "fd").next().unwrap();
    assert_eq!(
        doc.node_to_bytes(fd),
        br#"<emulab:fd name="x" weight='1'></emulab:fd>"#
    );
}

#[test]
fn navigates_names_namespaces_and_parents() {
    let doc = sample();
    let root = doc.root();
    assert!(doc.is_element(root, GENI, "rspec"));
    assert_eq!(doc.parent(root), None);
    assert_eq!(doc.line(root), 3);
    let names: Vec<&str> = doc.elements(root).map(|e| doc.local_name(e)).collect();
    assert_eq!(names, ["node", "link"]);
    let node = doc.elements(root).next().unwrap();
    assert_eq!(doc.parent(node), Some(root));
    let fd = doc.elements(node).nth(1).unwrap();
    assert_eq!(doc.prefix(fd), Some("emulab"));
    assert_eq!(doc.qualified_name(fd), "emulab:fd");
    assert_eq!(doc.namespace(fd), Some(EMULAB));
    assert_eq!(doc.line(fd), 7);
    let all: Vec<&str> = doc.descendants(root).map(|e| doc.local_name(e)).collect();
    assert_eq!(all, ["node", "sliver_type", "disk_image", "fd", "link"]);
    let kinds: Vec<NodeKind> = doc.children(node).map(|c| doc.kind(c)).collect();
    assert_eq!(
        kinds,
        [
            NodeKind::Text,
            NodeKind::Element,
            NodeKind::Text,
            NodeKind::Element,
            NodeKind::Text,
            NodeKind::CData,
            NodeKind::ProcessingInstruction,
            NodeKind::Text,
        ]
    );
}

#[test]
fn reads_attributes_and_namespace_declarations() {
    let doc = sample();
    let root = doc.root();
    assert_eq!(doc.attribute(root, "type").as_deref(), Some("request"));
    assert_eq!(doc.attribute(root, "xmlns"), None);
    let decls: Vec<_> = doc.namespace_declarations(root).collect();
    assert_eq!(decls, [(None, GENI), (Some("emulab"), EMULAB)]);
    let node = doc.elements(root).next().unwrap();
    assert_eq!(doc.attribute(node, "routable_control_ip"), None);
    assert_eq!(
        doc.attribute_ns(node, EMULAB, "routable_control_ip")
            .as_deref(),
        Some("true")
    );
    let attrs: Vec<_> = doc.attributes(node).collect();
    assert_eq!(attrs.len(), 2);
    assert_eq!(attrs[1].prefix, Some("emulab"));
    assert_eq!(attrs[1].namespace, Some(EMULAB));
    assert_eq!(attrs[0].namespace, None);
    let image = doc.descendants(node).nth(1).unwrap();
    assert_eq!(doc.attribute(image, "name").as_deref(), Some("urn:a&b"));
}

#[test]
fn text_concatenates_character_data_and_cdata() {
    let doc = sample();
    let node = doc.elements(doc.root()).next().unwrap();
    assert_eq!(
        doc.text(node).split_whitespace().collect::<Vec<_>>(),
        ["raw", "<cdata>text", "<A"]
    );
    let pi = doc
        .children(node)
        .find(|&c| doc.kind(c) == NodeKind::ProcessingInstruction)
        .unwrap();
    assert_eq!(doc.text(pi), "app hint");
}

#[test]
fn refuses_doctype_and_entity_declarations() {
    let err = parse_err("<?xml version='1.0'?>\n<!DOCTYPE r [<!ENTITY a 'aaaa'>]>\n<r>&a;</r>");
    assert!(matches!(err, ParseError::Doctype { line: 2, .. }), "{err}");
}

#[test]
fn refuses_unknown_entity_references_in_text_and_values() {
    let err = parse_err("<r>\n&nbsp;</r>");
    assert!(
        matches!(&err, ParseError::UnknownEntity { line: 2, name, .. } if name == "nbsp"),
        "{err}"
    );
    let err = parse_err("<r a='&x;'/>");
    assert!(
        matches!(err, ParseError::UnknownEntity { line: 1, .. }),
        "{err}"
    );
    let err = parse_err("<r>a & b</r>");
    assert_eq!(err.line(), 1);
}

#[test]
fn refuses_undeclared_prefixes_on_elements_and_attributes() {
    let err = parse_err("<r>\n <e:x/></r>");
    assert!(
        matches!(&err, ParseError::UndeclaredPrefix { line: 2, prefix, .. } if prefix == "e"),
        "{err}"
    );
    assert_eq!(err.column(), Some(3));
    let err = parse_err("<r e:a='1'/>");
    assert!(matches!(err, ParseError::UndeclaredPrefix { .. }), "{err}");
    assert!(Document::parse(b"<r xml:lang='en'/>").is_ok());
}

#[test]
fn refuses_duplicate_attributes_by_name_and_by_namespace() {
    let err = parse_err("<r a='1'\n a='2'/>");
    assert!(
        matches!(err, ParseError::DuplicateAttribute { line: 2, .. }),
        "{err}"
    );
    let err = parse_err("<r xmlns:p='u' xmlns:q='u' p:a='1' q:a='2'/>");
    assert!(
        matches!(err, ParseError::DuplicateAttribute { .. }),
        "{err}"
    );
    let many: String = (0..40).map(|i| format!(" a{i}='1'")).collect();
    let err = parse_err(&format!("<r{many} a7='2'/>"));
    assert!(
        matches!(err, ParseError::DuplicateAttribute { .. }),
        "{err}"
    );
}

#[test]
fn refuses_mismatched_and_unclosed_tags_and_content_outside_the_root() {
    let err = parse_err("<a>\n<b>\n</a>");
    assert!(
        matches!(
            err,
            ParseError::MismatchedTag {
                line: 3,
                open_line: 2,
                ..
            }
        ),
        "{err}"
    );
    let err = parse_err("<a>\n<b/>\n");
    assert!(
        matches!(
            err,
            ParseError::Unclosed {
                line: 3,
                open_line: 1,
                ..
            }
        ),
        "{err}"
    );
    let err = parse_err("<a/>\ntext");
    assert!(
        matches!(err, ParseError::OutsideRoot { line: 2, .. }),
        "{err}"
    );
    let err = parse_err("<a/><b/>");
    assert!(matches!(err, ParseError::OutsideRoot { .. }), "{err}");
    let err = parse_err("<!-- only a comment -->");
    assert!(matches!(err, ParseError::NoRoot { .. }), "{err}");
    let err = parse_err("<a></a></b>");
    assert!(matches!(err, ParseError::OutsideRoot { .. }), "{err}");
}

#[test]
fn refuses_other_encodings_and_invalid_bytes() {
    let err = parse_err("<?xml version='1.0' encoding='ISO-8859-1'?><a/>");
    assert!(err.to_string().contains("ISO-8859-1"), "{err}");
    let err = Document::parse(b"<a>\n\xff</a>").unwrap_err();
    assert!(matches!(err, ParseError::Encoding { line: 2, .. }), "{err}");
    let err = Document::parse(b"\xff\xfe<\0a\0/\0>\0").unwrap_err();
    assert!(err.to_string().contains("UTF-16"), "{err}");
    let err = Document::parse(b"<a>\x01</a>").unwrap_err();
    assert!(err.to_string().contains("U+0001"), "{err}");
}

#[test]
fn keeps_a_byte_order_mark() {
    let input = b"\xEF\xBB\xBF<?xml version='1.0'?><a/>";
    let doc = Document::parse(input).unwrap();
    assert_eq!(doc.to_bytes(), input);
}

#[test]
fn refuses_malformed_comments_pis_and_declarations() {
    assert!(
        parse_err("<a><!-- x -- y --></a>")
            .to_string()
            .contains("--")
    );
    assert!(
        parse_err("<a/><?xml version='1.0'?>")
            .to_string()
            .contains("very start")
    );
    assert!(parse_err("<a>]]></a>").to_string().contains("]]>"));
    assert!(parse_err("<a><?p:i x?></a>").to_string().contains("`:`"));
    assert!(
        parse_err("<a><![CDATA[x]]></a><![CDATA[y]]>")
            .to_string()
            .contains("CDATA")
    );
}

/// Parses `input` under the default limits changed by `tighten`.
fn parse_limited(input: &[u8], tighten: fn(&mut Limits)) -> Result<Document, ParseError> {
    let mut limits = Limits::default();
    tighten(&mut limits);
    Document::parse_with_limits(input, &limits)
}

#[test]
fn enforces_limits() {
    let err = parse_limited(b"<a><b>\n<c/></b></a>", |l| l.max_depth = 2).unwrap_err();
    assert!(
        matches!(err, ParseError::LimitExceeded { line: 2, .. }),
        "{err}"
    );
    assert!(parse_limited(b"<a><b/></a>", |l| l.max_depth = 2).is_ok());
    assert!(parse_limited(b"<a x='1' y='2'/>", |l| l.max_attributes = 1).is_err());
    assert!(parse_limited(b"<a><b/><c/><d/></a>", |l| l.max_nodes = 3).is_err());
    let err = parse_limited(b"<a></a>", |l| l.max_bytes = 4).unwrap_err();
    assert!(
        matches!(err, ParseError::TooLarge { size: 7, limit: 4 }),
        "{err}"
    );
}

#[test]
fn deep_nesting_is_refused_by_default_and_handled_without_recursion_when_allowed() {
    let depth = 100_000;
    let input = format!("{}{}", "<a>".repeat(depth), "</a>".repeat(depth));
    let err = parse_err(&input);
    assert!(
        matches!(err, ParseError::LimitExceeded { what, limit: 256, .. } if what.contains("nesting")),
        "{err}"
    );
    let doc = parse_limited(input.as_bytes(), |l| l.max_depth = usize::MAX).unwrap();
    assert_eq!(doc.to_bytes(), input.as_bytes());
    assert_eq!(doc.descendants(doc.root()).count(), depth - 1);
    assert_eq!(doc.text(doc.root()), "");
}

#[test]
fn refuses_malformed_xml_declarations_and_noncharacters() {
    for bad in [
        "<?xml version=\"1.0-->\" ?><a/>",
        "<?xml version=\"1.0\" e<![CDATA[ncoding=\"UTF-8\"?><a/>",
        "<?xml encoding='UTF-8' version='1.0'?><a/>",
        "<?xml version='1.0' standalone='maybe'?><a/>",
        "<?xml version='2.0'?><a/>",
    ] {
        let err = parse_err(bad);
        assert!(err.to_string().contains("XML declaration"), "{bad}: {err}");
    }
    assert!(
        Document::parse(b"<?xml version='1.0' encoding='utf-8' standalone='yes' ?><a/>").is_ok()
    );
    let err = parse_err("<a>\n\u{FFFE}</a>");
    assert!(
        matches!(&err, ParseError::Syntax { line: 2, message, .. } if message.contains("U+FFFE")),
        "{err}"
    );
    let err = parse_err("<a x='\u{FFFF}'/>");
    assert!(err.to_string().contains("U+FFFF"), "{err}");
}
