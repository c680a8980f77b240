//! The one rule for requests that the schemas cannot express, checked on
//! the project's lossless tree: `client_id`s are unique among nodes, among
//! links and among interfaces.
//!
//! Every other request the schemas accept is valid here too (a node
//! without `sliver_type` is valid GENI v3: the aggregate chooses one). A
//! repeated `client_id` is refused because no aggregate can serve it: slivers
//! and manifest entries are told apart by `client_id`. Rules that depend on
//! which aggregate serves the request (the ends of its own links, one
//! sliver type per node of its own) belong to the aggregate, which knows
//! what is its own.

use super::{Issue, IssueKind};
use crate::tree::{Document, NodeId};
use std::borrow::Cow;
use std::collections::HashMap;

/// Checks the request `doc` whose RSpec elements are in namespace `ns`;
/// returns the problems in document order.
pub(super) fn check_request(doc: &Document, ns: &str) -> Vec<Issue> {
    let root = doc.root();
    let nodes: Vec<NodeId> = doc.elements_named(root, ns, "node").collect();
    let links: Vec<NodeId> = doc.elements_named(root, ns, "link").collect();
    let interfaces: Vec<NodeId> = nodes
        .iter()
        .flat_map(|&node| doc.elements_named(node, ns, "interface"))
        .collect();
    let mut issues = Vec::new();
    for (group, what) in [
        (&nodes, "node"),
        (&links, "link"),
        (&interfaces, "interface"),
    ] {
        unique_client_ids(doc, group, what, &mut issues);
    }
    issues.sort_by_key(|issue| issue.line);
    issues
}

/// Reports every element of `group` whose `client_id` an earlier one has.
fn unique_client_ids(doc: &Document, group: &[NodeId], what: &str, issues: &mut Vec<Issue>) {
    let mut first: HashMap<Cow<'_, str>, NodeId> = HashMap::new();
    for &element in group {
        let Some(id) = doc.attribute(element, "client_id") else {
            continue; // the schema reports the missing attribute
        };
        if let Some(&earlier) = first.get(&id) {
            issues.push(Issue {
                kind: IssueKind::Semantic,
                line: doc.line(element),
                element: Some(doc.local_name(element).to_owned()),
                message: format!(
                    "client_id '{id}' is already used by the {what} on line {}; slivers and manifests tell {what}s apart by client_id, so each {what} needs its own",
                    doc.line(earlier)
                ),
            });
        } else {
            first.insert(id, element);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const V3: &str = "http://www.geni.net/resources/rspec/3";

    fn check(body: &str) -> Vec<Issue> {
        let text = format!("<rspec xmlns=\"{V3}\" type=\"request\">\n{body}\n</rspec>");
        check_request(&Document::parse(text.as_bytes()).unwrap(), V3)
    }

    const VM: &str = "<sliver_type name=\"default-vm\"/>";

    #[test]
    fn a_sound_request_passes() {
        let body = format!(
            "<node client_id=\"a\">{VM}<interface client_id=\"a:0\"/></node>\n\
             <node client_id=\"b\">{VM}<interface client_id=\"b:0\"/></node>\n\
             <link client_id=\"l\"><interface_ref client_id=\"a:0\"/><interface_ref client_id=\"b:0\"/></link>"
        );
        assert_eq!(check(&body), vec![]);
    }

    #[test]
    fn duplicate_node_ids_are_reported_on_the_second_node() {
        let issues = check(&format!(
            "<node client_id=\"a\">{VM}</node>\n<node client_id=\"a\">{VM}</node>"
        ));
        assert_eq!(issues.len(), 1);
        assert_eq!(
            (issues[0].line, issues[0].element.as_deref()),
            (3, Some("node"))
        );
        assert!(
            issues[0]
                .message
                .contains("already used by the node on line 2")
        );
        assert!(
            issues[0].message.contains("tell nodes apart by client_id"),
            "{}",
            issues[0]
        );
    }

    #[test]
    fn duplicate_interface_ids_across_nodes_are_reported() {
        let issues = check(&format!(
            "<node client_id=\"a\">{VM}<interface client_id=\"if\"/></node>\n\
             <node client_id=\"b\">{VM}<interface client_id=\"if\"/></node>"
        ));
        assert_eq!(issues.len(), 1);
        assert_eq!(issues[0].element.as_deref(), Some("interface"));
    }

    #[test]
    fn duplicate_link_ids_are_reported() {
        let issues = check("<link client_id=\"l\"/>\n<link client_id=\"l\"/>");
        assert_eq!(issues.len(), 1);
        assert_eq!(issues[0].element.as_deref(), Some("link"));
    }

    #[test]
    fn links_to_interfaces_of_no_node_and_nodes_without_sliver_type_are_left_to_the_aggregate() {
        let issues = check(
            "<node client_id=\"a\"><interface client_id=\"a:0\"/></node>\n\
             <link client_id=\"l\"><interface_ref client_id=\"a:0\"/><interface_ref client_id=\"zz\"/></link>",
        );
        assert_eq!(issues, vec![]);
    }

    #[test]
    fn extension_elements_named_node_are_ignored() {
        let issues = check("<x:node xmlns:x=\"urn:other\" client_id=\"a\"/>");
        assert_eq!(issues, vec![]);
    }
}
