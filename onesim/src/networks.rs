//! Objects created over the API besides VMs: virtual networks
//! (`one.vn.allocate`, reservations with `one.vn.reserve`, `one.vn.delete`
//! refused while leases are in use) and hosts (`one.host.allocate`).

use crate::cloud::Cloud;
use crate::cloud::record::Pooled;
use crate::cloud::vnet::{Vnet, ip_at, mac_at};
use crate::refusal::Refusal;
use crate::template::{self, Template};
use crate::xml::{Content, Element};

fn empty(name: &str) -> Element {
    Element {
        name: name.to_owned(),
        content: Content::SelfClosed,
    }
}

/// The document of a network, in the element order of the recorded `geni-net`.
fn vnet_document(
    id: i32,
    name: &str,
    template: &Template,
    parent: Option<i32>,
    first_ip: &str,
    first_mac: &str,
    size: u32,
) -> Element {
    let value = |key: &str| template.single(key).unwrap_or("").to_owned();
    let maybe = |key: &str| {
        let v = value(key);
        if v.is_empty() {
            empty(key)
        } else {
            Element::cdata(key, v)
        }
    };
    let last = size.saturating_sub(1);
    let ar = Element::parent(
        "AR_POOL",
        vec![Element::parent(
            "AR",
            vec![
                Element::cdata("AR_ID", "0"),
                Element::cdata("IP", first_ip),
                Element::cdata("MAC", first_mac),
                Element::cdata("NEXT_INDEX", "0"),
                Element::cdata("SHARED", "NO"),
                Element::cdata("SIZE", size.to_string()),
                Element::cdata("TYPE", "IP4"),
                Element::cdata("MAC_END", mac_at(first_mac, last)),
                Element::cdata("IP_END", ip_at(first_ip, last)),
                Element::text("USED_LEASES", "0"),
                empty("LEASES"),
            ],
        )],
    );
    let mut stored = template.clone();
    stored.take("AR");
    stored.take("NAME");
    stored.take("SIZE");
    stored.take("NETWORK_ID");
    let parent_element = parent.map_or_else(
        || empty("PARENT_NETWORK_ID"),
        |p| Element::cdata("PARENT_NETWORK_ID", p.to_string()),
    );
    let mut children = vec![Element::text("ID", id.to_string())];
    children.extend([
        Element::text("UID", "0"),
        Element::text("GID", "0"),
        Element::text("UNAME", "oneadmin"),
        Element::text("GNAME", "oneadmin"),
        Element::text("NAME", name),
    ]);
    let bits = [
        "OWNER_U", "OWNER_M", "OWNER_A", "GROUP_U", "GROUP_M", "GROUP_A", "OTHER_U", "OTHER_M",
        "OTHER_A",
    ];
    children.push(Element::parent(
        "PERMISSIONS",
        bits.iter()
            .enumerate()
            .map(|(i, b)| Element::text(b, if i < 2 { "1" } else { "0" }))
            .collect(),
    ));
    children.extend([
        Element::parent("CLUSTERS", vec![Element::text("ID", "0")]),
        maybe("BRIDGE"),
        Element::cdata("BRIDGE_TYPE", "linux"),
        Element::cdata("STATE", "1"),
        Element::cdata("PREV_STATE", "1"),
        parent_element,
        empty("TEMPLATE_ID"),
        maybe("VN_MAD"),
        maybe("PHYDEV"),
        maybe("VLAN_ID"),
        maybe("OUTER_VLAN_ID"),
        Element::text("VLAN_ID_AUTOMATIC", "0"),
        Element::text("OUTER_VLAN_ID_AUTOMATIC", "0"),
        Element::text("USED_LEASES", "0"),
        empty("VROUTERS"),
        empty("UPDATED_VMS"),
        empty("OUTDATED_VMS"),
        empty("UPDATING_VMS"),
        empty("ERROR_VMS"),
        Element::parent("TEMPLATE", stored.to_elements()),
        ar,
    ]);
    Element::parent("VNET", children)
}

