//! One simulated VM: its placement, addresses, users and power phase, and
//! the timed transitions between phases (pending → off; booting → running
//! or failed; stopping → off).

use super::network::Nic;
use crate::{BackendError, NicAddress, UserKeys, VmObservation, VmState};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::Duration;

/// The timings of the transitions, from the configuration.
#[derive(Debug, Clone, Copy)]
pub struct Delays {
    /// Pending → powered off.
    pub create: Duration,
    /// Booting → running.
    pub boot: Duration,
    /// Stopping → powered off.
    pub stop: Duration,
}

/// Where a VM is in its life, and since when.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
enum Phase {
    Pending,
    Off,
    /// Booting; the boot ends in failure with the message when `Some`.
    Booting(Option<Box<str>>),
    Running,
    Stopping,
    Failed(Box<str>),
}

/// A VM of the simulated cloud. The simulator stands in for the cloud's
/// own database, and a hundred thousand of them live in the aggregate's
/// memory: strings are boxed (no spare capacity), the NICs are kept
/// compact ([`Nic`]), and the state file reads and writes the layout of
/// [`SavedVm`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(into = "SavedVm", try_from = "SavedVm")]
pub struct SimVm {
    /// The tag given at creation.
    pub tag: Box<str>,
    /// Its fully qualified host name.
    pub hostname: Box<str>,
    /// Its interfaces, the control network first.
    pub nics: Box<[Nic]>,
    /// Installed users and their keys.
    pub users: BTreeMap<String, Vec<String>>,
    /// Memory it takes, in MiB.
    pub memory_mb: u64,
    /// Index of the host it is placed on.
    pub host: usize,
    /// CPU cores it takes.
    pub cpus: u32,
    /// How many boots were started (numbers the failure draws).
    pub boots: u32,
    phase: Phase,
    since: Duration,
}

/// A VM as the state file keeps it: its addresses written out as the
/// cloud reports them (the layout of the files of earlier releases).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SavedVm {
    tag: String,
    host: usize,
    cpus: u32,
    memory_mb: u64,
    hostname: String,
    nics: Vec<NicAddress>,
    users: BTreeMap<String, Vec<String>>,
    boots: u32,
    phase: Phase,
    since: Duration,
}

impl From<SimVm> for SavedVm {
    fn from(vm: SimVm) -> SavedVm {
        SavedVm {
            tag: vm.tag.into(),
            host: vm.host,
            cpus: vm.cpus,
            memory_mb: vm.memory_mb,
            hostname: vm.hostname.into(),
            nics: vm.nics.iter().map(Nic::address).collect(),
            users: vm.users,
            boots: vm.boots,
            phase: vm.phase,
            since: vm.since,
        }
    }
}

impl TryFrom<SavedVm> for SimVm {
    type Error = String;

    fn try_from(saved: SavedVm) -> Result<SimVm, String> {
        let nics = saved
            .nics
            .iter()
            .map(Nic::from_address)
            .collect::<Result<_, _>>()
            .map_err(|problem| format!("simulated VM {}: {problem}", saved.tag))?;
        Ok(SimVm {
            tag: saved.tag.into(),
            hostname: saved.hostname.into(),
            nics,
            users: saved.users,
            memory_mb: saved.memory_mb,
            host: saved.host,
            cpus: saved.cpus,
            boots: saved.boots,
            phase: saved.phase,
            since: saved.since,
        })
    }
}

impl SimVm {
    /// A VM created at `now`, pending.
    pub fn new(
        tag: &str,
        host: usize,
        (cpus, memory_mb): (u32, u64),
        hostname: String,
        nics: Vec<Nic>,
        now: Duration,
    ) -> SimVm {
        SimVm {
            tag: tag.into(),
            hostname: hostname.into_boxed_str(),
            nics: nics.into_boxed_slice(),
            users: BTreeMap::new(),
            memory_mb,
            host,
            cpus,
            boots: 0,
            phase: Phase::Pending,
            since: now,
        }
    }

