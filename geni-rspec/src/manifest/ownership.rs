//! Which nodes, interfaces and links of a request belong to this AM.
//!
//! * A node is ours when its `component_manager_id` names our component
//!   manager, or when it has none (unbound: the AM that receives it places it).
//! * An interface is ours when its node is.
//! * A link that lists `<component_manager>`s is ours when one of them is our
//!   CM (it may span other CMs too: we fill in our part). A link that lists
//!   none is ours when it has no end points or one of its `interface_ref`s is
//!   an interface of ours (GENI RSpec v3, manifest RSpecs: each component
//!   manager fills in its own part of a link).
//!
//! URNs are compared ignoring ASCII case, as GENI compares authorities.
//!
//! An end point of one of our links that names an interface no node of the
//! request declares is one this AM cannot connect ([`Ownership::unknown_ends`]);
//! the same end on another CM's link is that CM's concern.

use crate::tree::NodeId;
use crate::view::{InterfaceRef, Link, Node, RSpec};
use std::borrow::Cow;
use std::collections::{BTreeMap, HashSet};

/// The request elements one component manager is responsible for.
#[derive(Debug, Clone, Default)]
pub struct Ownership {
    /// Our `<node>`s, in document order.
    pub nodes: Vec<NodeId>,
    /// Our `<interface>`s by `client_id`, each with its element.
    pub interfaces: BTreeMap<String, NodeId>,
    /// Our `<link>`s, in document order.
    pub links: Vec<NodeId>,
}

impl Ownership {
    /// Sorts the nodes and links of `rspec` for component manager `cm`.
    pub fn of(rspec: &RSpec<'_>, cm: &str) -> Self {
        let mut owned = Self::default();
        for node in rspec.nodes().filter(|n| node_is_ours(n, cm)) {
            owned.nodes.push(node.id());
            for interface in node.interfaces() {
                if let Some(client_id) = interface.client_id() {
                    owned
                        .interfaces
                        .entry(client_id.into_owned())
                        .or_insert(interface.id());
                }
            }
        }
        owned.links = rspec
            .links()
            .filter(|l| link_is_ours(l, cm, &owned.interfaces))
            .map(|l| l.id())
            .collect();
        owned
    }

    /// The `interface_ref`s of our links that name an interface no node of
    /// `rspec` declares, with the `client_id` of their link, in document
    /// order.
    pub fn unknown_ends<'a>(&self, rspec: &RSpec<'a>) -> Vec<(Link<'a>, InterfaceRef<'a>)> {
        let declared: HashSet<Cow<'a, str>> = rspec
            .nodes()
            .flat_map(|n| n.interfaces())
            .filter_map(|i| i.client_id())
            .collect();
        let mut unknown = Vec::new();
        for link in rspec.links().filter(|l| self.links.contains(&l.id())) {
            for end in link.interface_refs() {
                if end.client_id().is_some_and(|c| !declared.contains(&c)) {
                    unknown.push((link, end));
                }
            }
        }
        unknown
    }
}

/// True when two URNs name the same thing (ASCII case ignored, as GENI
/// compares authorities; surrounding whitespace ignored).
pub fn same_urn(a: &str, b: &str) -> bool {
    a.trim().eq_ignore_ascii_case(b.trim())
}

/// True when `node` is bound to `cm` or to no component manager at all.
pub fn node_is_ours(node: &Node<'_>, cm: &str) -> bool {
    node.component_manager_id()
        .is_none_or(|named| same_urn(&named, cm))
}

/// True when `link` names `cm`, or names no CM and touches one of
/// `our_interfaces` (or has no end points at all).
fn link_is_ours<V>(link: &Link<'_>, cm: &str, our_interfaces: &BTreeMap<String, V>) -> bool {
    let mut managers = link.component_managers().peekable();
    if managers.peek().is_some() {
        return managers.any(|named| same_urn(&named, cm));
    }
    let mut refs = link.interface_refs().peekable();
    refs.peek().is_none()
        || refs.any(|r| {
            r.client_id()
                .is_some_and(|id| our_interfaces.contains_key(id.as_ref()))
        })
}
