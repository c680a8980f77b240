//! Link networks of the jobs: before a node's VM is created, each LAN link
//! its interfaces are on gets its network (created in the backend by the
//! link's sliver URN, found again by that tag after a crash, its handle
//! stored); after a VM is destroyed, each link no provisioned sliver of the
//! slice uses any more gets a job that destroys its network once the VMs
//! still being destroyed are gone.

use super::Context;
use super::error::JobError;
use crate::core::links::plan_from_stored;
use crate::model::plan::{LinkSliver, NodePlan};
use crate::model::{AllocationState, InterfaceAddresses, JobKind};
use crate::store::jobs::{self, JobRow};
use crate::store::networks::LinkNetworkRow;
use crate::store::slivers::{self, SliverRow};
use crate::store::{StoreResult, slices};
use chrono::Utc;
use geni_am_backend::Compute as _;
use geni_am_backend::{NetHandle, NetSpec, NicSpec};
use geni_rspec::manifest::urn_authority;

/// What a sliver's VM is attached to: the NICs to create it with, and the
/// interfaces to record in its annotations.
pub struct Attachment {
    /// The node's services and requested NICs.
    pub plan: NodePlan,
    /// One NIC per planned interface, in order.
    pub nics: Vec<NicSpec>,
    /// The planned interfaces with their link and network.
    pub interfaces: Vec<InterfaceAddresses>,
}

/// Reads the sliver's node plan and makes sure every link network it
/// needs exists.
pub fn attach(cx: &Context, sliver: &SliverRow) -> Result<Attachment, JobError> {
    let plan = node_plan(cx, sliver)?;
    let mut nics = Vec::with_capacity(plan.nics.len());
    let mut interfaces = Vec::with_capacity(plan.nics.len());
    for nic in &plan.nics {
        let network = ensure_network(cx, &sliver.slice_urn, &nic.link)?;
        interfaces.push(InterfaceAddresses {
            client_id: nic.interface.clone(),
            link: Some(nic.link.urn.clone()),
            network: Some(network.0.clone()),
            asked_netmask: nic.netmask.clone(),
            ..InterfaceAddresses::default()
        });
        nics.push(NicSpec {
            network,
            ip: nic.ip.clone(),
        });
    }
    Ok(Attachment {
        plan,
        nics,
        interfaces,
    })
}

/// The plan stored with the sliver at Allocate; for a sliver of an
/// earlier release, which has none, the plan derived from its stored
/// request.
pub fn node_plan(cx: &Context, sliver: &SliverRow) -> Result<NodePlan, JobError> {
    if let Some(plan) = &sliver.plan {
        return Ok(plan.value().clone());
    }
    let request = cx
        .store
        .read(|conn| slices::requests_by_id(conn, std::slice::from_ref(&sliver.request_id)))?
        .into_iter()
        .next()
        .ok_or_else(|| JobError::Request(format!("request {} is missing", sliver.request_id)))?;
    let authority = urn_authority(&sliver.urn).unwrap_or_default();
    plan_from_stored(
        &request.document,
        authority,
        &sliver.request_id,
        &sliver.client_id,
    )
    .map_err(JobError::Request)
}

/// The network of link `tag`: the stored one, else the backend's (created
/// or, after a crash before it was stored, found by its tag), stored. The
/// nodes of a link are provisioned by parallel workers: without the lock
/// two of them could both find no network and each create one, leaving
/// the link's VMs on different networks.
fn ensure_network(cx: &Context, slice_urn: &str, link: &LinkSliver) -> Result<NetHandle, JobError> {
    let (tag, name) = (link.urn.as_str(), link.client_id.as_str());
    let _one_at_a_time = cx
        .link_networks
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(row) = cx.store.link_network(tag)? {
        return Ok(NetHandle(row.handle));
    }
    let spec = NetSpec {
        tag: tag.to_owned(),
        name: name.to_owned(),
        addresses: link.addresses.clone(),
    };
    let network = cx.backend.create_network(&spec)?;
    let handle = network.handle;
    let row = LinkNetworkRow::new(
        tag,
        slice_urn,
        name,
        &handle.0,
        network.vlan_tag,
        Utc::now(),
    );
    cx.store.record_link_network(&row)?;
    tracing::info!(link = %tag, network = %handle.0, vlan = ?network.vlan_tag, "link network ready");
    Ok(handle)
}

