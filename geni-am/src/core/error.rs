//! Why an aggregate operation failed, as data: [`CoreError`]. The core
//! never chooses a GENI code; the API layer maps each variant to one
//! (`api::errors`), and the variant's text is the message experimenters
//! read in `output` or a sliver's `geni_error`.

use crate::store::StoreError;
use chrono::{DateTime, Utc};
use thiserror::Error;

/// A failed aggregate operation.
#[derive(Debug, Error)]
pub enum CoreError {
    /// The request RSpec is empty.
    #[error("the request RSpec is empty; send a GENI v3 <rspec type=\"request\"> document")]
    EmptyRequest,
    /// The request is in an RSpec language or version the aggregate does
    /// not speak (its document element is in no RSpec namespace).
    #[error("{0}")]
    UnsupportedRspec(String),
    /// The request is not a valid RSpec (schema, syntax or semantic rules).
    #[error("{0}")]
    InvalidRspec(String),
    /// A request template (TOSCA, RADL, HOT) is malformed or asks for
    /// what the aggregate cannot honour: one `template:line:column:
    /// message` line per refusal.
    #[error("{0}")]
    TemplateRefused(String),
    /// Something the request asks for at one line cannot be served.
    #[error("line {line}: {problem}")]
    BadRequest {
        /// The line of the element concerned.
        line: u32,
        /// What is wrong there and what to do about it.
        problem: String,
    },
    /// The request names no node of this aggregate.
    #[error("the request has no node for this aggregate (component_manager_id {cm} or none)")]
    NoNodeForAggregate {
        /// This aggregate's component manager URN.
        cm: String,
    },
    /// A node of the request already has a sliver in the slice.
    #[error(
        "slice {slice} already has a sliver for node `{client_id}`; delete it or choose another client_id"
    )]
    NodeExists {
        /// The slice URN.
        slice: String,
        /// The node's `client_id`.
        client_id: String,
    },
    /// CreateSliver (AM API v2) into a slice that has slivers here.
    #[error("slice {slice} already has a sliver here; DeleteSliver it first")]
    SliceExists {
        /// The slice URN.
        slice: String,
    },
    /// The slice would hold more slivers than the policy allows.
    #[error("slice {slice} would hold {would_hold} slivers here; the limit is {limit}")]
    TooManySlivers {
        /// The slice URN.
        slice: String,
        /// How many it would hold.
        would_hold: usize,
        /// The most it may hold.
        limit: usize,
    },
    /// No capacity for what was asked: no components at all, or none with
    /// room for a node (the text says which node, when one is concerned).
    #[error("{0}")]
    NoCapacity(String),
    /// The slice holds no live sliver here.
    #[error("slice {slice} has no slivers at this aggregate")]
    UnknownSlice {
        /// The slice URN.
        slice: String,
    },
    /// A named sliver is not a live, unexpired sliver of the slice.
    #[error("no sliver {urn} in slice {slice} (unknown, deleted or expired)")]
    UnknownSliver {
        /// The sliver URN asked for.
        urn: String,
        /// The slice URN.
        slice: String,
    },
    /// A sliver an operator named is not a live sliver here.
    #[error("no live sliver {urn} at this aggregate (unknown, deleted or never allocated here)")]
    NoSuchSliver {
        /// The sliver URN given.
        urn: String,
    },
    /// A slice an operator named is not known here.
    #[error("slice {slice} is not known at this aggregate")]
    NoSuchSlice {
        /// The slice URN given.
        slice: String,
    },
    /// The aggregate is draining: it takes no new slivers.
    #[error(
        "this aggregate is draining since {}{}: it allocates no new slivers (existing slivers keep working); try again later or use another aggregate",
        crate::time::format(.since),
        drain_reason(.reason)
    )]
    Draining {
        /// Since when.
        since: DateTime<Utc>,
        /// Why, as the operator said (may be empty).
        reason: String,
    },
    /// A URN that is not one, or not a sliver URN.
    #[error("{0}")]
    BadUrn(String),
    /// The slice was shut down (Shutdown), so `consequence`.
    #[error("slice {slice} was shut down{} (Shutdown); {consequence}", by_whom(.by))]
    ShutDown {
        /// The slice URN.
        slice: String,
        /// Who shut it down, when recorded.
        by: Option<String>,
        /// What the shutdown means for this call.
        consequence: &'static str,
    },
    /// The credential of the call has expired.
    #[error(
        "the credential expired at {}; renew the slice and get a fresh slice credential",
        crate::time::format(.at)
    )]
    CredentialExpired {
        /// When it expired.
        at: DateTime<Utc>,
    },
    /// A requested expiry is not in the future.
    #[error(
        "the requested expiration {} is not in the future (now is {})",
        crate::time::format(.requested),
        crate::time::format(.now)
    )]
    ExpiryPassed {
        /// The expiry asked for.
        requested: DateTime<Utc>,
        /// The time of the call.
        now: DateTime<Utc>,
    },
    /// A requested expiry is past what the credential or policy allow.
    #[error(
        "the requested expiration {} is after {} when {why}; renew the slice first or ask for an earlier time (geni_extend_alap renews as far as allowed)",
        crate::time::format(.requested),
        crate::time::format(.limit)
    )]
    ExpiryTooLate {
        /// The expiry asked for.
        requested: DateTime<Utc>,
        /// The latest allowed.
        limit: DateTime<Utc>,
        /// What sets the limit.
        why: &'static str,
    },
    /// A whole-slice Provision finds no `geni_allocated` sliver.
    #[error("nothing in slice {slice} is geni_allocated; Allocate first")]
    NothingAllocated {
        /// The slice URN.
        slice: String,
    },
    /// A sliver is not in an allocation state the operation accepts.
    #[error(
        "sliver {urn} is {state}, not geni_allocated; only allocated slivers can be provisioned"
    )]
    NotAllocated {
        /// The sliver URN.
        urn: String,
        /// Its allocation state.
        state: String,
    },
    /// An operational action the aggregate does not know.
    #[error("operational action `{name}` is not supported; supported: {known}")]
    UnknownAction {
        /// The name asked for.
        name: String,
        /// The supported names, comma separated.
        known: String,
    },
    /// An option an operation needs is missing.
    #[error("{0}")]
    MissingOption(&'static str),
    /// An operational action on a sliver that is not provisioned.
    #[error("sliver {urn} is not provisioned yet; {action} needs a provisioned sliver")]
    ActionNeedsProvisioned {
        /// The sliver URN.
        urn: String,
        /// The action's GENI name.
        action: &'static str,
    },
    /// An operational action not valid in the sliver's operational state.
    #[error("{action} is not possible while sliver {urn} is {state}{}", failed_hint(.failure))]
    ActionNotInState {
        /// The action's GENI name.
        action: &'static str,
        /// The sliver URN.
        urn: String,
        /// Its operational state.
        state: String,
        /// For a failed sliver: its error (possibly empty).
        failure: Option<String>,
    },
    /// The store is locked by concurrent writers; retrying helps.
    #[error("the aggregate is busy, retry shortly ({0})")]
    Busy(StoreError),
    /// The store failed.
    #[error("{0}")]
    Store(StoreError),
    /// Stored data or the aggregate's own set-up cannot be used (a stored
    /// request that no longer parses, schemas that do not load).
    #[error("{0}")]
    Internal(String),
}

