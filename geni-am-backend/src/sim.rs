//! The simulated cloud: an in-process [`Compute`] backend for tests and for
//! a first run without a real cloud. Its hosts and VM flavours come from the
//! `[backend.sim]` configuration; VMs move through pending, booting and
//! running with configurable delays, boots fail at a configurable, seeded
//! rate, and every VM gets addresses on the control network and on each
//! link network it is attached to; each link network reports a VLAN tag
//! of its own. With a `state_file` the VMs and networks
//! are saved on every change and reloaded at start, so they outlive a
//! restart of the aggregate. It tells watchers when its VMs' states
//! change ([`Compute::watch`]). Nothing here talks to a real machine.

pub mod clock;
pub mod config;
mod faults;
mod fleet;
mod network;
mod persist;
mod vm;
mod watch;

use crate::{
    BackendError, ChangeHook, Compute, DiskImage, HARDWARE_TYPE, Host, Inventory, LinkNetwork,
    NetHandle, NetSpec, SliverType, TaggedVm, UserKeys, VmHandle, VmObservation, VmSize, VmSpec,
    VmState,
};
use clock::SimClock;
use config::{SimConfig, SimConfigError, Subnet};
use faults::Faults;
use fleet::Fleet;
use network::{AddressPool, Nic};
use persist::{Change, SavedNetwork, Snapshot, StateFile};
use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;
use vm::{Delays, SimVm};
use watch::Watchers;

/// The in-process simulated cloud. Thread-safe: one lock guards its state.
#[derive(Debug)]
pub struct SimulatedCloud {
    inventory: Inventory,
    domain: String,
    delays: Delays,
    clock: SimClock,
    state_file: Option<StateFile>,
    state: Mutex<State>,
    watchers: Watchers,
}

#[derive(Debug)]
struct State {
    next_id: u64,
    vms: Fleet,
    control: AddressPool,
    networks: BTreeMap<u64, SavedNetwork>,
    faults: Faults,
    created: u64,
    /// The specification each VM of this process was created from, by tag,
    /// while the VM exists, once [`SimulatedCloud::keeping_specs`] asked
    /// for it (not saved: tests read it to see what the aggregate asked
    /// for). `None` otherwise: a spec is about as large as the VM itself,
    /// and an aggregate with a hundred thousand VMs held 46 MB of them for
    /// no reader (docs/PERFORMANCE.md, "Memory: a hundred thousand slivers").
    specs: Option<BTreeMap<String, VmSpec>>,
}

/// Link networks get `192.168.<n>.0/24`, so at most this many exist at once.
const MAX_LINK_NETWORKS: u64 = 256;

/// The VLAN of link network 0; network `n` is carried by VLAN
/// `FIRST_LINK_VLAN + n`, a tag of its own.
const FIRST_LINK_VLAN: u32 = 100;

/// Link network `slot` with its handle and VLAN tag.
fn link_network(slot: u64) -> LinkNetwork {
    LinkNetwork {
        handle: NetHandle(slot.to_string()),
        vlan_tag: u32::try_from(slot)
            .ok()
            .and_then(|n| n.checked_add(FIRST_LINK_VLAN)),
    }
}

impl SimulatedCloud {
    /// A simulated cloud on the real clock; host component URNs are built
    /// under `authority` (e.g. `geni-am.example.net`).
    pub fn new(config: &SimConfig, authority: &str) -> Result<SimulatedCloud, SimConfigError> {
        SimulatedCloud::with_clock(config, authority, SimClock::real())
    }

    /// A simulated cloud on the given clock (tests pass [`SimClock::manual`]).
    pub fn with_clock(
        config: &SimConfig,
        authority: &str,
        clock: SimClock,
    ) -> Result<SimulatedCloud, SimConfigError> {
        config.validate()?;
        let control = Subnet::parse(&config.control_subnet).map_err(|problem| SimConfigError {
            key: "backend.sim.control_subnet".into(),
            problem,
        })?;
        let state_file = config.state_file.as_deref().map(StateFile::new);
        let saved = match &state_file {
            Some(file) => file.load().map_err(|problem| SimConfigError {
                key: "backend.sim.state_file".into(),
                problem,
            })?,
            None => None,
        };
        let mut state = State {
            next_id: 1,
            vms: Fleet::default(),
            control: AddressPool::new(control),
            networks: BTreeMap::new(),
            faults: Faults::new(config.failure_rate, config.seed),
            created: 0,
            specs: None,
        };
        if let Some(saved) = saved {
            state.restore(saved);
        }
        tracing::info!(
            hosts = config.hosts.len(),
            failure_rate = config.failure_rate,
            vms = state.vms.vms().len(),
            "simulated cloud ready (no real VMs are created)"
        );
        Ok(SimulatedCloud {
            inventory: inventory_of(config, authority),
            domain: config.domain.clone(),
            delays: Delays {
                create: Duration::from_millis(config.create_delay_ms),
                boot: Duration::from_millis(config.boot_delay_ms),
                stop: Duration::from_millis(config.stop_delay_ms),
            },
            clock,
            state_file,
            state: Mutex::new(state),
            watchers: Watchers::default(),
        })
    }