/// After `sliver`'s VM is destroyed: queues the destruction of each of its
/// links' networks that no provisioned sliver of the slice uses.
pub fn release(cx: &Context, sliver: &SliverRow) -> Result<(), JobError> {
    let mut links: Vec<String> = sliver
        .annotations
        .value()
        .interfaces
        .iter()
        .filter_map(|i| i.link.clone())
        .collect();
    links.sort_unstable();
    links.dedup();
    for link in links {
        let Some(network) = cx.store.link_network(&link)? else {
            continue;
        };
        let users = users_of_link(cx, &sliver.slice_urn, &link)?;
        if users.iter().any(|u| u.provisioned && u.attached) {
            continue;
        }
        let payload = serde_json::json!({ "network": network.handle });
        cx.store.write(|conn| {
            jobs::enqueue(
                conn,
                JobKind::DestroyNetwork,
                &sliver.slice_urn,
                Some(&link),
                &payload,
                Utc::now(),
            )
        })?;
    }
    Ok(())
}

/// Runs a [`JobKind::DestroyNetwork`] job: nothing when a provisioned
/// sliver uses the link again, a wait of one poll interval while a VM on
/// it is still being destroyed, else the network is destroyed and
/// forgotten.
pub fn destroy(cx: &Context, job: &JobRow) -> Result<(), JobError> {
    let Some(link) = job.sliver_urn.as_deref() else {
        return Ok(());
    };
    let Some(network) = cx.store.link_network(link)? else {
        return Ok(());
    };
    let users = users_of_link(cx, &job.slice_urn, link)?;
    if users.iter().any(|u| u.provisioned && u.attached) {
        tracing::info!(link, "link in use again; its network stays");
        return Ok(());
    }
    let busy = cx.store.slivers_with_pending_jobs()?;
    if users.iter().any(|u| busy.contains(&u.urn)) {
        return Err(JobError::Waiting(format!(
            "a VM on link {link} is still being destroyed or created"
        )));
    }
    cx.backend
        .destroy_network(&NetHandle(network.handle.clone()))?;
    cx.store.forget_link_network(link)?;
    tracing::info!(link, network = %network.handle, "link network destroyed");
    Ok(())
}

/// A sliver of the slice that uses or may use a link.
struct LinkUser {
    urn: String,
    provisioned: bool,
    /// Whether its VM was attached to the link; false for a sliver of the
    /// link's request whose provisioning has not recorded its interfaces
    /// yet.
    attached: bool,
}

/// The slivers of `slice_urn` (live or deleted) attached to `link`, and
/// the provisioned ones of the link's request not attached to anything
/// yet (their provision job may be about to attach them).
fn users_of_link(cx: &Context, slice_urn: &str, link: &str) -> StoreResult<Vec<LinkUser>> {
    let rows = cx.store.read(|conn| slivers::of_slice(conn, slice_urn))?;
    let mut users = Vec::new();
    for row in rows {
        let interfaces = &row.annotations.value().interfaces;
        let attached = interfaces.iter().any(|i| i.link.as_deref() == Some(link));
        let provisioned = row.allocation_state == AllocationState::Provisioned;
        let same_request = link
            .rsplit_once('+')
            .is_some_and(|(_, id)| id.starts_with(&format!("{}.", row.request_id)));
        if attached || (provisioned && same_request && interfaces.is_empty()) {
            users.push(LinkUser {
                urn: row.urn,
                provisioned,
                attached,
            });
        }
    }
    Ok(users)
}
