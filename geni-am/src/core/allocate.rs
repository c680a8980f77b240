//! Allocate (GENI AM API v3, "Allocate"): validate the request, place its
//! nodes on components with free capacity, reserve it, create
//! `geni_allocated` slivers with the short allocation timeout (refusing
//! link addresses no link network can hold), each with the plan of its
//! node, and answer with a manifest of the new slivers. All or nothing;
//! `geni_allocate = geni_many`, so later Allocates add slivers to the
//! slice. The request is parsed once, while it is validated, and that
//! document serves the plans and the manifest. While the aggregate is
//! draining (`store::drain`) every Allocate, and so every CreateSliver, is
//! refused with [`CoreError::Draining`].

use super::links::{self, RequestLinks};
use super::{Aggregate, CoreError, expiry, manifest, report, select};
use crate::model::{
    AllocationState, EventKind, OperationalState, Principal, SliverInfo, SliverUrn,
};
use crate::store::components::{self, ComponentRow, SliverTypeSpec, Usage};
use crate::store::slivers::{self, SliverRow};
use crate::store::{Conn, Json, drain, events, link_ranges, slices};
use chrono::{DateTime, Utc};
use geni_rspec::Document;
use geni_rspec::manifest::Ownership;
use geni_rspec::{IssueKind, Node, NodeId, RSpec, RspecKind};
use std::collections::HashMap;
use std::sync::Arc;

/// What Allocate reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Allocation {
    /// The slice URN.
    pub slice_urn: String,
    /// Manifest of the newly allocated slivers.
    pub manifest: String,
    /// The new slivers, all `geni_allocated`.
    pub slivers: Vec<SliverInfo>,
}

/// One node of the request that this aggregate must place.
#[derive(Debug, Clone, PartialEq, Eq)]
struct NodeRequest {
    /// Its `<node>` in the request document.
    id: NodeId,
    client_id: String,
    component_id: Option<String>,
    sliver_type: Option<String>,
    disk_image: Option<String>,
    size: SizeRequest,
    exclusive: bool,
    line: u32,
}

/// What a node's `<emulab:xen cores ram disk>` asks for; what it leaves
/// out is the sliver type's.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct SizeRequest {
    cores: Option<i64>,
    ram_mb: Option<i64>,
    disk_gb: Option<i64>,
}

/// What a sliver is granted: its size, and the capacity that takes on
/// its host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Grant {
    cores: i64,
    ram_mb: i64,
    disk_gb: Option<i64>,
    /// CPU capacity, in the component's unit.
    cpus: i64,
    /// Memory capacity (MiB).
    memory_mb: i64,
}

/// A validated request, parsed, and the nodes and links that are ours.
pub(super) struct ParsedRequest {
    text: String,
    doc: Document,
    nodes: Vec<NodeRequest>,
    /// This aggregate's LANs.
    links: RequestLinks,
}

impl ParsedRequest {
    /// The request document.
    pub(super) fn document(&self) -> &Document {
        &self.doc
    }
}

/// What Allocate created: the new slivers, and the request they came from.
pub(super) struct Allocated {
    /// The new slivers.
    pub rows: Vec<SliverRow>,
    /// The id of the stored request.
    pub request_id: String,
}

impl Aggregate {
    /// Allocates the resources `rspec` asks of this aggregate into
    /// `slice_urn` (created when new). Nodes of other component managers
    /// are ignored and copied to the manifest.
    pub fn allocate(
        &self,
        principal: &Principal,
        slice_urn: &str,
        rspec: &str,
    ) -> Result<Allocation, CoreError> {
        let request = self.parse_request(rspec)?;
        let now = self.now();
        let (request_id, slivers, sources) = self.store.write(|conn| {
            let allocated = self.allocate_in(conn, principal, slice_urn, &request, now)?;
            let slivers = report::infos(&allocated.rows);
            let id = allocated.request_id;
            let sources =
                manifest::read(conn, &self.requests, slice_urn, allocated.rows, Some(&id))?;
            Ok::<_, CoreError>((id, slivers, sources))
        })?;
        self.owners
            .record(slice_urn, slivers.iter().map(|s| s.urn.as_str()));
        let known = Some((request_id.as_str(), &request.doc));
        let manifest = manifest::render(&self.config, &self.requests, &sources, known)?;
        self.keep_request(&request_id, now, request);
        Ok(Allocation {
            slice_urn: slice_urn.to_owned(),
            manifest,
            slivers,
        })
    }

    /// Keeps `request`, stored as `id` at `now`, parsed for the manifests
    /// that will cover its slivers.
    pub(super) fn keep_request(&self, id: &str, now: DateTime<Utc>, request: ParsedRequest) {
        let bytes = request.text.len();
        self.requests.keep(id, now, Arc::new(request.doc), bytes);
    }