    /// The clock the simulation runs on.
    pub fn clock(&self) -> &SimClock {
        &self.clock
    }

    /// Makes the next boot of the VM tagged `tag` (created or not yet) fail
    /// with `message`.
    pub fn fail_next_boot(&self, tag: &str, message: &str) {
        self.lock().faults.inject_boot_failure(tag, message);
    }

    /// Makes the next `calls` operations fail with a transient error.
    pub fn fail_next_calls(&self, calls: u32) {
        self.lock().faults.inject_transient(calls);
    }

    /// Removes the VM tagged `tag` behind the aggregate's back, as an
    /// operator deleting it in the cloud would; returns whether it existed.
    pub fn vanish(&self, tag: &str) -> bool {
        let mut state = self.lock();
        let mut removed = false;
        if let Some(id) = state.vms.find_tag(tag)
            && state.remove_vm(id).is_some()
        {
            removed = true;
            if let Err(err) = self.save(&state, state.vm_change(id)) {
                tracing::warn!(%err, "simulated cloud state not saved");
            }
        }
        drop(state);
        self.watchers.changed(&self.clock, Duration::ZERO);
        removed
    }

    /// How many VMs were ever created (repeated creations of one tag count once).
    pub fn vms_created(&self) -> u64 {
        self.lock().created
    }

    /// This cloud, keeping from now on the specification each VM is
    /// created from, for [`SimulatedCloud::spec_of`].
    pub fn keeping_specs(self) -> SimulatedCloud {
        self.lock().specs.get_or_insert_default();
        self
    }

    /// The specification the VM tagged `tag` was created from by this
    /// process, while that VM exists, if specs are kept
    /// ([`SimulatedCloud::keeping_specs`]).
    pub fn spec_of(&self, tag: &str) -> Option<VmSpec> {
        self.lock().specs.as_ref()?.get(tag).cloned()
    }

    /// The link networks that exist, with their tags.
    pub fn networks(&self) -> Vec<(NetHandle, String)> {
        self.lock()
            .networks
            .iter()
            .map(|(id, net)| (NetHandle(id.to_string()), net.tag.clone()))
            .collect()
    }

    /// The users and keys installed on a VM, if it exists.
    pub fn users_of(&self, vm: &VmHandle) -> Option<BTreeMap<String, Vec<String>>> {
        let state = self.lock();
        let id = parse_id(&vm.0, "VM").ok()?;
        state.vms.get(id).map(|vm| vm.users.clone())
    }

