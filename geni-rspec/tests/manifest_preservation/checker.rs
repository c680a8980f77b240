//! An independent check that a manifest preserves its request, written
//! against libxml2's DOM (the `libxml` crate) rather than the project's own
//! tree, so a bug in the tree cannot hide a loss.
//!
//! Every element of the request must have a counterpart in the manifest at
//! the same place (children matched in order; the manifest may have more),
//! with every attribute unchanged (except the root's `type`, the core pair of
//! `xsi:schemaLocation`, which must point at `manifest.xsd`, and a
//! `sliver_id` a request wrongly carried on an element of this AM: the
//! manifest must give the AM's own sliver URN there, and the `<ip>`
//! elements of an interface of this AM, which the addresses the AM reports
//! replace), every
//! namespace binding still in scope, and every comment and non-blank text
//! kept. Nodes and links of other component managers must serialize
//! identically.

use libxml::parser::{Parser, ParserOptions};
use libxml::tree::{Document, Node, NodeType};
use std::collections::{BTreeMap, BTreeSet};

/// Parses `bytes` with libxml2: no network, no recovery from errors.
pub fn parse(bytes: &[u8]) -> Result<Document, String> {
    let options = ParserOptions {
        no_net: true,
        recover: false,
        ..ParserOptions::default()
    };
    Parser::default()
        .parse_string_with_options(bytes, options)
        .map_err(|e| format!("libxml2 does not parse it: {e:?}"))
}

/// What a successful check looked at.
#[derive(Debug, Default)]
pub struct Report {
    /// Request elements matched in the manifest.
    pub elements: usize,
    /// Nodes and links of other component managers found byte-identical.
    pub foreign: usize,
}

/// Checks that `manifest` preserves `request` for the AM of component
/// manager `cm`.
pub fn check(request: &[u8], manifest: &[u8], cm: &str) -> Result<Report, String> {
    let (req_doc, man_doc) = (parse(request)?, parse(manifest)?);
    let req_root = req_doc.get_root_element().ok_or("request has no root")?;
    let man_root = man_doc.get_root_element().ok_or("manifest has no root")?;
    let foreign = foreign_elements(&req_root, cm);
    let mut walk = Walk {
        req_doc: &req_doc,
        man_doc: &man_doc,
        foreign: &foreign,
        report: Report::default(),
        pairs: Vec::new(),
    };
    walk.element(&req_root, &man_root, "/rspec", false)?;
    if man_root.get_attribute("type").as_deref() != Some("manifest") {
        return Err("manifest root type is not `manifest`".into());
    }
    for (req, man) in &walk.pairs {
        if foreign.contains(&req.to_hashable()) {
            let (a, b) = (req_doc.node_to_string(req), man_doc.node_to_string(man));
            if a != b {
                return Err(format!(
                    "foreign element changed:\n--- request\n{a}\n--- manifest\n{b}"
                ));
            }
            walk.report.foreign += 1;
        }
    }
    if walk.report.foreign != foreign.len() {
        return Err(format!(
            "{} foreign elements, {} found in the manifest",
            foreign.len(),
            walk.report.foreign
        ));
    }
    Ok(walk.report)
}

/// Depth-first comparison state.
struct Walk<'d> {
    req_doc: &'d Document,
    man_doc: &'d Document,
    foreign: &'d BTreeSet<usize>,
    report: Report,
    /// Matched (request, manifest) element pairs.
    pairs: Vec<(Node, Node)>,
}

impl Walk<'_> {
    /// Compares `req` with its counterpart `man`; `foreign` tells whether
    /// they lie inside a node or link of another component manager.
    fn element(&mut self, req: &Node, man: &Node, path: &str, foreign: bool) -> Result<(), String> {
        if req.get_name() != man.get_name() || href(req) != href(man) {
            return Err(format!("{path}: element differs"));
        }
        let foreign = foreign || self.foreign.contains(&req.to_hashable());
        self.attributes(req, man, path, foreign)?;
        let in_scope: BTreeSet<(String, String)> = scope(man, self.man_doc);
        for binding in scope(req, self.req_doc) {
            if !in_scope.contains(&binding) {
                return Err(format!("{path}: namespace {binding:?} no longer in scope"));
            }
        }
        self.report.elements += 1;
        self.pairs.push((req.clone(), man.clone()));
        let man_children = significant(man);
        let mut cursor = 0;
        let addresses_reported = !foreign
            && req.get_name() == "interface"
            && man_children.iter().any(|c| c.get_name() == "ip");
        for (index, child) in significant(req).iter().enumerate() {
            if addresses_reported && child.get_name() == "ip" {
                continue;
            }
            let child_path = format!("{path}/{}[{index}]", label(child));
            let found = man_children[cursor..]
                .iter()
                .position(|candidate| same_item(child, candidate))
                .ok_or_else(|| format!("{child_path}: missing from the manifest"))?;
            let matched = &man_children[cursor + found];
            cursor += found + 1;
            if child.get_type() == Some(NodeType::ElementNode) {
                self.element(child, matched, &child_path, foreign)?;
            }
        }
        Ok(())
    }

    fn attributes(&self, req: &Node, man: &Node, path: &str, foreign: bool) -> Result<(), String> {
        let root = path == "/rspec";
        let kept = attributes(man);
        let owned_element = matches!(
            req.get_name().as_str(),
            "node" | "interface" | "link" | "interface_ref"
        );
        for ((name, ns), value) in attributes(req) {
            if !foreign && owned_element && ns.is_none() && name == "sliver_id" {
                continue;
            }
            if root && ns.is_none() && name == "type" {
                continue;
            }
            let got = kept.get(&(name.clone(), ns.clone()));
            if root && name == "schemaLocation" && ns.as_deref() == Some(XSI) {
                let got = got.ok_or_else(|| format!("{path}: xsi:schemaLocation dropped"))?;
                check_schema_location(&value, got).map_err(|e| format!("{path}: {e}"))?;
                continue;
            }
            if got != Some(&value) {
                return Err(format!("{path}/@{name}: {value:?} became {got:?}"));
            }
        }
        Ok(())
    }
}

