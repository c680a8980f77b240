//! The life-cycle engine: the VMs and their state machine (PENDING → PROLOG
//! → BOOT → RUNNING, and the transitions of the actions, as the virtual
//! machine life-cycle of the OpenNebula XML-RPC API reference describes them
//! and oned 7.4.0 was recorded taking them), each step due at a time on the
//! clock. Steps run lazily, in time order, whenever the cloud is read; each
//! kind of step is one small function. The actions that start transitions
//! are in [`actions`].

mod actions;
mod vm;

use super::clock::{Clock, ctime, millis};
use super::inventory::Inventory;
use super::placement;
use super::state::{LcmState, VmState};
use std::collections::{BTreeMap, VecDeque};
use std::time::Duration;

use vm::Step;
pub use vm::{History, NewVm, Vm};

/// How long each life-cycle phase takes (zero allowed: the step then happens at the next call).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Delays {
    /// PENDING until the scheduler places the VM.
    pub schedule: Duration,
    /// PROLOG.
    pub prolog: Duration,
    /// BOOT (also BOOT_POWEROFF).
    pub boot: Duration,
    /// SHUTDOWN and SHUTDOWN_POWEROFF.
    pub shutdown: Duration,
    /// EPILOG.
    pub epilog: Duration,
    /// From an accepted `one.vm.action` to the driver starting it (oned: ~0.2 s).
    pub dispatch: Duration,
}

impl Delays {
    /// Every phase instantaneous.
    pub const ZERO: Delays = Delays::uniform(Duration::ZERO, Duration::ZERO);

    /// Every life-cycle phase takes `phase`; accepted actions reach the driver after `dispatch`.
    pub const fn uniform(phase: Duration, dispatch: Duration) -> Delays {
        Delays {
            schedule: phase,
            prolog: phase,
            boot: phase,
            shutdown: phase,
            epilog: phase,
            dispatch,
        }
    }
}

/// A VM waits this long before the scheduler tries to place it again.
const RESCHEDULE_MS: i64 = 60_000;

/// The VMs, the clock and the identifiers handed to new VMs and requests.
#[derive(Debug)]
pub struct Engine {
    vms: BTreeMap<i32, Vm>,
    delays: Delays,
    clock: Clock,
    next_vm_id: i32,
    next_request_id: i64,
    /// UUIDs to hand out to new VMs before generated ones.
    uuids: VecDeque<String>,
}

impl Engine {
    /// No VM yet; phases take `delays`.
    pub fn new(delays: Delays) -> Self {
        Engine {
            vms: BTreeMap::new(),
            delays,
            clock: Clock::default(),
            next_vm_id: 0,
            next_request_id: 1,
            uuids: VecDeque::new(),
        }
    }

    /// The clock.
    pub fn clock(&self) -> Clock {
        self.clock
    }

    /// The clock, to pin or advance.
    pub fn clock_mut(&mut self) -> &mut Clock {
        &mut self.clock
    }

    /// Replaces the life-cycle delays (steps already due keep their times).
    pub fn set_delays(&mut self, delays: Delays) {
        self.delays = delays;
    }

    /// Sets the request id the next action writes into HISTORY/REQUEST_ID.
    pub fn set_next_request_id(&mut self, id: i64) {
        self.next_request_id = id;
    }

    /// Queues UUIDs for the next VMs, in order.
    pub fn queue_uuids(&mut self, uuids: impl IntoIterator<Item = String>) {
        self.uuids.extend(uuids);
    }

    /// The next queued UUID, if a test queued one.
    pub fn take_uuid(&mut self) -> Option<String> {
        self.uuids.pop_front()
    }

    /// The VMs by id.
    pub fn vms(&self) -> &BTreeMap<i32, Vm> {
        &self.vms
    }

    /// VM `id`.
    pub fn vm(&self, id: i32) -> Option<&Vm> {
        self.vms.get(&id)
    }

    /// VM `id`, to change its templates.
    pub fn vm_mut(&mut self, id: i32) -> Option<&mut Vm> {
        self.vms.get_mut(&id)
    }

    /// How many VMs are not DONE.
    pub fn live_count(&self) -> usize {
        self.vms
            .values()
            .filter(|vm| vm.state() != VmState::Done)
            .count()
    }

    /// The id the next VM gets.
    pub fn next_vm_id(&self) -> i32 {
        self.next_vm_id
    }

