//! The XML documents the simulator answers with, built from the cloud state in
//! the exact element order and text/CDATA form of oned 7.4.0, then narrowed to
//! the schema of the release being played (see [`crate::versions`]).

use crate::cloud::Cloud;
use crate::cloud::lifecycle::{History, Vm};
use crate::cloud::record::Pooled;
use crate::cloud::seed;
use crate::cloud::vnet::{Lease, Vnet, ip_at, mac_at};
use crate::template::Template;
use crate::versions;
use crate::xml::{Content, Element};

fn num(name: &str, value: impl ToString) -> Element {
    Element::text(name, value.to_string())
}

fn permissions() -> Element {
    let bits = [
        ("OWNER_U", 1),
        ("OWNER_M", 1),
        ("OWNER_A", 0),
        ("GROUP_U", 0),
        ("GROUP_M", 0),
        ("GROUP_A", 0),
        ("OTHER_U", 0),
        ("OTHER_M", 0),
        ("OTHER_A", 0),
    ];
    Element::parent("PERMISSIONS", bits.iter().map(|(n, v)| num(n, v)).collect())
}

fn owner() -> Vec<Element> {
    vec![
        num("UID", 0),
        num("GID", 0),
        Element::text("UNAME", "oneadmin"),
        Element::text("GNAME", "oneadmin"),
    ]
}

fn history_full(cloud: &Cloud, vm: &Vm, h: &History) -> Element {
    let host = cloud.inventory().hosts().get(h.host);
    let hostname = host.map_or("", |h| h.name());
    let hid = host.map_or(-1, |h| h.id());
    let (uid, gid) = (h.uid, h.uid);
    Element::parent(
        "HISTORY",
        vec![
            num("OID", vm.id()),
            num("SEQ", h.seq),
            Element::text("HOSTNAME", hostname),
            num("HID", hid),
            num("CID", 0),
            num("STIME", h.stime),
            num("ETIME", h.etime),
            Element::cdata("VM_MAD", "dummy"),
            Element::cdata("TM_MAD", "dummy"),
            num("DS_ID", 0),
            num("PLAN_ID", -1),
            num("ACTION_ID", 0),
            num("PSTIME", h.pstime),
            num("PETIME", h.petime),
            num("RSTIME", h.rstime),
            num("RETIME", h.retime),
            num("ESTIME", h.estime),
            num("EETIME", h.eetime),
            num("ACTION", h.action),
            num("UID", uid),
            num("GID", gid),
            num("REQUEST_ID", h.request_id),
        ],
    )
}

fn deploy_id(vm: &Vm) -> Element {
    if vm.deploy_id().is_empty() {
        Element {
            name: "DEPLOY_ID".into(),
            content: Content::Open,
        }
    } else {
        Element::text("DEPLOY_ID", vm.deploy_id())
    }
}

/// The full `<VM>` body of `one.vm.info`; `all_history` false keeps only the last record (infoextended).
pub fn vm_full(cloud: &Cloud, vm: &Vm, all_history: bool) -> Element {
    let mut children = vec![num("ID", vm.id())];
    children.extend(owner());
    children.push(Element::text("NAME", vm.name()));
    children.push(permissions());
    let mut monitoring: Vec<Element> = vm
        .monitoring()
        .iter()
        .map(|(k, v)| Element::cdata(k, v.clone()))
        .collect();
    monitoring.sort_by(|a, b| a.name.cmp(&b.name));
    children.extend([
        num("LAST_POLL", vm.last_poll()),
        num("STATE", vm.state().number()),
        num("LCM_STATE", vm.lcm().number()),
        num("PREV_STATE", vm.state().number()),
        num("PREV_LCM_STATE", vm.lcm().number()),
        num("RESCHED", 0),
        num("STIME", vm.stime()),
        num("ETIME", vm.etime()),
        deploy_id(vm),
        Element::parent_open("MONITORING", monitoring),
        Element::parent_open("SCHED_ACTIONS", Vec::new()),
        Element::parent_open("TEMPLATE", vm.template().to_elements()),
        Element::parent_open("USER_TEMPLATE", vm.user_template().to_elements()),
    ]);
    let records: Vec<&History> = if all_history {
        vm.history().iter().collect()
    } else {
        vm.history().last().into_iter().collect()
    };
    children.push(Element::parent(
        "HISTORY_RECORDS",
        records
            .into_iter()
            .map(|h| history_full(cloud, vm, h))
            .collect(),
    ));
    children.push(Element::parent(
        "BACKUPS",
        vec![
            Element::parent("BACKUP_CONFIG", Vec::new()),
            Element::parent_open("BACKUP_IDS", Vec::new()),
        ],
    ));
    versions::adapt_vm(cloud.version(), Element::parent("VM", children))
}

