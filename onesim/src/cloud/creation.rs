//! Creating a VM as oned does: capacity attributes checked, the name
//! validated, DISKs expanded from their images, NIC leases taken from the
//! networks' address ranges, CONTEXT expanded with the generated ETH* entries,
//! and the template split into TEMPLATE and USER_TEMPLATE.

use super::Cloud;
use super::inventory::Inventory;
use super::lifecycle::NewVm;
use super::record::Pooled;
use super::vnet::{ip_at, mac_at};
use crate::refusal::Refusal;
use crate::template::{Attr, AttrValue, Template};
use crate::xml::Element;

impl Cloud {
    /// Creates a VM from a full template (`one.vm.allocate` or the merged
    /// instantiate template). Returns its id.
    pub fn create_vm(
        &mut self,
        mut template: Template,
        hold: bool,
        template_id: Option<i32>,
    ) -> Result<i32, Refusal> {
        let (memory, cpu) = size(&template)?;
        if let Some(limit) = self.injected.exceeded_vm_quota(self.engine.live_count()) {
            return Err(Refusal::new(
                Refusal::AUTHORIZATION,
                format!("User [0] : user [0] limit of {limit} reached for VMS quota in VM."),
            ));
        }
        let id = self.engine.next_vm_id();
        let name = self.vm_name(&mut template, id, template_id)?;
        let disks = expand_disks(&self.inventory, &template)?;
        let nics = lease_nics(&mut self.inventory, &template, id)?;
        let (mut system, user_template) = split_template(template);
        system.take("DISK");
        system.take("NIC");
        let context = system.take("CONTEXT");
        let disk_count = disks.len();
        system.attrs.extend(disks);
        system.attrs.extend(nics.iter().cloned());
        if let Some(ctx) = context.into_iter().find_map(|a| match a.value {
            AttrValue::Vector(v) => Some(v),
            AttrValue::Single(_) => None,
        }) {
            let ctx = expand_context(&self.inventory, ctx, &name, &nics, disk_count);
            system.attrs.push(Attr {
                name: "CONTEXT".into(),
                value: AttrValue::Vector(ctx),
            });
        }
        add_requirements(&mut system, !nics.is_empty(), disk_count > 0);
        if self.version.vm_has_backups() {
            let uuid = self
                .engine
                .take_uuid()
                .unwrap_or_else(|| generated_uuid(id, self.engine.clock().now_ms()));
            set_machine(&mut system, uuid);
        }
        if let Some(t) = template_id {
            system.set("TEMPLATE_ID", t.to_string());
        }
        system.set("VMID", id.to_string());
        let fail_boot = self.injected.take_boot_failure();
        Ok(self.engine.admit(NewVm {
            name,
            template: system,
            user_template,
            cpu,
            memory,
            hold,
            fail_boot,
        }))
    }

    /// The VM's NAME: the one sent (checked), else the template's name with
    /// the VM id, else `one-ID`.
    fn vm_name(
        &self,
        template: &mut Template,
        id: i32,
        template_id: Option<i32>,
    ) -> Result<String, Refusal> {
        let sent = template
            .take("NAME")
            .into_iter()
            .find_map(|a| match a.value {
                AttrValue::Single(v) => Some(v),
                AttrValue::Vector(_) => None,
            });
        if let Some(name) = sent.filter(|n| !n.is_empty()) {
            check_name(&name).map_err(|e| {
                Refusal::new(
                    Refusal::ALLOCATE,
                    format!("Error allocating a new virtual machine. {e}"),
                )
            })?;
            return Ok(name);
        }
        let base = template_id
            .and_then(|t| usize::try_from(t).ok())
            .and_then(|index| self.inventory.templates().get(index));
        Ok(match base {
            Some(t) => format!("{}-{id}", t.value_at("NAME")),
            None => format!("one-{id}"),
        })
    }
}

