//! Jobs handed straight to an idle worker by the transaction that queues
//! them, instead of being claimed by it in a write of its own.
//!
//! A worker about to wait for work says so ([`HandOff::idle`]). A write
//! transaction that queues a job this worker may run at once (due, and
//! first of its sliver) reserves the worker and stores the job already
//! running under the worker's lease, as a claim would have left it; once
//! the transaction commits the job is delivered to the worker, and if it
//! rolls back the worker is idle again. The worker, woken by the bell,
//! takes what was delivered ([`HandOff::take`]), waiting for a
//! transaction that reserved it to end, however long: every transaction
//! ends, by its commit or by its guard dropped, and a worker that went on
//! without its job would be given it later, while busy, and could find it
//! claimed again by then. On SQLite every write takes the one writers'
//! turn, and a claim was one such write per job (docs/PERFORMANCE.md,
//! "Jobs handed to an idle worker").

use chrono::TimeDelta;
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

/// Where each waiting worker stands.
#[derive(Debug)]
enum Slot {
    /// Waiting for work, taking jobs under a lease this long.
    Idle(TimeDelta),
    /// Reserved by a transaction not yet ended.
    Reserved(TimeDelta),
    /// The ids of jobs committed to it, to be taken (the worker reads
    /// the rows itself, so that what it keeps of them is allocated on its
    /// own thread).
    Delivered(Vec<String>),
}

/// The workers of a process that wait for work, by lease owner; shared by
/// every pool of a store.
#[derive(Debug, Default)]
pub struct HandOff {
    slots: Mutex<HashMap<String, Slot>>,
    changed: Condvar,
}

/// A worker reserved by the transaction running on this thread, for a job
/// of its own.
struct Reservation {
    hand_off: Arc<HandOff>,
    owner: String,
    job: Option<String>,
}

thread_local! {
    /// The hand-off of the store whose write transaction runs on this
    /// thread, and the workers that transaction reserved.
    static TRANSACTION: RefCell<Option<(Arc<HandOff>, Vec<Reservation>)>> =
        const { RefCell::new(None) };
}

impl HandOff {
    fn slots(&self) -> MutexGuard<'_, HashMap<String, Slot>> {
        self.slots.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// `owner` waits for work and takes jobs under leases of `lease`
    /// (jobs delivered and not yet taken stay, as does a reservation).
    pub fn idle(&self, owner: &str, lease: TimeDelta) {
        let mut slots = self.slots();
        if !matches!(
            slots.get(owner),
            Some(Slot::Delivered(_) | Slot::Reserved(_))
        ) {
            slots.insert(owner.to_owned(), Slot::Idle(lease));
        }
    }

    /// The ids of the jobs delivered to `owner` since it said it was
    /// idle, waiting for a transaction that reserved it to end; `owner` is
    /// no longer idle.
    pub fn take(&self, owner: &str) -> Vec<String> {
        let mut slots = self.slots();
        loop {
            match slots.remove(owner) {
                Some(Slot::Delivered(jobs)) => return jobs,
                Some(reserved @ Slot::Reserved(_)) => {
                    slots.insert(owner.to_owned(), reserved);
                    slots = self
                        .changed
                        .wait(slots)
                        .unwrap_or_else(PoisonError::into_inner);
                }
                Some(Slot::Idle(_)) | None => return Vec::new(),
            }
        }
    }

    /// Hands `jobs`, taken but not read, back to `owner` for its next
    /// [`HandOff::take`].
    pub fn give_back(&self, owner: &str, mut jobs: Vec<String>) {
        let mut slots = self.slots();
        if let Some(Slot::Delivered(later)) = slots.remove(owner) {
            jobs.extend(later);
        }
        slots.insert(owner.to_owned(), Slot::Delivered(jobs));
    }

    /// An idle worker, now reserved, and its lease.
    fn reserve(&self) -> Option<(String, TimeDelta)> {
        let mut slots = self.slots();
        let (owner, lease) = slots.iter().find_map(|(owner, slot)| match slot {
            Slot::Idle(lease) => Some((owner.clone(), *lease)),
            _ => None,
        })?;
        slots.insert(owner.clone(), Slot::Reserved(lease));
        Some((owner, lease))
    }

