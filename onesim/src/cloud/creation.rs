//! Creating a VM as oned does: capacity attributes checked, the name
//! validated, DISKs expanded from their images, NIC leases taken from the
//! networks' address ranges, CONTEXT expanded with the generated ETH* entries,
//! and the template split into TEMPLATE and USER_TEMPLATE.

use super::{Cloud, Lease, Refusal, Step, Vm, Vnet, ip_at, ip_index, lcm, mac_at, state};
use crate::template::{AttrValue, Template};
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
        let memory = template
            .single("MEMORY")
            .and_then(|m| m.trim().parse::<i64>().ok())
            .filter(|m| *m > 0)
            .ok_or_else(|| {
                Refusal::new(8192, "MEMORY attribute must be a positive integer value.")
            })?;
        let cpu = template
            .single("CPU")
            .and_then(|c| c.trim().parse::<f64>().ok())
            .filter(|c| *c > 0.0)
            .ok_or_else(|| {
                Refusal::new(
                    8192,
                    "CPU attribute must be a positive float or integer value.",
                )
            })?;
        if let Some(quota) = self.quota {
            let live = self
                .vms
                .values()
                .filter(|vm| vm.state != state::DONE)
                .count();
            if live >= quota.vms {
                return Err(Refusal::new(
                    512,
                    format!(
                        "User [0] : user [0] limit of {} reached for VMS quota in VM.",
                        quota.vms
                    ),
                ));
            }
        }
        let id = self.next_vm_id;
        let name = template
            .take("NAME")
            .into_iter()
            .find_map(|a| match a.value {
                AttrValue::Single(v) => Some(v),
                AttrValue::Vector(_) => None,
            });
        let name = match name {
            Some(n) if !n.is_empty() => {
                check_name(&n).map_err(|e| {
                    Refusal::new(
                        16384,
                        format!("Error allocating a new virtual machine. {e}"),
                    )
                })?;
                n
            }
            _ => match template_id.and_then(|t| self.templates.get(t as usize)) {
                Some(t) => format!("{}-{id}", t.value_at("NAME")),
                None => format!("one-{id}"),
            },
        };
        let disks = self.expand_disks(&template)?;
        let nics = self.lease_nics(&template, id)?;
        let (system, user) = split_template(template);
        let mut vm_template = system;
        let any_nic = !nics.is_empty();
        vm_template.take("DISK");
        vm_template.take("NIC");
        let context = vm_template.take("CONTEXT");
        let disk_count = disks.len();
        for disk in disks {
            vm_template.attrs.push(disk);
        }
        for nic in &nics {
            vm_template.attrs.push(nic.clone());
        }
        if let Some(ctx) = context.into_iter().find_map(|a| match a.value {
            AttrValue::Vector(v) => Some(v),
            AttrValue::Single(_) => None,
        }) {
            let ctx = self.expand_context(ctx, &name, &nics, disk_count);
            vm_template.attrs.push(crate::template::Attr {
                name: "CONTEXT".into(),
                value: AttrValue::Vector(ctx),
            });
        }
        if any_nic || disk_count > 0 {
            vm_template.set("AUTOMATIC_DS_REQUIREMENTS", "(\"CLUSTERS/ID\" @> 0)");
            vm_template.set(
                "AUTOMATIC_REQUIREMENTS",
                "(CLUSTER_ID = 0) & !(PIN_POLICY = PINNED)",
            );
        } else {
            vm_template.set("AUTOMATIC_REQUIREMENTS", "!(PIN_POLICY = PINNED)");
        }
        if any_nic {
            vm_template.set("AUTOMATIC_NIC_REQUIREMENTS", "(\"CLUSTERS/ID\" @> 0)");
            vm_template.attrs.push(security_group_rule("OUTBOUND"));
            vm_template.attrs.push(security_group_rule("INBOUND"));
        }
        if self.version.vm_has_backups() {
            let uuid = self
                .uuids
                .pop_front()
                .unwrap_or_else(|| generated_uuid(id, self.now_ms()));
            let os = vm_template
                .take("OS")
                .into_iter()
                .find_map(|a| match a.value {
                    AttrValue::Vector(v) => Some(v),
                    AttrValue::Single(_) => None,
                });
            let mut os = os.unwrap_or_default();
            if !os.iter().any(|(n, _)| n == "MACHINE") {
                os.push(("MACHINE".into(), "q35".into()));
            }
            os.retain(|(n, _)| n != "UUID");
            os.push(("UUID".into(), uuid));
            vm_template.attrs.push(crate::template::Attr {
                name: "OS".into(),
                value: AttrValue::Vector(os),
            });
        }
        if let Some(t) = template_id {
            vm_template.set("TEMPLATE_ID", t.to_string());
        }
        vm_template.set("VMID", id.to_string());
        let now = self.now_ms();
        let fail_boot = self.failing_boots > 0;
        self.failing_boots = self.failing_boots.saturating_sub(1);
        let vm = Vm {
            id,
            name,
            state: if hold { state::HOLD } else { state::PENDING },
            lcm: lcm::INIT,
            stime: now / 1000,
            etime: 0,
            deploy_id: String::new(),
            template: vm_template,
            user_template: user,
            history: Vec::new(),
            cpu,
            memory,
            monitoring: Vec::new(),
            last_poll: 0,
            next: (!hold).then_some((now + Self::delay_ms(self.delays.schedule), Step::Schedule)),
            fail_boot,
        };
        self.vms.insert(id, vm);
        self.next_vm_id += 1;
        Ok(id)
    }

    fn expand_disks(&self, template: &Template) -> Result<Vec<crate::template::Attr>, Refusal> {
        let mut disks = Vec::new();
        for (disk_id, disk) in template.vectors("DISK").enumerate() {
            let get = |n: &str| disk.iter().find(|(k, _)| k == n).map(|(_, v)| v.as_str());
            let image = match (get("IMAGE_ID"), get("IMAGE")) {
                (Some(id), _) => {
                    let found = self.images.iter().find(|i| i.value_at("ID") == id.trim());
                    found.ok_or_else(|| {
                        Refusal::new(8192, format!("Error getting image [{}].", id.trim()))
                    })?
                }
                (None, Some(name)) => self
                    .images
                    .iter()
                    .find(|i| i.value_at("NAME") == name)
                    .ok_or_else(|| {
                        Refusal::new(8192, format!("Error getting image \"{name}\"."))
                    })?,
                (None, None) => return Err(Refusal::new(8192, "DISK with no IMAGE or IMAGE_ID.")),
            };
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
            disks.push(vector_attr("DISK", members));
        }
        Ok(disks)
    }

    fn lease_nics(
        &mut self,
        template: &Template,
        vm: i32,
    ) -> Result<Vec<crate::template::Attr>, Refusal> {
        let requests: Vec<Vec<(String, String)>> =
            template.vectors("NIC").map(<[_]>::to_vec).collect();
        let mut taken: Vec<(usize, u32)> = Vec::new();
        let mut nics = Vec::new();
        for (nic_id, request) in requests.iter().enumerate() {
            let get = |n: &str| {
                request
                    .iter()
                    .find(|(k, _)| k == n)
                    .map(|(_, v)| v.trim().to_owned())
            };
            let vnet_index = match (get("NETWORK_ID"), get("NETWORK")) {
                (Some(id), _) => self.vnets.iter().position(|v| v.id.to_string() == id),
                (None, Some(name)) => self
                    .vnets
                    .iter()
                    .position(|v| v.doc.value_at("NAME") == name),
                (None, None) => None,
            };
            let Some(vnet_index) = vnet_index else {
                self.release_taken(&taken);
                let id = get("NETWORK_ID")
                    .or_else(|| get("NETWORK"))
                    .unwrap_or_default();
                return Err(Refusal::new(
                    8192,
                    format!("Virtual network with ID: {id} does not exist"),
                ));
            };
            let lease = match self.take_lease(vnet_index, vm, get("IP").as_deref()) {
                Some(index) => index,
                None => {
                    self.release_taken(&taken);
                    let id = self.vnets[vnet_index].id;
                    return Err(Refusal::new(
                        16384,
                        format!("Cannot get IP/MAC lease from virtual network {id}."),
                    ));
                }
            };
            taken.push((vnet_index, lease));
            let vnet = &self.vnets[vnet_index];
            let ar = vnet
                .doc
                .at("AR_POOL/AR")
                .cloned()
                .unwrap_or_else(|| Element::parent("AR", Vec::new()));
            let members = vec![
                ("AR_ID", ar.value_at("AR_ID").to_owned()),
                ("BRIDGE", vnet.doc.value_at("BRIDGE").to_owned()),
                ("BRIDGE_TYPE", vnet.doc.value_at("BRIDGE_TYPE").to_owned()),
                ("CLUSTER_ID", vnet.doc.value_at("CLUSTERS/ID").to_owned()),
                ("DNS", vnet.doc.value_at("TEMPLATE/DNS").to_owned()),
                ("GATEWAY", vnet.doc.value_at("TEMPLATE/GATEWAY").to_owned()),
                ("IP", ip_at(ar.value_at("IP"), lease)),
                ("MAC", mac_at(ar.value_at("MAC"), lease)),
                ("NAME", format!("NIC{nic_id}")),
                ("NETWORK", vnet.doc.value_at("NAME").to_owned()),
                ("NETWORK_ID", vnet.id.to_string()),
                ("NIC_ID", nic_id.to_string()),
                (
                    "SECURITY_GROUPS",
                    vnet.doc.value_at("TEMPLATE/SECURITY_GROUPS").to_owned(),
                ),
                ("TARGET", format!("one-{vm}-{nic_id}")),
                ("VN_MAD", vnet.doc.value_at("VN_MAD").to_owned()),
            ];
            nics.push(vector_attr("NIC", members));
        }
        Ok(nics)
    }

    fn release_taken(&mut self, taken: &[(usize, u32)]) {
        for (vnet, index) in taken {
            self.vnets[*vnet].leases.retain(|l| l.index != *index);
        }
    }

    /// Takes a lease: the requested IP if free, else the next free index from NEXT_INDEX.
    fn take_lease(
        &mut self,
        vnet_index: usize,
        vm: i32,
        requested_ip: Option<&str>,
    ) -> Option<u32> {
        let vnet = &mut self.vnets[vnet_index];
        let first_ip = vnet.doc.value_at("AR_POOL/AR/IP").to_owned();
        let used = |vnet: &Vnet, index: u32| vnet.leases.iter().any(|l| l.index == index);
        let index = match requested_ip {
            Some(ip) => {
                let index = ip_index(&first_ip, ip).filter(|i| *i < vnet.size)?;
                (!used(vnet, index)).then_some(index)?
            }
            None => (0..vnet.size)
                .map(|k| (vnet.next_index + k) % vnet.size.max(1))
                .find(|i| !used(vnet, *i))?,
        };
        if requested_ip.is_none() {
            vnet.next_index = index + 1;
        }
        vnet.leases.push(Lease { index, vm });
        vnet.ever_leased = true;
        Some(index)
    }

    fn expand_context(
        &self,
        context: Vec<(String, String)>,
        name: &str,
        nics: &[crate::template::Attr],
        disks: usize,
    ) -> Vec<(String, String)> {
        let user_template =
            Template::from_elements(self.user.child("TEMPLATE").map_or(&[], Element::children));
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
                let get = |k: &str| {
                    m.iter()
                        .find(|(n, _)| n == k)
                        .map_or(String::new(), |(_, v)| v.clone())
                };
                let vnet = self
                    .vnets
                    .iter()
                    .find(|v| v.id.to_string() == get("NETWORK_ID"));
                let vt = |k: &str| {
                    vnet.map_or(String::new(), |v| {
                        v.doc.value_at(&format!("TEMPLATE/{k}")).to_owned()
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
                for (key, value) in values {
                    out.push((format!("ETH{n}_{key}"), value));
                }
            }
        }
        out.retain(|(k, _)| k != "DISK_ID" && k != "TARGET");
        out.push(("DISK_ID".into(), disks.to_string()));
        out.push(("TARGET".into(), device_name("sd", disks)));
        out
    }
}

fn vector_attr(name: &str, members: Vec<(&str, String)>) -> crate::template::Attr {
    crate::template::Attr {
        name: name.to_owned(),
        value: AttrValue::Vector(
            members
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v))
                .collect(),
        ),
    }
}

fn security_group_rule(direction: &str) -> crate::template::Attr {
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
pub fn check_name(name: &str) -> Result<(), String> {
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
    fn leases_count_from_the_first_address() {
        assert_eq!(ip_index("10.10.0.10", "10.10.0.15"), Some(5));
        assert_eq!(ip_index("10.10.0.10", "10.10.0.9"), None);
    }

    #[test]
    fn names_are_checked() {
        assert_eq!(
            check_name("urn:x").unwrap_err(),
            "Invalid NAME, char ':' is not allowed"
        );
        assert!(check_name("geni-node-0").is_ok());
    }
}
