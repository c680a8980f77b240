//! The operational state machine a sliver type goes through once
//! provisioned, as advertised with the opstate extension (GENI AM API v3
//! specification, section "Operational States").

/// One sliver type's operational state machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateMachine {
    /// The state a sliver is in right after Provision.
    pub start: String,
    /// Every state, in the order they are advertised.
    pub states: Vec<State>,
}

/// One operational state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct State {
    /// `geni_…` name.
    pub name: String,
    /// What the state means for the experimenter.
    pub description: String,
    /// What the experimenter may do in this state.
    pub actions: Vec<Action>,
    /// Where the sliver goes on its own from this state.
    pub waits: Vec<Wait>,
}

/// An operational action (PerformOperationalAction) allowed in a state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Action {
    /// `geni_…` action name.
    pub name: String,
    /// State the action leads to.
    pub next: String,
    /// What it does.
    pub description: String,
}

/// A transition the AM makes without being asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wait {
    /// `geni_success` or `geni_failure`.
    pub outcome: String,
    /// State reached.
    pub next: String,
}

impl StateMachine {
    /// The machine of a virtual machine sliver: provisioning ends in
    /// `geni_notready`, `geni_start` boots it through `geni_configuring` to
    /// `geni_ready`, where it can be restarted, stopped or given new users'
    /// keys; any failure ends in `geni_failed`.
    pub fn virtual_machine() -> Self {
        Self {
            start: "geni_pending_allocation".to_owned(),
            states: vec![
                state(
                    "geni_pending_allocation",
                    "The virtual machine is being created; no action is possible yet.",
                    &[],
                    &[
                        ("geni_success", "geni_notready"),
                        ("geni_failure", "geni_failed"),
                    ],
                ),
                state(
                    "geni_notready",
                    "The virtual machine exists but is not running.",
                    &[(
                        "geni_start",
                        "geni_configuring",
                        "Boot the virtual machine.",
                    )],
                    &[],
                ),
                state(
                    "geni_configuring",
                    "The virtual machine is booting and installing the users' SSH keys.",
                    &[],
                    &[
                        ("geni_success", "geni_ready"),
                        ("geni_failure", "geni_failed"),
                    ],
                ),
                state(
                    "geni_ready",
                    "The virtual machine is running; users can log in.",
                    &[
                        (
                            "geni_restart",
                            "geni_configuring",
                            "Reboot the virtual machine.",
                        ),
                        (
                            "geni_stop",
                            "geni_stopping",
                            "Power the virtual machine off.",
                        ),
                        (
                            "geni_update_users",
                            "geni_updating_users",
                            "Install the SSH keys given with the action.",
                        ),
                    ],
                    &[],
                ),
                state(
                    "geni_stopping",
                    "The virtual machine is shutting down.",
                    &[],
                    &[
                        ("geni_success", "geni_notready"),
                        ("geni_failure", "geni_failed"),
                    ],
                ),
                state(
                    "geni_updating_users",
                    "The users' SSH keys are being installed.",
                    &[],
                    &[
                        ("geni_success", "geni_ready"),
                        ("geni_failure", "geni_failed"),
                    ],
                ),
                state(
                    "geni_failed",
                    "The virtual machine failed; delete the sliver or ask the operators for help.",
                    &[],
                    &[],
                ),
            ],
        }
    }
}

/// Builds a [`State`] from borrowed parts.
fn state(
    name: &str,
    description: &str,
    actions: &[(&str, &str, &str)],
    waits: &[(&str, &str)],
) -> State {
    State {
        name: name.to_owned(),
        description: description.to_owned(),
        actions: actions
            .iter()
            .map(|(name, next, description)| Action {
                name: (*name).to_owned(),
                next: (*next).to_owned(),
                description: (*description).to_owned(),
            })
            .collect(),
        waits: waits
            .iter()
            .map(|(outcome, next)| Wait {
                outcome: (*outcome).to_owned(),
                next: (*next).to_owned(),
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_transition_of_the_vm_machine_leads_to_a_defined_state() {
        let machine = StateMachine::virtual_machine();
        let names: Vec<&str> = machine.states.iter().map(|s| s.name.as_str()).collect();
        assert!(names.contains(&machine.start.as_str()));
        for state in &machine.states {
            for next in state
                .actions
                .iter()
                .map(|a| &a.next)
                .chain(state.waits.iter().map(|w| &w.next))
            {
                assert!(names.contains(&next.as_str()), "{} -> {next}", state.name);
            }
        }
    }

    #[test]
    fn vm_machine_offers_the_actions_tools_look_for() {
        let machine = StateMachine::virtual_machine();
        let actions: Vec<&str> = machine
            .states
            .iter()
            .flat_map(|s| s.actions.iter().map(|a| a.name.as_str()))
            .collect();
        for wanted in [
            "geni_start",
            "geni_stop",
            "geni_restart",
            "geni_update_users",
        ] {
            assert!(actions.contains(&wanted), "{wanted} missing");
        }
    }
}
