//! Which RSpec a document is: its version from the namespace of the
//! document element, its kind from the `type` attribute, and whether that is
//! the kind the caller expects (a manifest or advertisement sent where a
//! request belongs is refused here, with a message saying so).

use super::{Issue, IssueKind, RspecKind, RspecVersion};
use geni_xml::Node;

/// Identifies the RSpec whose document element is `root`; with `expected`,
/// also requires that kind.
pub(super) fn identify(
    root: Node<'_>,
    expected: Option<RspecKind>,
) -> Result<(RspecVersion, RspecKind), Issue> {
    let fail = |kind: IssueKind, message: String| Issue {
        kind,
        line: root.line(),
        element: Some(root.name().to_owned()),
        message,
    };
    let version = match root.namespace() {
        Some(ns) => RspecVersion::from_namespace(ns).ok_or_else(|| {
            fail(
                IssueKind::Namespace,
                format!(
                    "namespace {ns} is not an RSpec namespace; {}",
                    expected_namespaces()
                ),
            )
        })?,
        None => {
            return Err(fail(
                IssueKind::Namespace,
                format!(
                    "the document element is in no namespace; {}",
                    expected_namespaces()
                ),
            ));
        }
    };
    if root.name() != "rspec" {
        return Err(fail(
            IssueKind::DocumentType,
            format!(
                "the document element must be <rspec>, not <{}>",
                root.name()
            ),
        ));
    }
    let kind = match root.attribute(None, "type").as_deref() {
        None => {
            return Err(fail(
                IssueKind::DocumentType,
                format!("attribute 'type' is missing; {}", kind_hint(expected)),
            ));
        }
        Some(value) => RspecKind::from_type_attribute(value).ok_or_else(|| {
            fail(
                IssueKind::DocumentType,
                format!(
                    "type '{value}' is not an RSpec type; {}",
                    kind_hint(expected)
                ),
            )
        })?,
    };
    match expected {
        Some(wanted) if wanted != kind => Err(fail(
            IssueKind::DocumentType,
            format!(
                "this is {} RSpec (type=\"{}\"), but {} RSpec (type=\"{}\") is expected here",
                kind.with_article(),
                kind.type_attribute(),
                wanted.with_article(),
                wanted.type_attribute()
            ),
        )),
        _ => Ok((version, kind)),
    }
}

fn expected_namespaces() -> String {
    format!(
        "expected {} (GENI RSpec v3) or {} (ProtoGENI RSpec v2)",
        RspecVersion::GeniV3.namespace(),
        RspecVersion::ProtoGeniV2.namespace()
    )
}

fn kind_hint(expected: Option<RspecKind>) -> String {
    match expected {
        Some(kind) => format!("expected type=\"{}\"", kind.type_attribute()),
        None => "expected \"advertisement\", \"request\" or \"manifest\"".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A document whose element `name` (in `namespace`, with `type` =
    /// `kind`) starts on line 3.
    fn root(namespace: Option<&str>, name: &str, kind: Option<&str>) -> geni_xml::Document {
        let xmlns = namespace
            .map(|ns| format!(" xmlns=\"{ns}\""))
            .unwrap_or_default();
        let kind = kind.map(|k| format!(" type=\"{k}\"")).unwrap_or_default();
        let text = format!("\n\n<{name}{xmlns}{kind}/>");
        geni_xml::Document::parse(text.as_bytes()).unwrap()
    }

    /// Identifies the document element of `doc`.
    fn identify(
        doc: &geni_xml::Document,
        expected: Option<RspecKind>,
    ) -> Result<(RspecVersion, RspecKind), Issue> {
        super::identify(doc.root().unwrap(), expected)
    }

    const V3: &str = "http://www.geni.net/resources/rspec/3";

    #[test]
    fn a_v3_request_is_identified() {
        let found = identify(&root(Some(V3), "rspec", Some("request")), None).unwrap();
        assert_eq!(found, (RspecVersion::GeniV3, RspecKind::Request));
    }

    #[test]
    fn a_v2_advertisement_is_identified() {
        let ns = Some("http://www.protogeni.net/resources/rspec/2");
        let found = identify(&root(ns, "rspec", Some("advertisement")), None).unwrap();
        assert_eq!(found, (RspecVersion::ProtoGeniV2, RspecKind::Advertisement));
    }

    #[test]
    fn a_manifest_sent_as_request_is_refused_saying_so() {
        let issue = identify(
            &root(Some(V3), "rspec", Some("manifest")),
            Some(RspecKind::Request),
        )
        .unwrap_err();
        assert_eq!(issue.kind, IssueKind::DocumentType);
        assert_eq!(issue.line, 3);
        assert!(
            issue.message.contains("this is a manifest RSpec"),
            "{issue}"
        );
        assert!(issue.message.contains("a request RSpec"), "{issue}");
    }

    #[test]
    fn a_wrong_namespace_names_the_expected_one() {
        let ns = Some("http://www.geni.net/resource/rspec/3");
        let issue = identify(&root(ns, "rspec", Some("request")), None).unwrap_err();
        assert_eq!(issue.kind, IssueKind::Namespace);
        assert!(
            issue
                .message
                .contains("expected http://www.geni.net/resources/rspec/3")
        );
    }

    #[test]
    fn a_missing_type_is_refused() {
        let issue = identify(&root(Some(V3), "rspec", None), Some(RspecKind::Request)).unwrap_err();
        assert!(issue.message.contains("'type' is missing"), "{issue}");
    }
}
