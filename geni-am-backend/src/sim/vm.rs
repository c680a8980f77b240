//! One simulated VM: its placement, addresses, users and power phase, and
//! the timed transitions between phases (pending → off; booting → running
//! or failed; stopping → off).

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
    Booting(Option<String>),
    Running,
    Stopping,
    Failed(String),
}

/// A VM of the simulated cloud.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SimVm {
    /// The tag given at creation.
    pub tag: String,
    /// Index of the host it is placed on.
    pub host: usize,
    /// CPU cores it takes.
    pub cpus: u32,
    /// Memory it takes, in MiB.
    pub memory_mb: u64,
    /// Its fully qualified host name.
    pub hostname: String,
    /// Its interfaces, the control network first.
    pub nics: Vec<NicAddress>,
    /// Installed users and their keys.
    pub users: BTreeMap<String, Vec<String>>,
    /// How many boots were started (numbers the failure draws).
    pub boots: u32,
    phase: Phase,
    since: Duration,
}

impl SimVm {
    /// A VM created at `now`, pending.
    pub fn new(
        tag: String,
        host: usize,
        (cpus, memory_mb): (u32, u64),
        hostname: String,
        nics: Vec<NicAddress>,
        now: Duration,
    ) -> SimVm {
        SimVm {
            tag,
            host,
            cpus,
            memory_mb,
            hostname,
            nics,
            users: BTreeMap::new(),
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

    /// The VM as the cloud reports it.
    pub fn observe(&self) -> VmObservation {
        let (state, message) = match &self.phase {
            Phase::Pending => (VmState::Pending, "being created".to_owned()),
            Phase::Off => (VmState::Stopped, "powered off".to_owned()),
            Phase::Booting(_) => (VmState::Booting, "booting".to_owned()),
            Phase::Running => (VmState::Running, "running".to_owned()),
            Phase::Stopping => (VmState::Stopping, "powering off".to_owned()),
            Phase::Failed(message) => (VmState::Failed, message.clone()),
        };
        VmObservation {
            state,
            message,
            hostname: self.hostname.clone(),
            addresses: self.nics.clone(),
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
        self.enter(Phase::Booting(failure), now);
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
        SimVm::new("t".into(), 0, (1, 512), "n".into(), Vec::new(), at(0))
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
}
