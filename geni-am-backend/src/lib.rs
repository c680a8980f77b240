//! The compute backend of geni-am: the [`Compute`] trait the aggregate's
//! jobs drive, and the types it speaks (inventory, VM specifications and
//! observations, networks, errors).
//!
//! A backend is a cloud seen through a small, synchronous, idempotent API:
//! every VM the aggregate creates carries a unique tag (the sliver URN), so
//! creation can be retried after a crash by first searching for the tag, and
//! the reconciler can list the VMs that belong to the aggregate. The
//! in-process [`sim::SimulatedCloud`] implements it for tests and first runs;
//! the OpenNebula driver of the `geni-am-opennebula` crate (create on hold
//! with a tag label, search by label, terminate-hard, one virtual network per
//! link, CONTEXT update for keys) implements the same trait.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod check;
pub mod components;
pub mod naming;
pub mod sim;

pub use geni_rspec::VmSize;
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// A backend configuration section the backend cannot be built with.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{key}: {problem}")]
pub struct BackendConfigError {
    /// Dotted path of the key, e.g. `backend.opennebula.endpoint`.
    pub key: String,
    /// What is wrong and what is expected.
    pub problem: String,
}

impl From<sim::config::SimConfigError> for BackendConfigError {
    fn from(err: sim::config::SimConfigError) -> Self {
        BackendConfigError {
            key: err.key,
            problem: err.problem,
        }
    }
}

/// One user's SSH keys (`geni_users` entries).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserKeys {
    /// The user's URN.
    pub urn: String,
    /// OpenSSH public keys; may be empty (locks the user out).
    pub keys: Vec<String>,
}

/// A range of IPv4 addresses, first to last inclusive: one address range
/// of the network links are reserved from, so a link's requested
/// addresses can be checked at Allocate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct AddressRange {
    /// The first address of the range.
    pub first: std::net::Ipv4Addr,
    /// The last address of the range.
    pub last: std::net::Ipv4Addr,
}

impl AddressRange {
    /// The `size` addresses from `first` (`None` when `size` is 0 or the
    /// range would run past 255.255.255.255).
    pub fn starting_at(first: std::net::Ipv4Addr, size: u32) -> Option<AddressRange> {
        let last = u32::from(first).checked_add(size.checked_sub(1)?)?;
        Some(AddressRange {
            first,
            last: last.into(),
        })
    }

    /// Whether `ip` lies in the range.
    pub fn contains(&self, ip: std::net::Ipv4Addr) -> bool {
        (self.first..=self.last).contains(&ip)
    }
}

impl std::fmt::Display for AddressRange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.first == self.last {
            write!(f, "{}", self.first)
        } else {
            write!(f, "{}–{}", self.first, self.last)
        }
    }
}

/// A DNS label from a VM name (a `client_id`): lower-case letters, digits
/// and `-`, at most `max` characters, `vm` when nothing is left.
pub fn host_label(name: &str, max: usize) -> String {
    let label: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .take(max)
        .collect();
    let label = label.trim_matches('-');
    if label.is_empty() {
        "vm".to_owned()
    } else {
        label.to_owned()
    }
}

/// What the cloud offers: the physical hosts and the VM flavours.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inventory {
    /// Hosts VMs can be placed on.
    pub hosts: Vec<Host>,
    /// Sliver types (VM flavours) a request may name.
    pub sliver_types: Vec<SliverType>,
    /// The IPv4 address ranges a link's requested addresses must lie in
    /// (those of the network links are reserved from); `None` when the
    /// cloud places any address a request asks for.
    pub link_ranges: Option<Vec<AddressRange>>,
}

/// The hardware type of a host of VMs whose hypervisor is not known
/// otherwise (every host of the simulated cloud).
pub const HARDWARE_TYPE: &str = "kvm-host";

/// One physical host of the cloud.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Host {
    /// The host's component URN (`urn:publicid:IDN+<authority>+node+<name>`).
    pub component_id: String,
    /// The host's short name, as the advertisement shows it.
    pub name: String,
    /// CPU capacity available to VMs, in the unit the cloud's scheduler
    /// counts and [`SliverType::cpus`] uses: whole cores for the simulated
    /// cloud, hundredths of a CPU share (`MAX_CPU`) for OpenNebula.
    pub cpus: u32,
    /// Memory available to VMs, in MiB.
    pub memory_mb: u64,
    /// The most VMs the host runs at once.
    pub max_vms: u32,
    /// The hardware type advertised for it (e.g. `kvm-host`).
    pub hardware_type: String,
    /// Whether the host can take another VM now (a cloud shared with
    /// others may have filled it); unavailable hosts are advertised as such.
    pub available: bool,
}