    /// Adds a VM under [`Engine::next_vm_id`], PENDING (scheduled after the
    /// schedule delay) or HOLD. Returns its id.
    pub fn admit(&mut self, new: NewVm) -> i32 {
        let id = self.next_vm_id;
        let now = self.clock.now_ms();
        let first = (!new.hold).then_some((now + millis(self.delays.schedule), Step::Schedule));
        self.vms.insert(id, Vm::new(id, new, now / 1000, first));
        self.next_vm_id += 1;
        id
    }

    /// CPU (percent) and memory (KiB) allocated on the host at `host`, and the VMs there.
    pub fn host_usage(&self, host: usize) -> (i64, i64, Vec<i32>) {
        let placed: Vec<&Vm> = self
            .vms
            .values()
            .filter(|vm| vm.host() == Some(host))
            .collect();
        let cpu = placed.iter().map(|vm| vm.cpu_percent()).sum();
        let mem = placed.iter().map(|vm| vm.memory_kib()).sum();
        (cpu, mem, placed.iter().map(|vm| vm.id()).collect())
    }

    /// Runs every life-cycle step whose time has come, earliest first.
    pub fn advance(&mut self, inventory: &mut Inventory) {
        let now = self.clock.now_ms();
        loop {
            let due = self
                .vms
                .values()
                .filter_map(|vm| vm.due(now).map(|(at, step)| (at, vm.id(), step)))
                .min();
            let Some((at, id, step)) = due else { break };
            self.run_step(inventory, id, at, step);
        }
    }

    fn run_step(&mut self, inventory: &mut Inventory, id: i32, at: i64, step: Step) {
        let secs = at / 1000;
        let delays = self.delays;
        let Some(vm) = self.vms.get_mut(&id) else {
            return;
        };
        vm.next = None;
        match step {
            Step::Schedule => self.schedule(inventory, id, at),
            Step::Enter(target) => enter(vm, target, at, delays),
            Step::PrologDone => prolog_done(vm, at, delays),
            Step::BootDone => boot_done(vm, inventory, secs),
            Step::PoweroffDone => come_to_rest(vm, VmState::Poweroff, secs),
            Step::UndeployDone => come_to_rest(vm, VmState::Undeployed, secs),
            Step::ShutdownDone => shutdown_done(vm, at, delays),
            Step::EpilogDone => {
                if let Some(h) = vm.history.last_mut() {
                    h.eetime = secs;
                    h.etime = secs;
                }
                self.finish(inventory, id, secs);
            }
        }
    }

    /// The scheduler's turn: PROLOG on the first host with room, else a
    /// SCHED_MESSAGE and another try a minute later.
    fn schedule(&mut self, inventory: &Inventory, id: i32, at: i64) {
        let secs = at / 1000;
        let Some(vm) = self.vms.get(&id) else {
            return;
        };
        let requirements = vm.user_template.single("SCHED_REQUIREMENTS");
        let placed = placement::choose_host(
            inventory.hosts(),
            |host| {
                let (cpu, memory, _) = self.host_usage(host);
                (cpu, memory)
            },
            vm.cpu_percent(),
            vm.memory_kib(),
            requirements,
        );
        let prolog = millis(self.delays.prolog);
        let Some(vm) = self.vms.get_mut(&id) else {
            return;
        };
        match placed {
            Ok(host) => {
                vm.user_template.take("SCHED_MESSAGE");
                vm.state = VmState::Active;
                vm.lcm = LcmState::Prolog;
                vm.template.set("TM_MAD_SYSTEM", "dummy");
                vm.open_history(host, secs).pstime = secs;
                vm.next = Some((at + prolog, Step::PrologDone));
            }
            Err(message) => {
                vm.user_template
                    .set("SCHED_MESSAGE", format!("{}: {message}", ctime(secs)));
                vm.next = Some((at + RESCHEDULE_MS, Step::Schedule));
            }
        }
    }

    /// Moves a VM to DONE: frees its host capacity and network leases.
    fn finish(&mut self, inventory: &mut Inventory, id: i32, secs: i64) {
        if let Some(vm) = self.vms.get_mut(&id) {
            vm.state = VmState::Done;
            vm.lcm = LcmState::Init;
            vm.etime = secs;
            vm.next = None;
        }
        inventory.release_leases(id);
    }

