//! The simulated cloud: seeded host, network, image, template and user, the
//! VMs with their life cycle (PENDING → PROLOG → BOOT → RUNNING and the action
//! transitions of the recorded `states.txt`), host capacity, network leases,
//! and the injected failures. Time is a settable clock in milliseconds; the
//! life cycle advances lazily whenever the clock is read.

use crate::template::Template;
use crate::version::Version;
use crate::xml::{self, Element};
use std::collections::{BTreeMap, VecDeque};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

mod actions;
mod creation;

pub use creation::check_name;

/// VM states (`STATE`).
pub mod state {
    /// PENDING.
    pub const PENDING: i32 = 1;
    /// HOLD.
    pub const HOLD: i32 = 2;
    /// ACTIVE.
    pub const ACTIVE: i32 = 3;
    /// STOPPED.
    pub const STOPPED: i32 = 4;
    /// SUSPENDED.
    pub const SUSPENDED: i32 = 5;
    /// DONE.
    pub const DONE: i32 = 6;
    /// POWEROFF.
    pub const POWEROFF: i32 = 8;
    /// UNDEPLOYED.
    pub const UNDEPLOYED: i32 = 9;
    /// Names by number.
    pub const NAMES: [&str; 12] = [
        "INIT",
        "PENDING",
        "HOLD",
        "ACTIVE",
        "STOPPED",
        "SUSPENDED",
        "DONE",
        "FAILED",
        "POWEROFF",
        "UNDEPLOYED",
        "CLONING",
        "CLONING_FAILURE",
    ];
}