/// A VM flavour a request can ask for by name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SliverType {
    /// The `sliver_type` name used in RSpecs (e.g. `xen-vm`, `small`).
    pub name: String,
    /// CPU capacity one VM of this type takes, in the unit of
    /// [`Host::cpus`].
    pub cpus: u32,
    /// Cores (VCPUs) one VM of this type has unless a request sizes it.
    pub cores: u32,
    /// Memory one VM of this type takes, in MiB.
    pub memory_mb: u64,
    /// The largest size a request may give one VM of this type
    /// (`max_cores`, `max_ram_mb`, `max_disk_gb` of the configuration; a
    /// disk size only when `max_disk_gb` is set).
    pub max_size: VmSize,
    /// Disk images this type can boot; the first is the default.
    pub disk_images: Vec<DiskImage>,
}

/// A bootable disk image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiskImage {
    /// The image name or URN used in RSpecs (`disk_image name=…`).
    pub name: String,
    /// Operating system family (e.g. `Linux`).
    pub os: String,
    /// Operating system version (e.g. `22.04`).
    pub version: String,
    /// A sentence describing the image.
    pub description: String,
}

/// The largest size of a sliver type of `cores` and `ram_mb`: the
/// configured bounds, each defaulting to the type's own size (no disk
/// size unless `max_disk_gb` is set).
pub fn max_size(
    cores: u32,
    ram_mb: u64,
    max_cores: Option<u32>,
    max_ram_mb: Option<u64>,
    max_disk_gb: Option<u64>,
) -> VmSize {
    VmSize {
        cores: max_cores.unwrap_or(cores),
        ram_mb: max_ram_mb.unwrap_or(ram_mb),
        disk_gb: max_disk_gb,
    }
}

/// What to create: one VM for one sliver.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VmSpec {
    /// Unique tag of the VM, the sliver URN; creating twice with one tag
    /// yields the same VM.
    pub tag: String,
    /// Name of the VM (the request's `client_id`), used for its hostname.
    pub name: String,
    /// Component URN of the host to place the VM on; `None` lets the cloud choose.
    pub host: Option<String>,
    /// Sliver type (flavour) name.
    pub sliver_type: String,
    /// The size granted at Allocate (`<emulab:xen>`); `None`: the type's.
    pub size: Option<VmSize>,
    /// Disk image name; `None` boots the type's default image.
    pub disk_image: Option<String>,
    /// Users and keys to install at first boot.
    pub users: Vec<UserKeys>,
    /// Link networks to attach, one NIC each, in order.
    pub networks: Vec<NicSpec>,
    /// Whether the request asked for the host alone (`exclusive="true"`).
    pub exclusive: bool,
    /// Archives to download and unpack at first boot (`<install>`), in order.
    pub install: Vec<InstallSpec>,
    /// Commands to run at first boot, after the installs (`<execute>`), in order.
    pub execute: Vec<ExecuteSpec>,
}

/// One `<install>` service of a request node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstallSpec {
    /// The archive to download (`url`).
    pub url: String,
    /// The directory to unpack it into (`install_path`).
    pub install_path: String,
}

/// One `<execute>` service of a request node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecuteSpec {
    /// The shell to run the command with (`shell`, e.g. `sh`).
    pub shell: String,
    /// The command line (`command`).
    pub command: String,
}

/// One NIC of a VM on a link network.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NicSpec {
    /// The link network the NIC is attached to.
    pub network: NetHandle,
    /// The IPv4 address the request asked for; the cloud picks one when
    /// `None`. A backend that cannot give the asked address fails the
    /// creation rather than give another.
    pub ip: Option<String>,
}

/// The cloud's handle on a VM (an OpenNebula VM id, a simulator id).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct VmHandle(pub String);

/// The cloud's handle on a link network.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct NetHandle(pub String);

/// A link network as the cloud made it (or found it again by its tag).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkNetwork {
    /// The cloud's handle on it.
    pub handle: NetHandle,
    /// The VLAN (or VXLAN network identifier) that carries it, as the
    /// cloud reports it; `None` for an untagged network.
    pub vlan_tag: Option<u32>,
}

