//! The aggregate's vocabulary, shared by `api`, `jobs` and the store
//! mapping: allocation and operational states (AMAPI.md §2.15), sliver
//! reports, the caller, users' keys and URN selections.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// Defines a state enum whose variants map one to one to GENI names.
macro_rules! geni_states {
    ($(#[$meta:meta])* $name:ident { $($(#[$vm:meta])* $variant:ident => $text:literal),* $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name {
            $($(#[$vm])* $variant,)*
        }

        impl $name {
            /// Every state.
            pub const ALL: &'static [$name] = &[$($name::$variant,)*];

            /// The GENI name, e.g. `geni_allocated`.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)*
                }
            }

            /// The state named `text` (exact GENI name).
            pub fn parse(text: &str) -> Option<Self> {
                Self::ALL.iter().copied().find(|s| s.as_str() == text)
            }
        }

        impl std::fmt::Display for $name {
            /// The GENI name.
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

geni_states! {
    /// Where a sliver is in the allocation state machine.
    AllocationState {
        /// Deleted or expired; kept for the record, never reused.
        Unallocated => "geni_unallocated",
        /// Reserved for a short time by Allocate.
        Allocated => "geni_allocated",
        /// Instantiated by Provision; lives until its expiry.
        Provisioned => "geni_provisioned",
    }
}

geni_states! {
    /// Where a provisioned sliver is in the operational state machine.
    OperationalState {
        /// Provisioning not finished; no action possible.
        PendingAllocation => "geni_pending_allocation",
        /// Exists, not running; `geni_start` boots it.
        NotReady => "geni_notready",
        /// Booting towards `geni_ready`.
        Configuring => "geni_configuring",
        /// Powering off towards `geni_notready`.
        Stopping => "geni_stopping",
        /// Running and usable.
        Ready => "geni_ready",
        /// Usable but performing an action.
        ReadyBusy => "geni_ready_busy",
        /// Failed; delete it or ask the operators.
        Failed => "geni_failed",
        /// Installing new users' keys, back to `geni_ready` when done.
        UpdatingUsers => "geni_updating_users",
    }
}

impl OperationalState {
    /// Whether a sliver in this state waits for the backend to finish
    /// something (the poller follows it).
    pub fn awaits_backend(self) -> bool {
        matches!(
            self,
            Self::PendingAllocation | Self::Configuring | Self::Stopping | Self::ReadyBusy
        )
    }
}

/// What the AM reports about one sliver (the sliver-info struct of
/// AMAPI.md §2.13).
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

/// Users' keys and link address ranges are what the backend speaks too.
pub use geni_am_backend::{AddressRange, UserKeys};

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
    fn states_round_trip_through_their_geni_names() {
        for s in AllocationState::ALL {
            assert_eq!(AllocationState::parse(s.as_str()), Some(*s));
        }
        for s in OperationalState::ALL {
            assert_eq!(OperationalState::parse(s.as_str()), Some(*s));
            assert!(s.as_str().starts_with("geni_"));
        }
        assert_eq!(AllocationState::Allocated.as_str(), "geni_allocated");
        assert_eq!(OperationalState::Ready.to_string(), "geni_ready");
        assert_eq!(OperationalState::parse("ready"), None);
    }

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
