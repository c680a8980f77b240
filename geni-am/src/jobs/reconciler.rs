//! The reconciler: every few seconds compares the store with the backend.
//! VMs carrying this aggregate's tag that no live sliver owns (left by a
//! crash, a lost destroy, an operator) are leaks: logged and destroyed;
//! those of deleted slivers whose jobs are still queued or running are
//! left to their destroy job, without a word. Provisioned slivers
//! whose VM vanished from the backend become `geni_failed` (unless a job
//! changed them since they were read). The live slivers are read a page
//! at a time: an aggregate of a hundred thousand slivers held them all at
//! once, some 200 MB, every round (docs/PERFORMANCE.md, "Memory: a hundred
//! thousand slivers").

use super::error::JobError;
use super::{Context, StopSignal};
use crate::model::{AllocationState, OperationalState};
use crate::store::slivers::{Observation, SliverRow};
use chrono::Utc;
use geni_am_backend::Compute as _;
use geni_am_backend::{TaggedVm, VmHandle, VmState};
use std::collections::HashSet;
use std::ops::Range;
use std::time::Duration;

/// Live slivers read at a time.
const PAGE: usize = 500;

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

/// One comparison. The VMs are listed, then the live slivers read page by
/// page: a VM listed belongs to a sliver that was live then, unless it is
/// an orphan. A provisioned sliver with a VM that is not listed may have
/// got it after the listing, so it is judged vanished only once the
/// backend says that VM is gone.
fn reconcile_once(cx: &Context) -> Result<(), JobError> {
    let busy = cx.store.slivers_with_pending_jobs()?;
    let mut vms = cx.backend.list_vms()?;
    vms.sort_unstable_by(|a, b| a.tag.cmp(&b.tag));
    let mut owned = vec![false; vms.len()];
    let mut after: Option<String> = None;
    loop {
        let page = cx.store.live_slivers_page(after.as_deref(), PAGE)?;
        for sliver in &page {
            let listed = listed(&vms, &sliver.urn);
            let unlisted = listed.is_empty();
            owned[listed].fill(true);
            if unlisted && !busy.contains(&sliver.urn) {
                fail_if_vanished(cx, sliver)?;
            }
        }
        match page.last() {
            Some(last) if page.len() == PAGE => after = Some(last.urn.clone()),
            _ => break,
        }
    }
    // Jobs pending before the VMs were listed or after the slivers were
    // read: a Delete between the two reads queued its destroy after the
    // first.
    let mut pending = busy;
    pending.extend(cx.store.slivers_with_pending_jobs()?);
    for vm in leaks(&vms, &owned, &pending) {
        tracing::warn!(vm = %vm.handle.0, tag = %vm.tag, "destroying a VM no live sliver owns");
        cx.backend.destroy(&vm.handle)?;
    }
    Ok(())
}

/// The indexes of the VMs of `vms` (sorted by tag) tagged `urn`.
fn listed(vms: &[TaggedVm], urn: &str) -> Range<usize> {
    let first = vms.partition_point(|vm| vm.tag.as_str() < urn);
    let end = vms.partition_point(|vm| vm.tag.as_str() <= urn);
    first..end
}

/// Records `sliver` as failed if it is provisioned, not failed, had a VM,
/// and the backend says that VM is gone.
fn fail_if_vanished(cx: &Context, sliver: &SliverRow) -> Result<(), JobError> {
    let candidate = sliver.allocation_state == AllocationState::Provisioned
        && sliver.operational_state != OperationalState::Failed;
    let Some(id) = sliver.annotations.value().backend_id.clone() else {
        return Ok(());
    };
    if !candidate || cx.backend.observe(&VmHandle(id))?.state != VmState::Gone {
        return Ok(());
    }
    let observation = Observation {
        state: OperationalState::Failed,
        error: format!("the VM disappeared from the {}", cx.backend.name()),
        annotations: None,
    };
    if cx
        .store
        .record_observation(sliver, &observation, Utc::now())?
    {
        tracing::warn!(sliver = %sliver.urn, "{}", observation.error);
    }
    Ok(())
}

/// The VMs of `vms` that are leaks: not `owned` by a live sliver (by
/// index), and not the VM of a deleted sliver whose jobs are `pending`
/// (its destroy job is queued, or a job still running will be followed by
/// it).
fn leaks<'a>(
    vms: &'a [TaggedVm],
    owned: &'a [bool],
    pending: &'a HashSet<String>,
) -> impl Iterator<Item = &'a TaggedVm> {
    vms.iter()
        .zip(owned)
        .filter(|(vm, owned)| !**owned && !pending.contains(&vm.tag))
        .map(|(vm, _)| vm)
}

#[cfg(test)]
mod tests {
    use super::{leaks, listed};
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
        let owned = [true, false, false];
        let pending = set(&["urn:deleted-destroy-queued"]);
        let found: Vec<&str> = leaks(&vms, &owned, &pending)
            .map(|vm| vm.handle.0.as_str())
            .collect();
        assert_eq!(found, ["3"]);
    }

    #[test]
    fn a_deleted_slivers_vm_is_a_leak_once_its_jobs_are_over() {
        let vms = [vm("2", "urn:deleted")];
        assert_eq!(leaks(&vms, &[false], &set(&[])).count(), 1);
    }

    #[test]
    fn the_vms_of_a_sliver_are_found_in_the_vms_sorted_by_tag() {
        let vms = [
            vm("1", "urn:a"),
            vm("2", "urn:b"),
            vm("3", "urn:b"),
            vm("4", "urn:c"),
        ];
        assert_eq!(listed(&vms, "urn:b"), 1..3, "both VMs carrying its tag");
        assert_eq!(listed(&vms, "urn:a"), 0..1);
        assert!(listed(&vms, "urn:bb").is_empty());
        assert!(listed(&vms, "urn:d").is_empty());
        assert!(listed(&[], "urn:a").is_empty());
    }
}