    /// Validates `rspec` as a request (schema and semantic checks) and
    /// collects the nodes this aggregate owns, refusing what it cannot
    /// serve: an end of its own links that no node declares, a node of its
    /// own with several sliver types.
    pub(super) fn parse_request(&self, rspec: &str) -> Result<ParsedRequest, CoreError> {
        if rspec.trim().is_empty() {
            return Err(CoreError::EmptyRequest);
        }
        let (_, doc) = self
            .validator
            .validate_and_parse(rspec.as_bytes(), RspecKind::Request)
            .map_err(|invalid| {
                if invalid
                    .issues
                    .iter()
                    .any(|i| i.kind == IssueKind::Namespace)
                {
                    CoreError::UnsupportedRspec(invalid.to_string())
                } else {
                    CoreError::InvalidRspec(invalid.to_string())
                }
            })?;
        let root = RSpec::new(&doc).map_err(|e| CoreError::InvalidRspec(e.to_string()))?;
        let owned = Ownership::of(&root, &self.config.cm_urn);
        if let Some((link, end)) = owned.unknown_ends(&root).first() {
            return Err(CoreError::bad_request(
                end.line(),
                format!(
                    "link `{}` of this aggregate names interface `{}`, which no node of this request declares; this aggregate cannot connect an end it does not know: declare the interface on a node or remove it from the link",
                    link.client_id().unwrap_or_default(),
                    end.client_id().unwrap_or_default()
                ),
            ));
        }
        let nodes = owned
            .nodes
            .iter()
            .map(|&id| node_request(&Node::new(&doc, id)))
            .collect::<Result<Vec<_>, _>>()?;
        if nodes.is_empty() {
            return Err(CoreError::NoNodeForAggregate {
                cm: self.config.cm_urn.clone(),
            });
        }
        let links = RequestLinks::of(&root, &self.config.authority);
        Ok(ParsedRequest {
            text: rspec.to_owned(),
            doc,
            nodes,
            links,
        })
    }

    /// Allocate inside the caller's transaction.
    pub(super) fn allocate_in(
        &self,
        conn: &mut Conn,
        principal: &Principal,
        slice_urn: &str,
        request: &ParsedRequest,
        now: DateTime<Utc>,
    ) -> Result<Allocated, CoreError> {
        if let Some(drain) = drain::current(conn)? {
            return Err(CoreError::Draining {
                since: drain.since,
                reason: drain.reason,
            });
        }
        // Lock first, so that the checks below see every earlier allocation.
        components::lock_all(conn)?;
        if let Some(slice) = slices::find(conn, slice_urn)? {
            select::require_not_shut_down(&slice, "nothing can be allocated in it")?;
        }
        let expires = expiry::allocation(now, &self.config.policy, principal.credential_expires)?;
        links::check_addresses(
            &request.links.requested(),
            link_ranges::current(conn)?.as_deref(),
        )?;
        let existing = slivers::live_client_ids(conn, slice_urn)?;
        if let Some(node) = request
            .nodes
            .iter()
            .find(|n| existing.contains(&n.client_id))
        {
            return Err(CoreError::NodeExists {
                slice: slice_urn.to_owned(),
                client_id: node.client_id.clone(),
            });
        }
        let max = self.config.policy.max_slivers_per_slice;
        if existing.len() + request.nodes.len() > max {
            return Err(CoreError::TooManySlivers {
                slice: slice_urn.to_owned(),
                would_hold: existing.len() + request.nodes.len(),
                limit: max,
            });
        }
        let inventory = components::all(conn)?;
        let mut usage = components::usage(conn, now)?;
        slices::find_or_create(conn, slice_urn, principal.credential_expires, now)?;
        let request_id = slices::insert_request(conn, slice_urn, &request.text, now)?;
        let mut rows = Vec::with_capacity(request.nodes.len());
        for node in &request.nodes {
            let default_type = self.config.policy.default_sliver_type.as_deref();
            let (component, spec, grant) = place(&inventory, &mut usage, node, default_type)?;
            let plan = request.links.plan(
                &Node::new(&request.doc, node.id),
                &self.config.authority,
                &request_id,
            );
            let row = SliverRow {
                urn: SliverUrn::generate(&self.config.authority).into(),
                slice_urn: slice_urn.to_owned(),
                request_id: request_id.clone(),
                client_id: node.client_id.clone(),
                component_id: component.id.clone(),
                sliver_type: spec.name.clone(),
                disk_image: node.disk_image.clone(),
                cpus: grant.cpus,
                memory_mb: grant.memory_mb,
                exclusive: node.exclusive || component.exclusive,
                allocation_state: AllocationState::Allocated,
                operational_state: OperationalState::PendingAllocation,
                expires_at: expires.into(),
                error: String::new(),
                annotations: Json::default(),
                created_at: now.into(),
                version: 0,
                deleted_at: None,
                disk_gb: grant.disk_gb,
                cores: Some(grant.cores),
                ram_mb: Some(grant.ram_mb),
                plan: Some(Json::new(plan)),
            };
            slivers::insert(conn, &row)?;
            let detail = format!("on {} by {}", component.id, principal.caller_urn);
            events::append(
                conn,
                now,
                Some(slice_urn),
                Some(&row.urn),
                EventKind::Allocate,
                &detail,
            )?;
            rows.push(row);
        }
        Ok(Allocated { rows, request_id })
    }
}