/// The template of a network call, parsed (the text journaled first).
fn parse(cloud: &mut Cloud, text: &str) -> Result<Template, Refusal> {
    cloud.record_template(text);
    template::parse(text).map_err(|e| Refusal::new(Refusal::INTERNAL, e))
}

/// A refusal of `one.vn.allocate`.
fn not_allocated(reason: &str) -> Refusal {
    Refusal::new(
        Refusal::ALLOCATE,
        format!("Error allocating a new virtual network. {reason}"),
    )
}

/// `one.vn.allocate`: a network with one IPv4 address range from the template's `AR`.
pub fn allocate(cloud: &mut Cloud, text: &str) -> Result<i32, Refusal> {
    let template = parse(cloud, text)?;
    let name = template.single("NAME").unwrap_or("").to_owned();
    if name.is_empty() {
        return Err(not_allocated("No NAME in template."));
    }
    if let Some(taken) = cloud.inventory().vnets().iter().find(|v| v.name() == name) {
        return Err(not_allocated(&format!(
            "NAME is already taken by NET {}.",
            taken.id()
        )));
    }
    if template.single("VN_MAD").is_none_or(str::is_empty) {
        return Err(not_allocated("No VN_MAD in template."));
    }
    let ar = template
        .vectors("AR")
        .next()
        .map(<[_]>::to_vec)
        .unwrap_or_default();
    let get = |k: &str| {
        ar.iter()
            .find(|(n, _)| n == k)
            .map_or("", |(_, v)| v.as_str())
    };
    let ip = get("IP").to_owned();
    let size: u32 = get("SIZE").trim().parse().unwrap_or(0);
    if ip.parse::<std::net::Ipv4Addr>().is_err() || size == 0 {
        return Err(not_allocated("Wrong IP or SIZE in address range."));
    }
    let octets: Vec<u8> = ip.split('.').filter_map(|o| o.parse().ok()).collect();
    let mac = format!(
        "02:00:{}",
        octets
            .iter()
            .map(|o| format!("{o:02x}"))
            .collect::<Vec<_>>()
            .join(":")
    );
    Ok(cloud
        .inventory_mut()
        .add_vnet(|id| vnet_document(id, &name, &template, None, &ip, &mac, size)))
}

/// The parent's attributes a reservation takes into its TEMPLATE.
const INHERITED: [&str; 7] = [
    "BRIDGE",
    "VN_MAD",
    "DNS",
    "GATEWAY",
    "NETWORK_ADDRESS",
    "NETWORK_MASK",
    "SECURITY_GROUPS",
];

