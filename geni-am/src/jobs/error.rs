//! Why a job did not complete, and whether trying again may help: the
//! one error type of the workers, the poller, the reconciler and the
//! inventory refresh.

use crate::store::StoreError;
use geni_am_backend::BackendError;
use thiserror::Error;

/// Why a job did not complete.
#[derive(Debug, Error)]
pub enum JobError {
    /// The backend refused or was unreachable.
    #[error(transparent)]
    Backend(#[from] BackendError),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The sliver's node plan, or the stored request it is derived from,
    /// cannot be used.
    #[error("{0}")]
    Request(String),
    /// The job cannot run yet (its VM is still being defined, a VM on its
    /// link is still being destroyed); it waits a poll interval without
    /// counting as a failed attempt.
    #[error("{0}")]
    Waiting(String),
}

impl JobError {
    /// Whether trying again later may succeed: the cloud was unreachable,
    /// busy (a locked object, a VM between states) or the store failed.
    /// A quota or capacity refusal is not: the cloud answered that the VM
    /// does not fit, and the sliver fails at once with its message.
    pub fn is_transient(&self) -> bool {
        match self {
            JobError::Backend(err) => err.is_transient(),
            JobError::Store(_) | JobError::Waiting(_) => true,
            JobError::Request(_) => false,
        }
    }

    /// Whether the cloud refused for lack of quota or capacity.
    pub fn is_capacity(&self) -> bool {
        matches!(self, JobError::Backend(err) if err.class() == geni_am_backend::ErrorClass::Capacity)
    }

    /// Whether the cloud did not answer at all.
    pub fn is_unreachable(&self) -> bool {
        matches!(self, JobError::Backend(err) if err.is_unreachable())
    }
}