    /// Ends a reservation: `job` delivered to `owner` if the transaction
    /// committed it, `owner` idle again otherwise.
    fn end(&self, owner: String, job: Option<String>) {
        let mut slots = self.slots();
        let next = match (slots.remove(&owner), job) {
            (Some(Slot::Delivered(mut jobs)), Some(job)) => {
                jobs.push(job);
                Some(Slot::Delivered(jobs))
            }
            (_, Some(job)) => Some(Slot::Delivered(vec![job])),
            (Some(Slot::Reserved(lease)), None) => Some(Slot::Idle(lease)),
            (other, None) => other,
        };
        if let Some(next) = next {
            slots.insert(owner, next);
        }
        drop(slots);
        self.changed.notify_all();
    }
}

/// The write transaction about to start on this thread may hand jobs to
/// the workers of `hand_off`; what it reserved is delivered by
/// [`Transaction::commit`], and released if the transaction ends
/// otherwise (the guard dropped, also by a panic).
pub(super) fn begin(hand_off: &Arc<HandOff>) -> Transaction {
    let outer = TRANSACTION.replace(Some((hand_off.clone(), Vec::new())));
    debug_assert!(
        outer.is_none(),
        "a write transaction started inside another on one thread"
    );
    Transaction(())
}

/// A worker for a job the transaction on this thread queues, due now and
/// first of its sliver: its lease owner and lease, or `None` when no
/// worker is idle (or no transaction runs). The job stored for it is
/// given by [`reserved_for`], and delivered when the transaction commits.
pub(super) fn reserve() -> Option<(String, TimeDelta)> {
    TRANSACTION.with_borrow_mut(|transaction| {
        let (hand_off, reserved) = transaction.as_mut()?;
        let (owner, lease) = hand_off.reserve()?;
        reserved.push(Reservation {
            hand_off: hand_off.clone(),
            owner: owner.clone(),
            job: None,
        });
        Some((owner, lease))
    })
}

/// Records the id of the job stored for the last worker [`reserve`] gave.
pub(super) fn reserved_for(job: String) {
    TRANSACTION.with_borrow_mut(|transaction| {
        if let Some(last) = transaction.as_mut().and_then(|(_, r)| r.last_mut()) {
            last.job = Some(job);
        }
    });
}

/// Whether any worker is idle, for a transaction that would look whether
/// a job may be handed over only then.
pub(super) fn any_idle() -> bool {
    TRANSACTION.with_borrow(|transaction| {
        transaction.as_ref().is_some_and(|(hand_off, _)| {
            hand_off
                .slots()
                .values()
                .any(|slot| matches!(slot, Slot::Idle(_)))
        })
    })
}

/// The guard of a write transaction's reservations.
#[must_use]
pub(super) struct Transaction(());

impl Transaction {
    /// The transaction committed: its jobs go to their workers.
    pub(super) fn commit(self) {
        for reservation in taken() {
            reservation.hand_off.end(reservation.owner, reservation.job);
        }
    }
}

impl Drop for Transaction {
    /// Releases the workers of a transaction that did not commit.
    fn drop(&mut self) {
        for reservation in taken() {
            reservation.hand_off.end(reservation.owner, None);
        }
    }
}

/// The reservations of this thread's transaction, which ends.
fn taken() -> Vec<Reservation> {
    TRANSACTION
        .take()
        .map(|(_, reserved)| reserved)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jobs_given_back_are_taken_again_before_those_delivered_since() {
        let hand_off = Arc::new(HandOff::default());
        let lease = TimeDelta::seconds(30);
        hand_off.idle("w1", lease);
        let (owner, _) = hand_off.reserve().expect("w1 is idle");
        hand_off.end(owner, Some("later".to_owned()));
        hand_off.give_back("w1", vec!["first".to_owned()]);
        assert_eq!(hand_off.take("w1"), ["first", "later"]);
        assert!(hand_off.take("w1").is_empty(), "taken once");
        // Given back to a worker that was not waiting, they wait for it.
        hand_off.give_back("w2", vec!["unread".to_owned()]);
        hand_off.idle("w2", lease);
        assert_eq!(hand_off.take("w2"), ["unread"]);
    }
}
