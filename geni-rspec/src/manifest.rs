//! The manifest builder: a manifest is the request document, copied and
//! annotated.
//!
//! [`build`] edits a copy of the request through the lossless tree: the root
//! becomes `type="manifest"`, `xsi:schemaLocation` points at `manifest.xsd`
//! instead of `request.xsd`, and the nodes, interfaces and links this AM is
//! responsible for (see [`Ownership`]) get the GENI attributes and elements
//! the AM knows (`sliver_id`, `component_id`, `component_manager_id`, the
//! `<sliver_type>` it chose for a node that named none, `mac_address`, `<ip>`, `<host>`, `<services><login>`, the ssh-user and
//! proxy extensions). Everything else — unknown elements and attributes with
//! their namespace declarations, comments, the nodes and links of other
//! component managers — is written back exactly as it was read.
//!
//! [`empty`] is the manifest of a slice with no slivers here.

mod annotation;
mod ownership;
mod placeholder;
mod schema_location;

pub use annotation::{
    Annotations, InterfaceAnnotation, IpAddress, LinkAnnotation, Login, NodeAnnotation, Proxy,
    SshUser,
};
pub use ownership::{Ownership, same_urn};
pub use placeholder::{placeholder_annotations, urn_authority};

use crate::tree::{Document, NodeId, ParseError};
use crate::validate::{RspecKind, RspecVersion};
use crate::view::{InterfaceMut, LinkMut, NodeMut, RSpec, RSpecMut, ViewError, ns, schema_url};
use std::borrow::Cow;
use std::collections::BTreeMap;

/// Schema of the ssh-user extension in manifests.
const SSH_USER_SCHEMA: &str = "http://www.geni.net/resources/rspec/ext/user/1/manifest.xsd";

/// Why no manifest could be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ManifestError {
    /// The document is not an RSpec at all.
    #[error(transparent)]
    NotAnRspec(#[from] ViewError),
    /// The RSpec is an advertisement or a manifest, not a request.
    #[error(
        "line {line}: <rspec type=\"{found}\"> is not a request; a manifest is built from a request RSpec"
    )]
    NotARequest {
        /// Line of the `<rspec>` element.
        line: u32,
        /// The `type` found.
        found: String,
    },
    /// The component manager given is not a GENI URN.
    #[error(
        "`{0}` is not a component manager URN (expected urn:publicid:IDN+<authority>+authority+cm)"
    )]
    InvalidComponentManager(String),
    /// An annotation names a `client_id` that is not among this component
    /// manager's elements of that kind in the request.
    #[error(
        "annotation for {kind} `{client_id}`: the request has no {kind} with that client_id bound to this component manager"
    )]
    UnknownClientId {
        /// `node`, `interface` or `link`.
        kind: &'static str,
        /// The `client_id` annotated.
        client_id: String,
    },
    /// The request names the same `client_id` twice for elements this AM
    /// must annotate, so an annotation could not say which one it means.
    #[error(
        "line {line}: {kind} client_id `{client_id}` is used twice (first on line {first_line}); client_ids must be unique"
    )]
    DuplicateClientId {
        /// `node`, `interface` or `link`.
        kind: &'static str,
        /// The repeated `client_id`.
        client_id: String,
        /// Line of the first use.
        first_line: u32,
        /// Line of the second use.
        line: u32,
    },
    /// The built-in empty manifest did not parse (a defect of this crate).
    #[error("the empty manifest template does not parse: {0}")]
    Template(#[from] ParseError),
}

