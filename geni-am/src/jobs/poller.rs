//! The state poller: follows provisioned slivers that wait for the backend
//! (pending allocation, configuring, stopping) and moves them on — with
//! their host name and logins — once their VM reaches the awaited state,
//! or to `geni_failed` with the backend's message. What it saw is
//! recorded over the sliver as it was read before looking, so a job's
//! transition made meanwhile (a start) is never undone by it. A job whose
//! VM is already where its sliver waits for it records that itself with
//! its finish (see [`super::execute`]); the poller follows the others.
//!
//! It looks when told: a worker finished a job, or the backend said its
//! VMs changed ([`geni_am_backend::Compute::watch`]); `poll_interval_ms`
//! is then only the safety net. A backend that cannot tell (OpenNebula) is
//! polled adaptively: while slivers are in transition, first a tenth of
//! the interval after a job, then twice as long each round up to the
//! interval; the interval when none are. Rounds told by the bell start
//! [`LEAST_GAP`] apart at least: on a busy aggregate every finished job and
//! every action of a watched backend rings, and the rings that come within
//! the gap are answered by one round.

use super::error::JobError;
use super::{Context, StopSignal, observe};
use crate::model::OperationalState;
use crate::store::slices;
use crate::store::slivers::SliverRow;
use chrono::Utc;
use geni_am_backend::Compute as _;
use geni_am_backend::VmHandle;
use std::time::{Duration, Instant};

/// The least time from the start of one round to the start of the next
/// when the bell rings: a round reads the slivers awaiting the backend,
/// and the jobs that act on VMs record what they saw themselves, so a
/// sliver that the poller must move on waits at most this much longer.
const LEAST_GAP: Duration = Duration::from_millis(10);

/// Follows slivers until stopped: a round each time the followers' bell
/// rings, or after the wait [`next_wait`] gives. While the backend does
/// not answer, each round only asks it for its VMs instead, so that the
/// first answer ends the outage and the held-up work resumes at once.
pub fn run(cx: &Context, signal: &StopSignal) {
    let interval = Duration::from_millis(cx.config.poll_interval_ms);
    let mut seen = cx.followers.rings();
    let mut wait = interval;
    let mut last_round = Instant::now();
    loop {
        let rings = cx.followers.wait(seen, wait);
        if signal.is_stopped() {
            return;
        }
        let told = rings != seen;
        if told {
            std::thread::sleep(gap_left(last_round.elapsed()));
        }
        // The rings of the gap are answered by this round.
        seen = cx.followers.rings();
        last_round = Instant::now();
        if cx.backend.is_away() && cx.backend.visit_vms(&mut |_| {}).is_err() {
            wait = interval;
            continue;
        }
        let waiting = poll_once(cx).unwrap_or_else(|err| {
            tracing::warn!(%err, "polling slivers in transition failed");
            0
        });
        wait = next_wait(wait, told, waiting > 0 && !cx.watched, interval);
    }
}

/// How long a round told by the bell waits, `since` the last round
/// started, so that rounds start [`LEAST_GAP`] apart.
fn gap_left(since: Duration) -> Duration {
    LEAST_GAP.saturating_sub(since)
}

/// The wait before the next round after one that waited `previous`,
/// started by the bell when `told`: the interval unless the backend must
/// be polled for slivers in transition (`polled`); then a tenth of it
/// after the bell, doubling each further round up to the interval.
fn next_wait(previous: Duration, told: bool, polled: bool, interval: Duration) -> Duration {
    if !polled {
        interval
    } else if told {
        (interval / 10).max(Duration::from_millis(1))
    } else {
        (previous * 2).min(interval)
    }
}

/// One pass over the waiting slivers without outstanding jobs (a queued
/// job will change the VM, so its sliver is not judged before it ran);
/// returns how many still wait for the backend.
fn poll_once(cx: &Context) -> Result<usize, JobError> {
    let mut waiting = 0;
    // Only the slivers in a waiting state with no job pending are read
    // (index lookups), not every live sliver: the poller runs after every
    // finished job.
    for sliver in cx.store.slivers_awaiting_backend()? {
        match follow(cx, &sliver) {
            // The outage is logged once, where it is detected.
            Err(err) if err.is_unreachable() => return Ok(waiting + 1),
            Err(err) => {
                tracing::warn!(sliver = %sliver.urn, %err, "cannot follow the sliver's VM this round");
                waiting += 1;
            }
            Ok(state) if state.awaits_backend() => waiting += 1,
            Ok(_) => {}
        }
    }
    Ok(waiting)
}

/// Observes one sliver's VM and records the state it reached, unless the
/// sliver changed since `sliver` was read; returns the state it is in.
fn follow(cx: &Context, sliver: &SliverRow) -> Result<OperationalState, JobError> {
    let Some(id) = sliver.annotations.value().backend_id.clone() else {
        return Ok(sliver.operational_state);
    };
    let seen = cx.backend.observe(&VmHandle(id))?;
    let Some(next) = observe::next_state(sliver.operational_state, seen.state) else {
        return Ok(sliver.operational_state);
    };
    let users = if next == OperationalState::Failed {
        Vec::new()
    } else {
        cx.store
            .read(|conn| slices::users(conn, &sliver.slice_urn))?
    };
    let annotations = sliver.annotations.value().clone();
    let observation = observe::observation(next, &seen, cx.backend.name(), annotations, &users);
    if cx
        .store
        .record_observation(sliver, &observation, Utc::now())?
    {
        tracing::info!(sliver = %sliver.urn, state = %next, "sliver reached a new state");
    }
    Ok(next)
}

#[cfg(test)]
mod tests {
    use super::{LEAST_GAP, gap_left, next_wait};
    use std::time::Duration;

    const INTERVAL: Duration = Duration::from_millis(1000);

    #[test]
    fn rounds_told_by_the_bell_start_the_least_gap_apart() {
        assert_eq!(gap_left(Duration::ZERO), LEAST_GAP);
        assert_eq!(gap_left(LEAST_GAP / 4), LEAST_GAP * 3 / 4);
        assert_eq!(gap_left(LEAST_GAP), Duration::ZERO);
        assert_eq!(gap_left(LEAST_GAP * 5), Duration::ZERO);
    }

    #[test]
    fn a_backend_that_tells_or_nothing_in_transition_waits_the_interval() {
        let short = Duration::from_millis(100);
        assert_eq!(next_wait(short, true, false, INTERVAL), INTERVAL);
        assert_eq!(next_wait(short, false, false, INTERVAL), INTERVAL);
    }

    #[test]
    fn slivers_in_transition_are_polled_soon_after_a_job_then_less_and_less() {
        let mut wait = next_wait(INTERVAL, true, true, INTERVAL);
        assert_eq!(wait, Duration::from_millis(100));
        let mut waits = vec![wait];
        for _ in 0..4 {
            wait = next_wait(wait, false, true, INTERVAL);
            waits.push(wait);
        }
        let millis: Vec<u128> = waits.iter().map(Duration::as_millis).collect();
        assert_eq!(millis, [100, 200, 400, 800, 1000]);
    }
}