    /// Applies the transitions whose delay has passed by `now`.
    pub fn settle(&mut self, now: Duration, delays: &Delays) {
        let elapsed = now.saturating_sub(self.since);
        let next = match &self.phase {
            Phase::Pending if elapsed >= delays.create => Phase::Off,
            Phase::Booting(None) if elapsed >= delays.boot => Phase::Running,
            Phase::Booting(Some(message)) if elapsed >= delays.boot => {
                Phase::Failed(message.clone())
            }
            Phase::Stopping if elapsed >= delays.stop => Phase::Off,
            _ => return,
        };
        self.phase = next;
    }

    /// True while a timed transition is to come (pending, booting,
    /// stopping).
    pub fn is_moving(&self) -> bool {
        matches!(
            self.phase,
            Phase::Pending | Phase::Booting(_) | Phase::Stopping
        )
    }

    /// The VM as the cloud reports it.
    pub fn observe(&self) -> VmObservation {
        let (state, message) = match &self.phase {
            Phase::Pending => (VmState::Pending, "being created".to_owned()),
            Phase::Off => (VmState::Stopped, "powered off".to_owned()),
            Phase::Booting(_) => (VmState::Booting, "booting".to_owned()),
            Phase::Running => (VmState::Running, "running".to_owned()),
            Phase::Stopping => (VmState::Stopping, "powering off".to_owned()),
            Phase::Failed(message) => (VmState::Failed, message.to_string()),
        };
        VmObservation {
            state,
            message,
            hostname: self.hostname.to_string(),
            addresses: self.nics.iter().map(Nic::address).collect(),
        }
    }

    /// Starts a boot at `now`; `failure` is the message the boot ends with,
    /// if it is to fail. Powered-off and failed VMs can boot.
    pub fn boot(&mut self, now: Duration, failure: Option<String>) -> Result<(), BackendError> {
        match self.phase {
            Phase::Off | Phase::Failed(_) => self.begin_boot(now, failure),
            Phase::Booting(_) | Phase::Running => Ok(()),
            Phase::Pending | Phase::Stopping => Err(self.busy("start")),
        }
    }

    /// Reboots a running VM at `now`.
    pub fn reboot(&mut self, now: Duration, failure: Option<String>) -> Result<(), BackendError> {
        match self.phase {
            Phase::Running | Phase::Booting(_) => self.begin_boot(now, failure),
            Phase::Pending | Phase::Stopping => Err(self.busy("restart")),
            Phase::Off | Phase::Failed(_) => Err(BackendError::Permanent(format!(
                "simulated VM {} is not running and cannot be restarted",
                self.tag
            ))),
        }
    }

    /// Powers the VM off at `now`.
    pub fn power_off(&mut self, now: Duration) -> Result<(), BackendError> {
        match self.phase {
            Phase::Running | Phase::Booting(_) => {
                self.enter(Phase::Stopping, now);
                Ok(())
            }
            Phase::Off | Phase::Stopping | Phase::Failed(_) => Ok(()),
            Phase::Pending => Err(self.busy("stop")),
        }
    }

    /// Replaces the keys of the listed users, leaving the others alone.
    pub fn install_users(&mut self, users: &[UserKeys]) -> Result<(), BackendError> {
        if self.phase != Phase::Running {
            return Err(BackendError::Permanent(format!(
                "simulated VM {} is not running; keys are installed on running VMs",
                self.tag
            )));
        }
        for user in users {
            self.users.insert(user.urn.clone(), user.keys.clone());
        }
        Ok(())
    }

    fn begin_boot(&mut self, now: Duration, failure: Option<String>) -> Result<(), BackendError> {
        self.boots += 1;
        self.enter(Phase::Booting(failure.map(String::into_boxed_str)), now);
        Ok(())
    }

    fn enter(&mut self, phase: Phase, now: Duration) {
        self.phase = phase;
        self.since = now;
    }

