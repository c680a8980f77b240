//! Placeholder annotations: the sliver URNs an AM would hand out, derived
//! from the experimenter's `client_id`s, for previewing a manifest without a
//! running AM (`geni-am rspec manifest`) and for tests.

use super::{
    Annotations, InterfaceAnnotation, LinkAnnotation, ManifestError, NodeAnnotation, Ownership,
};
use crate::tree::Document;
use crate::view::{Link, Node, RSpec};
use std::collections::BTreeSet;

/// The `vlantag` of placeholder links.
const PLACEHOLDER_VLANTAG: &str = "0";

/// The authority part of a GENI URN
/// (`urn:publicid:IDN+<authority>+<type>+<name>`), if `urn` is one. The
/// `urn:publicid:IDN+` prefix is matched ignoring ASCII case, as URN
/// namespace identifiers are (`urn:publicId:` occurs in real requests).
pub fn urn_authority(urn: &str) -> Option<&str> {
    const PREFIX: &str = "urn:publicid:IDN+";
    let urn = urn.trim();
    let head = urn.get(..PREFIX.len())?;
    let rest = &urn[PREFIX.len()..];
    if !head.eq_ignore_ascii_case(PREFIX) {
        return None;
    }
    let mut parts = rest.splitn(3, '+');
    let authority = parts.next()?;
    let (kind, name) = (parts.next()?, parts.next()?);
    (!authority.is_empty() && !kind.is_empty() && !name.is_empty()).then_some(authority)
}

/// Annotations for every node, interface and link of `request` that belongs
/// to component manager `cm`: each gets the sliver URN
/// `urn:publicid:IDN+<authority of cm>+sliver+<name>`, the name derived from
/// its `client_id` (characters outside `[A-Za-z0-9._-]` become `-`, and a
/// numeric suffix keeps names unique). Links get `vlantag` `0`, standing
/// for the VLAN the AM assigns when it provisions them (manifest links must
/// carry one).
pub fn placeholder_annotations(request: &Document, cm: &str) -> Result<Annotations, ManifestError> {
    let authority =
        urn_authority(cm).ok_or_else(|| ManifestError::InvalidComponentManager(cm.to_owned()))?;
    let rspec = RSpec::new(request)?;
    let owned = Ownership::of(&rspec, cm);
    let mut names = SliverNames::new(authority);
    let mut annotations = Annotations::default();
    for &id in &owned.nodes {
        let node = Node::new(request, id);
        let Some(client_id) = node.client_id() else {
            continue;
        };
        let sliver_id = names.urn_for(&client_id);
        annotations
            .nodes
            .entry(client_id.into_owned())
            .or_insert(NodeAnnotation {
                sliver_id,
                ..NodeAnnotation::default()
            });
    }
    for client_id in owned.interfaces.keys() {
        annotations.interfaces.insert(
            client_id.clone(),
            InterfaceAnnotation {
                sliver_id: Some(names.urn_for(client_id)),
                ..InterfaceAnnotation::default()
            },
        );
    }
    for &id in &owned.links {
        let Some(client_id) = Link::new(request, id).client_id() else {
            continue;
        };
        let sliver_id = Some(names.urn_for(&client_id));
        annotations
            .links
            .entry(client_id.into_owned())
            .or_insert(LinkAnnotation {
                sliver_id,
                vlantag: Some(PLACEHOLDER_VLANTAG.to_owned()),
            });
    }
    Ok(annotations)
}

/// Hands out unique sliver URNs under one authority.
struct SliverNames<'a> {
    authority: &'a str,
    used: BTreeSet<String>,
}

impl<'a> SliverNames<'a> {
    fn new(authority: &'a str) -> Self {
        Self {
            authority,
            used: BTreeSet::new(),
        }
    }

    /// A sliver URN whose name is derived from `client_id` and not handed out before.
    fn urn_for(&mut self, client_id: &str) -> String {
        let base: String = client_id
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                    c
                } else {
                    '-'
                }
            })
            .collect();
        let base = if base.is_empty() {
            "sliver".to_owned()
        } else {
            base
        };
        let mut name = base.clone();
        let mut suffix = 2u32;
        while !self.used.insert(name.clone()) {
            name = format!("{base}-{suffix}");
            suffix += 1;
        }
        format!("urn:publicid:IDN+{}+sliver+{name}", self.authority)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn authority_of_a_component_manager_urn() {
        assert_eq!(
            urn_authority("urn:publicid:IDN+example.org:lab+authority+cm"),
            Some("example.org:lab")
        );
        assert_eq!(
            urn_authority("urn:publicid:IDN+example.org+authority"),
            None
        );
        assert_eq!(urn_authority("https://example.org"), None);
        assert_eq!(
            urn_authority("urn:publicId:IDN+localhost+authority+am"),
            Some("localhost")
        );
        assert_eq!(urn_authority("urn:é"), None);
    }

    #[test]
    fn sliver_names_are_sanitised_and_unique() {
        let mut names = SliverNames::new("a.org");
        assert_eq!(
            names.urn_for("pc 1:if0"),
            "urn:publicid:IDN+a.org+sliver+pc-1-if0"
        );
        assert_eq!(
            names.urn_for("pc-1-if0"),
            "urn:publicid:IDN+a.org+sliver+pc-1-if0-2"
        );
        assert_eq!(names.urn_for(""), "urn:publicid:IDN+a.org+sliver+sliver");
    }
}
