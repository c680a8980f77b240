//! The backend as the jobs call it, watched for outages: every call's
//! outcome says whether the cloud answered (a success or a refusal) or did
//! not (connection refused, a timeout, an HTTP 5xx). The first call that
//! finds it away begins the outage in the store and logs it once; the
//! first that finds it answering again ends it, logs how long it lasted
//! and makes the held-up jobs due at once (destructions are claimed
//! first). Nothing is logged or written for calls that change nothing.
//! Every call is counted in the metrics by operation and outcome, and
//! failures by class (`geni_am_backend_calls_total`,
//! `geni_am_backend_errors_total`): this wrapper is the one place the
//! jobs reach the backend through.

use crate::store::Store;
use crate::telemetry;
use chrono::Utc;
use geni_am_backend::{
    BackendError, ChangeHook, Compute, Inventory, LinkNetwork, NetHandle, NetSpec, TaggedVm,
    UserKeys, VmHandle, VmObservation, VmSpec,
};
use std::sync::{Arc, Mutex, PoisonError};

/// What this process last knew of the cloud.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Seen {
    /// Nothing yet (another process may have recorded an outage).
    Unknown,
    /// It answered.
    Answering,
    /// It did not answer.
    Away,
}

/// A [`Compute`] that records the outages of the one it wraps.
pub struct Watched {
    inner: Arc<dyn Compute>,
    store: Store,
    seen: Mutex<Seen>,
}

impl Watched {
    /// Watches `inner`, recording outages in `store`.
    pub fn new(inner: Arc<dyn Compute>, store: Store) -> Watched {
        Watched {
            inner,
            store,
            seen: Mutex::new(Seen::Unknown),
        }
    }

    /// Whether the last call found the cloud away.
    pub fn is_away(&self) -> bool {
        *self.seen.lock().unwrap_or_else(PoisonError::into_inner) == Seen::Away
    }

    /// Notes the outcome of one call of `operation` (counted in the
    /// metrics) and passes it on.
    fn note<T>(
        &self,
        operation: &'static str,
        outcome: Result<T, BackendError>,
    ) -> Result<T, BackendError> {
        telemetry::record_backend_call(operation, outcome.as_ref().err().map(error_class));
        let now = match &outcome {
            Err(err) if err.is_unreachable() => Seen::Away,
            _ => Seen::Answering,
        };
        let mut seen = self.seen.lock().unwrap_or_else(PoisonError::into_inner);
        if *seen == now {
            return outcome;
        }
        let recorded = match (&outcome, now) {
            (Err(err), Seen::Away) => self.away(err),
            _ => self.answering(),
        };
        // A store that cannot be written leaves the state unknown, so the
        // next call tries again.
        *seen = if recorded { now } else { Seen::Unknown };
        outcome
    }

    /// Begins the outage `err` shows; false if the store failed.
    fn away(&self, err: &BackendError) -> bool {
        match self.store.begin_outage(&err.to_string(), Utc::now()) {
            Ok(began) => {
                if began {
                    tracing::warn!(
                        backend = self.inner.name(),
                        %err,
                        "the backend does not answer: work is held up until it does, \
                         and ListResources advertises nothing available"
                    );
                }
                true
            }
            Err(store) => {
                tracing::warn!(%store, %err, "cannot record that the backend does not answer");
                false
            }
        }
    }

    /// Ends the outage in progress, if any; false if the store failed.
    fn answering(&self) -> bool {
        let now = Utc::now();
        match self.store.end_outage(now) {
            Ok(Some(since)) => {
                let lasted = (now - since).to_std().unwrap_or_default();
                tracing::info!(
                    backend = self.inner.name(),
                    since = %since.to_rfc3339(),
                    outage_secs = lasted.as_secs(),
                    "the backend answers again: held-up work resumes, destructions first"
                );
                true
            }
            Ok(None) => true,
            Err(store) => {
                tracing::warn!(%store, "cannot record that the backend answers again");
                false
            }
        }
    }
}

/// The class of `err` in `geni_am_backend_errors_total`.
fn error_class(err: &BackendError) -> &'static str {
    match err {
        BackendError::Unreachable(_) => "unreachable",
        BackendError::Transient(_) => "transient",
        BackendError::Permanent(_) => "permanent",
        BackendError::Capacity(_) => "capacity",
        BackendError::NotFound { .. } => "not_found",
    }
}

impl Compute for Watched {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn inventory(&self) -> Result<Inventory, BackendError> {
        self.note("inventory", self.inner.inventory())
    }

    fn create_vm(&self, spec: &VmSpec) -> Result<VmHandle, BackendError> {
        self.note("create_vm", self.inner.create_vm(spec))
    }

    fn find_vm(&self, tag: &str) -> Result<Option<VmHandle>, BackendError> {
        self.note("find_vm", self.inner.find_vm(tag))
    }

    fn observe(&self, vm: &VmHandle) -> Result<VmObservation, BackendError> {
        self.note("observe", self.inner.observe(vm))
    }

    fn start(&self, vm: &VmHandle) -> Result<(), BackendError> {
        self.note("start", self.inner.start(vm))
    }

    fn stop(&self, vm: &VmHandle) -> Result<(), BackendError> {
        self.note("stop", self.inner.stop(vm))
    }

    fn restart(&self, vm: &VmHandle) -> Result<(), BackendError> {
        self.note("restart", self.inner.restart(vm))
    }

    fn update_users(&self, vm: &VmHandle, users: &[UserKeys]) -> Result<(), BackendError> {
        self.note("update_users", self.inner.update_users(vm, users))
    }

    fn destroy(&self, vm: &VmHandle) -> Result<(), BackendError> {
        self.note("destroy", self.inner.destroy(vm))
    }

    fn visit_vms(&self, visit: &mut dyn FnMut(TaggedVm)) -> Result<(), BackendError> {
        self.note("list_vms", self.inner.visit_vms(visit))
    }

    fn create_network(&self, spec: &NetSpec) -> Result<LinkNetwork, BackendError> {
        self.note("create_network", self.inner.create_network(spec))
    }

    fn destroy_network(&self, net: &NetHandle) -> Result<(), BackendError> {
        self.note("destroy_network", self.inner.destroy_network(net))
    }

    fn watch(&self, hook: ChangeHook) -> bool {
        self.inner.watch(hook)
    }
}