/// `one.vn.reserve`: carves `SIZE` addresses out of network `parent` into
/// a new network `NAME`: from `IP` when the template names it, else the
/// next free block from the parent's NEXT_INDEX. The reservation takes the
/// parent's bridge, driver, addressing and `VLAN_ID`.
pub fn reserve(cloud: &mut Cloud, parent: i32, text: &str) -> Result<i32, Refusal> {
    let template = parse(cloud, text)?;
    let index = cloud
        .inventory()
        .vnet_index(parent)
        .ok_or_else(|| Refusal::no_such("virtual network", parent))?;
    let size: u32 = template
        .single("SIZE")
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0);
    if size == 0 {
        return Err(Refusal::new(
            Refusal::INTERNAL,
            "Reservation SIZE must be a greater than 0",
        ));
    }
    let new_id = cloud.inventory().next_vnet_id();
    let requested = template
        .single("IP")
        .map(str::trim)
        .filter(|ip| !ip.is_empty());
    let inventory = cloud.inventory_mut();
    let Some(source) = inventory.vnet_at_mut(index) else {
        return Err(Refusal::no_such("virtual network", parent));
    };
    let Some(start) = source.reserve(new_id, size, requested) else {
        return Err(Refusal::new(
            Refusal::ACTION,
            format!(
                "Cannot reserve addresses from virtual network {parent}. Not enough free addresses in an address range"
            ),
        ));
    };
    let first_ip = ip_at(source.first_ip(), start);
    let first_mac = mac_at(source.first_mac(), start);
    let source = source.doc();
    let mut stored = Template::default();
    for key in INHERITED {
        let value = source.value_at(&format!("TEMPLATE/{key}"));
        if !value.is_empty() {
            stored.set(key, value);
        }
    }
    // A reservation is carried by its parent's VLAN (the one the operator
    // set or oned chose), shown in its VLAN_ID as in the parent's.
    let vlan = source.value_at("VLAN_ID");
    if !vlan.is_empty() {
        stored.set("VLAN_ID", vlan);
    }
    let name = match template.single("NAME").unwrap_or("") {
        "" => format!("{}-reservation-{new_id}", source.value_at("NAME")),
        name => name.to_owned(),
    };
    let doc = |id| {
        vnet_document(
            id,
            &name,
            &stored,
            Some(parent),
            &first_ip,
            &first_mac,
            size,
        )
    };
    Ok(inventory.add_vnet(doc))
}

/// `one.vn.delete`: refused while VMs hold leases; a reservation returns its addresses to the parent.
pub fn delete(cloud: &mut Cloud, id: i32) -> Result<i32, Refusal> {
    let inventory = cloud.inventory_mut();
    let index = inventory
        .vnet_index(id)
        .ok_or_else(|| Refusal::no_such("virtual network", id))?;
    if inventory
        .vnets()
        .get(index)
        .is_some_and(Vnet::leased_to_vms)
    {
        return Err(Refusal::new(
            Refusal::ACTION,
            "Cannot delete virtual network. Can not remove a virtual network with leases in use",
        ));
    }
    inventory.remove_vnet(index);
    Ok(id)
}

/// The document of a host just added with `one.host.allocate` (INIT, never monitored).
pub fn new_host_document(id: i32, name: &str, im_mad: &str, vm_mad: &str) -> Element {
    let share = Element::parent(
        "HOST_SHARE",
        vec![
            Element::text("MEM_USAGE", "0"),
            Element::text("CPU_USAGE", "0"),
            Element::text("TOTAL_MEM", "0"),
            Element::text("TOTAL_CPU", "0"),
            Element::text("MAX_MEM", "0"),
            Element::text("MAX_CPU", "0"),
            Element::text("RUNNING_VMS", "0"),
            Element::text("VMS_THREAD", "1"),
            Element::parent(
                "DATASTORES",
                vec![
                    Element::cdata("DISK_USAGE", "0"),
                    Element::cdata("FREE_DISK", "0"),
                    Element::cdata("MAX_DISK", "0"),
                    Element::cdata("USED_DISK", "0"),
                ],
            ),
            Element::parent_open("PCI_DEVICES", Vec::new()),
            Element::parent_open("NUMA_NODES", Vec::new()),
        ],
    );
    Element::parent(
        "HOST",
        vec![
            Element::text("ID", id.to_string()),
            Element::text("NAME", name),
            Element::text("STATE", "0"),
            Element::text("PREV_STATE", "0"),
            Element::cdata("IM_MAD", im_mad),
            Element::cdata("VM_MAD", vm_mad),
            Element::text("CLUSTER_ID", "0"),
            Element::text("CLUSTER", "default"),
            share,
            Element::parent_open("VMS", Vec::new()),
            Element::parent(
                "TEMPLATE",
                vec![
                    Element::cdata("IM_MAD", im_mad),
                    Element::cdata("RESERVED_CPU", ""),
                    Element::cdata("RESERVED_MEM", ""),
                    Element::cdata("VM_MAD", vm_mad),
                ],
            ),
            empty("MONITORING"),
        ],
    )
}