/// What to create for one link of a slice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetSpec {
    /// Unique tag of the network (the link's sliver URN); creating twice
    /// with one tag yields the same network.
    pub tag: String,
    /// Name of the network (the link's `client_id`).
    pub name: String,
    /// The IPv4 addresses the request asks for on the link: the network
    /// must hold them (or its creation fails); empty, any addresses do.
    pub addresses: Vec<String>,
}

/// The power state of a VM as the cloud reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VmState {
    /// Created, not yet placed or defined on a host.
    Pending,
    /// Powering on (booting, contextualising).
    Booting,
    /// Running and usable.
    Running,
    /// Powering off.
    Stopping,
    /// Defined but powered off.
    Stopped,
    /// Failed; the observation's message says why.
    Failed,
    /// No longer exists in the cloud.
    Gone,
}

/// One network interface of a VM.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NicAddress {
    /// The network the NIC is attached to; `None` for the control network.
    pub network: Option<NetHandle>,
    /// IPv4 address.
    pub ip: String,
    /// MAC address (`02:00:…`).
    pub mac: String,
    /// Dotted netmask of the address, when the cloud knows the network's
    /// prefix.
    #[serde(default)]
    pub netmask: Option<String>,
}

/// A snapshot of one VM.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VmObservation {
    /// Power state.
    pub state: VmState,
    /// The cloud's message for the state (the error text when failed).
    pub message: String,
    /// Fully qualified host name experimenters log in to.
    pub hostname: String,
    /// Interfaces, the control network first.
    pub addresses: Vec<NicAddress>,
}

/// A VM carrying this aggregate's tag, as listed by [`Compute::visit_vms`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaggedVm {
    /// The cloud's handle.
    pub handle: VmHandle,
    /// The tag given at creation (a sliver URN).
    pub tag: String,
}

/// How a backend error should be handled by its caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorClass {
    /// Try again later (network trouble, a locked object, a transient state).
    Transient,
    /// Retrying will not help; the sliver fails with the message.
    Permanent,
    /// The cloud has no room (quota, capacity); the sliver fails with the message.
    Capacity,
}

/// A backend failure, classified for retry decisions.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum BackendError {
    /// A failure that may go away by itself; the operation can be retried.
    #[error("backend temporarily unavailable: {0}")]
    Transient(String),
    /// The cloud did not answer at all (connection refused or reset, a
    /// timeout, an HTTP 5xx): transient, and the sign of an outage that
    /// holds up all work until the cloud answers again.
    #[error("backend unreachable: {0}")]
    Unreachable(String),
    /// A failure retrying will not fix (bad image, refused operation).
    #[error("backend refused the operation: {0}")]
    Permanent(String),
    /// The cloud has no capacity or quota left for this request.
    #[error("backend out of capacity: {0}")]
    Capacity(String),
    /// The VM or network does not exist (any more).
    #[error("backend has no {kind} {id}")]
    NotFound {
        /// `VM` or `network`.
        kind: &'static str,
        /// The handle that was not found.
        id: String,
    },
}

impl BackendError {
    /// The class that decides between retrying and failing the sliver.
    pub fn class(&self) -> ErrorClass {
        match self {
            BackendError::Transient(_) | BackendError::Unreachable(_) => ErrorClass::Transient,
            BackendError::Capacity(_) => ErrorClass::Capacity,
            BackendError::Permanent(_) | BackendError::NotFound { .. } => ErrorClass::Permanent,
        }
    }

    /// Whether the operation is worth retrying later.
    pub fn is_transient(&self) -> bool {
        self.class() == ErrorClass::Transient
    }

    /// Whether the cloud did not answer at all (an outage, not a refusal).
    pub fn is_unreachable(&self) -> bool {
        matches!(self, BackendError::Unreachable(_))
    }
}

/// A cloud the aggregate provisions VMs and link networks on.
///
/// Every method is synchronous and may block on the network; the jobs call
/// them from worker threads, never from a request path. Operations on
/// handles that no longer exist return [`BackendError::NotFound`], except
/// [`Compute::destroy`] and [`Compute::destroy_network`], which succeed.
pub trait Compute: Send + Sync {
    /// A short name for logs (e.g. `simulated cloud`).
    fn name(&self) -> &str;

    /// The hosts and VM flavours the cloud offers.
    fn inventory(&self) -> Result<Inventory, BackendError>;