/// Reads one node of ours.
fn node_request(node: &Node<'_>) -> Result<NodeRequest, CoreError> {
    let line = node.line();
    let client_id = node
        .client_id()
        .map(|c| c.into_owned())
        .ok_or_else(|| CoreError::bad_request(line, "<node> has no client_id"))?;
    let sliver_type = node.sliver_type();
    let types = node.sliver_types().count();
    if types > 1 {
        return Err(CoreError::bad_request(
            line,
            format!(
                "node `{client_id}` has {types} sliver_type elements; this aggregate runs each node as one VM of one type: keep one, or none for the aggregate's default"
            ),
        ));
    }
    let size = match sliver_type.as_ref().and_then(|s| s.xen()) {
        Some(xen) => {
            let read = |attribute: &str, value: Option<std::borrow::Cow<'_, str>>| {
                size_value(line, &client_id, attribute, value.as_deref())
            };
            SizeRequest {
                cores: read("cores", xen.cores())?,
                ram_mb: read("ram", xen.ram())?,
                disk_gb: read("disk", xen.disk())?,
            }
        }
        None => SizeRequest::default(),
    };
    Ok(NodeRequest {
        id: node.id(),
        size,
        client_id,
        component_id: node.component_id().map(|c| c.into_owned()),
        sliver_type: sliver_type
            .as_ref()
            .and_then(|s| s.name())
            .map(|n| n.into_owned()),
        disk_image: sliver_type
            .as_ref()
            .and_then(|s| s.disk_images().next())
            .and_then(|d| d.name())
            .map(|n| n.into_owned()),
        exclusive: node.exclusive() == Some(true),
        line,
    })
}

/// One attribute of `<emulab:xen>`: a whole number of at least 1.
fn size_value(
    line: u32,
    client_id: &str,
    attribute: &str,
    value: Option<&str>,
) -> Result<Option<i64>, CoreError> {
    let Some(text) = value else {
        return Ok(None);
    };
    match text.trim().parse::<i64>() {
        Ok(n) if n >= 1 => Ok(Some(n)),
        _ => Err(CoreError::bad_request(
            line,
            format!(
                "node `{client_id}` has <emulab:xen {attribute}=\"{text}\">; {attribute} must be a whole number of at least 1"
            ),
        )),
    }
}

/// The size `node` gets as sliver type `spec`: what it asks for within
/// the type's bounds, the type's own size for what it leaves out.
/// Beyond a bound: a bad request naming the bound. A disk size asked of a type
/// that offers none (no `max_disk_gb`) is not granted, and the manifest
/// shows no disk size: geni-lib writes `disk="8"` into every Xen VM it
/// requests, so refusing would turn away its default requests.
fn grant(node: &NodeRequest, spec: &SliverTypeSpec) -> Result<Grant, CoreError> {
    let bounds = [
        (
            "cores",
            node.size.cores,
            spec.max_cores.unwrap_or(spec.default_cores()),
            "",
        ),
        (
            "ram",
            node.size.ram_mb,
            spec.max_ram_mb.unwrap_or(spec.memory_mb),
            " MB",
        ),
        (
            "disk",
            node.size.disk_gb,
            spec.max_disk_gb.unwrap_or(i64::MAX),
            " GB",
        ),
    ];
    for (attribute, asked, max, unit) in bounds {
        if let Some(asked) = asked.filter(|&asked| asked > max) {
            return Err(CoreError::bad_request(
                node.line,
                format!(
                    "node `{}` asks for {attribute}=\"{asked}\" of sliver type `{}`, which offers at most {max}{unit}",
                    node.client_id, spec.name
                ),
            ));
        }
    }
    let cores = node.size.cores.unwrap_or(spec.default_cores());
    let ram_mb = node.size.ram_mb.unwrap_or(spec.memory_mb);
    Ok(Grant {
        cores,
        ram_mb,
        disk_gb: node.size.disk_gb.filter(|_| spec.max_disk_gb.is_some()),
        cpus: spec.capacity_of(cores),
        memory_mb: ram_mb,
    })
}

