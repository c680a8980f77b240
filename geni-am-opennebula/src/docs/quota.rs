//! The quotas of a USER document (`VM_QUOTA`, `NETWORK_QUOTA`), as
//! `geni-am backend check` reports them. A limit is written as a number,
//! `-1` (the default quota applies) or `-2` (unlimited); an empty quota
//! element means no quota is set.

use super::DocError;
use super::element::Element;

/// One quota limit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Limit {
    /// `-1`: the default quota of `oned.conf` / `oneuser defaultquota` applies.
    Default,
    /// `-2`: no limit.
    Unlimited,
    /// A number (VMs, CPUs, MiB or leases).
    At(f64),
}

/// A limit and how much of it is used.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Usage {
    /// The limit.
    pub limit: Limit,
    /// What is in use.
    pub used: f64,
}

impl Usage {
    /// What is left under a numeric limit; `None` when not limited here.
    pub fn left(&self) -> Option<f64> {
        match self.limit {
            Limit::At(limit) => Some((limit - self.used).max(0.0)),
            Limit::Default | Limit::Unlimited => None,
        }
    }
}

/// The `VM_QUOTA/VM` entry: limits on the account's VMs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VmQuota {
    /// `VMS` / `VMS_USED`.
    pub vms: Usage,
    /// `CPU` / `CPU_USED`.
    pub cpu: Usage,
    /// `MEMORY` / `MEMORY_USED`, in MiB.
    pub memory_mb: Usage,
}

/// One `NETWORK_QUOTA/NETWORK` entry: address leases on one network.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NetworkQuota {
    /// The network `ID`.
    pub network: i64,
    /// `LEASES` / `LEASES_USED`.
    pub leases: Usage,
}

/// The quotas of one user.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Quotas {
    /// The VM quota, when one is set (7.x may set one per cluster set; the
    /// first is read).
    pub vm: Option<VmQuota>,
    /// The network quotas, one per network that has one.
    pub networks: Vec<NetworkQuota>,
}

/// Reads the quotas below a `<USER>` element.
pub(super) fn read_quotas(user: Element<'_>) -> Result<Quotas, DocError> {
    let vm = user
        .child("VM_QUOTA")
        .and_then(|q| q.child("VM"))
        .map(|vm| {
            Ok::<_, DocError>(VmQuota {
                vms: usage(vm, "VMS")?,
                cpu: usage(vm, "CPU")?,
                memory_mb: usage(vm, "MEMORY")?,
            })
        })
        .transpose()?;
    let networks = match user.child("NETWORK_QUOTA") {
        Some(quota) => quota
            .children("NETWORK")
            .map(|net| {
                Ok(NetworkQuota {
                    network: net.int("ID")?,
                    leases: usage(net, "LEASES")?,
                })
            })
            .collect::<Result<_, DocError>>()?,
        None => Vec::new(),
    };
    Ok(Quotas { vm, networks })
}

/// The limit in `name` and the use in `name_USED`.
fn usage(entry: Element<'_>, name: &str) -> Result<Usage, DocError> {
    let number = |key: &str| -> Result<f64, DocError> {
        entry
            .text(key)
            .and_then(|text| text.trim().parse::<f64>().ok())
            .filter(|n| n.is_finite())
            .ok_or_else(|| entry.missing(key))
    };
    let written = number(name)?;
    let limit = if written == -1.0 {
        Limit::Default
    } else if written == -2.0 {
        Limit::Unlimited
    } else {
        Limit::At(written)
    };
    Ok(Usage {
        limit,
        used: number(&format!("{name}_USED"))?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::docs::parse_user;

    fn recorded(path: &str) -> String {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../shared/opennebula/recorded");
        std::fs::read_to_string(dir.join(path)).unwrap()
    }

    #[test]
    fn empty_quota_elements_of_the_recorded_users_set_no_quota() {
        for path in [
            "oned-7.4.0/user.info-self.payload.xml",
            "quattor-4.x/one.user.info__rpc_list_user.xml",
        ] {
            let user = parse_user(&recorded(path)).unwrap();
            assert_eq!(user.quotas, Quotas::default(), "{path}");
        }
        let admin = parse_user(&recorded("oned-7.4.0/user.info-self.payload.xml")).unwrap();
        assert!(admin.in_oneadmin_group());
        assert_eq!(admin.group_name, "oneadmin");
    }

    /// A 6.10 user (layout of the official user.xsd) in group `geni`
    /// with a VM quota and a lease quota on network 1.
    const LIMITED: &str = "<USER><ID>5</ID><GID>100</GID><GROUPS><ID>100</ID></GROUPS>\
        <GNAME>geni</GNAME><NAME>geni-am</NAME><NETWORK_QUOTA><NETWORK><ID>1</ID>\
        <LEASES>64</LEASES><LEASES_USED>60</LEASES_USED></NETWORK></NETWORK_QUOTA>\
        <VM_QUOTA><VM><CPU>-2</CPU><CPU_USED>1.5</CPU_USED><MEMORY>-1</MEMORY>\
        <MEMORY_USED>3072</MEMORY_USED><RUNNING_CPU>-1</RUNNING_CPU><RUNNING_CPU_USED>0</RUNNING_CPU_USED>\
        <RUNNING_MEMORY>-1</RUNNING_MEMORY><RUNNING_MEMORY_USED>0</RUNNING_MEMORY_USED>\
        <RUNNING_VMS>-1</RUNNING_VMS><RUNNING_VMS_USED>0</RUNNING_VMS_USED>\
        <SYSTEM_DISK_SIZE>-1</SYSTEM_DISK_SIZE><SYSTEM_DISK_SIZE_USED>0</SYSTEM_DISK_SIZE_USED>\
        <VMS>10</VMS><VMS_USED>3</VMS_USED></VM></VM_QUOTA></USER>";

    #[test]
    fn limits_default_and_unlimited_values_are_told_apart() {
        let user = parse_user(LIMITED).unwrap();
        assert!(!user.in_oneadmin_group());
        let vm = user.quotas.vm.unwrap();
        assert_eq!(vm.vms.limit, Limit::At(10.0));
        assert_eq!(vm.vms.left(), Some(7.0));
        assert_eq!(vm.cpu.limit, Limit::Unlimited);
        assert_eq!(vm.memory_mb.limit, Limit::Default);
        assert_eq!(vm.memory_mb.left(), None);
        assert_eq!(user.quotas.networks[0].network, 1);
        assert_eq!(user.quotas.networks[0].leases.left(), Some(4.0));
    }

    #[test]
    fn a_quota_without_its_use_is_refused_with_its_path() {
        let broken = LIMITED.replace("<VMS_USED>3</VMS_USED>", "");
        let err = parse_user(&broken).unwrap_err();
        assert!(
            err.to_string().contains("USER/VM_QUOTA/VM/VMS_USED"),
            "{err}"
        );
    }
}