/// MEMORY (MB) and CPU (cores) of a template, both required positive.
fn size(template: &Template) -> Result<(i64, f64), Refusal> {
    let memory = template
        .single("MEMORY")
        .and_then(|m| m.trim().parse::<i64>().ok())
        .filter(|m| *m > 0)
        .ok_or_else(|| {
            Refusal::new(
                Refusal::INTERNAL,
                "MEMORY attribute must be a positive integer value.",
            )
        })?;
    let cpu = template
        .single("CPU")
        .and_then(|c| c.trim().parse::<f64>().ok())
        .filter(|c| *c > 0.0)
        .ok_or_else(|| {
            Refusal::new(
                Refusal::INTERNAL,
                "CPU attribute must be a positive float or integer value.",
            )
        })?;
    Ok((memory, cpu))
}

/// The AUTOMATIC_* requirements oned adds, and the default security
/// group's rules when the VM has a NIC.
fn add_requirements(system: &mut Template, any_nic: bool, any_disk: bool) {
    if any_nic || any_disk {
        system.set("AUTOMATIC_DS_REQUIREMENTS", "(\"CLUSTERS/ID\" @> 0)");
        system.set(
            "AUTOMATIC_REQUIREMENTS",
            "(CLUSTER_ID = 0) & !(PIN_POLICY = PINNED)",
        );
    } else {
        system.set("AUTOMATIC_REQUIREMENTS", "!(PIN_POLICY = PINNED)");
    }
    if any_nic {
        system.set("AUTOMATIC_NIC_REQUIREMENTS", "(\"CLUSTERS/ID\" @> 0)");
        system.attrs.push(security_group_rule("OUTBOUND"));
        system.attrs.push(security_group_rule("INBOUND"));
    }
}

/// OS with MACHINE (q35 unless sent) and the VM's UUID, as releases with backups write it.
fn set_machine(system: &mut Template, uuid: String) {
    let os = system.take("OS").into_iter().find_map(|a| match a.value {
        AttrValue::Vector(v) => Some(v),
        AttrValue::Single(_) => None,
    });
    let mut os = os.unwrap_or_default();
    if !os.iter().any(|(n, _)| n == "MACHINE") {
        os.push(("MACHINE".into(), "q35".into()));
    }
    os.retain(|(n, _)| n != "UUID");
    os.push(("UUID".into(), uuid));
    system.attrs.push(Attr {
        name: "OS".into(),
        value: AttrValue::Vector(os),
    });
}

/// The DISK vectors of the VM: each sent DISK expanded from its image.
fn expand_disks(inventory: &Inventory, template: &Template) -> Result<Vec<Attr>, Refusal> {
    let mut disks = Vec::new();
    for (disk_id, disk) in template.vectors("DISK").enumerate() {
        let get = |n: &str| disk.iter().find(|(k, _)| k == n).map(|(_, v)| v.as_str());
        let images = inventory.images();
        let image = match (get("IMAGE_ID"), get("IMAGE")) {
            (Some(id), _) => images
                .iter()
                .find(|i| i.value_at("ID") == id.trim())
                .ok_or_else(|| {
                    Refusal::new(
                        Refusal::INTERNAL,
                        format!("Error getting image [{}].", id.trim()),
                    )
                })?,
            (None, Some(name)) => images
                .iter()
                .find(|i| i.value_at("NAME") == name)
                .ok_or_else(|| {
                    Refusal::new(
                        Refusal::INTERNAL,
                        format!("Error getting image \"{name}\"."),
                    )
                })?,
            (None, None) => {
                return Err(Refusal::new(
                    Refusal::INTERNAL,
                    "DISK with no IMAGE or IMAGE_ID.",
                ));
            }
        };
        disks.push(disk_from_image(image, disk_id));
    }
    Ok(disks)
}

