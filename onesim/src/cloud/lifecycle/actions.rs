//! `one.vm.action`: the state check of every action with oned's refusal
//! texts, and the transitions an accepted action starts (history stamps at
//! once, the LCM change when the action reaches the driver).

use super::{Engine, Step, Vm};
use crate::cloud::clock::millis;
use crate::cloud::inventory::Inventory;
use crate::cloud::state::{LcmState, VmState};
use crate::refusal::Refusal;
use crate::version::Version;

/// The actions oned knows, by their current names.
const KNOWN: [&str; 15] = [
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
];

/// The name an action has in the release played (older aliases mapped).
fn canonical(version: Version, action: &str) -> &str {
    match action {
        "shutdown" if version.has_action_aliases() => "terminate",
        "shutdown-hard" | "delete" if version.has_action_aliases() => "terminate-hard",
        other => other,
    }
}

/// One accepted action's context: when it arrived, when it reaches the
/// driver, and the request id it stamps into HISTORY.
#[derive(Debug, Clone, Copy)]
struct Request {
    now: i64,
    dispatched: i64,
    schedule_at: i64,
    request_id: i64,
}

impl Request {
    fn secs(self) -> i64 {
        self.now / 1000
    }

    /// Stamps the last HISTORY record with the action `number` and this request.
    fn stamp(self, vm: &mut Vm, number: i32) {
        if let Some(h) = vm.history.last_mut() {
            h.action = number;
            h.uid = 0;
            h.request_id = self.request_id;
        }
    }

    /// Stamps `number` and sends the VM into `target` when the action reaches the driver.
    fn dispatch(self, vm: &mut Vm, number: i32, target: LcmState) {
        self.stamp(vm, number);
        vm.next = Some((self.dispatched, Step::Enter(target)));
    }
}

/// The refusal of `action` for a VM in the wrong state.
fn wrong(version: Version, action: &str, vm: &Vm, verb: &str) -> Refusal {
    let text = if version.new_wrong_state_text() {
        format!(
            "Error performing action \"{action}\": This action is not available for state {}",
            vm.state_name()
        )
    } else {
        format!(
            "Error performing action \"{action}\": Could not {verb} VM {}, wrong state {}.",
            vm.id(),
            vm.state_name()
        )
    };
    Refusal::new(Refusal::ACTION, text)
}

/// Whether the VM is ACTIVE in `lcm`.
fn active_in(vm: &Vm, lcm: LcmState) -> bool {
    vm.state == VmState::Active && vm.lcm == lcm
}

/// RUNNING, or UNKNOWN (the states most actions accept).
fn running_or_unknown(vm: &Vm) -> bool {
    active_in(vm, LcmState::Running) || active_in(vm, LcmState::Unknown)
}

