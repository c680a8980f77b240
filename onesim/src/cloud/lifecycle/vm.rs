//! A VM as the engine keeps it: its states, its templates, its placements
//! (HISTORY records), its charge on the host and the next step due.

use crate::cloud::state::{LcmState, VmState};
use crate::template::Template;

/// A step of the life cycle that happens when its time comes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Step {
    Schedule,
    /// An accepted action reaches the driver: the VM enters this LCM state.
    Enter(LcmState),
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

/// What creation hands the engine: a VM's name, templates and charge.
#[derive(Debug)]
pub struct NewVm {
    /// NAME.
    pub name: String,
    /// The system template (TEMPLATE).
    pub template: Template,
    /// USER_TEMPLATE.
    pub user_template: Template,
    /// CPU (cores, float) charged on the host.
    pub cpu: f64,
    /// MEMORY (MB) charged on the host.
    pub memory: i64,
    /// Created on HOLD instead of PENDING.
    pub hold: bool,
    /// Its boot ends in BOOT_FAILURE.
    pub fail_boot: bool,
}

/// A virtual machine.
#[derive(Debug, Clone)]
pub struct Vm {
    id: i32,
    pub(super) name: String,
    pub(super) state: VmState,
    pub(super) lcm: LcmState,
    stime: i64,
    pub(super) etime: i64,
    pub(super) deploy_id: String,
    pub(super) template: Template,
    pub(super) user_template: Template,
    pub(super) history: Vec<History>,
    cpu: f64,
    memory: i64,
    pub(super) monitoring: Vec<(String, String)>,
    pub(super) last_poll: i64,
    pub(super) next: Option<(i64, Step)>,
    pub(super) fail_boot: bool,
}

impl Vm {
    /// A VM created at `stime`, PENDING (or HOLD), with its first step.
    pub(super) fn new(id: i32, new: NewVm, stime: i64, next: Option<(i64, Step)>) -> Self {
        Vm {
            id,
            name: new.name,
            state: if new.hold {
                VmState::Hold
            } else {
                VmState::Pending
            },
            lcm: LcmState::Init,
            stime,
            etime: 0,
            deploy_id: String::new(),
            template: new.template,
            user_template: new.user_template,
            history: Vec::new(),
            cpu: new.cpu,
            memory: new.memory,
            monitoring: Vec::new(),
            last_poll: 0,
            next,
            fail_boot: new.fail_boot,
        }
    }

    /// ID.
    pub fn id(&self) -> i32 {
        self.id
    }

    /// NAME.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// STATE.
    pub fn state(&self) -> VmState {
        self.state
    }

    /// LCM_STATE.
    pub fn lcm(&self) -> LcmState {
        self.lcm
    }

    /// STIME.
    pub fn stime(&self) -> i64 {
        self.stime
    }

    /// ETIME.
    pub fn etime(&self) -> i64 {
        self.etime
    }

    /// DEPLOY_ID (empty before the first boot).
    pub fn deploy_id(&self) -> &str {
        &self.deploy_id
    }

    /// The system template (TEMPLATE).
    pub fn template(&self) -> &Template {
        &self.template
    }

    /// The system template, for `one.vm.updateconf`.
    pub fn template_mut(&mut self) -> &mut Template {
        &mut self.template
    }

    /// USER_TEMPLATE.
    pub fn user_template(&self) -> &Template {
        &self.user_template
    }

    /// USER_TEMPLATE, for `one.vm.update`.
    pub fn user_template_mut(&mut self) -> &mut Template {
        &mut self.user_template
    }

    /// HISTORY records, oldest first.
    pub fn history(&self) -> &[History] {
        &self.history
    }

    /// The last monitoring record (name, value).
    pub fn monitoring(&self) -> &[(String, String)] {
        &self.monitoring
    }

    /// LAST_POLL: when the monitoring record was taken.
    pub fn last_poll(&self) -> i64 {
        self.last_poll
    }

    /// CPU charged on the host, in percent of a core.
    pub fn cpu_percent(&self) -> i64 {
        (self.cpu * 100.0).round() as i64
    }

    /// Memory charged on the host, in KiB.
    pub fn memory_kib(&self) -> i64 {
        self.memory * 1024
    }

    /// The step due at or before `now`, with its time.
    pub(super) fn due(&self, now: i64) -> Option<(i64, Step)> {
        self.next.filter(|(at, _)| *at <= now)
    }

    /// Starts a new HISTORY record on `host` at `secs` and returns it.
    pub(super) fn open_history(&mut self, host: usize, secs: i64) -> &mut History {
        let seq = i32::try_from(self.history.len()).unwrap_or(i32::MAX);
        let record = History {
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
        };
        self.history.push(record);
        let last = self.history.len() - 1;
        &mut self.history[last]
    }

    /// The host the VM occupies (last history record) while it holds capacity.
    pub fn host(&self) -> Option<usize> {
        match self.state {
            VmState::Active | VmState::Poweroff | VmState::Suspended => {
                self.history.last().map(|h| h.host)
            }
            _ => None,
        }
    }

    /// The name used in wrong-state texts: the LCM name when ACTIVE, else the state name.
    pub fn state_name(&self) -> &'static str {
        if self.state == VmState::Active {
            self.lcm.name()
        } else {
            self.state.name()
        }
    }
}