/// LCM states (`LCM_STATE`) the simulator produces.
pub mod lcm {
    /// LCM_INIT.
    pub const INIT: i32 = 0;
    /// PROLOG.
    pub const PROLOG: i32 = 1;
    /// BOOT.
    pub const BOOT: i32 = 2;
    /// RUNNING.
    pub const RUNNING: i32 = 3;
    /// EPILOG.
    pub const EPILOG: i32 = 11;
    /// SHUTDOWN.
    pub const SHUTDOWN: i32 = 12;
    /// SHUTDOWN_POWEROFF.
    pub const SHUTDOWN_POWEROFF: i32 = 18;
    /// BOOT_POWEROFF.
    pub const BOOT_POWEROFF: i32 = 20;
    /// SHUTDOWN_UNDEPLOY.
    pub const SHUTDOWN_UNDEPLOY: i32 = 29;
    /// BOOT_FAILURE.
    pub const BOOT_FAILURE: i32 = 36;
    /// Names by number (0–71).
    pub const NAMES: [&str; 72] = [
        "LCM_INIT",
        "PROLOG",
        "BOOT",
        "RUNNING",
        "MIGRATE",
        "SAVE_STOP",
        "SAVE_SUSPEND",
        "SAVE_MIGRATE",
        "PROLOG_MIGRATE",
        "PROLOG_RESUME",
        "EPILOG_STOP",
        "EPILOG",
        "SHUTDOWN",
        "CANCEL",
        "FAILURE",
        "CLEANUP_RESUBMIT",
        "UNKNOWN",
        "HOTPLUG",
        "SHUTDOWN_POWEROFF",
        "BOOT_UNKNOWN",
        "BOOT_POWEROFF",
        "BOOT_SUSPENDED",
        "BOOT_STOPPED",
        "CLEANUP_DELETE",
        "HOTPLUG_SNAPSHOT",
        "HOTPLUG_NIC",
        "HOTPLUG_SAVEAS",
        "HOTPLUG_SAVEAS_POWEROFF",
        "HOTPLUG_SAVEAS_SUSPENDED",
        "SHUTDOWN_UNDEPLOY",
        "EPILOG_UNDEPLOY",
        "PROLOG_UNDEPLOY",
        "BOOT_UNDEPLOY",
        "HOTPLUG_PROLOG_POWEROFF",
        "HOTPLUG_EPILOG_POWEROFF",
        "BOOT_MIGRATE",
        "BOOT_FAILURE",
        "BOOT_MIGRATE_FAILURE",
        "PROLOG_MIGRATE_FAILURE",
        "PROLOG_FAILURE",
        "EPILOG_FAILURE",
        "EPILOG_STOP_FAILURE",
        "EPILOG_UNDEPLOY_FAILURE",
        "PROLOG_MIGRATE_POWEROFF",
        "PROLOG_MIGRATE_POWEROFF_FAILURE",
        "PROLOG_MIGRATE_SUSPEND",
        "PROLOG_MIGRATE_SUSPEND_FAILURE",
        "BOOT_UNDEPLOY_FAILURE",
        "BOOT_STOPPED_FAILURE",
        "PROLOG_RESUME_FAILURE",
        "PROLOG_UNDEPLOY_FAILURE",
        "DISK_SNAPSHOT_POWEROFF",
        "DISK_SNAPSHOT_REVERT_POWEROFF",
        "DISK_SNAPSHOT_DELETE_POWEROFF",
        "DISK_SNAPSHOT_SUSPENDED",
        "DISK_SNAPSHOT_REVERT_SUSPENDED",
        "DISK_SNAPSHOT_DELETE_SUSPENDED",
        "DISK_SNAPSHOT",
        "DISK_SNAPSHOT_REVERT",
        "DISK_SNAPSHOT_DELETE",
        "PROLOG_MIGRATE_UNKNOWN",
        "PROLOG_MIGRATE_UNKNOWN_FAILURE",
        "DISK_RESIZE",
        "DISK_RESIZE_POWEROFF",
        "DISK_RESIZE_UNDEPLOYED",
        "HOTPLUG_NIC_POWEROFF",
        "HOTPLUG_RESIZE",
        "HOTPLUG_SAVEAS_UNDEPLOYED",
        "HOTPLUG_SAVEAS_STOPPED",
        "BACKUP",
        "BACKUP_POWEROFF",
        "RESTORE",
    ];
}

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
    pub const ZERO: Delays = Delays {
        schedule: Duration::ZERO,
        prolog: Duration::ZERO,
        boot: Duration::ZERO,
        shutdown: Duration::ZERO,
        epilog: Duration::ZERO,
        dispatch: Duration::ZERO,
    };

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

/// A step of the life cycle that happens when its time comes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Step {
    Schedule,
    /// An accepted action reaches the driver: the VM enters this LCM state.
    Enter(i32),
    PrologDone,
    BootDone,
    PoweroffDone,
    ShutdownDone,
    EpilogDone,
    UndeployDone,
}

/// One HISTORY record (a placement).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct History {
    /// SEQ.
    pub seq: i32,
    /// Host index.
    pub host: usize,
    /// STIME.
    pub stime: i64,
    /// ETIME.
    pub etime: i64,
    /// PSTIME.
    pub pstime: i64,
    /// PETIME.
    pub petime: i64,
    /// RSTIME.
    pub rstime: i64,
    /// RETIME.
    pub retime: i64,
    /// ESTIME.
    pub estime: i64,
    /// EETIME.
    pub eetime: i64,
    /// ACTION number.
    pub action: i32,
    /// Request that caused the action (-1 when none).
    pub request_id: i64,
    /// UID of the requester (-1 when none).
    pub uid: i32,
}

/// A NIC lease.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lease {
    /// Address index inside the AR.
    pub index: u32,
    /// Owning VM.
    pub vm: i32,
}

/// A virtual network: its seed document and its leases.
#[derive(Debug, Clone)]
pub struct Vnet {
    /// ID.
    pub id: i32,
    /// The document as stored (TEMPLATE, AR_POOL/AR attributes …).
    pub doc: Element,
    /// Leases in use.
    pub leases: Vec<Lease>,
    /// NEXT_INDEX of the AR.
    pub next_index: u32,
    /// Addresses of the AR.
    pub size: u32,
    /// A lease was ever taken (pool bodies then show `ALLOCATED`).
    pub ever_leased: bool,
}