/// The DISK vector oned writes for disk `disk_id` cloned from `image`.
fn disk_from_image(image: &Element, disk_id: usize) -> Attr {
    let prefix = image.value_at("TEMPLATE/DEV_PREFIX");
    let prefix = if prefix.is_empty() { "sd" } else { prefix };
    let size = image.value_at("SIZE").to_owned();
    let format = image.value_at("FORMAT").to_owned();
    let members = vec![
        ("ALLOW_ORPHANS", "NO".to_owned()),
        ("CLONE", "YES".to_owned()),
        ("CLONE_TARGET", "SYSTEM".to_owned()),
        ("CLUSTER_ID", "0".to_owned()),
        ("DATASTORE", image.value_at("DATASTORE").to_owned()),
        ("DATASTORE_ID", image.value_at("DATASTORE_ID").to_owned()),
        ("DEV_PREFIX", prefix.to_owned()),
        ("DISK_ID", disk_id.to_string()),
        ("DISK_SNAPSHOT_TOTAL_SIZE", "0".to_owned()),
        ("DISK_TYPE", "FILE".to_owned()),
        ("DRIVER", format.clone()),
        ("FORMAT", format),
        ("IMAGE", image.value_at("NAME").to_owned()),
        ("IMAGE_ID", image.value_at("ID").to_owned()),
        ("IMAGE_STATE", "2".to_owned()),
        ("LN_TARGET", "NONE".to_owned()),
        ("ORIGINAL_SIZE", size.clone()),
        ("PERSISTENT_SNAPSHOTS", "YES".to_owned()),
        ("READONLY", "NO".to_owned()),
        ("SAVE", "NO".to_owned()),
        ("SIZE", size),
        ("SOURCE", image.value_at("SOURCE").to_owned()),
        ("TARGET", device_name(prefix, disk_id)),
        ("TM_MAD", "dummy".to_owned()),
        ("TYPE", "FILE".to_owned()),
    ];
    vector_attr("DISK", members)
}

/// The NIC vectors of VM `vm`: a lease for each sent NIC, all or none
/// (leases already taken are released when one fails).
fn lease_nics(
    inventory: &mut Inventory,
    template: &Template,
    vm: i32,
) -> Result<Vec<Attr>, Refusal> {
    let mut taken: Vec<(usize, u32)> = Vec::new();
    let mut nics = Vec::new();
    for (nic_id, request) in template.vectors("NIC").enumerate() {
        match lease_nic(inventory, request, vm, nic_id) {
            Ok((vnet_index, lease, nic)) => {
                taken.push((vnet_index, lease));
                nics.push(nic);
            }
            Err(refusal) => {
                for (vnet, index) in &taken {
                    if let Some(vnet) = inventory.vnet_at_mut(*vnet) {
                        vnet.release_index(*index);
                    }
                }
                return Err(refusal);
            }
        }
    }
    Ok(nics)
}

/// One NIC: the network it names, the lease taken there, and the NIC vector.
fn lease_nic(
    inventory: &mut Inventory,
    request: &[(String, String)],
    vm: i32,
    nic_id: usize,
) -> Result<(usize, u32, Attr), Refusal> {
    let get = |n: &str| {
        request
            .iter()
            .find(|(k, _)| k == n)
            .map(|(_, v)| v.trim().to_owned())
    };
    let vnet_index = match (get("NETWORK_ID"), get("NETWORK")) {
        (Some(id), _) => inventory
            .vnets()
            .iter()
            .position(|v| v.id().to_string() == id),
        (None, Some(name)) => inventory.vnets().iter().position(|v| v.name() == name),
        (None, None) => None,
    };
    let found = vnet_index.and_then(|i| Some((i, inventory.vnet_at_mut(i)?)));
    let Some((index, vnet)) = found else {
        let id = get("NETWORK_ID")
            .or_else(|| get("NETWORK"))
            .unwrap_or_default();
        return Err(Refusal::new(
            Refusal::INTERNAL,
            format!("Virtual network with ID: {id} does not exist"),
        ));
    };
    let Some(lease) = vnet.lease(vm, get("IP").as_deref()) else {
        return Err(Refusal::new(
            Refusal::ALLOCATE,
            format!(
                "Cannot get IP/MAC lease from virtual network {}.",
                vnet.id()
            ),
        ));
    };
    let doc = vnet.doc();
    let ar = doc
        .at("AR_POOL/AR")
        .cloned()
        .unwrap_or_else(|| Element::parent("AR", Vec::new()));
    let members = vec![
        ("AR_ID", ar.value_at("AR_ID").to_owned()),
        ("BRIDGE", doc.value_at("BRIDGE").to_owned()),
        ("BRIDGE_TYPE", doc.value_at("BRIDGE_TYPE").to_owned()),
        ("CLUSTER_ID", doc.value_at("CLUSTERS/ID").to_owned()),
        ("DNS", doc.value_at("TEMPLATE/DNS").to_owned()),
        ("GATEWAY", doc.value_at("TEMPLATE/GATEWAY").to_owned()),
        ("IP", ip_at(ar.value_at("IP"), lease)),
        ("MAC", mac_at(ar.value_at("MAC"), lease)),
        ("NAME", format!("NIC{nic_id}")),
        ("NETWORK", doc.value_at("NAME").to_owned()),
        ("NETWORK_ID", vnet.id().to_string()),
        ("NIC_ID", nic_id.to_string()),
        (
            "SECURITY_GROUPS",
            doc.value_at("TEMPLATE/SECURITY_GROUPS").to_owned(),
        ),
        ("TARGET", format!("one-{vm}-{nic_id}")),
        ("VN_MAD", doc.value_at("VN_MAD").to_owned()),
    ];
    Ok((index, lease, vector_attr("NIC", members)))
}

