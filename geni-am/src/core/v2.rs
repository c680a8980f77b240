//! GENI AM API v2 as compositions of the v3 operations: one
//! sliver set per slice, named by the slice URN.

use super::lifecycle::{ProvisionOptions, RenewOptions};
use super::{Aggregate, CoreError, actions::Action};
use crate::model::{OperationalState, Principal, Selector, UserKeys};
use crate::store::slivers;
use chrono::{DateTime, Utc};

/// v2 SliverStatus.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct V2Status {
    /// The slice URN.
    pub slice_urn: String,
    /// Overall `geni_status`: `failed` if any sliver failed, `ready` if
    /// all are, `configuring` while any is on its way, `shutdown` when all
    /// are stopped, else `unknown`.
    pub status: &'static str,
    /// Earliest sliver expiry (sent as top-level `geni_expires`).
    pub expires: DateTime<Utc>,
    /// One entry per sliver.
    pub resources: Vec<V2Resource>,
}

/// One sliver in v2 SliverStatus.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct V2Resource {
    /// Sliver URN.
    pub urn: String,
    /// The node's `client_id`.
    pub client_id: String,
    /// `configuring`, `ready`, `failed` or `shutdown`.
    pub status: &'static str,
    /// Error text, empty if none.
    pub error: String,
}

/// The v2 status word of an operational state.
fn v2_status(state: OperationalState) -> &'static str {
    match state {
        OperationalState::PendingAllocation | OperationalState::Configuring => "configuring",
        OperationalState::Ready | OperationalState::ReadyBusy | OperationalState::UpdatingUsers => {
            "ready"
        }
        OperationalState::Failed => "failed",
        OperationalState::NotReady | OperationalState::Stopping => "shutdown",
    }
}

/// The overall v2 status of a slice from its slivers' words.
fn overall(words: &[&'static str]) -> &'static str {
    if words.contains(&"failed") {
        "failed"
    } else if words.contains(&"configuring") {
        "configuring"
    } else if words.iter().all(|w| *w == "ready") {
        "ready"
    } else if words.iter().all(|w| *w == "shutdown") {
        "shutdown"
    } else {
        "unknown"
    }
}

impl Aggregate {
    /// CreateSliver: Allocate, Provision (with `users`) and `geni_start`
    /// in one transaction; returns the manifest. ALREADYEXISTS when the
    /// slice already has slivers here.
    pub fn create_sliver(
        &self,
        principal: &Principal,
        slice_urn: &str,
        rspec: &str,
        users: &[UserKeys],
    ) -> Result<String, CoreError> {
        let request = self.parse_request(rspec)?;
        let now = self.now();
        let slice = Selector::Slice(slice_urn.to_owned());
        let (request_id, provisioned) = self.store.write(|conn| {
            if !slivers::live_client_ids(conn, slice_urn)?.is_empty() {
                return Err(CoreError::SliceExists {
                    slice: slice_urn.to_owned(),
                });
            }
            let allocated = self.allocate_in(conn, principal, slice_urn, &request, now)?;
            let options = ProvisionOptions {
                users: users.to_vec(),
                ..ProvisionOptions::default()
            };
            let provisioned = self.provision_in(conn, principal, &slice, &options, now)?;
            self.action_in(conn, principal, &slice, Action::Start, false, now)?;
            Ok((allocated.request_id, provisioned))
        })?;
        let known = Some((request_id.as_str(), request.document()));
        let report = self.slice_report(slice_urn, provisioned, known)?;
        self.keep_request(&request_id, now, request);
        Ok(report.manifest)
    }

    /// SliverStatus: the slice's slivers in v2 words.
    pub fn sliver_status(&self, slice_urn: &str) -> Result<V2Status, CoreError> {
        let report = self.status(&Selector::Slice(slice_urn.to_owned()))?;
        let resources: Vec<V2Resource> = report
            .slivers
            .iter()
            .map(|s| V2Resource {
                urn: s.urn.clone(),
                client_id: s.client_id.clone(),
                status: v2_status(s.operational),
                error: s.error.clone(),
            })
            .collect();
        let words: Vec<&'static str> = resources.iter().map(|r| r.status).collect();
        Ok(V2Status {
            slice_urn: report.slice_urn,
            status: overall(&words),
            expires: report
                .slivers
                .iter()
                .map(|s| s.expires)
                .min()
                .unwrap_or_default(),
            resources,
        })
    }

    /// RenewSliver: renews every sliver of the slice; returns the new
    /// expiry (with `extend_alap`, possibly earlier than requested).
    pub fn renew_sliver(
        &self,
        principal: &Principal,
        slice_urn: &str,
        requested: DateTime<Utc>,
        extend_alap: bool,
    ) -> Result<DateTime<Utc>, CoreError> {
        let options = RenewOptions {
            best_effort: false,
            extend_alap,
        };
        let slivers = self.renew(
            principal,
            &Selector::Slice(slice_urn.to_owned()),
            requested,
            options,
        )?;
        slivers
            .iter()
            .map(|s| s.expires)
            .min()
            .ok_or_else(|| CoreError::UnknownSlice {
                slice: slice_urn.to_owned(),
            })
    }

    /// DeleteSliver: deletes every sliver of the slice.
    pub fn delete_sliver(&self, principal: &Principal, slice_urn: &str) -> Result<(), CoreError> {
        self.delete(principal, &Selector::Slice(slice_urn.to_owned()))
            .map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overall_status_prefers_failure_then_progress() {
        assert_eq!(overall(&["ready", "failed"]), "failed");
        assert_eq!(overall(&["ready", "configuring"]), "configuring");
        assert_eq!(overall(&["ready", "ready"]), "ready");
        assert_eq!(overall(&["shutdown"]), "shutdown");
        assert_eq!(overall(&["ready", "shutdown"]), "unknown");
    }

    #[test]
    fn every_state_has_a_v2_word() {
        for s in OperationalState::ALL {
            assert!(["configuring", "ready", "failed", "shutdown"].contains(&v2_status(*s)));
        }
    }
}
