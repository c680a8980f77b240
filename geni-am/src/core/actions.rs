//! PerformOperationalAction (GENI AM API v3, "PerformOperationalAction")
//! on the operational state machine ("Sliver Operational States"), as
//! advertised (`geni_rspec::advert::StateMachine::virtual_machine`): the
//! action moves each sliver to its transition state at once and queues the
//! backend job that completes it. Unknown actions and actions not valid in
//! a sliver's state are refused (the API answers UNSUPPORTED, as tools and
//! the acceptance suite expect).

use super::lifecycle::{apply_each, queue, save_outcomes};
use super::{Aggregate, CoreError};
use crate::model::{
    AllocationState, JobKind, OperationalState, Principal, Selector, SliverInfo, UserKeys,
};
use crate::store::slivers::SliverRow;
use crate::store::{Conn, slices};
use OperationalState as Op;
use chrono::{DateTime, Utc};

/// An operational action.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// `geni_start`: boot.
    Start,
    /// `geni_stop`: power off.
    Stop,
    /// `geni_restart`: reboot.
    Restart,
    /// `geni_update_users`: install the given users' keys.
    UpdateUsers,
    /// `geni_updating_users_cancel` (PG: `geni_update_users_cancel`).
    CancelUpdateUsers,
}

impl Action {
    /// Every action with its accepted names.
    const NAMES: [(Action, &'static str); 6] = [
        (Action::Start, "geni_start"),
        (Action::Stop, "geni_stop"),
        (Action::Restart, "geni_restart"),
        (Action::UpdateUsers, "geni_update_users"),
        (Action::CancelUpdateUsers, "geni_updating_users_cancel"),
        (Action::CancelUpdateUsers, "geni_update_users_cancel"),
    ];

    /// The action named `name` (case-insensitive); an unknown action
    /// otherwise.
    pub fn parse(name: &str) -> Result<Action, CoreError> {
        let wanted = name.trim();
        Self::NAMES
            .iter()
            .find(|(_, n)| n.eq_ignore_ascii_case(wanted))
            .map(|(a, _)| *a)
            .ok_or_else(|| {
                let known: Vec<&str> = Self::NAMES.iter().map(|(_, n)| *n).collect();
                CoreError::UnknownAction {
                    name: name.to_owned(),
                    known: known.join(", "),
                }
            })
    }

    /// The GENI name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Start => "geni_start",
            Self::Stop => "geni_stop",
            Self::Restart => "geni_restart",
            Self::UpdateUsers => "geni_update_users",
            Self::CancelUpdateUsers => "geni_updating_users_cancel",
        }
    }

    /// The state a sliver in `from` moves to at once, or None when the
    /// action is not valid there. `geni_start` during provisioning is
    /// accepted and takes effect when the VM exists. `geni_failed` is
    /// final, as advertised: no action leads out of it.
    pub fn next_state(self, from: OperationalState) -> Option<OperationalState> {
        match (self, from) {
            (Self::Start, Op::PendingAllocation) => Some(Op::PendingAllocation),
            (Self::Start, Op::NotReady) => Some(Op::Configuring),
            (Self::Restart, Op::Ready) => Some(Op::Configuring),
            (Self::Stop, Op::Ready | Op::ReadyBusy | Op::Configuring) => Some(Op::Stopping),
            (Self::UpdateUsers, Op::Ready) => Some(Op::UpdatingUsers),
            (Self::CancelUpdateUsers, Op::UpdatingUsers) => Some(Op::Ready),
            _ => None,
        }
    }

    /// The backend job that carries the action out, if any.
    fn job(self) -> Option<JobKind> {
        match self {
            Self::Start => Some(JobKind::Start),
            Self::Stop => Some(JobKind::Stop),
            Self::Restart => Some(JobKind::Restart),
            Self::UpdateUsers => Some(JobKind::UpdateUsers),
            Self::CancelUpdateUsers => None,
        }
    }
}

