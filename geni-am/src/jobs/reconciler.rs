//! The reconciler: every few seconds compares the store with the backend.
//! VMs carrying this aggregate's tag that no live sliver owns (left by a
//! crash, a lost destroy, an operator) are leaks: logged and destroyed;
//! those of deleted slivers whose jobs are still queued or running are
//! left to their destroy job, without a word. Provisioned slivers
//! whose VM vanished from the backend become `geni_failed` (unless a job
//! changed them since they were read).

use super::error::JobError;
use super::{Context, StopSignal};
use crate::model::{AllocationState, OperationalState};
use crate::store::slivers::Observation;
use chrono::Utc;
use geni_am_backend::Compute as _;
use geni_am_backend::TaggedVm;
use std::collections::HashSet;
use std::time::Duration;

/// Reconciles at start and then every `reconcile_interval_secs` until stopped.
pub fn run(cx: &Context, signal: &StopSignal) {
    let interval = Duration::from_secs(cx.config.reconcile_interval_secs);
    loop {
        match reconcile_once(cx) {
            // The outage is logged once, where it is detected.
            Err(err) if err.is_unreachable() => {}
            Err(err) => tracing::warn!(%err, "reconciling the store with the backend failed"),
            Ok(()) => {}
        }
        if signal.sleep(interval) {
            return;
        }
    }
}

/// One comparison. The slivers are read before the VMs are listed (a
/// sliver that had a VM then must still have it) and again after (a VM
/// listed belongs to a sliver that was live then, unless it is an orphan).
fn reconcile_once(cx: &Context) -> Result<(), JobError> {
    let before = cx.store.live_slivers()?;
    let busy = cx.store.slivers_with_pending_jobs()?;
    let vms = cx.backend.list_vms()?;
    let listed: HashSet<&str> = vms.iter().map(|vm| vm.tag.as_str()).collect();
    let now = Utc::now();
    for sliver in &before {
        let vanished = sliver.allocation_state == AllocationState::Provisioned
            && sliver.operational_state != OperationalState::Failed
            && !busy.contains(&sliver.urn)
            && sliver.annotations.value().backend_id.clone().is_some()
            && !listed.contains(sliver.urn.as_str());
        if vanished {
            let observation = Observation {
                state: OperationalState::Failed,
                error: format!("the VM disappeared from the {}", cx.backend.name()),
                annotations: None,
            };
            if cx.store.record_observation(sliver, &observation, now)? {
                tracing::warn!(sliver = %sliver.urn, "{}", observation.error);
            }
        }
    }
    let live: HashSet<String> = cx
        .store
        .live_slivers()?
        .into_iter()
        .map(|s| s.urn)
        .collect();
    // Jobs pending before the VMs were listed or after the slivers were
    // read again: a Delete between the two reads queued its destroy after
    // the first.
    let mut pending = busy;
    pending.extend(cx.store.slivers_with_pending_jobs()?);
    for vm in leaks(&vms, &live, &pending) {
        tracing::warn!(vm = %vm.handle.0, tag = %vm.tag, "destroying a VM no live sliver owns");
        cx.backend.destroy(&vm.handle)?;
    }
    Ok(())
}

/// The VMs of `vms` that are leaks: owned by no `live` sliver, and not
/// the VM of a deleted sliver whose jobs are `pending` (its destroy job is
/// queued, or a job still running will be followed by it).
fn leaks<'a>(
    vms: &'a [TaggedVm],
    live: &'a HashSet<String>,
    pending: &'a HashSet<String>,
) -> impl Iterator<Item = &'a TaggedVm> {
    vms.iter()
        .filter(|vm| !live.contains(&vm.tag) && !pending.contains(&vm.tag))
}

#[cfg(test)]
mod tests {
    use super::leaks;
    use geni_am_backend::{TaggedVm, VmHandle};
    use std::collections::HashSet;

    fn vm(id: &str, tag: &str) -> TaggedVm {
        TaggedVm {
            handle: VmHandle(id.into()),
            tag: tag.into(),
        }
    }

    fn set(urns: &[&str]) -> HashSet<String> {
        urns.iter().map(|u| u.to_string()).collect()
    }

    #[test]
    fn only_vms_of_no_live_sliver_and_no_pending_job_are_leaks() {
        let vms = [
            vm("1", "urn:live"),
            vm("2", "urn:deleted-destroy-queued"),
            vm("3", "urn:forgotten"),
        ];
        let live = set(&["urn:live"]);
        let pending = set(&["urn:deleted-destroy-queued"]);
        let found: Vec<&str> = leaks(&vms, &live, &pending)
            .map(|vm| vm.handle.0.as_str())
            .collect();
        assert_eq!(found, ["3"]);
    }

    #[test]
    fn a_deleted_slivers_vm_is_a_leak_once_its_jobs_are_over() {
        let vms = [vm("2", "urn:deleted")];
        assert_eq!(leaks(&vms, &set(&[]), &set(&[])).count(), 1);
    }
}
