//! What the AM reports and records about slivers (the per-sliver struct
//! the GENI AM API v3 returns from Describe, Status and the changing
//! calls), what the
//! backend observed about their resources, what a call selects, and who
//! is calling.

use super::{AllocationState, OperationalState};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// What the AM reports about one sliver (the sliver-info struct
/// of the GENI AM API v3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SliverInfo {
    /// `urn:publicid:IDN+<am authority>+sliver+<uuid>`.
    pub urn: String,
    /// The request's `client_id` of the node.
    pub client_id: String,
    /// Allocation state.
    pub allocation: AllocationState,
    /// Operational state.
    pub operational: OperationalState,
    /// Expiry of the current allocation state.
    pub expires: DateTime<Utc>,
    /// Why the sliver failed or an operation on it did not apply; empty
    /// when nothing is wrong.
    pub error: String,
}

/// Who is calling, as the credential check established it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    /// URN of the caller (the certificate, or the user spoken for).
    pub caller_urn: String,
    /// URN of the tool speaking for the user, when speaks-for applied.
    pub speaking_for: Option<String>,
    /// The slice the credential names, if it is a slice credential.
    pub slice_urn: Option<String>,
    /// Expiry of the credential that authorised the call; no sliver may
    /// outlive it.
    pub credential_expires: DateTime<Utc>,
}

/// What a call's `urns` argument selects: a whole slice, or some slivers
/// of one slice (the API checks they are all of one slice).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selector {
    /// Every sliver of the slice.
    Slice(String),
    /// The named slivers of the slice.
    Slivers {
        /// The slice they belong to.
        slice_urn: String,
        /// Their URNs.
        urns: Vec<String>,
    },
}

impl Selector {
    /// The slice the selection is in.
    pub fn slice_urn(&self) -> &str {
        match self {
            Self::Slice(urn) | Self::Slivers { slice_urn: urn, .. } => urn,
        }
    }
}

/// What the backend observed about a sliver's resources, written by the
/// workers and rendered into manifests (stored as JSON).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SliverAnnotations {
    /// The backend's id of the VM.
    #[serde(default)]
    pub backend_id: Option<String>,
    /// The node's DNS name.
    #[serde(default)]
    pub hostname: Option<String>,
    /// The VM's address on the control network.
    #[serde(default)]
    pub address: Option<String>,
    /// Addresses of the node's interfaces, by request `client_id`.
    #[serde(default)]
    pub interfaces: Vec<InterfaceAddresses>,
    /// SSH login endpoints, one per account.
    #[serde(default)]
    pub logins: Vec<LoginEndpoint>,
}

/// What one interface of a node got.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct InterfaceAddresses {
    /// The interface's `client_id` in the request.
    pub client_id: String,
    /// MAC address, `xx:xx:xx:xx:xx:xx`.
    #[serde(default)]
    pub mac_address: Option<String>,
    /// IPv4 addresses with netmask (`address`, `netmask`; the netmask is
    /// empty when neither the backend nor the request gave one).
    #[serde(default)]
    pub ips: Vec<(String, String)>,
    /// The sliver URN of the link the interface is on.
    #[serde(default)]
    pub link: Option<String>,
    /// The backend's handle on that link's network.
    #[serde(default)]
    pub network: Option<String>,
    /// The netmask the request gave with its address, used when the
    /// backend reports none.
    #[serde(default)]
    pub asked_netmask: Option<String>,
}

/// An SSH login to a node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoginEndpoint {
    /// Host to connect to.
    pub hostname: String,
    /// TCP port.
    pub port: u16,
    /// Account name.
    pub username: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selector_names_its_slice() {
        let s = Selector::Slivers {
            slice_urn: "urn:publicid:IDN+x+slice+s".into(),
            urns: vec![],
        };
        assert_eq!(s.slice_urn(), "urn:publicid:IDN+x+slice+s");
        assert_eq!(Selector::Slice("a".into()).slice_urn(), "a");
    }
}