/// A host and its allocations.
#[derive(Debug, Clone)]
pub struct Host {
    /// ID.
    pub id: i32,
    /// The document as recorded.
    pub doc: Element,
    /// MAX_CPU (percent).
    pub max_cpu: i64,
    /// MAX_MEM (KiB).
    pub max_mem: i64,
}

/// A virtual machine.
#[derive(Debug, Clone)]
pub struct Vm {
    /// ID.
    pub id: i32,
    /// NAME.
    pub name: String,
    /// STATE.
    pub state: i32,
    /// LCM_STATE.
    pub lcm: i32,
    /// STIME.
    pub stime: i64,
    /// ETIME.
    pub etime: i64,
    /// DEPLOY_ID.
    pub deploy_id: String,
    /// The system template (TEMPLATE).
    pub template: Template,
    /// USER_TEMPLATE.
    pub user_template: Template,
    /// HISTORY records.
    pub history: Vec<History>,
    /// CPU (cores, float) charged on the host.
    pub cpu: f64,
    /// MEMORY (MB) charged on the host.
    pub memory: i64,
    /// The last monitoring record (name, value), set by [`Cloud::monitor`].
    pub monitoring: Vec<(String, String)>,
    /// LAST_POLL: when the record was taken.
    pub last_poll: i64,
    next: Option<(i64, Step)>,
    fail_boot: bool,
}

impl Vm {
    /// Starts a new HISTORY record on `host` at `secs` and returns it.
    fn open_history(&mut self, host: usize, secs: i64) -> &mut History {
        let seq = i32::try_from(self.history.len()).unwrap_or(i32::MAX);
        self.history.push(History {
            seq,
            host,
            stime: secs,
            etime: 0,
            pstime: 0,
            petime: 0,
            rstime: 0,
            retime: 0,
            estime: 0,
            eetime: 0,
            action: 0,
            request_id: -1,
            uid: -1,
        });
        self.history.last_mut().expect("just pushed")
    }

    /// The host the VM occupies (last history record) while it holds capacity.
    pub fn host(&self) -> Option<usize> {
        match self.state {
            state::ACTIVE | state::POWEROFF | state::SUSPENDED => {
                self.history.last().map(|h| h.host)
            }
            _ => None,
        }
    }

    /// The name used in wrong-state texts: the LCM name when ACTIVE, else the state name.
    pub fn state_name(&self) -> &'static str {
        if self.state == state::ACTIVE {
            lcm::NAMES
                .get(self.lcm as usize)
                .copied()
                .unwrap_or("UNKNOWN")
        } else {
            state::NAMES
                .get(self.state as usize)
                .copied()
                .unwrap_or("UNKNOWN")
        }
    }
}

/// An injected quota: creation fails once `limit` VMs (not DONE) exist.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quota {
    /// Limit on VMS.
    pub vms: usize,
}

/// A refusal: message without the method prefix, code and resp_id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// Message text after `[method] `.
    pub message: String,
    /// Error code.
    pub code: i32,
    /// resp_id.
    pub resp_id: i32,
}

impl Refusal {
    fn new(code: i32, message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            code,
            resp_id: -1,
        }
    }

    /// NO_EXISTS for `object` `id`.
    pub fn no_such(object: &str, id: i32) -> Self {
        Self {
            message: format!("Error getting {object} [{id}]."),
            code: 1024,
            resp_id: id,
        }
    }
}

