//! `one.vm.action`: the state check of every action with oned's refusal
//! texts, and the transitions an accepted action starts (history stamps at
//! once, the LCM change when the action reaches the driver).

use super::{Cloud, Refusal, Step, Vm, lcm, state};

impl Cloud {
    /// Applies `one.vm.action`. The error is the refusal without the method prefix.
    pub fn action(&mut self, action: &str, id: i32) -> Result<(), Refusal> {
        self.advance();
        let canonical = match action {
            "shutdown" if self.version.has_action_aliases() => "terminate",
            "shutdown-hard" | "delete" if self.version.has_action_aliases() => "terminate-hard",
            other => other,
        };
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
        if !KNOWN.contains(&canonical) {
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
                    let record = vm.open_history(host, secs);
                    record.rstime = secs;
                    record.action = 11;
                    record.request_id = request_id;
                    record.uid = 0;
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
}
