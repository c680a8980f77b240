//! Which AM API method needs which privilege — the one table of it — and
//! the SFA privilege model it is checked against ([`PrivilegeSet`]).
//!
//! The requirements follow gcf `am2.py`/`am3.py`: `GetVersion` needs no
//! credential; `ListResources` without a slice needs a valid credential of
//! any target (normally the user credential) and no operation; slice-scoped
//! methods need a credential whose target is the slice and which allows the
//! operation named in [`METHODS`]. `ListResources` with a slice (API v2)
//! reveals the slice's manifest, so it needs `getsliceresources` as
//! `Describe` does (FOAM's rule; gcf asks for nothing).

mod rights;

pub use rights::{Privilege, PrivilegeSet, default_privileges, operations};

use crate::refusal::RefusalKind;

/// Version of the AM API a call arrived on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ApiVersion {
    /// AM API v2.
    V2,
    /// AM API v3.
    V3,
}

/// What credential a call must present.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CredentialTarget {
    /// No credential at all (`GetVersion`).
    None,
    /// Any valid credential owned by the caller (`ListResources`).
    Any,
    /// A credential whose target is the slice named in the call.
    Slice,
}

/// The authorisation a method needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Requirement {
    /// What the credential must target.
    pub target: CredentialTarget,
    /// The SFA operation a privilege must allow, if any.
    pub operation: Option<&'static str>,
}

const NOTHING: Requirement = Requirement {
    target: CredentialTarget::None,
    operation: None,
};
const VALID_CREDENTIAL: Requirement = Requirement {
    target: CredentialTarget::Any,
    operation: None,
};

const fn on_slice(operation: &'static str) -> Requirement {
    Requirement {
        target: CredentialTarget::Slice,
        operation: Some(operation),
    }
}

/// Every method of AM API v2 and v3 with what it needs. `ListResources`
/// appears twice: without and with a slice (`geni_slice_urn`, v2 only).
pub const METHODS: &[(ApiVersion, &str, bool, Requirement)] = &[
    (ApiVersion::V3, "GetVersion", false, NOTHING),
    (ApiVersion::V3, "ListResources", false, VALID_CREDENTIAL),
    (
        ApiVersion::V3,
        "Describe",
        true,
        on_slice("getsliceresources"),
    ),
    (ApiVersion::V3, "Allocate", true, on_slice("createsliver")),
    (ApiVersion::V3, "Renew", true, on_slice("renewsliver")),
    (ApiVersion::V3, "Provision", true, on_slice("createsliver")),
    (
        ApiVersion::V3,
        "Status",
        true,
        on_slice("getsliceresources"),
    ),
    (
        ApiVersion::V3,
        "PerformOperationalAction",
        true,
        on_slice("createsliver"),
    ),
    (ApiVersion::V3, "Delete", true, on_slice("deleteslice")),
    (ApiVersion::V3, "Shutdown", true, on_slice("shutdown")),
    (ApiVersion::V2, "GetVersion", false, NOTHING),
    (ApiVersion::V2, "ListResources", false, VALID_CREDENTIAL),
    (
        ApiVersion::V2,
        "ListResources",
        true,
        on_slice("getsliceresources"),
    ),
    (
        ApiVersion::V2,
        "CreateSliver",
        true,
        on_slice("createsliver"),
    ),
    (
        ApiVersion::V2,
        "SliverStatus",
        true,
        on_slice("getsliceresources"),
    ),
    (ApiVersion::V2, "RenewSliver", true, on_slice("renewsliver")),
    (
        ApiVersion::V2,
        "DeleteSliver",
        true,
        on_slice("deleteslice"),
    ),
    (ApiVersion::V2, "Shutdown", true, on_slice("shutdown")),
];

/// What `method` of API `version` needs; `with_slice` tells whether the call
/// names a slice (only `ListResources` distinguishes). `None` for a method
/// the API does not have.
pub fn requirement(version: ApiVersion, method: &str, with_slice: bool) -> Option<Requirement> {
    let mut rows = METHODS
        .iter()
        .filter(|(v, name, _, _)| *v == version && *name == method);
    rows.clone()
        .find(|(_, _, slice, _)| *slice == with_slice)
        .or_else(|| rows.next())
        .map(|(_, _, _, requirement)| *requirement)
}

/// A credential that does not grant what the call needs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("operation {operation:?} is not allowed by the credential's privileges ({})", describe(.held))]
pub struct MissingPrivilege {
    /// The operation needed.
    pub operation: String,
    /// The privileges the credential holds.
    pub held: PrivilegeSet,
}

fn describe(held: &PrivilegeSet) -> String {
    if held.is_empty() {
        "none".to_owned()
    } else {
        held.to_string()
    }
}

impl MissingPrivilege {
    /// The GENI outcome: the credential is fine but does not allow this.
    pub fn kind(&self) -> RefusalKind {
        RefusalKind::Forbidden
    }
}

impl Requirement {
    /// Checks that `held` allows this requirement's operation.
    pub fn check(&self, held: &PrivilegeSet) -> Result<(), MissingPrivilege> {
        match self.operation {
            Some(operation) if !held.allows(operation) => Err(MissingPrivilege {
                operation: operation.to_owned(),
                held: held.clone(),
            }),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests;