const XSI: &str = "http://www.w3.org/2001/XMLSchema-instance";

/// Every pair of the request's schemaLocation must be in the manifest's,
/// with `request.xsd` of the core namespace swapped for `manifest.xsd`.
fn check_schema_location(request: &str, manifest: &str) -> Result<(), String> {
    let pairs = |s: &str| -> Vec<(String, String)> {
        let tokens: Vec<&str> = s.split_whitespace().collect();
        // An unpaired last URI is malformed and may be dropped.
        tokens
            .chunks_exact(2)
            .map(|c| (c[0].to_owned(), c[1].to_owned()))
            .collect()
    };
    let got = pairs(manifest);
    for (ns, location) in pairs(request) {
        let core = ns == "http://www.geni.net/resources/rspec/3"
            || ns == "http://www.protogeni.net/resources/rspec/2";
        let want = if core {
            format!("{ns}/manifest.xsd")
        } else {
            location
        };
        if !got.contains(&(ns.clone(), want.clone())) {
            return Err(format!(
                "schemaLocation pair ({ns}, {want}) missing from {manifest:?}"
            ));
        }
    }
    Ok(())
}

fn href(node: &Node) -> Option<String> {
    node.get_namespace().map(|ns| ns.get_href())
}

/// Attributes keyed by (local name, namespace URI).
fn attributes(node: &Node) -> BTreeMap<(String, Option<String>), String> {
    node.get_properties_ns()
        .into_iter()
        .map(|((name, ns), value)| ((name, ns.map(|n| n.get_href())), value))
        .collect()
}

/// Namespace bindings (prefix, URI) in scope at `node`.
fn scope(node: &Node, doc: &Document) -> BTreeSet<(String, String)> {
    node.get_namespaces(doc)
        .into_iter()
        .map(|ns| (ns.get_prefix(), ns.get_href()))
        .collect()
}

/// Children that carry content: elements, comments, processing
/// instructions and text that is not only white space.
fn significant(node: &Node) -> Vec<Node> {
    node.get_child_nodes()
        .into_iter()
        .filter(|child| match child.get_type() {
            Some(NodeType::ElementNode | NodeType::CommentNode | NodeType::PiNode) => true,
            Some(NodeType::TextNode | NodeType::CDataSectionNode) => {
                !child.get_content().trim().is_empty()
            }
            _ => false,
        })
        .collect()
}

/// Whether `candidate` in the manifest can be the counterpart of `item`.
fn same_item(item: &Node, candidate: &Node) -> bool {
    let kind = |n: &Node| match n.get_type() {
        Some(NodeType::CDataSectionNode) => Some(NodeType::TextNode),
        other => other,
    };
    if kind(item) != kind(candidate) {
        return false;
    }
    match item.get_type() {
        Some(NodeType::ElementNode) => {
            item.get_name() == candidate.get_name()
                && href(item) == href(candidate)
                && item.get_attribute("client_id") == candidate.get_attribute("client_id")
        }
        Some(NodeType::TextNode | NodeType::CDataSectionNode) => {
            item.get_content().trim() == candidate.get_content().trim()
        }
        _ => {
            item.get_name() == candidate.get_name() && item.get_content() == candidate.get_content()
        }
    }
}

fn label(node: &Node) -> String {
    match node.get_type() {
        Some(NodeType::ElementNode) => node.get_name(),
        Some(NodeType::CommentNode) => "comment()".into(),
        Some(NodeType::PiNode) => "processing-instruction()".into(),
        _ => "text()".into(),
    }
}

/// The `<node>`s and `<link>`s of `root` that belong to another component
/// manager, decided here independently of the builder: a node naming another
/// `component_manager_id`; a link naming only other `component_manager`s, or
/// naming none while all its `interface_ref`s point at foreign interfaces.
fn foreign_elements(root: &Node, cm: &str) -> BTreeSet<usize> {
    let same = |a: &str| a.trim().eq_ignore_ascii_case(cm);
    let core = href(root);
    let elements = |parent: &Node, name: &str| -> Vec<Node> {
        parent
            .get_child_elements()
            .into_iter()
            .filter(|c| c.get_name() == name && href(c) == core)
            .collect()
    };
    let client_id = |n: &Node| {
        n.get_attribute("client_id")
            .or_else(|| n.get_attribute("virtual_id"))
    };
    let mut foreign = BTreeSet::new();
    let mut our_interfaces = BTreeSet::new();
    for node in elements(root, "node") {
        match node.get_attribute("component_manager_id") {
            Some(named) if !same(&named) => {
                foreign.insert(node.to_hashable());
            }
            _ => our_interfaces.extend(elements(&node, "interface").iter().filter_map(client_id)),
        }
    }
    for link in elements(root, "link") {
        let managers: Vec<String> = elements(&link, "component_manager")
            .iter()
            .filter_map(|m| m.get_attribute("name"))
            .collect();
        let ends: Vec<String> = elements(&link, "interface_ref")
            .iter()
            .filter_map(client_id)
            .collect();
        let is_foreign = if managers.is_empty() {
            !ends.is_empty() && !ends.iter().any(|e| our_interfaces.contains(e))
        } else {
            !managers.iter().any(|m| same(m))
        };
        if is_foreign {
            foreign.insert(link.to_hashable());
        }
    }
    foreign
}