    /// Writes `change`, just made to `state`, to the state file, if
    /// there is one.
    fn save(&self, state: &State, change: Change) -> Result<(), BackendError> {
        match &self.state_file {
            Some(file) => file
                .save(change, || state.snapshot())
                .map_err(BackendError::Transient),
            None => Ok(()),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Locks the state, consumes an injected transient failure if any, and
    /// settles every VM's pending transitions.
    fn enter(&self, operation: &str) -> Result<MutexGuard<'_, State>, BackendError> {
        let mut state = self.lock();
        state.faults.take_transient(operation)?;
        let now = self.clock.now();
        state.vms.settle(now, &self.delays);
        Ok(state)
    }

    /// Runs `action` on the VM behind `handle` with the current time and the
    /// failure draw of its next boot; watchers are told of the change, and
    /// again `transition` later, when the phase it began is over.
    fn with_vm(
        &self,
        operation: &str,
        handle: &VmHandle,
        transition: Duration,
        action: impl FnOnce(&mut SimVm, Duration, Option<String>) -> Result<(), BackendError>,
    ) -> Result<(), BackendError> {
        let mut state = self.enter(operation)?;
        let id = parse_id(&handle.0, "VM")?;
        let State { vms, faults, .. } = &mut *state;
        let now = self.clock.now();
        vms.update(id, |vm| {
            let failure = faults.boot_failure(&vm.tag, vm.boots + 1);
            tracing::debug!(vm = %handle.0, tag = %vm.tag, operation, "simulated cloud");
            action(vm, now, failure)
        })
        .ok_or_else(|| not_found("VM", &handle.0))??;
        let saved = self.save(&state, state.vm_change(id));
        drop(state);
        self.watchers.changed(&self.clock, transition);
        saved
    }

    fn place(&self, state: &State, spec: &VmSpec) -> Result<(usize, u32, u64), BackendError> {
        let kind = self
            .inventory
            .sliver_types
            .iter()
            .find(|t| t.name == spec.sliver_type)
            .ok_or_else(|| {
                BackendError::Permanent(format!(
                    "the simulated cloud has no sliver type `{}`",
                    spec.sliver_type
                ))
            })?;
        if let Some(image) = &spec.disk_image
            && !kind.disk_images.iter().any(|i| &i.name == image)
        {
            return Err(BackendError::Permanent(format!(
                "sliver type `{}` of the simulated cloud has no disk image `{image}`",
                kind.name
            )));
        }
        let size = spec.size.unwrap_or(VmSize {
            cores: kind.cpus,
            ram_mb: kind.memory_mb,
            disk_gb: None,
        });
        let fits = |index: usize, host: &Host| {
            let taken = state.vms.host_use(index);
            taken.vms < host.max_vms
                && taken.cpus + size.cores <= host.cpus
                && taken.memory_mb + size.ram_mb <= host.memory_mb
        };
        let hosts = self.inventory.hosts.iter().enumerate();
        let chosen = match &spec.host {
            Some(wanted) => {
                let (index, host) = hosts
                    .clone()
                    .find(|(_, h)| &h.component_id == wanted)
                    .ok_or_else(|| {
                        BackendError::Permanent(format!("the simulated cloud has no host {wanted}"))
                    })?;
                fits(index, host).then_some(index)
            }
            None => hosts.clone().find(|(i, h)| fits(*i, h)).map(|(i, _)| i),
        };
        let index = chosen.ok_or_else(|| {
            BackendError::Capacity(format!(
                "no simulated host has room for a `{}` VM",
                kind.name
            ))
        })?;
        Ok((index, size.cores, size.ram_mb))
    }
}

impl State {
    /// What the state file keeps.
    fn snapshot(&self) -> Snapshot {
        Snapshot {
            generation: 0,
            next_id: self.next_id,
            created: self.created,
            vms: self.vms.vms().clone(),
            control: self.control.clone(),
            networks: self.networks.clone(),
        }
    }

    /// Takes over the VMs and networks of a saved state, with the leases
    /// of the VMs' NICs.
    fn restore(&mut self, saved: Snapshot) {
        self.next_id = saved.next_id;
        self.created = saved.created;
        self.vms = Fleet::from_vms(saved.vms);
        self.control = saved.control;
        self.networks = saved.networks;
        self.lease_again();
    }

    /// VM `id` as the state file is to record it now.
    fn vm_change(&self, id: u64) -> Change {
        Change::Vm {
            id,
            vm: self.vms.get(id).map(|vm| Box::new(vm.clone())),
            next_id: self.next_id,
            created: self.created,
        }
    }

    /// Makes the address leases again from the VMs' NICs: the state
    /// file's change lines record the VMs, not the leases.
    fn lease_again(&mut self) {
        self.control = self.control.emptied();
        for network in self.networks.values_mut() {
            network.pool = network.pool.emptied();
        }
        let State {
            vms,
            control,
            networks,
            ..
        } = self;
        for nic in vms.vms().values().flat_map(|vm| vm.nics.iter()) {
            if let Some(pool) = pool_of(control, networks, nic) {
                pool.hold(nic.ip);
            }
        }
    }

    /// Removes a VM and returns its addresses to their pools.
    fn remove_vm(&mut self, id: u64) -> Option<Box<SimVm>> {
        let vm = self.vms.remove(id)?;
        self.release(&vm.nics);
        // What the aggregate asked for goes with the VM, so that the
        // simulator holds nothing for VMs that are gone.
        if let Some(specs) = &mut self.specs {
            specs.remove(&*vm.tag);
        }
        Some(vm)
    }

