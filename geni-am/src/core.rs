//! The aggregate's rules on the store: allocation and operational state
//! machines (GENI AM API v3, "Sliver Allocation States" and "Sliver
//! Operational States"), expiry rules, capacity reservation, node plans,
//! manifests and the advertisement. Failures are [`CoreError`]s: data the
//! API layer maps to GENI codes.
//!
//! [`Aggregate`] is synchronous; every operation runs in one store
//! transaction and never calls the backend: work for the backend is queued
//! as jobs in that same transaction, and the workers report back through
//! the store (`Store::set_operational_state`, `Store::set_annotations`, …).
//! The API layer checks credentials first and passes the resulting
//! [`Principal`]; it also validates that a URN list names one slice (the
//! [`Selector`]).

mod actions;
mod advertise;
mod allocate;
mod error;
mod expiry;
mod lifecycle;
pub mod links;
mod manifest;
mod merge;
pub mod naming;
mod operator;
mod outputs;
pub mod overview;
mod owners;
mod report;
mod requests;
mod select;
pub mod templates;
mod v2;

pub use actions::Action;
pub use allocate::Allocation;
pub use error::CoreError;
pub use lifecycle::{ProvisionOptions, RenewOptions};
pub use naming::{login_name, login_names, urn_name};
pub use operator::operator_label;
pub use v2::{V2Resource, V2Status};

use crate::model::SliverInfo;
use crate::store::Store;
use chrono::{DateTime, TimeDelta, Utc};
use geni_rspec::Validator;
use std::sync::Arc;

/// Who the aggregate is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AggregateConfig {
    /// The AM's authority, e.g. `am.example.org`; sliver URNs are
    /// `urn:publicid:IDN+<authority>+sliver+<uuid>`.
    pub authority: String,
    /// The AM's URN (`…+authority+am`).
    pub am_urn: String,
    /// The component manager URN written on nodes (`…+authority+cm`).
    pub cm_urn: String,
    /// Limits and lease lengths.
    pub policy: Policy,
    /// How experimenters reach their nodes over SSH.
    pub ssh: SshAccess,
}

/// How experimenters reach their nodes over SSH: directly, or through a
/// gateway (the manifest's logins then name the gateway, and each node
/// carries the jFed SSH proxy extension leading from it to the VM).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SshAccess {
    /// The port SSH listens on in the VMs.
    pub port: u16,
    /// The gateway's host name and port, if logins go through one.
    pub gateway: Option<(String, u16)>,
}

impl Default for SshAccess {
    /// Direct logins on port 22.
    fn default() -> Self {
        Self {
            port: 22,
            gateway: None,
        }
    }
}

/// The aggregate's limits and defaults.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    /// How long an Allocate reservation lasts before Provision.
    pub allocation_timeout: TimeDelta,
    /// Lease of a provisioned sliver when the request names no end time.
    pub default_lease: TimeDelta,
    /// Longest lease from now (Provision, Renew).
    pub max_lease: TimeDelta,
    /// Most live slivers one slice may hold here.
    pub max_slivers_per_slice: usize,
    /// Whether ListResources answers callers who present no credential.
    pub public_advertisement: bool,
    /// The sliver type of a requested node that names none; `None`: the
    /// first one advertised.
    pub default_sliver_type: Option<String>,
}

impl Default for Policy {
    /// 10-minute allocations, 7-day default and 30-day maximum leases,
    /// 100 slivers per slice, the first advertised sliver type by default,
    /// an advertisement only for credential holders.
    fn default() -> Self {
        Self {
            allocation_timeout: TimeDelta::minutes(10),
            default_lease: TimeDelta::days(7),
            max_lease: TimeDelta::days(30),
            max_slivers_per_slice: 100,
            public_advertisement: false,
            default_sliver_type: None,
        }
    }
}

/// Where the aggregate reads the time (replaceable in tests).
pub type Clock = Arc<dyn Fn() -> DateTime<Utc> + Send + Sync>;

/// What a slice-wide operation reports: the slice, a manifest and the
/// slivers concerned (Provision, Describe).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SliceReport {
    /// The slice URN.
    pub slice_urn: String,
    /// Manifest RSpec text.
    pub manifest: String,
    /// The slivers.
    pub slivers: Vec<SliverInfo>,
}

/// What Status reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusReport {
    /// The slice URN.
    pub slice_urn: String,
    /// The slivers.
    pub slivers: Vec<SliverInfo>,
}

/// The aggregate: its identity, policy and store.
#[derive(Clone)]
pub struct Aggregate {
    store: Store,
    config: AggregateConfig,
    validator: Validator,
    clock: Clock,
    /// The drain state as last read, for GetVersion (see
    /// [`Aggregate::draining`]).
    drain_seen: Arc<operator::DrainCache>,
    /// The slice of each sliver seen (see [`Aggregate::slices_of_slivers`]).
    owners: Arc<owners::Owners>,
    /// Request documents kept parsed, for manifests.
    requests: Arc<requests::Requests>,
}

impl std::fmt::Debug for Aggregate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Aggregate")
            .field("config", &self.config)
            .field("store", &self.store)
            .finish_non_exhaustive()
    }
}

impl Aggregate {
    /// The aggregate `config` on `store`, reading the system clock.
    pub fn new(store: Store, config: AggregateConfig) -> Result<Self, CoreError> {
        let validator = Validator::new()
            .map_err(|e| CoreError::Internal(format!("the RSpec schemas do not load: {e}")))?;
        Ok(Self {
            store,
            config,
            validator,
            clock: Arc::new(Utc::now),
            drain_seen: Arc::default(),
            owners: Arc::default(),
            requests: Arc::default(),
        })
    }

    /// The same aggregate reading the time from `clock`.
    pub fn with_clock(self, clock: Clock) -> Self {
        Self { clock, ..self }
    }

    /// The store.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The configuration.
    pub fn config(&self) -> &AggregateConfig {
        &self.config
    }

    /// The current time, to the second (the store keeps seconds).
    fn now(&self) -> DateTime<Utc> {
        let now = (self.clock)();
        DateTime::from_timestamp(now.timestamp(), 0).unwrap_or(now)
    }
}