/// Builds the manifest of `request` for the AM whose component manager URN
/// is `cm`, writing `annotations` into the elements that belong to it.
pub fn build(
    request: &Document,
    cm: &str,
    annotations: &Annotations,
) -> Result<Document, ManifestError> {
    check_request(request)?;
    if urn_authority(cm).is_none() {
        return Err(ManifestError::InvalidComponentManager(cm.to_owned()));
    }
    let mut manifest = request.clone();
    let rspec = RSpec::new(&manifest)?;
    let owned = Ownership::of(&rspec, cm);
    check_annotations(&manifest, &owned, annotations)?;
    let version = rspec.version();
    let uses_ssh_user = annotations.nodes.values().any(|n| !n.users.is_empty());
    let extra: &[(&str, &str)] = if uses_ssh_user {
        &[(ns::SSH_USER, SSH_USER_SCHEMA)]
    } else {
        &[]
    };
    let location = schema_location::for_manifest(
        rspec.schema_location().as_deref(),
        version.namespace(),
        &schema_url(version, RspecKind::Manifest),
        extra,
    );
    let mut root = RSpecMut::new(&mut manifest)?;
    root.set_type(RspecKind::Manifest);
    root.set_schema_location(&location);
    if uses_ssh_user {
        declare_on_root(&mut manifest, "ssh-user", ns::SSH_USER);
    }
    for &id in &owned.nodes {
        annotate_node(&mut manifest, id, cm, annotations);
    }
    for &id in &owned.links {
        annotate_link(&mut manifest, id, cm, &owned, annotations);
    }
    Ok(manifest)
}

/// The manifest of a slice that has no slivers at this AM: a valid GENI v3
/// `<rspec type="manifest">` with no nodes or links.
pub fn empty() -> Result<Document, ManifestError> {
    let text = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<rspec xmlns=\"{v3}\" xmlns:xsi=\"{xsi}\" xsi:schemaLocation=\"{v3} {schema}\" type=\"manifest\"/>\n",
        v3 = ns::GENI_V3,
        xsi = ns::XSI,
        schema = schema_url(RspecVersion::GeniV3, RspecKind::Manifest),
    );
    Ok(Document::parse(text.as_bytes())?)
}

/// Fails unless `doc` is an RSpec whose `type` is `request` or absent
/// (old clients omit it).
pub fn check_request(doc: &Document) -> Result<(), ManifestError> {
    let rspec = RSpec::new(doc)?;
    match rspec.type_attr() {
        Some(found) if RspecKind::from_type_attribute(&found) != Some(RspecKind::Request) => {
            Err(ManifestError::NotARequest {
                line: doc.line(rspec.id()),
                found: found.into_owned(),
            })
        }
        _ => Ok(()),
    }
}

/// Checks that every annotation names one of our elements, and that no
/// annotated `client_id` is ambiguous.
fn check_annotations(
    doc: &Document,
    owned: &Ownership,
    annotations: &Annotations,
) -> Result<(), ManifestError> {
    let interfaces: Vec<NodeId> = owned
        .nodes
        .iter()
        .flat_map(|&n| crate::view::Node::new(doc, n).interfaces().map(|i| i.id()))
        .collect();
    check_kind(doc, "node", &owned.nodes, annotations.nodes.keys())?;
    check_kind(doc, "interface", &interfaces, annotations.interfaces.keys())?;
    check_kind(doc, "link", &owned.links, annotations.links.keys())
}

/// [`check_annotations`] for one kind of element.
fn check_kind<'k>(
    doc: &Document,
    kind: &'static str,
    elements: &[NodeId],
    annotated: impl Iterator<Item = &'k String>,
) -> Result<(), ManifestError> {
    let mut by_client_id: BTreeMap<Cow<'_, str>, Vec<NodeId>> = BTreeMap::new();
    for &id in elements {
        if let Some(client_id) = crate::view::client_id(doc, id) {
            by_client_id.entry(client_id).or_default().push(id);
        }
    }
    for client_id in annotated {
        match by_client_id.get(client_id.as_str()).map(Vec::as_slice) {
            None | Some([]) => {
                return Err(ManifestError::UnknownClientId {
                    kind,
                    client_id: client_id.clone(),
                });
            }
            Some([_]) => {}
            Some([first, second, ..]) => {
                return Err(ManifestError::DuplicateClientId {
                    kind,
                    client_id: client_id.clone(),
                    first_line: doc.line(*first),
                    line: doc.line(*second),
                });
            }
        }
    }
    Ok(())
}

