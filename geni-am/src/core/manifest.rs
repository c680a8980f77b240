//! Manifests of slivers: each stored request document, pruned to the
//! selected slivers' nodes and annotated with what the AM knows (sliver
//! URN, the sliver type chosen for a node that named none, component,
//! hostname, addresses, logins, users' keys) through `geni_rspec::manifest`,
//! then merged into one document when the slivers came from several
//! Allocates; a template's outputs get the addresses it now knows
//! (`outputs`). What a manifest needs from the store is read in a
//! transaction ([`read`]): Allocate's in its write, the whole slice's for
//! Provision and CreateSliver in a read after their commit, Describe's in
//! its read. The manifest is rendered after that transaction
//! ([`render`]), so that a write call does not build documents while it
//! holds the store's single writer. Requests are kept parsed
//! ([`Requests`]), so that a manifest of many requests reads and parses
//! only those it has not seen.

use super::naming::{interface_sliver_urn, link_sliver_urn, login_name, login_names};
use super::requests::Requests;
use super::{AggregateConfig, CoreError, SshAccess};
use super::{merge, outputs};
use crate::model::{AllocationState, SliverAnnotations, UserKeys};
use crate::store::slivers::SliverRow;
use crate::store::{Conn, components, networks, slices};
use chrono::{DateTime, Utc};
use geni_rspec::Document;
use geni_rspec::manifest::{
    self as builder, Annotations, InterfaceAnnotation, IpAddress, LinkAnnotation, Login,
    NodeAnnotation, Ownership, Proxy, SshUser,
};
use geni_rspec::{Link, Node, RSpec};
use std::sync::Arc;

use std::collections::{BTreeSet, HashMap};

/// The `vlantag` of a link whose network carries no tag, or does not
/// exist yet (see [`annotate_links`]).
const UNTAGGED: &str = "0";

/// A request this call has parsed already: its id and document, used
/// instead of parsing its stored text again.
pub(super) type Known<'a> = Option<(&'a str, &'a Document)>;

/// What a manifest is made of, read in a transaction ([`read`]) and
/// rendered from after that transaction has ended ([`render`]): parsing
/// the stored requests and building the document then happen outside the
/// store's single writer's turn.
pub(super) struct Sources {
    /// The slivers the manifest covers (all of the slice's).
    rows: Vec<SliverRow>,
    /// The slice's users and their keys.
    users: Vec<UserKeys>,
    /// Component names, by component id.
    names: HashMap<String, String>,
    /// VLAN tags of the slice's networks, by link sliver URN.
    vlans: HashMap<String, i64>,
    /// The requests the slivers came from, oldest first, by id.
    requests: Vec<(String, Source)>,
}

/// Where the document of a request comes from.
enum Source {
    /// The caller has parsed it.
    Known,
    /// It was kept parsed ([`Requests`]).
    Kept(Arc<Document>),
    /// Its text, read from the store, to parse (and keep).
    Stored {
        /// When it was stored.
        created: DateTime<Utc>,
        /// The text.
        text: String,
    },
}

/// Reads what the manifest of `rows` (all of slice `slice_urn`) is made
/// of. A request kept parsed in `kept`, or `known` (the one the caller
/// has parsed) when it is the only one, is not read.
pub(super) fn read(
    conn: &mut Conn,
    kept: &Requests,
    slice_urn: &str,
    rows: Vec<SliverRow>,
    known: Option<&str>,
) -> Result<Sources, CoreError> {
    if rows.is_empty() {
        return Ok(Sources {
            rows,
            users: Vec::new(),
            names: HashMap::new(),
            vlans: HashMap::new(),
            requests: Vec::new(),
        });
    }
    let users = slices::users(conn, slice_urn)?;
    let names = components::names(conn)?;
    let vlans = networks::of_slice(conn, slice_urn)?
        .into_iter()
        .filter_map(|n| Some((n.tag, n.vlan_tag?)))
        .collect();
    Ok(Sources {
        requests: requests(conn, kept, &rows, known)?,
        rows,
        users,
        names,
        vlans,
    })
}

/// The requests `rows` came from, oldest first: only those neither kept
/// nor the `known` one alone are read.
fn requests(
    conn: &mut Conn,
    kept: &Requests,
    rows: &[SliverRow],
    known: Option<&str>,
) -> Result<Vec<(String, Source)>, CoreError> {
    let mut ids: Vec<String> = rows.iter().map(|r| r.request_id.clone()).collect();
    ids.sort_unstable();
    ids.dedup();
    if let Some(id) = known.filter(|id| ids.len() == 1 && ids[0] == *id) {
        return Ok(vec![(id.to_owned(), Source::Known)]);
    }
    let mut found: Vec<(DateTime<Utc>, String, Source)> = Vec::with_capacity(ids.len());
    let mut missing = Vec::new();
    for id in ids {
        match kept.get(&id) {
            Some((created, doc)) => found.push((created, id, Source::Kept(doc))),
            None => missing.push(id),
        }
    }
    if !missing.is_empty() {
        for request in slices::requests_by_id(conn, &missing)? {
            let created = request.created_at.get();
            let source = if known == Some(request.id.as_str()) {
                Source::Known
            } else {
                Source::Stored {
                    created,
                    text: request.document,
                }
            };
            found.push((created, request.id, source));
        }
    }
    found.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
    Ok(found
        .into_iter()
        .map(|(_, id, source)| (id, source))
        .collect())
}