/// The VM's CONTEXT: the sent entries with their `$` variables expanded,
/// ETH* entries for each NIC when NETWORK = YES, and the context disk.
fn expand_context(
    inventory: &Inventory,
    context: Vec<(String, String)>,
    name: &str,
    nics: &[Attr],
    disks: usize,
) -> Vec<(String, String)> {
    let user_template = Template::from_elements(
        inventory
            .user()
            .child("TEMPLATE")
            .map_or(&[], Element::children),
    );
    let mut out: Vec<(String, String)> = context
        .into_iter()
        .map(|(k, v)| (k, expand_variables(&v, name, &user_template)))
        .collect();
    let network = out.iter().any(|(k, v)| k == "NETWORK" && v == "YES");
    if network {
        for (n, nic) in nics.iter().enumerate() {
            let AttrValue::Vector(m) = &nic.value else {
                continue;
            };
            out.extend(eth_entries(inventory, n, m));
        }
    }
    out.retain(|(k, _)| k != "DISK_ID" && k != "TARGET");
    out.push(("DISK_ID".into(), disks.to_string()));
    out.push(("TARGET".into(), device_name("sd", disks)));
    out
}

/// The ETH`n`_* context entries of NIC `nic`.
fn eth_entries(inventory: &Inventory, n: usize, nic: &[(String, String)]) -> Vec<(String, String)> {
    let get = |k: &str| {
        nic.iter()
            .find(|(n, _)| n == k)
            .map_or(String::new(), |(_, v)| v.clone())
    };
    let vnet = inventory
        .vnets()
        .iter()
        .find(|v| v.id().to_string() == get("NETWORK_ID"));
    let vt = |k: &str| {
        vnet.map_or(String::new(), |v| {
            v.doc().value_at(&format!("TEMPLATE/{k}")).to_owned()
        })
    };
    let values = [
        ("DNS", get("DNS")),
        ("EXTERNAL", String::new()),
        ("GATEWAY", get("GATEWAY")),
        ("IP", get("IP")),
        ("IP6", String::new()),
        ("IP6_GATEWAY", String::new()),
        ("IP6_METHOD", String::new()),
        ("IP6_METRIC", String::new()),
        ("IP6_PREFIX_LENGTH", String::new()),
        ("IP6_ULA", String::new()),
        ("MAC", get("MAC")),
        ("MASK", vt("NETWORK_MASK")),
        ("METHOD", String::new()),
        ("METRIC", String::new()),
        ("MTU", String::new()),
        ("NETWORK", vt("NETWORK_ADDRESS")),
        ("ROUTES", String::new()),
        ("SEARCH_DOMAIN", String::new()),
        ("VLAN_ID", String::new()),
        ("VROUTER_IP", String::new()),
        ("VROUTER_IP6", String::new()),
        ("VROUTER_MANAGEMENT", String::new()),
    ];
    values
        .into_iter()
        .map(|(key, value)| (format!("ETH{n}_{key}"), value))
        .collect()
}

fn vector_attr(name: &str, members: Vec<(&str, String)>) -> Attr {
    Attr {
        name: name.to_owned(),
        value: AttrValue::Vector(
            members
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v))
                .collect(),
        ),
    }
}