const REDUCED_DISK: [&str; 11] = [
    "DISK_ID",
    "DATASTORE",
    "DATASTORE_ID",
    "IMAGE",
    "IMAGE_ID",
    "SIZE",
    "TYPE",
    "CLONE",
    "CLONE_TARGET",
    "LN_TARGET",
    "DISK_SNAPSHOT_TOTAL_SIZE",
];
const REDUCED_NIC: [&str; 13] = [
    "IP",
    "EXTERNAL_IP",
    "IP6",
    "IP6_ULA",
    "IP6_LINK",
    "IP6_GLOBAL",
    "NETWORK_MODE",
    "MAC",
    "NETWORK",
    "NETWORK_ID",
    "NIC_ID",
    "SECURITY_GROUPS",
    "SCHED_REQUIREMENTS",
];
const REDUCED_USER: [&str; 9] = [
    "LABELS",
    "ERROR",
    "SCHED_MESSAGE",
    "SCHED_RANK",
    "SCHED_DS_RANK",
    "SCHED_REQUIREMENTS",
    "SCHED_DS_REQUIREMENTS",
    "USER_PRIORITY",
    "PUBLIC_CLOUD",
];

fn reduced_vectors(template: &Template, name: &str, keep: &[&str]) -> Vec<Element> {
    template
        .vectors(name)
        .map(|members| {
            let picked = keep
                .iter()
                .filter_map(|k| {
                    members
                        .iter()
                        .find(|(n, _)| n == k)
                        .map(|(n, v)| Element::cdata(n, v.clone()))
                })
                .collect();
            Element::parent(name, picked)
        })
        .collect()
}

/// The reduced `<VM>` body of `one.vmpool.info` (5.8+).
pub fn vm_reduced(cloud: &Cloud, vm: &Vm) -> Element {
    let mut template = Vec::new();
    for key in ["CPU", "MEMORY", "VCPU"] {
        template.push(match vm.template().single(key) {
            Some(v) => Element::text(key, v),
            None => Element::parent_open(key, Vec::new()),
        });
    }
    template.extend(reduced_vectors(vm.template(), "DISK", &REDUCED_DISK));
    template.extend(reduced_vectors(vm.template(), "NIC", &REDUCED_NIC));
    let user: Vec<Element> = Template {
        attrs: vm
            .user_template()
            .attrs
            .iter()
            .filter(|a| REDUCED_USER.contains(&a.name.as_str()))
            .cloned()
            .collect(),
    }
    .to_elements();
    let history: Vec<Element> = vm
        .history()
        .last()
        .map(|h| {
            let host = cloud.inventory().hosts().get(h.host);
            Element::parent(
                "HISTORY",
                vec![
                    num("OID", vm.id()),
                    num("SEQ", h.seq),
                    Element::cdata("HOSTNAME", host.map_or("", |h| h.name())),
                    num("HID", host.map_or(-1, |h| h.id())),
                    num("CID", 0),
                    num("DS_ID", 0),
                    Element::cdata("VM_MAD", "dummy"),
                    Element::cdata("TM_MAD", "dummy"),
                    Element::cdata("ACTION", h.action.to_string()),
                ],
            )
        })
        .into_iter()
        .collect();
    let mut children = vec![num("ID", vm.id())];
    children.extend(owner());
    children.push(Element::text("NAME", vm.name()));
    children.extend([
        num("LAST_POLL", 0),
        num("STATE", vm.state().number()),
        num("LCM_STATE", vm.lcm().number()),
        num("RESCHED", 0),
        num("STIME", vm.stime()),
        num("ETIME", vm.etime()),
        deploy_id(vm),
        Element::parent_open("TEMPLATE", template),
        Element::parent("MONITORING", Vec::new()),
        // oned filters the stored USER_TEMPLATE: an emptied one stays open, a never-filled one is self-closed.
        if vm.user_template().attrs.is_empty() {
            Element::parent("USER_TEMPLATE", user)
        } else {
            Element::parent_open("USER_TEMPLATE", user)
        },
        Element::parent("HISTORY_RECORDS", history),
    ]);
    versions::adapt_vm_reduced(cloud.version(), Element::parent("VM", children))
}

/// A pool document: `root` holding `items`, `<ROOT></ROOT>` when empty.
pub fn pool(root: &str, items: Vec<Element>) -> Element {
    Element::parent_open(root, items)
}

