//! The state poller: follows provisioned slivers that wait for the backend
//! (pending allocation, configuring, stopping) and moves them on — with
//! their host name and logins — once their VM reaches the awaited state,
//! or to `geni_failed` with the backend's message. What it saw is
//! recorded over the sliver as it was read before looking, so a job's
//! transition made meanwhile (a start) is never undone by it.

use super::error::JobError;
use super::{Context, StopSignal, observe};
use crate::model::{AllocationState, OperationalState};
use crate::store::slices;
use crate::store::slivers::{Observation, SliverRow};
use chrono::Utc;
use geni_am_backend::Compute as _;
use geni_am_backend::VmHandle;
use std::time::Duration;

/// Polls every `poll_interval_ms` until stopped. While the backend does
/// not answer, each round only asks it for its VMs instead, so that the
/// first answer ends the outage and the held-up work resumes at once.
pub fn run(cx: &Context, signal: &StopSignal) {
    let interval = Duration::from_millis(cx.config.poll_interval_ms);
    while !signal.sleep(interval) {
        if cx.backend.is_away() && cx.backend.list_vms().is_err() {
            continue;
        }
        if let Err(err) = poll_once(cx) {
            tracing::warn!(%err, "polling slivers in transition failed");
        }
    }
}

/// One pass over the waiting slivers without outstanding jobs (a queued
/// job will change the VM, so its sliver is not judged before it ran).
fn poll_once(cx: &Context) -> Result<(), JobError> {
    let busy = cx.store.slivers_with_pending_jobs()?;
    for sliver in cx.store.live_slivers()? {
        if sliver.allocation_state != AllocationState::Provisioned
            || busy.contains(&sliver.urn)
            || !sliver.operational_state.awaits_backend()
        {
            continue;
        }
        match follow(cx, &sliver) {
            // The outage is logged once, where it is detected.
            Err(err) if err.is_unreachable() => return Ok(()),
            Err(err) => {
                tracing::warn!(sliver = %sliver.urn, %err, "cannot follow the sliver's VM this round");
            }
            Ok(()) => {}
        }
    }
    Ok(())
}

/// Observes one sliver's VM and records the state it reached, unless the
/// sliver changed since `sliver` was read.
fn follow(cx: &Context, sliver: &SliverRow) -> Result<(), JobError> {
    let Some(id) = sliver.annotations.value().backend_id.clone() else {
        return Ok(());
    };
    let seen = cx.backend.observe(&VmHandle(id))?;
    let Some(next) = observe::next_state(sliver.operational_state, seen.state) else {
        return Ok(());
    };
    let observation = if next == OperationalState::Failed {
        Observation {
            state: next,
            error: observe::failure_message(&seen, cx.backend.name()),
            annotations: None,
        }
    } else {
        let users = cx
            .store
            .read(|conn| slices::users(conn, &sliver.slice_urn))?;
        Observation {
            state: next,
            error: String::new(),
            annotations: Some(observe::annotate(
                sliver.annotations.value().clone(),
                &seen,
                &users,
            )),
        }
    };
    if cx
        .store
        .record_observation(sliver, &observation, Utc::now())?
    {
        tracing::info!(sliver = %sliver.urn, state = %next, "sliver reached a new state");
    }
    Ok(())
}