/// The seeded documents the simulator starts from (the recorded 7.4.0 objects).
pub mod seed {
    /// HOST "localhost" as `one.host.info` returned it.
    pub const HOST: &str = include_str!("../seed/host.xml");
    /// VNET "geni-net" as `one.vn.info` returned it before any lease.
    pub const VNET: &str = include_str!("../seed/vnet.xml");
    /// IMAGE "geni-img".
    pub const IMAGE: &str = include_str!("../seed/image.xml");
    /// VMTEMPLATE "geni-small".
    pub const TEMPLATE: &str = include_str!("../seed/template.xml");
    /// USER oneadmin.
    pub const USER: &str = include_str!("../seed/user.xml");
    /// The datastore pool (the dummy system, image and file datastores).
    pub const DATASTORE_POOL: &str = include_str!("../seed/datastorepool.xml");
    /// The cluster pool (cluster "default").
    pub const CLUSTER_POOL: &str = include_str!("../seed/clusterpool.xml");
    /// oned.conf as `one.system.config` returned it.
    pub const CONFIG: &str = include_str!("../seed/config.xml");
}

/// Everything the simulator knows.
#[derive(Debug)]
pub struct Cloud {
    /// The release played.
    pub version: Version,
    /// Life-cycle delays.
    pub delays: Delays,
    /// Accounts: (user name, password).
    pub users: Vec<(String, String)>,
    /// Hosts.
    pub hosts: Vec<Host>,
    /// Virtual networks.
    pub vnets: Vec<Vnet>,
    /// Images (documents).
    pub images: Vec<Element>,
    /// VM templates (documents).
    pub templates: Vec<Element>,
    /// The user document.
    pub user: Element,
    /// VMs by id.
    pub vms: BTreeMap<i32, Vm>,
    /// Next VM id.
    pub next_vm_id: i32,
    /// Next VNET id.
    pub next_vnet_id: i32,
    /// UUIDs to hand out to new VMs before generated ones.
    pub uuids: VecDeque<String>,
    /// Next request id written into HISTORY/REQUEST_ID.
    pub next_request_id: i64,
    /// Clock pinned by a test (ms since the epoch), or the system clock.
    pub pinned_clock: Option<i64>,
    /// How many coming boots fail.
    pub failing_boots: u32,
    /// Injected quota.
    pub quota: Option<Quota>,
    /// Extra templates received by instantiate/allocate/update, in order.
    pub received_templates: Vec<String>,
    /// Calls per method name.
    pub call_counts: BTreeMap<String, u64>,
}

fn seed_element(text: &str) -> Element {
    xml::parse(text).unwrap_or_else(|e| panic!("seed document does not parse: {e}"))
}

impl Cloud {
    /// A cloud seeded with the recorded objects.
    pub fn new(version: Version, delays: Delays) -> Self {
        let host_doc = seed_element(seed::HOST);
        let max = |name: &str| {
            host_doc
                .value_at(&format!("HOST_SHARE/{name}"))
                .parse()
                .unwrap_or(0)
        };
        let host = Host {
            id: 0,
            max_cpu: max("MAX_CPU"),
            max_mem: max("MAX_MEM"),
            doc: host_doc,
        };
        let vnet_doc = seed_element(seed::VNET);
        let size = vnet_doc.value_at("AR_POOL/AR/SIZE").parse().unwrap_or(0);
        Cloud {
            version,
            delays,
            users: vec![("oneadmin".into(), "onetest".into())],
            hosts: vec![host],
            vnets: vec![Vnet {
                id: 0,
                doc: vnet_doc,
                leases: Vec::new(),
                next_index: 0,
                size,
                ever_leased: false,
            }],
            images: vec![seed_element(seed::IMAGE)],
            templates: vec![seed_element(seed::TEMPLATE)],
            user: seed_element(seed::USER),
            vms: BTreeMap::new(),
            next_vm_id: 0,
            next_vnet_id: 1,
            uuids: VecDeque::new(),
            next_request_id: 1,
            pinned_clock: None,
            failing_boots: 0,
            quota: None,
            received_templates: Vec::new(),
            call_counts: BTreeMap::new(),
        }
    }