    /// Stores a monitoring record for a VM, as the monitor driver would
    /// (LAST_POLL = its TIMESTAMP, else the pinned clock).
    pub fn monitor(&mut self, id: i32, record: Vec<(String, String)>) -> bool {
        let fallback = self.clock.pinned_ms().unwrap_or(0) / 1000;
        let Some(vm) = self.vms.get_mut(&id) else {
            return false;
        };
        let timestamp = record
            .iter()
            .find(|(k, _)| k == "TIMESTAMP")
            .and_then(|(_, v)| v.parse().ok());
        vm.last_poll = timestamp.unwrap_or(fallback);
        vm.monitoring = record;
        true
    }

    /// Removes a VM from the database as if purged: later calls give NO_EXISTS.
    pub fn purge(&mut self, inventory: &mut Inventory, id: i32) -> bool {
        let secs = self.clock.now_ms() / 1000;
        if self.vms.contains_key(&id) {
            self.finish(inventory, id, secs);
        }
        self.vms.remove(&id).is_some()
    }
}

/// An accepted action reaches the driver: the VM enters `target`
/// (SHUTDOWN, SHUTDOWN_POWEROFF, SHUTDOWN_UNDEPLOY, BOOT_POWEROFF or EPILOG)
/// and the phase that follows is scheduled.
fn enter(vm: &mut Vm, target: LcmState, at: i64, delays: Delays) {
    vm.state = VmState::Active;
    vm.lcm = target;
    let (delay, then) = match target {
        LcmState::Shutdown => (delays.shutdown, Step::ShutdownDone),
        LcmState::ShutdownPoweroff => (delays.shutdown, Step::PoweroffDone),
        LcmState::ShutdownUndeploy => (delays.shutdown, Step::UndeployDone),
        LcmState::BootPoweroff => (delays.boot, Step::BootDone),
        _ => {
            if let Some(h) = vm.history.last_mut() {
                h.estime = at / 1000;
            }
            (delays.epilog, Step::EpilogDone)
        }
    };
    vm.next = Some((at + millis(delay), then));
}

/// A phase ends and the next begins: the VM enters `lcm`, the last HISTORY
/// record gets its stamps, and `then` is due after `delay`.
fn next_phase(
    vm: &mut Vm,
    lcm: LcmState,
    stamp: fn(&mut History, i64),
    at: i64,
    (delay, then): (Duration, Step),
) {
    vm.lcm = lcm;
    if let Some(h) = vm.history.last_mut() {
        stamp(h, at / 1000);
    }
    vm.next = Some((at + millis(delay), then));
}

/// PROLOG ends: BOOT starts.
fn prolog_done(vm: &mut Vm, at: i64, delays: Delays) {
    let stamp = |h: &mut History, secs| {
        h.petime = secs;
        h.rstime = secs;
    };
    next_phase(vm, LcmState::Boot, stamp, at, (delays.boot, Step::BootDone));
}

/// BOOT ends: RUNNING with a DEPLOY_ID, or BOOT_FAILURE with oned's ERROR
/// text when the boot was set to fail.
fn boot_done(vm: &mut Vm, inventory: &Inventory, secs: i64) {
    let host = vm.history.last().map_or(0, |h| h.host);
    let host_name = inventory.host_name(host);
    if vm.fail_boot {
        vm.fail_boot = false;
        vm.lcm = LcmState::BootFailure;
        if let Some(h) = vm.history.last_mut() {
            h.retime = secs;
        }
        let text = format!("{}: DEPLOY: {host_name}:{}:dummy", ctime(secs), vm.name);
        vm.user_template.set("ERROR", text);
    } else {
        vm.lcm = LcmState::Running;
        vm.deploy_id = format!("{host_name}:{}:dummy", vm.name);
    }
}

/// A shutdown for poweroff or undeploy ends: the VM rests in `state`.
fn come_to_rest(vm: &mut Vm, state: VmState, secs: i64) {
    vm.state = state;
    vm.lcm = LcmState::Init;
    if let Some(h) = vm.history.last_mut() {
        h.etime = secs;
        h.retime = secs;
    }
}

/// SHUTDOWN ends: EPILOG starts.
fn shutdown_done(vm: &mut Vm, at: i64, delays: Delays) {
    let stamp = |h: &mut History, secs| {
        h.retime = secs;
        h.estime = secs;
    };
    let then = (delays.epilog, Step::EpilogDone);
    next_phase(vm, LcmState::Epilog, stamp, at, then);
}
