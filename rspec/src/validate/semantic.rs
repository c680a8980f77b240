//! Rules for requests that the schemas cannot express, checked on the
//! project's lossless tree:
//!
//! * `client_id`s are unique among nodes, among links and among interfaces;
//! * every link's `interface_ref client_id` names an interface of a node;
//! * every requested node has exactly one `sliver_type`.
//!
//! They apply to requests only: a request is what the aggregate must turn
//! into slivers, while manifests of stitched slices legitimately name
//! interfaces held by other aggregates.

use super::{Issue, IssueKind};
use crate::tree::{Document, NodeId};
use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

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
    dangling_interface_refs(doc, ns, &links, &interfaces, &mut issues);
    for &node in &nodes {
        one_sliver_type(doc, ns, node, &mut issues);
    }
    issues.sort_by_key(|issue| issue.line);
    issues
}

fn issue(doc: &Document, at: NodeId, message: String) -> Issue {
    Issue {
        kind: IssueKind::Semantic,
        line: doc.line(at),
        element: Some(doc.local_name(at).to_owned()),
        message,
    }
}

/// Reports every element of `group` whose `client_id` an earlier one has.
fn unique_client_ids(doc: &Document, group: &[NodeId], what: &str, issues: &mut Vec<Issue>) {
    let mut first: HashMap<Cow<'_, str>, NodeId> = HashMap::new();
    for &element in group {
        let Some(id) = doc.attribute(element, "client_id") else {
            continue; // the schema reports the missing attribute
        };
        if let Some(&earlier) = first.get(&id) {
            let message = format!(
                "client_id '{id}' is already used by the {what} on line {}; each {what} needs its own",
                doc.line(earlier)
            );
            issues.push(issue(doc, element, message));
        } else {
            first.insert(id, element);
        }
    }
}

/// Reports link endpoints that name no interface of the request.
fn dangling_interface_refs(
    doc: &Document,
    ns: &str,
    links: &[NodeId],
    interfaces: &[NodeId],
    issues: &mut Vec<Issue>,
) {
    let declared: HashSet<Cow<'_, str>> = interfaces
        .iter()
        .filter_map(|&interface| doc.attribute(interface, "client_id"))
        .collect();
    for &link in links {
        let link_id = doc.attribute(link, "client_id").unwrap_or_default();
        for reference in doc.elements_named(link, ns, "interface_ref") {
            let Some(id) = doc.attribute(reference, "client_id") else {
                continue;
            };
            if !declared.contains(&id) {
                let message = format!(
                    "link '{link_id}' refers to interface '{id}', which no node of this request declares"
                );
                issues.push(issue(doc, reference, message));
            }
        }
    }
}

/// Reports a requested node without a `sliver_type`, or with several.
fn one_sliver_type(doc: &Document, ns: &str, node: NodeId, issues: &mut Vec<Issue>) {
    let id = doc.attribute(node, "client_id").unwrap_or_default();
    let types: Vec<NodeId> = doc.elements_named(node, ns, "sliver_type").collect();
    match types.as_slice() {
        [_] => {}
        [] => issues.push(issue(
            doc,
            node,
            format!("node '{id}' has no sliver_type; a requested node needs exactly one"),
        )),
        [_, extra, ..] => issues.push(issue(
            doc,
            *extra,
            format!(
                "node '{id}' has {} sliver_type elements; a requested node needs exactly one",
                types.len()
            ),
        )),
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
    fn a_link_to_an_unknown_interface_is_reported() {
        let issues = check(&format!(
            "<node client_id=\"a\">{VM}<interface client_id=\"a:0\"/></node>\n\
             <link client_id=\"l\">\n<interface_ref client_id=\"a:0\"/>\n<interface_ref client_id=\"zz\"/></link>"
        ));
        assert_eq!(issues.len(), 1);
        assert_eq!(issues[0].line, 5);
        assert!(
            issues[0].message.contains("interface 'zz'"),
            "{}",
            issues[0]
        );
    }

    #[test]
    fn nodes_need_exactly_one_sliver_type() {
        let issues = check(&format!(
            "<node client_id=\"none\"/>\n<node client_id=\"two\">{VM}\n{VM}</node>"
        ));
        assert_eq!(issues.len(), 2);
        assert!(issues[0].message.contains("'none' has no sliver_type"));
        assert_eq!(issues[1].line, 4);
        assert!(issues[1].message.contains("'two' has 2 sliver_type"));
    }

    #[test]
    fn extension_elements_named_node_are_ignored() {
        let issues = check("<x:node xmlns:x=\"urn:other\" client_id=\"a\"/>");
        assert_eq!(issues, vec![]);
    }
}
