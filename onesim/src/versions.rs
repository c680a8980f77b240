//! Narrows the 7.4.0-shaped documents to the schema of an older release, as
//! each release's official XSD (`share/doc/xsd`) describes them: the 7.x
//! HISTORY/PCI/VNET additions go before 7.0, SCHED_ACTIONS/BACKUPS and the VNET
//! update lists before 6.x, and the 5.x host layout (FREE_*/USED_* in
//! HOST_SHARE, NUMA usage inline) is rebuilt before 5.12.

use crate::version::Version;
use crate::xml::Element;

fn strip(element: &mut Element, names: &[&str]) {
    element
        .children_mut()
        .retain(|c| !names.contains(&c.name.as_str()));
}

fn for_each_child(element: &mut Element, name: &str, f: &mut impl FnMut(&mut Element)) {
    if let crate::xml::Content::Children(children) = &mut element.content {
        children.iter_mut().filter(|c| c.name == name).for_each(f);
    }
}

/// Applies `f` to every element at `path` (`/`-separated) below `element`.
fn for_each_at(element: &mut Element, path: &str, f: &mut impl FnMut(&mut Element)) {
    match path.split_once('/') {
        None => for_each_child(element, path, f),
        Some((head, rest)) => {
            for_each_child(element, head, &mut |child| for_each_at(child, rest, f))
        }
    }
}

fn before(version: Version, major: u32, minor: u32) -> bool {
    (version.major, version.minor) < (major, minor)
}

/// A full VM document for `version`.
pub fn adapt_vm(version: Version, mut vm: Element) -> Element {
    if before(version, 7, 0) {
        for_each_at(&mut vm, "HISTORY_RECORDS/HISTORY", &mut |h| {
            strip(h, &["PLAN_ID", "ACTION_ID"])
        });
    }
    if before(version, 6, 0) {
        strip(&mut vm, &["SCHED_ACTIONS", "BACKUPS"]);
    }
    vm
}

/// A reduced (vmpool) VM document for `version`.
pub fn adapt_vm_reduced(version: Version, mut vm: Element) -> Element {
    if before(version, 6, 0) {
        for_each_at(&mut vm, "HISTORY_RECORDS/HISTORY", &mut |h| {
            strip(h, &["VM_MAD", "TM_MAD"])
        });
    }
    vm
}

/// A HOST document for `version`; `cpu`/`mem` are the allocations (the
/// simulator's dummy hosts use exactly what is allocated).
pub fn adapt_host(version: Version, mut host: Element, cpu: i64, mem: i64) -> Element {
    if before(version, 7, 0) {
        for_each_at(&mut host, "HOST_SHARE/PCI_DEVICES/PCI", &mut |pci| {
            strip(pci, &["IFNAME", "SRIOV", "SRIOV_NUM"])
        });
    }
    if before(version, 5, 12) {
        return old_host(host, cpu, mem);
    }
    if before(version, 6, 0) {
        // 5.12 kept the NUMA usage inline and had no NUMA records in MONITORING.
        for_each_at(&mut host, "HOST_SHARE/NUMA_NODES/NODE", &mut |node| {
            for_each_child(node, "HUGEPAGE", &mut |page| {
                let pages = page.value_at("PAGES").to_owned();
                page.children_mut().insert(0, Element::cdata("FREE", pages));
            });
            for_each_child(node, "MEMORY", &mut |memory| {
                let total = memory.value_at("TOTAL").to_owned();
                let children = memory.children_mut();
                children.insert(1, Element::cdata("FREE", total));
                children.push(Element::cdata("USED", "0"));
            });
        });
        for_each_child(&mut host, "MONITORING", &mut |m| strip(m, &["NUMA_NODE"]));
    }
    host
}

/// The 5.4–5.10 HOST layout.
fn old_host(host: Element, cpu: i64, mem: i64) -> Element {
    let share = host
        .child("HOST_SHARE")
        .cloned()
        .unwrap_or_else(|| Element::parent("HOST_SHARE", Vec::new()));
    let get = |path: &str| share.value_at(path).parse::<i64>().unwrap_or(0);
    let (total_cpu, total_mem) = (get("TOTAL_CPU"), get("TOTAL_MEM"));
    let number = |name: &str, v: i64| Element::text(name, v.to_string());
    let new_share = Element::parent(
        "HOST_SHARE",
        vec![
            number("DISK_USAGE", get("DATASTORES/DISK_USAGE")),
            number("MEM_USAGE", mem),
            number("CPU_USAGE", cpu),
            number("TOTAL_MEM", total_mem),
            number("TOTAL_CPU", total_cpu),
            number("MAX_DISK", get("DATASTORES/MAX_DISK")),
            number("MAX_MEM", get("MAX_MEM")),
            number("MAX_CPU", get("MAX_CPU")),
            number("FREE_DISK", get("DATASTORES/FREE_DISK")),
            number("FREE_MEM", total_mem - mem),
            number("FREE_CPU", total_cpu - cpu),
            number("USED_DISK", get("DATASTORES/USED_DISK")),
            number("USED_MEM", mem),
            number("USED_CPU", cpu),
            number("RUNNING_VMS", get("RUNNING_VMS")),
            Element::parent("DATASTORES", Vec::new()),
            Element::parent("PCI_DEVICES", Vec::new()),
        ],
    );
    let mut children = Vec::new();
    for child in host.children() {
        match child.name.as_str() {
            "PREV_STATE" | "MONITORING" => {}
            "CLUSTER_ID" => {
                children.push(Element::text("LAST_MON_TIME", "0"));
                children.push(child.clone());
            }
            "HOST_SHARE" => children.push(new_share.clone()),
            _ => children.push(child.clone()),
        }
    }
    Element::parent("HOST", children)
}

/// A VNET document for `version`.
pub fn adapt_vnet(version: Version, mut vnet: Element) -> Element {
    if before(version, 7, 0) {
        strip(&mut vnet, &["TEMPLATE_ID"]);
        for_each_at(&mut vnet, "AR_POOL/AR", &mut |ar| {
            strip(ar, &["NEXT_INDEX", "SHARED"])
        });
    }
    if !version.vnet_has_state() {
        strip(
            &mut vnet,
            &[
                "STATE",
                "PREV_STATE",
                "UPDATED_VMS",
                "OUTDATED_VMS",
                "UPDATING_VMS",
                "ERROR_VMS",
            ],
        );
    }
    if before(version, 5, 8) {
        strip(
            &mut vnet,
            &["BRIDGE_TYPE", "OUTER_VLAN_ID", "OUTER_VLAN_ID_AUTOMATIC"],
        );
    }
    vnet
}

/// A USER document for `version`.
pub fn adapt_user(_version: Version, user: Element) -> Element {
    user
}