/// The `<HOST>` document with allocations; `monitoring` false empties MONITORING as the pool does.
pub fn host(cloud: &Cloud, index: usize, monitoring: bool) -> Option<Element> {
    let host = cloud.inventory().hosts().get(index)?;
    let (cpu, mem, vms) = cloud.host_usage(index);
    let mut doc = host.doc().clone();
    if let Some(share) = doc.child_mut("HOST_SHARE") {
        share.set_value("MEM_USAGE", mem.to_string());
        share.set_value("CPU_USAGE", cpu.to_string());
        share.set_value("RUNNING_VMS", vms.len().to_string());
    }
    doc.set_children("VMS", vms.iter().map(|id| num("ID", id)).collect());
    if !monitoring {
        doc.set_children("MONITORING", Vec::new());
    }
    Some(versions::adapt_host(cloud.version(), doc, cpu, mem))
}

/// The owner word of an `ALLOCATED` entry: a VM (mask 0x1000000000) or, for
/// addresses handed to a reservation, a network (mask 0x2000000000).
fn lease_owner(owner: i32) -> u64 {
    match u64::try_from(owner) {
        Ok(vm) => 0x10_0000_0000 | vm,
        Err(_) => 0x20_0000_0000 | u64::try_from(-i64::from(owner) - 1).unwrap_or(0),
    }
}

/// The `<VNET>` document; `pool_form` gives the `one.vnpool.info` AR shape (ALLOCATED, no LEASES).
pub fn vnet(cloud: &Cloud, vnet: &Vnet, pool_form: bool) -> Element {
    let mut doc = vnet.doc().clone();
    let mut leases: Vec<Lease> = vnet.leases().to_vec();
    leases.sort_by_key(|l| l.index);
    doc.set_value("USED_LEASES", leases.len().to_string());
    let mut users: Vec<i32> = leases
        .iter()
        .map(|l| l.owner)
        .filter(|vm| *vm >= 0)
        .collect();
    users.sort_unstable();
    users.dedup();
    doc.set_children(
        "UPDATED_VMS",
        users.iter().map(|id| num("ID", id)).collect(),
    );
    if let Some(ar) = doc.child_mut("AR_POOL").and_then(|p| p.child_mut("AR")) {
        ar.set_value("NEXT_INDEX", vnet.next_index().to_string());
        if pool_form {
            let allocated: String = leases
                .iter()
                .map(|l| format!(" {} {}", l.index, lease_owner(l.owner)))
                .collect();
            let keep: Vec<Element> = ar
                .children()
                .iter()
                .filter(|c| {
                    !matches!(
                        c.name.as_str(),
                        "MAC_END" | "IP_END" | "USED_LEASES" | "LEASES"
                    )
                })
                .cloned()
                .collect();
            let mut members = keep;
            if vnet.ever_leased() {
                members.insert(0, Element::cdata("ALLOCATED", allocated));
            }
            *ar = Element::parent("AR", members);
        } else {
            ar.set_value("USED_LEASES", leases.len().to_string());
            let first_ip = ar.value_at("IP").to_owned();
            let first_mac = ar.value_at("MAC").to_owned();
            let items = leases
                .iter()
                .map(|l| {
                    Element::parent(
                        "LEASE",
                        vec![
                            Element::cdata("IP", ip_at(&first_ip, l.index)),
                            Element::cdata("MAC", mac_at(&first_mac, l.index)),
                            if l.owner >= 0 {
                                Element::cdata("VM", l.owner.to_string())
                            } else {
                                Element::cdata("VNET", (-l.owner - 1).to_string())
                            },
                        ],
                    )
                })
                .collect();
            ar.set_children("LEASES", items);
        }
    }
    versions::adapt_vnet(cloud.version(), doc)
}

/// The cluster pool: cluster "default" listing the current hosts and networks.
pub fn cluster_pool(cloud: &Cloud) -> Element {
    let mut pool =
        crate::xml::parse(seed::CLUSTER_POOL).unwrap_or_else(|_| pool("CLUSTER_POOL", Vec::new()));
    if let Some(cluster) = pool.child_mut("CLUSTER") {
        cluster.set_children(
            "HOSTS",
            cloud
                .inventory()
                .hosts()
                .iter()
                .map(|h| num("ID", h.id()))
                .collect(),
        );
        cluster.set_children(
            "VNETS",
            cloud
                .inventory()
                .vnets()
                .iter()
                .map(|v| num("ID", v.id()))
                .collect(),
        );
    }
    pool
}
