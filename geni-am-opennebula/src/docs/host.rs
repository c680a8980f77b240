//! The HOST document (`one.host.info`) and host pools (`one.hostpool.info`)
//! with the capacity the scheduler allocates against (the OpenNebula XML-RPC API
//! reference).
//! Capacity comes from `HOST_SHARE` MAX_* and *_USAGE, which every version
//! carries; the measured FREE_*/USED_* (5.x `HOST_SHARE`, 5.12+
//! `MONITORING`) are not what the scheduler counts and are not read.

use super::DocError;
use super::element::{Element, parse_object, parse_pool};

/// What the driver reads from a HOST document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostDoc {
    /// `ID`.
    pub id: i64,
    /// `NAME` (empty when absent).
    pub name: String,
    /// `STATE`: 0 INIT, 1 MONITORING_MONITORED (≤5.10), 2 MONITORED,
    /// 3 ERROR, 4 DISABLED, 5–7 MONITORING_* (≤5.10), 8 OFFLINE.
    pub state: i64,
    /// `CLUSTER_ID`; -1 (no cluster) for 2.x/3.x bodies without one.
    pub cluster_id: i64,
    /// `HOST_SHARE/MAX_CPU`: allocatable CPU × 100.
    pub max_cpu: i64,
    /// `HOST_SHARE/CPU_USAGE`: CPU × 100 allocated to placed VMs.
    pub cpu_usage: i64,
    /// `HOST_SHARE/MAX_MEM`: allocatable memory in KiB.
    pub max_mem_kib: i64,
    /// `HOST_SHARE/MEM_USAGE`: memory in KiB allocated to placed VMs.
    pub mem_usage_kib: i64,
    /// `HOST_SHARE/RUNNING_VMS` (0 when absent).
    pub running_vms: i64,
    /// The hypervisor oned reports: the monitored `TEMPLATE/HYPERVISOR`,
    /// else the host's `VM_MAD`, else its `IM_MAD` (`kvm`, `lxc`, `dummy`
    /// …); `None` when the document names none.
    pub hypervisor: Option<String>,
}

impl HostDoc {
    /// Whether the scheduler places VMs here: STATE 2 MONITORED, or 1
    /// MONITORING_MONITORED (a monitored host being re-monitored, ≤5.10).
    pub fn is_usable(&self) -> bool {
        matches!(self.state, 1 | 2)
    }

    /// Unallocated CPUs: (MAX_CPU − CPU_USAGE) / 100, never negative.
    pub fn free_cpus(&self) -> f64 {
        (self.max_cpu - self.cpu_usage).max(0) as f64 / 100.0
    }

    /// Unallocated memory in MiB: (MAX_MEM − MEM_USAGE) / 1024, never
    /// negative.
    pub fn free_mem_mib(&self) -> u64 {
        u64::try_from(self.max_mem_kib - self.mem_usage_kib).unwrap_or(0) / 1024
    }

    /// Whether a VM of `cpus` CPUs and `memory_mb` MiB fits in the
    /// unallocated capacity.
    pub fn has_room_for(&self, cpus: f64, memory_mb: u64) -> bool {
        cpus <= self.free_cpus() && memory_mb <= self.free_mem_mib()
    }
}

/// Parses a `<HOST>` document (`one.host.info`).
pub fn parse_host(xml: &str) -> Result<HostDoc, DocError> {
    parse_object(xml, "HOST", read_host)
}

/// Parses a `<HOST_POOL>` document (`one.hostpool.info`).
pub fn parse_host_pool(xml: &str) -> Result<Vec<HostDoc>, DocError> {
    parse_pool(xml, "HOST_POOL", "HOST", read_host)
}

fn read_host(host: Element<'_>) -> Result<HostDoc, DocError> {
    let share = host
        .child("HOST_SHARE")
        .ok_or_else(|| host.missing("HOST_SHARE"))?;
    Ok(HostDoc {
        id: host.int("ID")?,
        name: host.text_or_empty("NAME"),
        state: host.int("STATE")?,
        cluster_id: host.int_or("CLUSTER_ID", -1)?,
        max_cpu: share.int("MAX_CPU")?,
        cpu_usage: share.int("CPU_USAGE")?,
        max_mem_kib: share.int("MAX_MEM")?,
        mem_usage_kib: share.int("MEM_USAGE")?,
        running_vms: share.int_or("RUNNING_VMS", 0)?,
        hypervisor: host
            .child("TEMPLATE")
            .and_then(|t| t.text("HYPERVISOR"))
            .or_else(|| host.text("VM_MAD"))
            .or_else(|| host.text("IM_MAD"))
            .map(|h| h.trim().to_owned())
            .filter(|h| !h.is_empty()),
    })
}