/// The manifest made of `sources`, `known` standing for the request the
/// caller has parsed; the empty manifest when they cover no sliver. The
/// requests parsed here are kept in `kept`.
pub(super) fn render(
    config: &AggregateConfig,
    kept: &Requests,
    sources: &Sources,
    known: Known<'_>,
) -> Result<String, CoreError> {
    let doc = if sources.rows.is_empty() {
        builder::empty().map_err(manifest_error)?
    } else {
        let mut doc = build(config, kept, sources, known)?;
        let control: HashMap<String, String> = sources
            .rows
            .iter()
            .filter_map(|row| {
                let observed = row.annotations.value();
                let address = observed.address.as_ref().or(observed.hostname.as_ref())?;
                Some((row.client_id.clone(), address.clone()))
            })
            .collect();
        outputs::fill(&mut doc, &control);
        doc
    };
    String::from_utf8(doc.to_bytes()).map_err(|_| {
        CoreError::Internal("the manifest is not UTF-8 (a stored request was damaged)".into())
    })
}

/// Builds and merges the manifests of the requests the slivers came from.
fn build(
    config: &AggregateConfig,
    kept: &Requests,
    sources: &Sources,
    known: Known<'_>,
) -> Result<Document, CoreError> {
    let mut groups: HashMap<&str, Vec<&SliverRow>> = HashMap::new();
    for row in &sources.rows {
        groups.entry(row.request_id.as_str()).or_default().push(row);
    }
    let mut merged: Option<Document> = None;
    for (request_id, source) in &sources.requests {
        let mut doc = document(kept, request_id, source, known)?;
        let group = groups.remove(request_id.as_str()).unwrap_or_default();
        let interfaces = prune(&mut doc, &config.cm_urn, &group)?;
        let mut annotations = annotate(
            &group,
            &sources.users,
            &sources.names,
            &interfaces,
            &config.ssh,
        )?;
        annotate_links(&doc, config, request_id, &sources.vlans, &mut annotations)?;
        let manifest =
            builder::build(&doc, &config.cm_urn, &annotations).map_err(manifest_error)?;
        merged = Some(match merged {
            None => manifest,
            Some(mut base) => {
                merge::append_owned(&mut base, &manifest, &config.cm_urn)?;
                base
            }
        });
    }
    merged.ok_or_else(|| CoreError::Internal("the slivers' request documents are missing".into()))
}

/// A copy of the document of request `id` from `source`; a stored text
/// is parsed and kept in `kept`.
fn document(
    kept: &Requests,
    id: &str,
    source: &Source,
    known: Known<'_>,
) -> Result<Document, CoreError> {
    match (source, known) {
        (Source::Kept(doc), _) => Ok(Document::clone(doc)),
        (Source::Stored { created, text }, _) => {
            let doc = Document::parse(text.as_bytes()).map_err(|e| {
                CoreError::Internal(format!("stored request {id} does not parse: {e}"))
            })?;
            kept.keep(id, *created, Arc::new(doc.clone()), text.len());
            Ok(doc)
        }
        (Source::Known, Some((_, doc))) => Ok(doc.clone()),
        (Source::Known, None) => Err(CoreError::Internal(format!(
            "request {id} was to be rendered from the caller's copy, which is missing"
        ))),
    }
}

/// Removes this AM's nodes that have no sliver in `group` (deleted ones, or
/// ones not selected); returns the interface `client_id`s of each node kept,
/// by node `client_id`, in document order.
fn prune(
    doc: &mut Document,
    cm: &str,
    group: &[&SliverRow],
) -> Result<HashMap<String, Vec<String>>, CoreError> {
    let keep: BTreeSet<&str> = group.iter().map(|r| r.client_id.as_str()).collect();
    let (drop, interfaces) = {
        let root = RSpec::new(doc).map_err(|e| CoreError::Internal(e.to_string()))?;
        let owned = Ownership::of(&root, cm);
        let mut drop = Vec::new();
        let mut interfaces = HashMap::new();
        for &id in &owned.nodes {
            let node = Node::new(doc, id);
            match node.client_id().filter(|c| keep.contains(c.as_ref())) {
                Some(client_id) => {
                    let names = node
                        .interfaces()
                        .filter_map(|i| i.client_id().map(|c| c.into_owned()))
                        .collect();
                    interfaces.insert(client_id.into_owned(), names);
                }
                None => drop.push(id),
            }
        }
        (drop, interfaces)
    };
    for id in drop {
        doc.remove(id);
    }
    Ok(interfaces)
}