    /// The current time in ms.
    pub fn now_ms(&self) -> i64 {
        self.pinned_clock.unwrap_or_else(|| {
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        })
    }

    /// Checks a session string; `None` when authentication fails.
    pub fn authenticate(&self, session: &str) -> Option<&str> {
        let (user, secret) = session.split_once(':')?;
        self.users
            .iter()
            .find(|(u, p)| u == user && p == secret)
            .map(|(u, _)| u.as_str())
    }

    fn delay_ms(d: Duration) -> i64 {
        i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
    }

    /// Runs every life-cycle step whose time has come.
    pub fn advance(&mut self) {
        let now = self.now_ms();
        loop {
            let due = self
                .vms
                .values()
                .filter_map(|vm| {
                    vm.next
                        .filter(|(at, _)| *at <= now)
                        .map(|(at, step)| (at, vm.id, step))
                })
                .min();
            let Some((at, id, step)) = due else { break };
            self.run_step(id, at, step);
        }
    }

    fn run_step(&mut self, id: i32, at: i64, step: Step) {
        let secs = at / 1000;
        let delays = self.delays;
        let Some(vm) = self.vms.get_mut(&id) else {
            return;
        };
        vm.next = None;
        match step {
            Step::Schedule => {
                let (cpu, memory) = (vm.cpu, vm.memory);
                let requirements = vm
                    .user_template
                    .single("SCHED_REQUIREMENTS")
                    .map(str::to_owned);
                match self.place(cpu, memory, requirements.as_deref()) {
                    Ok(host) => {
                        let vm = self.vms.get_mut(&id).expect("vm present");
                        vm.user_template.take("SCHED_MESSAGE");
                        vm.state = state::ACTIVE;
                        vm.lcm = lcm::PROLOG;
                        vm.template.set("TM_MAD_SYSTEM", "dummy");
                        vm.open_history(host, secs).pstime = secs;
                        vm.next = Some((at + Self::delay_ms(delays.prolog), Step::PrologDone));
                    }
                    Err(message) => {
                        let vm = self.vms.get_mut(&id).expect("vm present");
                        vm.user_template
                            .set("SCHED_MESSAGE", format!("{}: {message}", ctime(secs)));
                        vm.next = Some((at + 60_000, Step::Schedule));
                    }
                }
            }
            Step::Enter(target) => {
                vm.state = state::ACTIVE;
                vm.lcm = target;
                let (delay, then) = match target {
                    lcm::SHUTDOWN => (delays.shutdown, Step::ShutdownDone),
                    lcm::SHUTDOWN_POWEROFF => (delays.shutdown, Step::PoweroffDone),
                    lcm::SHUTDOWN_UNDEPLOY => (delays.shutdown, Step::UndeployDone),
                    lcm::BOOT_POWEROFF => (delays.boot, Step::BootDone),
                    _ => {
                        if let Some(h) = vm.history.last_mut() {
                            h.estime = secs;
                        }
                        (delays.epilog, Step::EpilogDone)
                    }
                };
                vm.next = Some((at + Self::delay_ms(delay), then));
            }
            Step::PrologDone => {
                vm.lcm = lcm::BOOT;
                if let Some(h) = vm.history.last_mut() {
                    h.petime = secs;
                    h.rstime = secs;
                }
                vm.next = Some((at + Self::delay_ms(delays.boot), Step::BootDone));
            }
            Step::BootDone => {
                let host = vm.history.last().map_or(0, |h| h.host);
                let host_name = self.host_name_of(host);
                let vm = self.vms.get_mut(&id).expect("vm present");
                if vm.fail_boot {
                    vm.fail_boot = false;
                    vm.lcm = lcm::BOOT_FAILURE;
                    if let Some(h) = vm.history.last_mut() {
                        h.retime = secs;
                    }
                    let text = format!("{}: DEPLOY: {host_name}:{}:dummy", ctime(secs), vm.name);
                    vm.user_template.set("ERROR", text);
                } else {
                    vm.lcm = lcm::RUNNING;
                    vm.deploy_id = format!("{host_name}:{}:dummy", vm.name);
                }
            }
            Step::PoweroffDone => {
                vm.state = state::POWEROFF;
                vm.lcm = lcm::INIT;
                if let Some(h) = vm.history.last_mut() {
                    h.etime = secs;
                    h.retime = secs;
                }
            }
            Step::ShutdownDone => {
                vm.lcm = lcm::EPILOG;
                if let Some(h) = vm.history.last_mut() {
                    h.retime = secs;
                    h.estime = secs;
                }
                vm.next = Some((at + Self::delay_ms(delays.epilog), Step::EpilogDone));
            }
            Step::EpilogDone => {
                if let Some(h) = vm.history.last_mut() {
                    h.eetime = secs;
                    h.etime = secs;
                }
                self.finish(id, secs);
            }
            Step::UndeployDone => {
                vm.state = state::UNDEPLOYED;
                vm.lcm = lcm::INIT;
                if let Some(h) = vm.history.last_mut() {
                    h.etime = secs;
                    h.retime = secs;
                }
            }
        }
    }