/// Declares `prefix` for `uri` on the document element unless that prefix is
/// already bound there, so extension elements added below share one declaration.
fn declare_on_root(doc: &mut Document, prefix: &str, uri: &str) {
    let root = doc.root();
    let taken = doc
        .namespace_declarations(root)
        .any(|(p, _)| p == Some(prefix));
    if !taken {
        doc.declare_namespace(root, prefix, uri);
    }
}

/// Writes what the AM knows about one of its nodes and its interfaces.
fn annotate_node(doc: &mut Document, id: NodeId, cm: &str, annotations: &Annotations) {
    let mut node = NodeMut::new(doc, id);
    if node.as_view().component_manager_id().is_none() {
        node.set_component_manager_id(cm);
    }
    let client_id = node.as_view().client_id().map(|c| c.into_owned());
    if let Some(a) = client_id.as_deref().and_then(|c| annotations.nodes.get(c)) {
        node.set_sliver_id(&a.sliver_id);
        if let Some(value) = &a.sliver_type {
            node.add_sliver_type_if_missing(value);
        }
        if let Some(size) = &a.size {
            node.set_xen(size);
        }
        if let Some(value) = &a.component_id {
            node.set_component_id(value);
        }
        if let Some(value) = &a.component_name {
            node.set_component_name(value);
        }
        if let Some(value) = a.exclusive {
            node.set_exclusive(value);
        }
        if let Some(value) = &a.hostname {
            node.add_host(value);
        }
        if !a.logins.is_empty() || !a.users.is_empty() || a.proxy.is_some() {
            let mut services = node.services_mut();
            if let Some(proxy) = &a.proxy {
                services.add_proxy(&proxy.proxy, &proxy.target);
            }
            for login in &a.logins {
                services.add_login(
                    &login.authentication,
                    &login.hostname,
                    login.port,
                    login.username.as_deref(),
                );
            }
            for user in &a.users {
                services.add_services_user(
                    &user.login,
                    user.user_urn.as_deref(),
                    &user.public_keys,
                );
            }
        }
    }
    let interfaces: Vec<(NodeId, String)> = node
        .as_view()
        .interfaces()
        .filter_map(|i| Some((i.id(), i.client_id()?.into_owned())))
        .collect();
    for (iid, client_id) in interfaces {
        if let Some(a) = annotations.interfaces.get(&client_id) {
            let mut interface = InterfaceMut::new(doc, iid);
            if let Some(value) = &a.sliver_id {
                interface.set_sliver_id(value);
            }
            if let Some(value) = &a.component_id {
                interface.set_component_id(value);
            }
            if let Some(value) = &a.mac_address {
                interface.set_mac_address(value);
            }
            if !a.ips.is_empty() {
                interface.remove_ips();
            }
            for ip in &a.ips {
                interface.add_ip(&ip.address, ip.netmask.as_deref(), ip.kind.as_deref());
            }
        }
    }
}

/// Writes what the AM knows about one of its links and its end points.
fn annotate_link(
    doc: &mut Document,
    id: NodeId,
    cm: &str,
    owned: &Ownership,
    annotations: &Annotations,
) {
    let mut link = LinkMut::new(doc, id);
    if link.as_view().component_managers().next().is_none() {
        link.add_component_manager(cm);
    }
    let client_id = link.as_view().client_id().map(|c| c.into_owned());
    if let Some(a) = client_id.as_deref().and_then(|c| annotations.links.get(c)) {
        if let Some(value) = &a.sliver_id {
            link.set_sliver_id(value);
        }
        if let Some(value) = &a.vlantag {
            link.set_vlantag(value);
        }
    }
    let ends: Vec<String> = link
        .as_view()
        .interface_refs()
        .filter_map(|r| r.client_id().map(|c| c.into_owned()))
        .filter(|c| owned.interfaces.contains_key(c))
        .collect();
    for end in ends {
        if let Some(a) = annotations.interfaces.get(&end) {
            link.annotate_interface_ref(&end, a.sliver_id.as_deref(), a.component_id.as_deref());
        }
    }
}

#[cfg(test)]
mod tests;
