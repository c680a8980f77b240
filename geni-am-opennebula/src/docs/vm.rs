//! The VM document (`one.vm.info`, `<VM>`) and VM pools
//! (`one.vmpool.info` reduced bodies, `one.vmpool.infoextended` and
//! `one.vmpool.infoset` full ones), as the OpenNebula
//! XML-RPC API reference describes them.

use super::DocError;
use super::element::{Element, parse_object, parse_pool};
use super::phase::{VmPhase, phase};

/// What the driver reads from a VM document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VmDoc {
    /// `ID`.
    pub id: i64,
    /// `NAME` (empty when absent).
    pub name: String,
    /// `UID`, the owner (-1 when absent).
    pub uid: i64,
    /// `STATE` (the OpenNebula Virtual Machine States reference).
    pub state: i64,
    /// `LCM_STATE`, meaningful when `STATE` is 3 ACTIVE.
    pub lcm_state: i64,
    /// `STIME`, epoch seconds of creation (0 when absent).
    pub stime: i64,
    /// `ETIME`, epoch seconds of the end; 0 until DONE.
    pub etime: i64,
    /// `USER_TEMPLATE/LABELS`, which reduced pool bodies keep.
    pub labels: Option<String>,
    /// The single-valued `USER_TEMPLATE` attributes, in document order.
    /// Reduced pool bodies only carry a fixed subset (`one.vmpool.info`).
    pub user_template: Vec<(String, String)>,
    /// `USER_TEMPLATE/ERROR`: `<date>: <driver message>`.
    pub error: Option<String>,
    /// `USER_TEMPLATE/SCHED_MESSAGE`: `<date>: <why it is not placed>`.
    pub sched_message: Option<String>,
    /// `TEMPLATE/CONTEXT`, in document order; empty in reduced bodies.
    pub context: Vec<(String, String)>,
    /// `TEMPLATE/NIC`, in document order.
    pub nics: Vec<NicDoc>,
    /// (`HID`, `HOSTNAME`) of the `HISTORY` record with the highest `SEQ`:
    /// the current or last host. `None` before the first placement.
    pub host: Option<(i64, String)>,
    /// `TEMPLATE/TEMPLATE_ID`, the template it was instantiated from.
    pub template_id: Option<i64>,
    /// `TEMPLATE/CPU`, the CPU share the scheduler allocates, × 100 (0
    /// when absent or unreadable), as `HOST_SHARE/CPU_USAGE` counts it.
    pub cpu_share: i64,
    /// `TEMPLATE/MEMORY` in MiB (0 when absent).
    pub memory_mib: i64,
}

/// One `TEMPLATE/NIC` of a VM.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NicDoc {
    /// `NIC_ID`; NICs of 2.x/3.x bodies have none and are numbered by
    /// position, as oned numbers them.
    pub nic_id: i64,
    /// `NETWORK_ID`.
    pub network_id: Option<i64>,
    /// `NETWORK`, the virtual network's name (empty when absent).
    pub network: String,
    /// `IP` (IPv4), set at allocation time.
    pub ip: Option<String>,
    /// `MAC`.
    pub mac: Option<String>,
}

impl VmDoc {
    /// Whether the VM holds capacity on its host: ACTIVE, SUSPENDED and
    /// POWEROFF VMs keep their allocation (`HOST_SHARE/*_USAGE`); PENDING,
    /// HOLD, STOPPED, UNDEPLOYED and DONE ones have none.
    pub fn holds_capacity(&self) -> bool {
        matches!(self.state, 3 | 5 | 8) && self.host.is_some()
    }

    /// The life-cycle phase of this VM (see [`phase`]).
    pub fn phase(&self) -> VmPhase {
        phase(self.state, self.lcm_state)
    }

    /// What oned says went wrong, as it wrote it (date prefix kept): the
    /// `ERROR` text when the VM failed, the `SCHED_MESSAGE` while it waits
    /// for placement. `None` in other phases, where a leftover text would be
    /// stale.
    pub fn failure_message(&self) -> Option<String> {
        match self.phase() {
            VmPhase::Failed => self.error.clone(),
            VmPhase::Pending => self.sched_message.clone(),
            _ => None,
        }
    }
}

/// Parses a `<VM>` document (`one.vm.info`).
pub fn parse_vm(xml: &str) -> Result<VmDoc, DocError> {
    parse_object(xml, "VM", read_vm)
}

/// Parses a `<VM_POOL>` document, with full or reduced bodies.
pub fn parse_vm_pool(xml: &str) -> Result<Vec<VmDoc>, DocError> {
    parse_pool(xml, "VM_POOL", "VM", read_vm)
}

fn read_vm(vm: Element<'_>) -> Result<VmDoc, DocError> {
    let template = vm.child("TEMPLATE");
    let user_template = vm.child("USER_TEMPLATE");
    let user_text = |name: &str| user_template.and_then(|u| u.text(name));
    let nics = match template {
        Some(t) => t
            .children("NIC")
            .enumerate()
            .map(|(position, nic)| read_nic(nic, position))
            .collect::<Result<_, _>>()?,
        None => Vec::new(),
    };
    Ok(VmDoc {
        id: vm.int("ID")?,
        name: vm.text_or_empty("NAME"),
        uid: vm.int_or("UID", -1)?,
        state: vm.int("STATE")?,
        lcm_state: vm.int("LCM_STATE")?,
        stime: vm.int_or("STIME", 0)?,
        etime: vm.int_or("ETIME", 0)?,
        labels: user_text("LABELS"),
        user_template: user_template.map(|u| u.attributes()).unwrap_or_default(),
        error: user_text("ERROR"),
        sched_message: user_text("SCHED_MESSAGE"),
        context: template
            .map(|t| t.child_attributes("CONTEXT"))
            .unwrap_or_default(),
        nics,
        host: current_host(vm)?,
        template_id: match template {
            Some(t) => t.opt_int("TEMPLATE_ID")?,
            None => None,
        },
        cpu_share: (number(template, "CPU") * 100.0).round() as i64,
        memory_mib: number(template, "MEMORY").round() as i64,
    })
}

/// The number in `TEMPLATE/<name>`, which users may write with a
/// fraction; 0 when absent or unreadable (a size never fails a pool read).
fn number(template: Option<Element<'_>>, name: &str) -> f64 {
    template
        .and_then(|t| t.text(name))
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|v| v.is_finite() && *v >= 0.0)
        .unwrap_or(0.0)
}

fn read_nic(nic: Element<'_>, position: usize) -> Result<NicDoc, DocError> {
    Ok(NicDoc {
        nic_id: nic.int_or("NIC_ID", position as i64)?,
        network_id: nic.opt_int("NETWORK_ID")?,
        network: nic.text_or_empty("NETWORK"),
        ip: nic.text("IP"),
        mac: nic.text("MAC"),
    })
}

/// The (HID, HOSTNAME) of the history record with the highest SEQ.
fn current_host(vm: Element<'_>) -> Result<Option<(i64, String)>, DocError> {
    let Some(records) = vm.child("HISTORY_RECORDS") else {
        return Ok(None);
    };
    let mut latest: Option<(i64, Element<'_>)> = None;
    for history in records.children("HISTORY") {
        let seq = history.int_or("SEQ", 0)?;
        if latest.is_none_or(|(best, _)| seq >= best) {
            latest = Some((seq, history));
        }
    }
    latest
        .map(|(_, h)| Ok((h.int("HID")?, h.text_or_empty("HOSTNAME"))))
        .transpose()
}
