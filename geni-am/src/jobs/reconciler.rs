//! The reconciler: every few seconds compares the store with the backend.
//! VMs carrying this aggregate's tag that no live sliver owns (left by a
//! crash, a lost destroy, an operator) are destroyed; provisioned slivers
//! whose VM vanished from the backend become `geni_failed` (unless a job
//! changed them since they were read).

use super::error::JobError;
use super::{Context, StopSignal};
use crate::model::{AllocationState, OperationalState};
use crate::store::slivers::Observation;
use chrono::Utc;
use geni_am_backend::Compute as _;
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
    for vm in vms.iter().filter(|vm| !live.contains(&vm.tag)) {
        tracing::warn!(vm = %vm.handle.0, tag = %vm.tag, "destroying a VM no live sliver owns");
        cx.backend.destroy(&vm.handle)?;
    }
    Ok(())
}