impl Engine {
    /// Applies `one.vm.action` for the release `version`. The error is the
    /// refusal without the method prefix.
    pub fn action(
        &mut self,
        inventory: &mut Inventory,
        version: Version,
        action: &str,
        id: i32,
    ) -> Result<(), Refusal> {
        let canonical = canonical(version, action);
        if !KNOWN.contains(&canonical) {
            return Err(Refusal::new(
                Refusal::ACTION,
                format!("Action \"{action}\" is not supported"),
            ));
        }
        let now = self.clock.now_ms();
        let request = Request {
            now,
            dispatched: now + millis(self.delays.dispatch),
            schedule_at: now + millis(self.delays.schedule),
            request_id: self.next_request_id,
        };
        self.next_request_id += 1;
        let vm = self
            .vms
            .get_mut(&id)
            .ok_or_else(|| Refusal::no_such("virtual machine", id))?;
        let refuse = |vm: &Vm, verb: &str| Err(wrong(version, action, vm, verb));
        match canonical {
            "terminate" | "terminate-hard" => {
                let hard = canonical == "terminate-hard";
                let unplaced = matches!(
                    vm.state,
                    VmState::Init
                        | VmState::Pending
                        | VmState::Hold
                        | VmState::Cloning
                        | VmState::CloningFailure
                );
                if unplaced {
                    self.finish(inventory, id, request.secs());
                    return Ok(());
                }
                terminate(vm, hard, request).or_else(|()| refuse(vm, "terminate"))
            }
            "poweroff" | "poweroff-hard" => {
                let hard = canonical == "poweroff-hard";
                if running_or_unknown(vm) || (hard && active_in(vm, LcmState::ShutdownPoweroff)) {
                    request.dispatch(vm, if hard { 20 } else { 19 }, LcmState::ShutdownPoweroff);
                    return Ok(());
                }
                refuse(vm, "power off")
            }
            "undeploy" | "undeploy-hard" => {
                if running_or_unknown(vm) || vm.state == VmState::Poweroff {
                    let number = if canonical == "undeploy" { 5 } else { 6 };
                    request.dispatch(vm, number, LcmState::ShutdownUndeploy);
                    return Ok(());
                }
                refuse(vm, "undeploy")
            }
            "reboot" | "reboot-hard" => {
                if active_in(vm, LcmState::Running) {
                    request.stamp(vm, if canonical == "reboot" { 15 } else { 16 });
                    return Ok(());
                }
                refuse(vm, "reboot")
            }
            "suspend" => {
                if active_in(vm, LcmState::Running) {
                    request.stamp(vm, 10);
                    rest(vm, VmState::Suspended);
                    return Ok(());
                }
                refuse(vm, "suspend")
            }
            "stop" => {
                if active_in(vm, LcmState::Running) || vm.state == VmState::Suspended {
                    request.stamp(vm, 9);
                    rest(vm, VmState::Stopped);
                    if let Some(h) = vm.history.last_mut() {
                        h.etime = request.secs();
                    }
                    return Ok(());
                }
                refuse(vm, "stop")
            }
            "resume" => resume(vm, request).or_else(|()| refuse(vm, "resume")),
            "hold" => {
                if vm.state == VmState::Pending {
                    vm.state = VmState::Hold;
                    vm.next = None;
                    return Ok(());
                }
                refuse(vm, "hold")
            }
            "release" => {
                if vm.state == VmState::Hold {
                    vm.state = VmState::Pending;
                    vm.next = Some((request.schedule_at, Step::Schedule));
                    return Ok(());
                }
                refuse(vm, "release")
            }
            _ => {
                if running_or_unknown(vm) || vm.state == VmState::Poweroff {
                    return Ok(());
                }
                refuse(vm, "set rescheduling flag for")
            }
        }
    }
}

/// `terminate` of a VM that was placed: a shutdown from RUNNING (or
/// UNKNOWN, or SHUTDOWN again when hard), an epilog from a failure or a
/// resting state. DONE accepts it and nothing happens.
fn terminate(vm: &mut Vm, hard: bool, request: Request) -> Result<(), ()> {
    let number = if hard { 28 } else { 27 };
    if vm.state == VmState::Done {
        return Ok(());
    }
    if running_or_unknown(vm) || (hard && active_in(vm, LcmState::Shutdown)) {
        request.dispatch(vm, number, LcmState::Shutdown);
        return Ok(());
    }
    let failed = vm.state == VmState::Active && vm.lcm.is_failure();
    let resting = matches!(
        vm.state,
        VmState::Poweroff | VmState::Suspended | VmState::Stopped | VmState::Undeployed
    );
    if failed || resting {
        // From a failure state oned cleans up through the delete path (HISTORY ACTION 13).
        request.dispatch(vm, if failed { 13 } else { number }, LcmState::Epilog);
        return Ok(());
    }
    Err(())
}

/// `resume`: a powered-off or suspended VM boots again on its host (a new
/// HISTORY record); a stopped or undeployed one goes back to the scheduler.
fn resume(vm: &mut Vm, request: Request) -> Result<(), ()> {
    let secs = request.secs();
    match vm.state {
        VmState::Poweroff | VmState::Suspended => {
            if let Some(h) = vm.history.last_mut() {
                h.etime = secs;
                h.retime = secs;
            }
            let host = vm.history.last().map_or(0, |h| h.host);
            vm.open_history(host, secs).rstime = secs;
            request.dispatch(vm, 11, LcmState::BootPoweroff);
            Ok(())
        }
        VmState::Stopped | VmState::Undeployed => {
            rest(vm, VmState::Pending);
            vm.next = Some((request.schedule_at, Step::Schedule));
            Ok(())
        }
        _ => Err(()),
    }
}

/// The VM leaves ACTIVE for `state` at once (LCM_INIT).
fn rest(vm: &mut Vm, state: VmState) {
    vm.state = state;
    vm.lcm = LcmState::Init;
}
