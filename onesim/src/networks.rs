//! Objects created over the API besides VMs: virtual networks
//! (`one.vn.allocate`, reservations with `one.vn.reserve`, `one.vn.delete`
//! refused while leases are in use) and hosts (`one.host.allocate`).

use crate::cloud::{Cloud, Lease, Refusal, Vnet, ip_at, ip_index, mac_at};
use crate::template::{self, Template};
use crate::xml::{Content, Element};

fn refusal(code: i32, message: impl Into<String>) -> Refusal {
    Refusal {
        message: message.into(),
        code,
        resp_id: -1,
    }
}

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

fn add_vnet(cloud: &mut Cloud, doc: Element, size: u32) -> i32 {
    let id = cloud.next_vnet_id;
    cloud.next_vnet_id += 1;
    cloud.vnets.push(Vnet {
        id,
        doc,
        leases: Vec::new(),
        next_index: 0,
        size,
        ever_leased: false,
    });
    id
}

/// `one.vn.allocate`: a network with one IPv4 address range from the template's `AR`.
pub fn allocate(cloud: &mut Cloud, text: &str) -> Result<i32, Refusal> {
    cloud.received_templates.push(text.to_owned());
    let template = template::parse(text).map_err(|e| refusal(8192, e))?;
    let name = template.single("NAME").unwrap_or("").to_owned();
    if name.is_empty() {
        return Err(refusal(
            16384,
            "Error allocating a new virtual network. No NAME in template.",
        ));
    }
    if let Some(taken) = cloud.vnets.iter().find(|v| v.doc.value_at("NAME") == name) {
        return Err(refusal(
            16384,
            format!(
                "Error allocating a new virtual network. NAME is already taken by NET {}.",
                taken.id
            ),
        ));
    }
    if template.single("VN_MAD").is_none_or(str::is_empty) {
        return Err(refusal(
            16384,
            "Error allocating a new virtual network. No VN_MAD in template.",
        ));
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
        return Err(refusal(
            16384,
            "Error allocating a new virtual network. Wrong IP or SIZE in address range.",
        ));
    }
    let id = cloud.next_vnet_id;
    let octets: Vec<u8> = ip.split('.').filter_map(|o| o.parse().ok()).collect();
    let mac = format!(
        "02:00:{}",
        octets
            .iter()
            .map(|o| format!("{o:02x}"))
            .collect::<Vec<_>>()
            .join(":")
    );
    let doc = vnet_document(id, &name, &template, None, &ip, &mac, size);
    Ok(add_vnet(cloud, doc, size))
}

/// Whether the `size` addresses from index `first` are inside the AR and free.
fn block_is_free(vnet: &Vnet, first: u32, size: u32) -> bool {
    first.checked_add(size).is_some_and(|end| end <= vnet.size)
        && !vnet
            .leases
            .iter()
            .any(|l| (first..first + size).contains(&l.index))
}

/// The first free block of `size` addresses at or after the AR's
/// NEXT_INDEX, wrapping to its start, as oned hands out reservations: a
/// later reservation gets a later block even when an earlier one was freed.
fn next_free_block(vnet: &Vnet, size: u32) -> Option<u32> {
    let starts = vnet.size.max(1);
    (0..starts)
        .map(|k| (vnet.next_index + k) % starts)
        .find(|first| block_is_free(vnet, *first, size))
}

/// `one.vn.reserve`: carves `SIZE` addresses out of network `parent` into
/// a new network `NAME`: from `IP` when the template names it, else the
/// next free block from the parent's NEXT_INDEX. The reservation takes the
/// parent's bridge, driver, addressing and `VLAN_ID`.
pub fn reserve(cloud: &mut Cloud, parent: i32, text: &str) -> Result<i32, Refusal> {
    cloud.received_templates.push(text.to_owned());
    let template = template::parse(text).map_err(|e| refusal(8192, e))?;
    let index = cloud
        .vnets
        .iter()
        .position(|v| v.id == parent)
        .ok_or_else(|| Refusal::no_such("virtual network", parent))?;
    let size: u32 = template
        .single("SIZE")
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0);
    if size == 0 {
        return Err(refusal(8192, "Reservation SIZE must be a greater than 0"));
    }
    let name = template.single("NAME").unwrap_or("").to_owned();
    let new_id = cloud.next_vnet_id;
    let source = &mut cloud.vnets[index];
    let requested = template
        .single("IP")
        .map(str::trim)
        .filter(|ip| !ip.is_empty());
    let start = match requested {
        Some(ip) => ip_index(source.doc.value_at("AR_POOL/AR/IP"), ip)
            .filter(|first| block_is_free(source, *first, size)),
        None => next_free_block(source, size),
    };
    let Some(start) = start else {
        return Err(refusal(
            2048,
            format!(
                "Cannot reserve addresses from virtual network {parent}. Not enough free addresses in an address range"
            ),
        ));
    };
    let free: Vec<u32> = (start..start + size).collect();
    if requested.is_none() {
        source.next_index = (start + size) % source.size.max(1);
    }
    for i in &free {
        source.leases.push(Lease {
            index: *i,
            vm: -new_id - 1,
        });
    }
    source.ever_leased = true;
    let first_ip = ip_at(source.doc.value_at("AR_POOL/AR/IP"), free[0]);
    let first_mac = mac_at(source.doc.value_at("AR_POOL/AR/MAC"), free[0]);
    let mut stored = Template::default();
    for key in [
        "BRIDGE",
        "VN_MAD",
        "DNS",
        "GATEWAY",
        "NETWORK_ADDRESS",
        "NETWORK_MASK",
        "SECURITY_GROUPS",
    ] {
        let value = source.doc.value_at(&format!("TEMPLATE/{key}"));
        if !value.is_empty() {
            stored.set(key, value);
        }
    }
    // A reservation is carried by its parent's VLAN (the one the operator
    // set or oned chose), shown in its VLAN_ID as in the parent's.
    let vlan = source.doc.value_at("VLAN_ID");
    if !vlan.is_empty() {
        stored.set("VLAN_ID", vlan);
    }
    let name = if name.is_empty() {
        format!("{}-reservation-{new_id}", source.doc.value_at("NAME"))
    } else {
        name
    };
    let doc = vnet_document(
        new_id,
        &name,
        &stored,
        Some(parent),
        &first_ip,
        &first_mac,
        size,
    );
    Ok(add_vnet(cloud, doc, size))
}

/// `one.vn.delete`: refused while VMs hold leases; a reservation returns its addresses to the parent.
pub fn delete(cloud: &mut Cloud, id: i32) -> Result<i32, Refusal> {
    let index = cloud
        .vnets
        .iter()
        .position(|v| v.id == id)
        .ok_or_else(|| Refusal::no_such("virtual network", id))?;
    if cloud.vnets[index].leases.iter().any(|l| l.vm >= 0) {
        return Err(refusal(
            2048,
            "Cannot delete virtual network. Can not remove a virtual network with leases in use",
        ));
    }
    cloud.vnets.remove(index);
    for vnet in &mut cloud.vnets {
        vnet.leases.retain(|l| l.vm != -id - 1);
    }
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