    fn host_name_of(&self, host: usize) -> String {
        self.hosts
            .get(host)
            .map_or_else(String::new, |h| h.doc.value_at("NAME").to_owned())
    }

    /// CPU (percent) and memory (KiB) allocated on a host.
    pub fn host_usage(&self, host: usize) -> (i64, i64, Vec<i32>) {
        let placed: Vec<&Vm> = self
            .vms
            .values()
            .filter(|vm| vm.host() == Some(host))
            .collect();
        let cpu = placed
            .iter()
            .map(|vm| (vm.cpu * 100.0).round() as i64)
            .sum();
        let mem = placed.iter().map(|vm| vm.memory * 1024).sum();
        (cpu, mem, placed.iter().map(|vm| vm.id).collect())
    }

    fn place(&self, cpu: f64, memory: i64, requirements: Option<&str>) -> Result<usize, String> {
        let wanted_cpu = (cpu * 100.0).round() as i64;
        let mut short_cpu = Vec::new();
        let mut short_mem = Vec::new();
        let mut matched = false;
        for (index, host) in self.hosts.iter().enumerate() {
            if host.doc.value_at("STATE") != "2"
                || requirements.is_some_and(|r| !requirements_match(r, &host.doc))
            {
                continue;
            }
            matched = true;
            let (used_cpu, used_mem, _) = self.host_usage(index);
            if memory * 1024 > host.max_mem - used_mem {
                short_mem.push(host.id.to_string());
            } else if wanted_cpu > host.max_cpu - used_cpu {
                short_cpu.push(host.id.to_string());
            } else {
                return Ok(index);
            }
        }
        if !matched {
            return Err("[HOST] No host meets SCHED_REQUIREMENTS".to_owned());
        }
        if !short_mem.is_empty() {
            return Err(format!(
                "[HOST] Not enough MEMORY on hosts: {}",
                short_mem.join(", ")
            ));
        }
        Err(format!(
            "[HOST] Not enough CPU on hosts: {}",
            short_cpu.join(", ")
        ))
    }

    /// Moves a VM to DONE: frees host capacity and network leases.
    fn finish(&mut self, id: i32, secs: i64) {
        if let Some(vm) = self.vms.get_mut(&id) {
            vm.state = state::DONE;
            vm.lcm = lcm::INIT;
            vm.etime = secs;
            vm.next = None;
        }
        for vnet in &mut self.vnets {
            vnet.leases.retain(|l| l.vm != id);
        }
    }