    /// Returns addresses to the pools they were leased from.
    fn release(&mut self, nics: &[Nic]) {
        for nic in nics {
            if let Some(pool) = pool_of(&mut self.control, &mut self.networks, nic) {
                pool.release(nic.ip);
            }
        }
    }
}

/// The pool `nic`'s address comes from: the control network's, or its
/// link network's while that exists.
fn pool_of<'a>(
    control: &'a mut AddressPool,
    networks: &'a mut BTreeMap<u64, SavedNetwork>,
    nic: &Nic,
) -> Option<&'a mut AddressPool> {
    match nic.link {
        None => Some(control),
        Some(slot) => networks.get_mut(&u64::from(slot)).map(|n| &mut n.pool),
    }
}

impl Compute for SimulatedCloud {
    fn name(&self) -> &str {
        "simulated cloud"
    }

    fn inventory(&self) -> Result<Inventory, BackendError> {
        Ok(self.inventory.clone())
    }

    fn create_vm(&self, spec: &VmSpec) -> Result<VmHandle, BackendError> {
        let mut state = self.enter("create")?;
        if let Some(id) = state.vms.find_tag(&spec.tag) {
            return Ok(VmHandle(id.to_string()));
        }
        let (host, cpus, memory_mb) = self.place(&state, spec)?;
        let mut nics = vec![state.control.lease(None)?];
        for nic in &spec.networks {
            let net = &nic.network;
            // A handle that names no network fails like one that names a
            // deleted network: the addresses leased so far go back.
            let found = parse_id(&net.0, "network")
                .ok()
                .and_then(|id| Some((state.networks.get_mut(&id)?, u16::try_from(id).ok()?)));
            let leased = match found {
                Some((network, slot)) => network.pool.lease_asked(Some(slot), nic.ip.as_deref()),
                None => Err(not_found("network", &net.0)),
            };
            match leased {
                Ok(nic) => nics.push(nic),
                Err(err) => {
                    state.release(&nics);
                    return Err(err);
                }
            }
        }
        let id = state.next_id;
        state.next_id += 1;
        state.created += 1;
        if let Some(specs) = &mut state.specs {
            specs.insert(spec.tag.clone(), spec.clone());
        }
        let hostname = format!("{}-{id}.{}", crate::host_label(&spec.name, 40), self.domain);
        let mut vm = SimVm::new(
            &spec.tag,
            host,
            (cpus, memory_mb),
            hostname,
            nics,
            self.clock.now(),
        );
        for user in &spec.users {
            vm.users.insert(user.urn.clone(), user.keys.clone());
        }
        tracing::info!(vm = id, tag = %spec.tag, host = %self.inventory.hosts[host].name, "simulated cloud created a VM");
        state.vms.insert(id, Box::new(vm));
        let saved = self.save(&state, state.vm_change(id));
        drop(state);
        self.watchers.changed(&self.clock, self.delays.create);
        saved.map(|()| VmHandle(id.to_string()))
    }

    fn find_vm(&self, tag: &str) -> Result<Option<VmHandle>, BackendError> {
        let state = self.enter("find")?;
        Ok(state.vms.find_tag(tag).map(|id| VmHandle(id.to_string())))
    }

    fn observe(&self, vm: &VmHandle) -> Result<VmObservation, BackendError> {
        let state = self.enter("observe")?;
        let id = parse_id(&vm.0, "VM")?;
        Ok(match state.vms.get(id) {
            Some(vm) => vm.observe(),
            None => VmObservation {
                state: VmState::Gone,
                message: format!("simulated VM {id} no longer exists"),
                hostname: String::new(),
                addresses: Vec::new(),
            },
        })
    }

    fn start(&self, vm: &VmHandle) -> Result<(), BackendError> {
        let boot = self.delays.boot;
        self.with_vm("start", vm, boot, |vm, now, failure| vm.boot(now, failure))
    }

    fn stop(&self, vm: &VmHandle) -> Result<(), BackendError> {
        let stop = self.delays.stop;
        self.with_vm("stop", vm, stop, |vm, now, _| vm.power_off(now))
    }

    fn restart(&self, vm: &VmHandle) -> Result<(), BackendError> {
        let boot = self.delays.boot;
        self.with_vm("restart", vm, boot, |vm, now, failure| {
            vm.reboot(now, failure)
        })
    }