impl Aggregate {
    /// Performs `action` on the selected slivers. `users` is the
    /// `geni_users` option, required by `geni_update_users` (listed users'
    /// keys are replaced, others kept). Reports the immediate states.
    pub fn perform_action(
        &self,
        principal: &Principal,
        selector: &Selector,
        action: &str,
        best_effort: bool,
        users: Option<&[UserKeys]>,
    ) -> Result<Vec<SliverInfo>, CoreError> {
        let action = Action::parse(action)?;
        if action == Action::UpdateUsers && users.is_none() {
            return Err(CoreError::MissingOption(
                "geni_update_users needs the geni_users option",
            ));
        }
        let now = self.now();
        self.store.write(|conn| {
            if let Some(users) = users.filter(|_| action == Action::UpdateUsers) {
                slices::upsert_users(conn, selector.slice_urn(), users, now)?;
            }
            self.action_in(conn, principal, selector, action, best_effort, now)
        })
    }

    /// An action inside the caller's transaction.
    pub(super) fn action_in(
        &self,
        conn: &mut Conn,
        principal: &Principal,
        selector: &Selector,
        action: Action,
        best_effort: bool,
        now: DateTime<Utc>,
    ) -> Result<Vec<SliverInfo>, CoreError> {
        let selection = self.changeable(conn, selector, now)?;
        let outcomes = apply_each(selection.slivers, best_effort, |row| step(row, action))?;
        let infos = save_outcomes(conn, &outcomes)?;
        if let Some(job) = action.job() {
            for outcome in outcomes.iter().filter(|o| o.succeeded()) {
                queue(conn, job, &outcome.row, &principal.caller_urn, now)?;
            }
        }
        Ok(infos)
    }
}

/// Moves one sliver for `action`, or says why it cannot.
fn step(row: &mut SliverRow, action: Action) -> Result<(), CoreError> {
    if row.allocation_state != AllocationState::Provisioned {
        return Err(CoreError::ActionNeedsProvisioned {
            urn: row.urn.clone(),
            action: action.as_str(),
        });
    }
    let from = row.operational_state;
    let next = action
        .next_state(from)
        .ok_or_else(|| refusal(row, action, from))?;
    row.operational_state = next;
    row.error.clear();
    Ok(())
}

/// Why `action` cannot be done on `row` in state `from`: a failed sliver
/// says why it failed and that only a new sliver helps.
fn refusal(row: &SliverRow, action: Action, from: OperationalState) -> CoreError {
    CoreError::ActionNotInState {
        action: action.as_str(),
        urn: row.urn.clone(),
        state: from.to_string(),
        failure: (from == Op::Failed).then(|| row.error.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use geni_rspec::advert::StateMachine;

    #[test]
    fn every_advertised_action_is_accepted_in_its_state_and_leads_where_advertised() {
        let machine = StateMachine::virtual_machine();
        for state in &machine.states {
            let from = OperationalState::parse(&state.name).unwrap();
            for advertised in &state.actions {
                let action = Action::parse(&advertised.name).unwrap();
                assert_eq!(
                    action.next_state(from).map(|s| s.as_str()),
                    Some(advertised.next.as_str()),
                    "{} from {}",
                    advertised.name,
                    state.name
                );
            }
        }
    }

    #[test]
    fn unknown_and_empty_actions_are_unsupported_with_the_list() {
        for name in ["", "random_action", "geni_reload"] {
            let err = Action::parse(name).unwrap_err();
            assert!(matches!(err, CoreError::UnknownAction { .. }), "{err}");
            assert!(err.to_string().contains("geni_start"), "{err}");
        }
        assert_eq!(Action::parse("GENI_START").unwrap(), Action::Start);
        assert_eq!(
            Action::parse("geni_update_users_cancel").unwrap(),
            Action::CancelUpdateUsers
        );
    }

    #[test]
    fn wrong_states_are_refused() {
        assert_eq!(Action::Stop.next_state(Op::NotReady), None);
        assert_eq!(Action::Restart.next_state(Op::PendingAllocation), None);
        assert_eq!(Action::UpdateUsers.next_state(Op::NotReady), None);
        assert_eq!(Action::Start.next_state(Op::Ready), None);
    }

    #[test]
    fn no_action_leads_out_of_a_failed_sliver() {
        for (action, _) in Action::NAMES {
            assert_eq!(action.next_state(Op::Failed), None, "{}", action.as_str());
        }
    }
}