    fn busy(&self, action: &str) -> BackendError {
        BackendError::Transient(format!(
            "simulated VM {} is in transition; {action} later",
            self.tag
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DELAYS: Delays = Delays {
        create: Duration::from_secs(1),
        boot: Duration::from_secs(2),
        stop: Duration::from_secs(1),
    };

    fn at(secs: u64) -> Duration {
        Duration::from_secs(secs)
    }

    fn vm() -> SimVm {
        SimVm::new("t", 0, (1, 512), "n".into(), Vec::new(), at(0))
    }

    fn state(vm: &mut SimVm, now: Duration) -> VmState {
        vm.settle(now, &DELAYS);
        vm.observe().state
    }

    #[test]
    fn a_vm_is_pending_then_off_then_boots_and_runs() {
        let mut vm = vm();
        assert_eq!(state(&mut vm, at(0)), VmState::Pending);
        assert!(vm.boot(at(0), None).unwrap_err().is_transient());
        assert_eq!(state(&mut vm, at(1)), VmState::Stopped);
        vm.boot(at(1), None).unwrap();
        assert_eq!(state(&mut vm, at(2)), VmState::Booting);
        assert_eq!(state(&mut vm, at(3)), VmState::Running);
        vm.power_off(at(3)).unwrap();
        assert_eq!(state(&mut vm, at(3)), VmState::Stopping);
        assert_eq!(state(&mut vm, at(4)), VmState::Stopped);
        assert!(vm.reboot(at(4), None).is_err());
    }

    #[test]
    fn a_failing_boot_ends_failed_with_its_message() {
        let mut vm = vm();
        vm.settle(at(1), &DELAYS);
        vm.boot(at(1), Some("disk image corrupt".into())).unwrap();
        assert_eq!(state(&mut vm, at(2)), VmState::Booting);
        let seen = {
            vm.settle(at(3), &DELAYS);
            vm.observe()
        };
        assert_eq!(seen.state, VmState::Failed);
        assert_eq!(seen.message, "disk image corrupt");
        assert_eq!(vm.boots, 1);
    }

    #[test]
    fn keys_are_replaced_per_user_on_running_vms_only() {
        let mut vm = vm();
        let alice = |keys: &[&str]| UserKeys {
            urn: "alice".into(),
            keys: keys.iter().map(|k| k.to_string()).collect(),
        };
        assert!(vm.install_users(&[alice(&["k1"])]).is_err());
        vm.settle(at(1), &DELAYS);
        vm.boot(at(1), None).unwrap();
        vm.settle(at(3), &DELAYS);
        vm.install_users(&[alice(&["k1"])]).unwrap();
        vm.install_users(&[UserKeys {
            urn: "bob".into(),
            keys: vec![],
        }])
        .unwrap();
        vm.install_users(&[alice(&["k2"])]).unwrap();
        assert_eq!(vm.users["alice"], vec!["k2".to_owned()]);
        assert!(vm.users["bob"].is_empty());
    }

    #[test]
    fn a_vm_reads_and_writes_the_state_file_layout_of_earlier_releases() {
        let saved = serde_json::json!({
            "tag": "urn:publicid:IDN+geni-am.test+sliver+1",
            "host": 1,
            "cpus": 2,
            "memory_mb": 2048,
            "hostname": "node-a-7.sim.geni-am.test",
            "nics": [
                {"network": null, "ip": "10.10.0.9", "mac": "02:00:0a:0a:00:09",
                 "netmask": "255.255.0.0"},
                {"network": "3", "ip": "10.0.0.1", "mac": "02:00:0a:00:00:01",
                 "netmask": null}
            ],
            "users": {"alice": ["ssh-ed25519 AAAA"]},
            "boots": 1,
            "phase": {"Booting": "disk image corrupt"},
            "since": {"secs": 4, "nanos": 0}
        });
        let vm: SimVm = serde_json::from_value(saved.clone()).unwrap();
        assert_eq!(vm.nics[1].link, Some(3));
        assert_eq!(
            vm.observe().addresses[0].netmask.as_deref(),
            Some("255.255.0.0")
        );
        assert_eq!(serde_json::to_value(&vm).unwrap(), saved);

        let mut broken = saved;
        broken["nics"][0]["ip"] = "10.10.0".into();
        let err = serde_json::from_value::<SimVm>(broken).unwrap_err();
        assert!(err.to_string().contains("not an IPv4 address"), "{err}");
    }
}