fn security_group_rule(direction: &str) -> Attr {
    vector_attr(
        "SECURITY_GROUP_RULE",
        vec![
            ("PROTOCOL", "ALL".into()),
            ("RULE_TYPE", direction.into()),
            ("SECURITY_GROUP_ID", "0".into()),
            ("SECURITY_GROUP_NAME", "default".into()),
        ],
    )
}

/// Attributes oned keeps in the VM's TEMPLATE; everything else goes to USER_TEMPLATE.
const SYSTEM_ATTRIBUTES: [&str; 24] = [
    "CPU",
    "VCPU",
    "MEMORY",
    "DISK",
    "NIC",
    "NIC_ALIAS",
    "NIC_DEFAULT",
    "CONTEXT",
    "OS",
    "FEATURES",
    "GRAPHICS",
    "INPUT",
    "RAW",
    "PCI",
    "TOPOLOGY",
    "NUMA_NODE",
    "VIDEO",
    "CPU_MODEL",
    "MEMORY_MAX",
    "VCPU_MAX",
    "SCHED_ACTION",
    "BACKUP_CONFIG",
    "EMULATOR",
    "VMGROUP",
];

fn split_template(template: Template) -> (Template, Template) {
    let (system, user) = template
        .attrs
        .into_iter()
        .partition(|a| SYSTEM_ATTRIBUTES.contains(&a.name.as_str()));
    (Template { attrs: system }, Template { attrs: user })
}

/// Checks an object name like oned (1–128 chars, no forbidden characters).
fn check_name(name: &str) -> Result<(), String> {
    if name.chars().count() > 128 {
        return Err("Invalid NAME, max length is 128 chars".into());
    }
    match name
        .chars()
        .find(|c| "&|:\\\";/'#{}$<>\t\n\r\u{b}\u{c}".contains(*c))
    {
        Some(c) => Err(format!("Invalid NAME, char '{c}' is not allowed")),
        None => Ok(()),
    }
}

/// Expands `$` variables of a CONTEXT value as far as the simulator knows them.
fn expand_variables(value: &str, vm_name: &str, user_template: &Template) -> String {
    let mut out = String::new();
    let mut rest = value;
    while let Some(pos) = rest.find('$') {
        out.push_str(&rest[..pos]);
        let after = &rest[pos + 1..];
        let len = after
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(after.len());
        if len == 0 {
            out.push('$');
            rest = after;
            continue;
        }
        let var = &after[..len];
        let mut tail = &after[len..];
        let mut attr = None;
        if let Some(inner) = tail.strip_prefix('[')
            && let Some(close) = inner.find(']')
        {
            attr = Some(inner[..close].trim().to_owned());
            tail = &inner[close + 1..];
        }
        let expanded = match (var, attr) {
            ("NAME", None) => vm_name.to_owned(),
            ("UID" | "GID", None) => "0".to_owned(),
            ("UNAME" | "GNAME", None) => "oneadmin".to_owned(),
            ("USER", Some(a)) => user_template.single(&a).unwrap_or("").to_owned(),
            _ => String::new(),
        };
        out.push_str(&expanded);
        rest = tail;
    }
    out.push_str(rest);
    out
}

fn device_name(prefix: &str, index: usize) -> String {
    let letter = char::from(b'a' + u8::try_from(index % 26).unwrap_or(0));
    format!("{prefix}{letter}")
}

fn generated_uuid(id: i32, now: i64) -> String {
    let a = u64::try_from(now)
        .unwrap_or(0)
        .wrapping_mul(0x9e37_79b9_7f4a_7c15)
        ^ u64::try_from(id).unwrap_or(0);
    let b = a.rotate_left(29).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    format!(
        "{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}",
        a >> 32,
        (a >> 16) & 0xffff,
        a & 0xfff,
        b >> 52,
        b & 0xffff_ffff_ffff
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_checked() {
        assert_eq!(
            check_name("urn:x").unwrap_err(),
            "Invalid NAME, char ':' is not allowed"
        );
        assert!(check_name("geni-node-0").is_ok());
    }
}