    /// Stores a monitoring record for a VM, as the monitor driver would (LAST_POLL = TIMESTAMP).
    pub fn monitor(&mut self, id: i32, record: Vec<(String, String)>) -> bool {
        let Some(vm) = self.vms.get_mut(&id) else {
            return false;
        };
        let timestamp = record
            .iter()
            .find(|(k, _)| k == "TIMESTAMP")
            .and_then(|(_, v)| v.parse().ok());
        vm.last_poll = timestamp.unwrap_or(self.pinned_clock.unwrap_or(0) / 1000);
        vm.monitoring = record;
        true
    }

    /// Removes a VM from the database as if purged: later calls give NO_EXISTS.
    pub fn purge(&mut self, id: i32) -> bool {
        let secs = self.now_ms() / 1000;
        if self.vms.contains_key(&id) {
            self.finish(id, secs);
        }
        self.vms.remove(&id).is_some()
    }
}

/// The IPv4 address `index` places after `first`.
pub fn ip_at(first: &str, index: u32) -> String {
    first.parse::<std::net::Ipv4Addr>().map_or_else(
        |_| String::new(),
        |a| std::net::Ipv4Addr::from(u32::from(a) + index).to_string(),
    )
}

/// The index of `ip` in an address range starting at `first`; `None`
/// before it or when either is not an IPv4 address.
pub fn ip_index(first: &str, ip: &str) -> Option<u32> {
    let a: std::net::Ipv4Addr = first.parse().ok()?;
    let b: std::net::Ipv4Addr = ip.trim().parse().ok()?;
    u32::from(b).checked_sub(u32::from(a))
}

/// The MAC address `index` places after `first`.
pub fn mac_at(first: &str, index: u32) -> String {
    let digits: String = first.chars().filter(char::is_ascii_hexdigit).collect();
    let Ok(value) = u64::from_str_radix(&digits, 16) else {
        return String::new();
    };
    let bytes = (value + u64::from(index)).to_be_bytes();
    bytes[2..]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}

/// `ctime`-style UTC date as oned writes into ERROR and SCHED_MESSAGE.
pub fn ctime(secs: i64) -> String {
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Civil-from-days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{} {} {:02} {:02}:{:02}:{:02} {year}",
        DAYS[days.rem_euclid(7) as usize],
        MONTHS[(month - 1) as usize],
        day,
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Evaluates a SCHED_REQUIREMENTS expression against a host: terms
/// `ATTR = value` / `ATTR != value` joined by `&` and `|` (no parentheses).
pub fn requirements_match(expression: &str, host: &Element) -> bool {
    expression.split('|').any(|conjunction| {
        conjunction.split('&').all(|term| {
            let term = term.trim();
            let (key, negate, value) = match term.split_once("!=") {
                Some((k, v)) => (k, true, v),
                None => match term.split_once('=') {
                    Some((k, v)) => (k, false, v),
                    None => return false,
                },
            };
            let key = key.trim();
            let value = value.trim().trim_matches('"');
            let actual = match key {
                "ID" | "NAME" | "CLUSTER_ID" | "STATE" => host.value_at(key),
                other => host.value_at(&format!("TEMPLATE/{other}")),
            };
            (actual == value) != negate
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_dates_like_oned() {
        assert_eq!(ctime(1_795_282_686), "Sat Nov 21 17:38:06 2026");
    }

    #[test]
    fn addresses_from_the_address_range() {
        assert_eq!(ip_at("10.10.0.10", 2), "10.10.0.12");
        assert_eq!(mac_at("02:00:0a:0a:00:0a", 1), "02:00:0a:0a:00:0b");
    }

    #[test]
    fn requirements_on_the_seeded_host() {
        let host = seed_element(seed::HOST);
        assert!(requirements_match("ID = 0", &host));
        assert!(requirements_match("NAME = \"localhost\"", &host));
        assert!(!requirements_match("ID = 3 | NAME = \"other\"", &host));
        assert!(requirements_match(
            "HOSTNAME = \"elsewhere\" | ID != 4",
            &host
        ));
    }
}
