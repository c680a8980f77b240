//! The VNET document (`one.vn.info`, with AR leases) and network pools
//! (`one.vnpool.info`, ARs without leases), as the OpenNebula XML-RPC
//! API reference describes them.

use super::DocError;
use super::element::{Element, parse_object, parse_pool};

/// What the driver reads from a virtual network.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VnetDoc {
    /// `ID`.
    pub id: i64,
    /// `NAME` (empty when absent).
    pub name: String,
    /// `PARENT_NETWORK_ID`: set for a reservation carved from another network.
    pub parent_network_id: Option<i64>,
    /// `VLAN_ID`: the VLAN (a VXLAN's network identifier) carrying the
    /// network, set by the operator or by oned (`AUTOMATIC_VLAN_ID`); a
    /// reservation carries its parent's. `None` when empty (untagged) or
    /// not a tag; read from `TEMPLATE/VLAN_ID` when the element is absent.
    pub vlan_id: Option<u32>,
    /// `USED_LEASES` over all ARs (0 when absent).
    pub used_leases: i64,
    /// The single-valued `TEMPLATE` attributes (GATEWAY, DNS, …), in order.
    pub template: Vec<(String, String)>,
    /// `AR_POOL/AR`, in order; empty for 2.x/3.x bodies, which have no ARs.
    pub ars: Vec<ArDoc>,
}

/// One address range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArDoc {
    /// `AR_ID`.
    pub ar_id: i64,
    /// `TYPE`: IP4, IP6, IP4_6, ETHER, IP6_STATIC, IP4_6_STATIC.
    pub kind: String,
    /// `IP`, the first IPv4 address.
    pub ip: Option<String>,
    /// `MAC`, the first MAC address.
    pub mac: Option<String>,
    /// `SIZE`, number of addresses (0 when absent).
    pub size: i64,
    /// `LEASES/LEASE` (only in `one.vn.info`).
    pub leases: Vec<LeaseDoc>,
}

/// One leased address of an AR.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseDoc {
    /// `IP`.
    pub ip: Option<String>,
    /// `MAC`.
    pub mac: Option<String>,
    /// `VM`: the VM holding it; -1 is an address on hold. `None` for leases
    /// of a network reservation or a virtual router.
    pub vm: Option<i64>,
}

/// Parses a `<VNET>` document (`one.vn.info`).
pub fn parse_vnet(xml: &str) -> Result<VnetDoc, DocError> {
    parse_object(xml, "VNET", read_vnet)
}

/// Parses a `<VNET_POOL>` document (`one.vnpool.info`).
pub fn parse_vnet_pool(xml: &str) -> Result<Vec<VnetDoc>, DocError> {
    parse_pool(xml, "VNET_POOL", "VNET", read_vnet)
}

fn read_vnet(vnet: Element<'_>) -> Result<VnetDoc, DocError> {
    let ars = match vnet.child("AR_POOL") {
        Some(pool) => pool.children("AR").map(read_ar).collect::<Result<_, _>>()?,
        None => Vec::new(),
    };
    let template = vnet.child_attributes("TEMPLATE");
    let vlan_id = vnet
        .text("VLAN_ID")
        .or_else(|| {
            template
                .iter()
                .find(|(key, _)| key == "VLAN_ID")
                .map(|(_, value)| value.clone())
        })
        .and_then(|tag| tag.trim().parse().ok());
    Ok(VnetDoc {
        id: vnet.int("ID")?,
        name: vnet.text_or_empty("NAME"),
        parent_network_id: vnet.opt_int("PARENT_NETWORK_ID")?,
        vlan_id,
        used_leases: vnet.int_or("USED_LEASES", 0)?,
        template,
        ars,
    })
}

fn read_ar(ar: Element<'_>) -> Result<ArDoc, DocError> {
    let leases = match ar.child("LEASES") {
        Some(leases) => leases
            .children("LEASE")
            .map(read_lease)
            .collect::<Result<_, _>>()?,
        None => Vec::new(),
    };
    Ok(ArDoc {
        ar_id: ar.int("AR_ID")?,
        kind: ar.text_or_empty("TYPE"),
        ip: ar.text("IP"),
        mac: ar.text("MAC"),
        size: ar.int_or("SIZE", 0)?,
        leases,
    })
}

fn read_lease(lease: Element<'_>) -> Result<LeaseDoc, DocError> {
    Ok(LeaseDoc {
        ip: lease.text("IP"),
        mac: lease.text("MAC"),
        vm: lease.opt_int("VM")?,
    })
}