    fn update_users(&self, vm: &VmHandle, users: &[UserKeys]) -> Result<(), BackendError> {
        self.with_vm("update users", vm, Duration::ZERO, |vm, _, _| {
            vm.install_users(users)
        })
    }

    fn destroy(&self, vm: &VmHandle) -> Result<(), BackendError> {
        let mut state = self.enter("destroy")?;
        let id = parse_id(&vm.0, "VM")?;
        if let Some(gone) = state.remove_vm(id) {
            tracing::info!(vm = id, tag = %gone.tag, "simulated cloud destroyed a VM");
        }
        let saved = self.save(&state, state.vm_change(id));
        drop(state);
        self.watchers.changed(&self.clock, Duration::ZERO);
        saved
    }

    fn visit_vms(&self, visit: &mut dyn FnMut(TaggedVm)) -> Result<(), BackendError> {
        let state = self.enter("list")?;
        for (id, vm) in state.vms.vms() {
            visit(TaggedVm {
                handle: VmHandle(id.to_string()),
                tag: vm.tag.to_string(),
            });
        }
        Ok(())
    }

    fn create_network(&self, spec: &NetSpec) -> Result<LinkNetwork, BackendError> {
        let mut state = self.enter("create network")?;
        if let Some((id, _)) = state.networks.iter().find(|(_, n)| n.tag == spec.tag) {
            return Ok(link_network(*id));
        }
        let slot = (0..MAX_LINK_NETWORKS)
            .find(|slot| !state.networks.contains_key(slot))
            .ok_or_else(|| {
                BackendError::Capacity("the simulated cloud has no free link network".into())
            })?;
        let subnet = Subnet::parse(&format!("192.168.{slot}.0/24"))
            .map_err(|problem| BackendError::Permanent(problem.to_string()))?;
        let network = SavedNetwork {
            tag: spec.tag.clone(),
            pool: AddressPool::new(subnet),
        };
        state.networks.insert(slot, network.clone());
        tracing::info!(network = slot, tag = %spec.tag, "simulated cloud created a link network");
        let network = Some(network);
        self.save(&state, Change::Network { slot, network })?;
        Ok(link_network(slot))
    }

    fn destroy_network(&self, net: &NetHandle) -> Result<(), BackendError> {
        let mut state = self.enter("destroy network")?;
        let id = parse_id(&net.0, "network")?;
        let in_use = state.vms.vms().values().any(|vm| {
            vm.nics
                .iter()
                .any(|nic| nic.link.map(u64::from) == Some(id))
        });
        if in_use {
            return Err(BackendError::Transient(format!(
                "simulated network {id} still has VMs attached"
            )));
        }
        state.networks.remove(&id);
        let change = Change::Network {
            slot: id,
            network: None,
        };
        self.save(&state, change)
    }

    fn watch(&self, hook: ChangeHook) -> bool {
        self.watchers.add(hook);
        true
    }
}

fn inventory_of(config: &SimConfig, authority: &str) -> Inventory {
    Inventory {
        hosts: config
            .hosts
            .iter()
            .map(|h| Host {
                component_id: format!("urn:publicid:IDN+{authority}+node+{}", h.name),
                name: h.name.clone(),
                cpus: h.cpus,
                memory_mb: h.memory_mb,
                max_vms: h.max_vms,
                hardware_type: HARDWARE_TYPE.to_owned(),
                available: true,
            })
            .collect(),
        sliver_types: config
            .sliver_types
            .iter()
            .map(|t| SliverType {
                name: t.name.clone(),
                cpus: t.cpus,
                cores: t.cpus,
                memory_mb: t.memory_mb,
                max_size: super::max_size(
                    t.cpus,
                    t.memory_mb,
                    t.max_cores,
                    t.max_ram_mb,
                    t.max_disk_gb,
                ),
                disk_images: t
                    .disk_images
                    .iter()
                    .map(|i| DiskImage {
                        name: i.name.clone(),
                        os: i.os.clone(),
                        version: i.version.clone(),
                        description: i.description.clone(),
                    })
                    .collect(),
            })
            .collect(),
        // The simulated cloud gives a link any address asked for.
        link_ranges: None,
    }
}

fn parse_id(text: &str, kind: &'static str) -> Result<u64, BackendError> {
    text.parse().map_err(|_| not_found(kind, text))
}

fn not_found(kind: &'static str, id: &str) -> BackendError {
    BackendError::NotFound {
        kind,
        id: id.to_owned(),
    }
}

#[cfg(test)]
mod tests;