    /// Creates the VM described by `spec`, powered off, or returns the VM
    /// that already carries `spec.tag`.
    fn create_vm(&self, spec: &VmSpec) -> Result<VmHandle, BackendError>;

    /// The VM carrying `tag`, if any (used before retrying a creation).
    fn find_vm(&self, tag: &str) -> Result<Option<VmHandle>, BackendError>;

    /// The current state, addresses and message of a VM; a VM that no
    /// longer exists is reported as [`VmState::Gone`].
    fn observe(&self, vm: &VmHandle) -> Result<VmObservation, BackendError>;

    /// Powers a VM on; it boots and ends running (or failed).
    fn start(&self, vm: &VmHandle) -> Result<(), BackendError>;

    /// Powers a VM off.
    fn stop(&self, vm: &VmHandle) -> Result<(), BackendError>;

    /// Reboots a running VM.
    fn restart(&self, vm: &VmHandle) -> Result<(), BackendError>;

    /// Installs `users`' keys: listed users' key sets are replaced, others
    /// are left alone.
    fn update_users(&self, vm: &VmHandle, users: &[UserKeys]) -> Result<(), BackendError>;

    /// Destroys a VM at once (terminate-hard), freeing its capacity;
    /// destroying a VM that is already gone succeeds.
    fn destroy(&self, vm: &VmHandle) -> Result<(), BackendError>;

    /// Hands `visit` every VM carrying a tag of this aggregate, one at a
    /// time as the backend reads them (a page at a time where the cloud
    /// pages its listings), so that a caller need not hold a hundred
    /// thousand of them at once. A VM created or destroyed while the
    /// listing runs may be missed, and one may be handed over twice.
    fn visit_vms(&self, visit: &mut dyn FnMut(TaggedVm)) -> Result<(), BackendError>;

    /// Every VM carrying a tag of this aggregate, in one list (see
    /// [`Compute::visit_vms`]).
    fn list_vms(&self) -> Result<Vec<TaggedVm>, BackendError> {
        let mut vms = Vec::new();
        self.visit_vms(&mut |vm| vms.push(vm))?;
        Ok(vms)
    }

    /// Creates the network for one link, or returns the one carrying
    /// `spec.tag`, with the VLAN tag that carries it.
    fn create_network(&self, spec: &NetSpec) -> Result<LinkNetwork, BackendError>;

    /// Destroys a link network; destroying one that is already gone succeeds.
    fn destroy_network(&self, net: &NetHandle) -> Result<(), BackendError>;

    /// Asks the backend to call `hook` whenever the states of its VMs may
    /// have changed (after an action, and when a transition in progress
    /// ends), so that whoever follows them need not poll. True when it
    /// will; false, the default, when it cannot tell and its VMs must be
    /// polled.
    fn watch(&self, hook: ChangeHook) -> bool {
        let _ = hook;
        false
    }
}

/// What a backend calls when the states of its VMs may have changed (see
/// [`Compute::watch`]); it must return quickly.
pub type ChangeHook = std::sync::Arc<dyn Fn() + Send + Sync>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_range_holds_its_first_and_last_address_only() {
        let ip = |text: &str| text.parse::<std::net::Ipv4Addr>().unwrap();
        let range = AddressRange::starting_at(ip("10.1.1.1"), 100).unwrap();
        assert_eq!(range.last, ip("10.1.1.100"));
        assert!(range.contains(ip("10.1.1.1")) && range.contains(ip("10.1.1.100")));
        assert!(!range.contains(ip("10.1.1.101")) && !range.contains(ip("10.1.1.0")));
        assert_eq!(range.to_string(), "10.1.1.1–10.1.1.100");
        assert_eq!(AddressRange::starting_at(ip("10.1.1.1"), 0), None);
        assert_eq!(AddressRange::starting_at(ip("255.255.255.255"), 2), None);
    }

    #[test]
    fn errors_are_classified_for_retries() {
        assert!(BackendError::Transient("locked".into()).is_transient());
        let down = BackendError::Unreachable("connection refused".into());
        assert!(down.is_transient() && down.is_unreachable());
        assert!(!BackendError::Transient("locked".into()).is_unreachable());
        assert_eq!(
            BackendError::Capacity("quota".into()).class(),
            ErrorClass::Capacity
        );
        let gone = BackendError::NotFound {
            kind: "VM",
            id: "7".into(),
        };
        assert_eq!(gone.class(), ErrorClass::Permanent);
        assert_eq!(gone.to_string(), "backend has no VM 7");
    }
}
