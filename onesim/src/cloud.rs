//! The simulated cloud: seeded host, network, image, template and user, the
//! VMs with their life cycle (PENDING → PROLOG → BOOT → RUNNING and the action
//! transitions of the recorded `states.txt`), host capacity, network leases,
//! and the injected failures. Time is a settable clock in milliseconds; the
//! life cycle advances lazily whenever the clock is read.

use crate::template::{AttrValue, Template};
use crate::version::Version;
use crate::xml::{self, Element};
use std::collections::{BTreeMap, VecDeque};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

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
                        let seq = i32::try_from(vm.history.len()).unwrap_or(i32::MAX);
                        vm.history.push(History {
                            seq,
                            host,
                            stime: secs,
                            etime: 0,
                            pstime: secs,
                            petime: 0,
                            rstime: 0,
                            retime: 0,
                            estime: 0,
                            eetime: 0,
                            action: 0,
                            request_id: -1,
                            uid: -1,
                        });
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

    /// Applies `one.vm.action`. The error is the refusal without the method prefix.
    pub fn action(&mut self, action: &str, id: i32) -> Result<(), Refusal> {
        self.advance();
        let canonical = match action {
            "shutdown" if self.version.has_action_aliases() => "terminate",
            "shutdown-hard" | "delete" if self.version.has_action_aliases() => "terminate-hard",
            other => other,
        };
        const KNOWN: [&str; 17] = [
            "terminate",
            "terminate-hard",
            "undeploy",
            "undeploy-hard",
            "poweroff",
            "poweroff-hard",
            "reboot",
            "reboot-hard",
            "suspend",
            "stop",
            "resume",
            "hold",
            "release",
            "resched",
            "unresched",
            "delete-recreate",
            "boot",
        ];
        if !KNOWN[..15].contains(&canonical) {
            return Err(Refusal::new(
                2048,
                format!("Action \"{action}\" is not supported"),
            ));
        }
        let now = self.now_ms();
        let secs = now / 1000;
        let request_id = self.next_request_id;
        self.next_request_id += 1;
        let delays = self.delays;
        let dispatched = now + Self::delay_ms(delays.dispatch);
        let version = self.version;
        let vm = self
            .vms
            .get_mut(&id)
            .ok_or_else(|| Refusal::no_such("virtual machine", id))?;
        let (st, lc) = (vm.state, vm.lcm);
        let running = st == state::ACTIVE && lc == lcm::RUNNING;
        let failed = st == state::ACTIVE && (36..=50).contains(&lc) && lc != 43 && lc != 45;
        let wrong = |vm: &Vm, verb: &str| {
            let text = if version.new_wrong_state_text() {
                format!(
                    "Error performing action \"{action}\": This action is not available for state {}",
                    vm.state_name()
                )
            } else {
                format!(
                    "Error performing action \"{action}\": Could not {verb} VM {}, wrong state {}.",
                    vm.id,
                    vm.state_name()
                )
            };
            Refusal::new(2048, text)
        };
        let stamp = |vm: &mut Vm, number: i32| {
            if let Some(h) = vm.history.last_mut() {
                h.action = number;
                h.uid = 0;
                h.request_id = request_id;
            }
        };
        match canonical {
            "terminate" | "terminate-hard" => {
                let hard = canonical == "terminate-hard";
                let number = if hard { 28 } else { 27 };
                if st == state::DONE {
                    return Ok(());
                }
                if matches!(st, state::PENDING | state::HOLD | 0 | 10 | 11) {
                    self.finish(id, secs);
                    return Ok(());
                }
                if running
                    || (st == state::ACTIVE && lc == 16)
                    || (hard && st == state::ACTIVE && lc == lcm::SHUTDOWN)
                {
                    stamp(vm, number);
                    vm.next = Some((dispatched, Step::Enter(lcm::SHUTDOWN)));
                    return Ok(());
                }
                if failed
                    || matches!(
                        st,
                        state::POWEROFF | state::SUSPENDED | state::STOPPED | state::UNDEPLOYED
                    )
                {
                    // From a failure state oned cleans up through the delete path (HISTORY ACTION 13).
                    stamp(vm, if failed { 13 } else { number });
                    vm.next = Some((dispatched, Step::Enter(lcm::EPILOG)));
                    return Ok(());
                }
                Err(wrong(vm, "terminate"))
            }
            "poweroff" | "poweroff-hard" => {
                let hard = canonical == "poweroff-hard";
                if running
                    || (st == state::ACTIVE && lc == 16)
                    || (hard && st == state::ACTIVE && lc == lcm::SHUTDOWN_POWEROFF)
                {
                    stamp(vm, if hard { 20 } else { 19 });
                    vm.next = Some((dispatched, Step::Enter(lcm::SHUTDOWN_POWEROFF)));
                    return Ok(());
                }
                Err(wrong(vm, "power off"))
            }
            "undeploy" | "undeploy-hard" => {
                if running || st == state::POWEROFF || (st == state::ACTIVE && lc == 16) {
                    stamp(vm, if canonical == "undeploy" { 5 } else { 6 });
                    vm.next = Some((dispatched, Step::Enter(lcm::SHUTDOWN_UNDEPLOY)));
                    return Ok(());
                }
                Err(wrong(vm, "undeploy"))
            }
            "reboot" | "reboot-hard" => {
                if running {
                    stamp(vm, if canonical == "reboot" { 15 } else { 16 });
                    return Ok(());
                }
                Err(wrong(vm, "reboot"))
            }
            "suspend" => {
                if running {
                    stamp(vm, 10);
                    vm.state = state::SUSPENDED;
                    vm.lcm = lcm::INIT;
                    return Ok(());
                }
                Err(wrong(vm, "suspend"))
            }
            "stop" => {
                if running || st == state::SUSPENDED {
                    stamp(vm, 9);
                    vm.state = state::STOPPED;
                    vm.lcm = lcm::INIT;
                    if let Some(h) = vm.history.last_mut() {
                        h.etime = secs;
                    }
                    return Ok(());
                }
                Err(wrong(vm, "stop"))
            }
            "resume" => match st {
                state::POWEROFF | state::SUSPENDED => {
                    if let Some(h) = vm.history.last_mut() {
                        h.etime = secs;
                        h.retime = secs;
                    }
                    let host = vm.history.last().map_or(0, |h| h.host);
                    let seq = i32::try_from(vm.history.len()).unwrap_or(i32::MAX);
                    vm.history.push(History {
                        seq,
                        host,
                        stime: secs,
                        etime: 0,
                        pstime: 0,
                        petime: 0,
                        rstime: secs,
                        retime: 0,
                        estime: 0,
                        eetime: 0,
                        action: 11,
                        request_id,
                        uid: 0,
                    });
                    vm.next = Some((dispatched, Step::Enter(lcm::BOOT_POWEROFF)));
                    Ok(())
                }
                state::STOPPED | state::UNDEPLOYED => {
                    vm.state = state::PENDING;
                    vm.lcm = lcm::INIT;
                    vm.next = Some((now + Self::delay_ms(delays.schedule), Step::Schedule));
                    Ok(())
                }
                _ => Err(wrong(vm, "resume")),
            },
            "hold" => {
                if st == state::PENDING {
                    vm.state = state::HOLD;
                    vm.next = None;
                    return Ok(());
                }
                Err(wrong(vm, "hold"))
            }
            "release" => {
                if st == state::HOLD {
                    vm.state = state::PENDING;
                    vm.next = Some((now + Self::delay_ms(delays.schedule), Step::Schedule));
                    return Ok(());
                }
                Err(wrong(vm, "release"))
            }
            _ => {
                if running || st == state::POWEROFF || (st == state::ACTIVE && lc == 16) {
                    return Ok(());
                }
                Err(wrong(vm, "set rescheduling flag for"))
            }
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

fn ip_index(first: &str, ip: &str) -> Option<u32> {
    let a: std::net::Ipv4Addr = first.parse().ok()?;
    let b: std::net::Ipv4Addr = ip.parse().ok()?;
    u32::from(b).checked_sub(u32::from(a))
}

/// The IPv4 address `index` places after `first`.
pub fn ip_at(first: &str, index: u32) -> String {
    first.parse::<std::net::Ipv4Addr>().map_or_else(
        |_| String::new(),
        |a| std::net::Ipv4Addr::from(u32::from(a) + index).to_string(),
    )
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
        assert_eq!(ip_index("10.10.0.10", "10.10.0.15"), Some(5));
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

    #[test]
    fn names_are_checked() {
        assert_eq!(
            check_name("urn:x").unwrap_err(),
            "Invalid NAME, char ':' is not allowed"
        );
        assert!(check_name("geni-node-0").is_ok());
    }
}
