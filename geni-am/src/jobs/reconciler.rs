//! The reconciler: every few seconds compares the store with the backend.
//! VMs carrying this aggregate's tag that no live sliver owns (left by a
//! crash, a lost destroy, an operator) are leaks: logged and destroyed;
//! those of deleted slivers whose jobs are still queued or running are
//! left to their destroy job, without a word. Provisioned slivers
//! whose VM vanished from the backend become `geni_failed` (unless a job
//! changed them since they were read). Neither side is held whole: the
//! live slivers are read a page at a time, and of the VMs listed only a
//! hash of each tag is kept (8 bytes a VM, where the listing itself held
//! some 150), with a second listing for the handles of the leaks when
//! there are any (docs/PERFORMANCE.md, "Memory: a hundred thousand
//! slivers" and "The reconciler's round at a hundred thousand").

use super::error::JobError;
use super::{Context, StopSignal};
use crate::model::{AllocationState, OperationalState};
use crate::store::slivers::{Observation, SliverRow};
use chrono::Utc;
use geni_am_backend::Compute as _;
use geni_am_backend::{VmHandle, VmState};
use std::collections::HashSet;
use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;
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
    let mut listed = ListedTags::gather(|add| cx.backend.visit_vms(&mut |vm| add(&vm.tag)))?;
    let mut after: Option<String> = None;
    loop {
        let page = cx.store.live_slivers_page(after.as_deref(), PAGE)?;
        for sliver in &page {
            if !listed.own(&sliver.urn) && !busy.contains(&sliver.urn) {
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
    let unowned = listed.unowned(&pending);
    if unowned.is_empty() {
        return Ok(());
    }
    let mut leaks = Vec::new();
    cx.backend.visit_vms(&mut |vm| {
        if unowned.contains(&listed.hash(&vm.tag)) && !pending.contains(&vm.tag) {
            leaks.push(vm);
        }
    })?;
    for vm in leaks {
        tracing::warn!(vm = %vm.handle.0, tag = %vm.tag, "destroying a VM no live sliver owns");
        cx.backend.destroy(&vm.handle)?;
    }
    Ok(())
}

/// The tags of the VMs listed, as hashes under keys of this round, sorted,
/// each marked once a live sliver owns it. Two tags of one hash are one:
/// a live sliver's tag then owns both VMs, so a collision can only spare a
/// leak for a round (the keys change every round), never destroy a VM
/// that a sliver owns.
struct ListedTags {
    keys: RandomState,
    hashes: Vec<u64>,
    owned: Vec<bool>,
}

impl ListedTags {
    /// The tags `each` hands to the function it is given (a listing of
    /// the VMs), hashed under fresh keys and sorted, none owned yet.
    fn gather<E>(each: impl FnOnce(&mut dyn FnMut(&str)) -> Result<(), E>) -> Result<Self, E> {
        let keys = RandomState::new();
        let mut hashes = Vec::new();
        each(&mut |tag| hashes.push(keys.hash_one(tag)))?;
        hashes.sort_unstable();
        let owned = vec![false; hashes.len()];
        Ok(ListedTags {
            keys,
            hashes,
            owned,
        })
    }

    fn hash(&self, tag: &str) -> u64 {
        self.keys.hash_one(tag)
    }

    /// The indexes of the VMs tagged `tag`.
    fn of(&self, tag: &str) -> Range<usize> {
        let hash = self.hash(tag);
        let first = self.hashes.partition_point(|h| *h < hash);
        let end = self.hashes.partition_point(|h| *h <= hash);
        first..end
    }

    /// Marks the VMs tagged `urn` as a live sliver's; whether there were any.
    fn own(&mut self, urn: &str) -> bool {
        let vms = self.of(urn);
        let found = !vms.is_empty();
        self.owned[vms].fill(true);
        found
    }

    /// The hashes of the tags of VMs that are leaks: not owned by a live
    /// sliver, and not of a deleted sliver whose jobs are `pending` (its
    /// destroy job is queued, or a job still running will be followed by
    /// it).
    fn unowned(&self, pending: &HashSet<String>) -> HashSet<u64> {
        let pending: HashSet<u64> = pending.iter().map(|urn| self.hash(urn)).collect();
        self.hashes
            .iter()
            .zip(&self.owned)
            .filter(|(hash, owned)| !**owned && !pending.contains(hash))
            .map(|(hash, _)| *hash)
            .collect()
    }
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

#[cfg(test)]
mod tests {
    use super::ListedTags;
    use std::collections::HashSet;

    fn listed(tags: &[&str]) -> ListedTags {
        let gathered = ListedTags::gather(|add| {
            tags.iter().for_each(|tag| add(tag));
            Ok::<_, ()>(())
        });
        gathered.expect("a list of tags gathers")
    }

    fn set(urns: &[&str]) -> HashSet<String> {
        urns.iter().map(|u| u.to_string()).collect()
    }

    #[test]
    fn only_vms_of_no_live_sliver_and_no_pending_job_are_leaks() {
        let mut vms = listed(&["urn:live", "urn:deleted-destroy-queued", "urn:forgotten"]);
        assert!(vms.own("urn:live"));
        let leaks = vms.unowned(&set(&["urn:deleted-destroy-queued"]));
        assert_eq!(leaks, HashSet::from([vms.hash("urn:forgotten")]));
    }

    #[test]
    fn a_deleted_slivers_vm_is_a_leak_once_its_jobs_are_over() {
        let vms = listed(&["urn:deleted"]);
        assert_eq!(
            vms.unowned(&set(&[])),
            HashSet::from([vms.hash("urn:deleted")])
        );
    }

    #[test]
    fn a_live_sliver_owns_every_vm_carrying_its_tag_and_no_other() {
        let mut vms = listed(&["urn:a", "urn:b", "urn:b", "urn:c"]);
        assert_eq!(vms.of("urn:b").len(), 2, "both VMs carrying its tag");
        assert_eq!(vms.of("urn:a").len(), 1);
        assert!(!vms.own("urn:bb"));
        assert!(!vms.own("urn:d"));
        assert!(vms.own("urn:b"));
        let leaks = vms.unowned(&set(&[]));
        let expected = HashSet::from([vms.hash("urn:a"), vms.hash("urn:c")]);
        assert_eq!(leaks, expected, "the two VMs of urn:b are owned");
        assert!(!listed(&[]).own("urn:a"));
    }
}