/// The annotations of `group`: sliver URN and component for every sliver;
/// hostname, interfaces (sliver URN, MAC, addresses), logins and users'
/// keys once provisioned.
fn annotate(
    group: &[&SliverRow],
    users: &[UserKeys],
    names: &HashMap<String, String>,
    interfaces: &HashMap<String, Vec<String>>,
    ssh: &SshAccess,
) -> Result<Annotations, CoreError> {
    let mut out = Annotations::default();
    for row in group {
        let observed = row.annotations.value();
        let provisioned = row.allocation_state == AllocationState::Provisioned;
        let mut node = NodeAnnotation {
            sliver_id: row.urn.clone(),
            sliver_type: Some(row.sliver_type.clone()),
            size: row.granted_size(),
            component_id: Some(row.component_id.clone()),
            component_name: names.get(&row.component_id).cloned(),
            exclusive: Some(row.exclusive),
            ..NodeAnnotation::default()
        };
        if provisioned {
            node.hostname = observed.hostname.clone();
            (node.logins, node.proxy) = access(observed, users, ssh);
            node.users = users
                .iter()
                .map(|u| SshUser {
                    login: login_name(&u.urn),
                    user_urn: Some(u.urn.clone()),
                    public_keys: u.keys.clone(),
                })
                .collect();
            for client_id in interfaces.get(&row.client_id).into_iter().flatten() {
                let seen = observed
                    .interfaces
                    .iter()
                    .find(|i| &i.client_id == client_id);
                out.interfaces.insert(
                    client_id.clone(),
                    InterfaceAnnotation {
                        sliver_id: Some(interface_sliver_urn(&row.urn, client_id)),
                        mac_address: seen.and_then(|i| i.mac_address.clone()),
                        ips: seen
                            .map(|i| i.ips.iter().map(|(a, m)| ip_address(a, m)).collect())
                            .unwrap_or_default(),
                        ..InterfaceAnnotation::default()
                    },
                );
            }
        }
        out.nodes.insert(row.client_id.clone(), node);
    }
    Ok(out)
}

/// An IPv4 `<ip>`; an empty netmask is left out.
fn ip_address(address: &str, netmask: &str) -> IpAddress {
    let mut ip = IpAddress::ipv4(address, netmask);
    if netmask.is_empty() {
        ip.netmask = None;
    }
    ip
}

/// Gives every link of this AM a sliver URN, stable for its request
/// (`<request id>.<client_id>`), and the VLAN tag of its network from
/// `vlans` (by link sliver URN, as the backend reported it). A link whose
/// network is untagged or not created yet gets `0`: the manifest schema
/// requires a `vlantag` on every link, and no VLAN carries it yet.
fn annotate_links(
    doc: &Document,
    config: &AggregateConfig,
    request_id: &str,
    vlans: &HashMap<String, i64>,
    out: &mut Annotations,
) -> Result<(), CoreError> {
    let root = RSpec::new(doc).map_err(|e| CoreError::Internal(e.to_string()))?;
    for id in Ownership::of(&root, &config.cm_urn).links {
        let Some(client_id) = Link::new(doc, id).client_id() else {
            continue;
        };
        let sliver_id = link_sliver_urn(&config.authority, request_id, &client_id);
        let vlantag = vlans
            .get(&sliver_id)
            .map_or_else(|| UNTAGGED.to_owned(), i64::to_string);
        out.links.insert(
            client_id.to_string(),
            LinkAnnotation {
                sliver_id: Some(sliver_id),
                vlantag: Some(vlantag),
            },
        );
    }
    Ok(())
}

/// The logins of a node and its SSH proxy. Through a gateway: one login
/// per user on the gateway, and a proxy from the gateway to the VM's
/// address. Directly: the logins the backend reported, else one per user
/// on the node's hostname.
fn access(
    observed: &SliverAnnotations,
    users: &[UserKeys],
    ssh: &SshAccess,
) -> (Vec<Login>, Option<Proxy>) {
    let per_user = |host: &str, port: u16| {
        login_names(users)
            .iter()
            .map(|login| Login::ssh(host, port, login))
            .collect()
    };
    if let Some((gateway, gateway_port)) = &ssh.gateway {
        let target = observed.address.as_ref().or(observed.hostname.as_ref());
        let user = users
            .first()
            .map(|u| format!("{}@", login_name(&u.urn)))
            .unwrap_or_default();
        let proxy = target.map(|target| Proxy {
            proxy: format!("{user}{gateway}:{gateway_port}"),
            target: format!("{user}{target}:{}", ssh.port),
        });
        return (per_user(gateway, *gateway_port), proxy);
    }
    if !observed.logins.is_empty() {
        let logins = observed
            .logins
            .iter()
            .map(|l| Login::ssh(&l.hostname, l.port, &l.username))
            .collect();
        return (logins, None);
    }
    match &observed.hostname {
        Some(host) => (per_user(host, ssh.port), None),
        None => (Vec::new(), None),
    }
}

/// A manifest builder failure on stored data: an internal error.
fn manifest_error(e: builder::ManifestError) -> CoreError {
    CoreError::Internal(format!("cannot build the manifest: {e}"))
}