impl From<StoreError> for CoreError {
    /// Contention is [`CoreError::Busy`], anything else [`CoreError::Store`].
    fn from(e: StoreError) -> Self {
        if e.is_busy() {
            CoreError::Busy(e)
        } else {
            CoreError::Store(e)
        }
    }
}

impl CoreError {
    /// A problem with what the request says at `line`.
    pub fn bad_request(line: u32, problem: impl Into<String>) -> Self {
        CoreError::BadRequest {
            line,
            problem: problem.into(),
        }
    }
}

/// ` by <urn>` when who shut a slice down is known.
fn by_whom(by: &Option<String>) -> String {
    by.as_deref()
        .map(|urn| format!(" by {urn}"))
        .unwrap_or_default()
}

/// ` (reason)` when the operator gave one.
fn drain_reason(reason: &str) -> String {
    if reason.trim().is_empty() {
        String::new()
    } else {
        format!(" ({})", reason.trim())
    }
}

/// What a refused action on a failed sliver adds: why it failed, and that
/// only a new sliver helps.
fn failed_hint(failure: &Option<String>) -> String {
    match failure {
        None => String::new(),
        Some(error) if error.is_empty() => {
            "; a failed sliver stays failed: delete it and allocate a new one".to_owned()
        }
        Some(error) => {
            format!(" ({error}); a failed sliver stays failed: delete it and allocate a new one")
        }
    }
}