/// Chooses a component for `node` (its bound one, or the one with the
/// most free CPUs that offers its sliver type and has room for the size
/// it asks for) and reserves the granted resources in `usage`. A node that names no sliver type gets
/// `default_type`, or else the first one advertised.
fn place<'i>(
    inventory: &'i [ComponentRow],
    usage: &mut HashMap<String, Usage>,
    node: &NodeRequest,
    default_type: Option<&str>,
) -> Result<(&'i ComponentRow, &'i SliverTypeSpec, Grant), CoreError> {
    let type_name = match node.sliver_type.as_deref().or(default_type) {
        Some(name) => name.to_owned(),
        None => inventory
            .iter()
            .find_map(|c| c.details.sliver_types.first())
            .map(|s| s.name.clone())
            .ok_or_else(|| CoreError::NoCapacity("this aggregate has no components".into()))?,
    };
    let asks = if node.sliver_type.is_some() {
        "asks for"
    } else {
        "gets the default"
    };
    let candidates: Vec<&ComponentRow> = match &node.component_id {
        Some(wanted) => vec![
            inventory
                .iter()
                .find(|c| c.id.eq_ignore_ascii_case(wanted))
                .ok_or_else(|| {
                    CoreError::bad_request(
                        node.line,
                        format!(
                            "node `{}` names component {wanted}, which is not a component of this aggregate",
                            node.client_id
                        ),
                    )
                })?,
        ],
        None => inventory.iter().collect(),
    };
    let offering: Vec<(&ComponentRow, &SliverTypeSpec)> = candidates
        .iter()
        .filter_map(|c| c.sliver_type(&type_name).map(|s| (*c, s)))
        .collect();
    if offering.is_empty() {
        return Err(CoreError::bad_request(
            node.line,
            format!(
                "node `{}` {asks} sliver type `{type_name}`, which is not offered{}; offered: {}",
                node.client_id,
                node.component_id
                    .as_deref()
                    .map(|c| format!(" on {c}"))
                    .unwrap_or_default(),
                offered_types(&candidates)
            ),
        ));
    }
    if let Some(image) = &node.disk_image {
        check_image(node, image, &offering)?;
    }
    let granted = offering
        .iter()
        .map(|(_, s)| grant(node, s))
        .collect::<Result<Vec<_>, _>>()?;
    let free = Usage::default();
    let (component, spec, grant) = offering
        .into_iter()
        .zip(granted)
        .map(|((c, s), g)| (c, s, g))
        .filter(|(c, s, g)| {
            let used = usage.get(&c.id).unwrap_or(&free);
            c.fits(used, g.cpus, g.memory_mb, node.exclusive)
                && node.disk_image.as_deref().is_none_or(|i| offers_image(s, i))
        })
        .max_by_key(|(c, _, _)| {
            let used = usage.get(&c.id).unwrap_or(&free);
            (c.cpus - used.cpus, std::cmp::Reverse(c.id.clone()))
        })
        .ok_or_else(|| {
            CoreError::NoCapacity(format!(
                "line {}: no component has room for node `{}` (sliver type `{type_name}`{}); try fewer or smaller nodes, or later",
                node.line,
                node.client_id,
                if node.exclusive { ", exclusive" } else { "" }
            ))
        })?;
    let used = usage.entry(component.id.clone()).or_default();
    used.cpus += grant.cpus;
    used.memory_mb += grant.memory_mb;
    used.slivers += 1;
    used.exclusive |= node.exclusive || component.exclusive;
    Ok((component, spec, grant))
}

/// Whether sliver type `spec` boots `image` (names compared ignoring case).
fn offers_image(spec: &SliverTypeSpec, image: &str) -> bool {
    spec.disk_images
        .iter()
        .any(|d| d.name.eq_ignore_ascii_case(image))
}

/// A bad request unless some offering boots `image`.
fn check_image(
    node: &NodeRequest,
    image: &str,
    offering: &[(&ComponentRow, &SliverTypeSpec)],
) -> Result<(), CoreError> {
    if offering.iter().any(|(_, s)| offers_image(s, image)) {
        return Ok(());
    }
    let mut known: Vec<&str> = offering
        .iter()
        .flat_map(|(_, s)| s.disk_images.iter().map(|d| d.name.as_str()))
        .collect();
    known.sort_unstable();
    known.dedup();
    Err(CoreError::bad_request(
        node.line,
        format!(
            "node `{}` asks for disk image `{image}`, which is not offered; offered: {}",
            node.client_id,
            if known.is_empty() {
                "none".to_owned()
            } else {
                known.join(", ")
            }
        ),
    ))
}

/// The sliver type names `components` offer, for messages.
fn offered_types(components: &[&ComponentRow]) -> String {
    let mut names: Vec<&str> = components
        .iter()
        .flat_map(|c| c.details.sliver_types.iter().map(|s| s.name.as_str()))
        .collect();
    names.sort_unstable();
    names.dedup();
    if names.is_empty() {
        "none".to_owned()
    } else {
        names.join(", ")
    }
}
