//! Verifying a presented SFA credential for one call: the document, every
//! signature of its delegation chain (bound to the credential it covers),
//! the credential type and expiry of every link, the owner, target and
//! signer certificates against the trust roots at the chosen time, the
//! delegation rules, the root signer's authority over the target, and
//! finally owner = caller, target = the call's object and the privilege the
//! call needs. The result is a [`VerifiedCredential`] or one [`SfaError`].

use super::SfaError;
use super::binding::{SignedLink, signed_chain};
use super::rules;
use crate::cert::GeniCert;
use crate::privilege::PrivilegeSet;
use crate::trust::TrustStore;
use crate::urn::Urn;
use crate::xmldsig::Document;
use chrono::{DateTime, Utc};

/// What a call needs from a credential.
#[derive(Debug, Clone)]
pub struct Request<'a> {
    /// The caller's URN, from the TLS client certificate (after speaks-for
    /// substitution).
    pub caller: &'a Urn,
    /// The object of the call (slice URN), if the call has one.
    pub target: Option<&'a Urn>,
    /// The operation the call needs (`createsliver`, `getsliceresources`…),
    /// if any.
    pub operation: Option<&'a str>,
    /// The time at which validity is judged.
    pub at: DateTime<Utc>,
}

/// A credential that verified.
#[derive(Debug, Clone)]
pub struct VerifiedCredential {
    /// The owner (the caller).
    pub owner: Urn,
    /// The target (slice or user).
    pub target: Urn,
    /// The privileges granted to the owner, as written (`*` not expanded).
    pub privileges: PrivilegeSet,
    /// When the credential expires (never later than any parent).
    pub expires: DateTime<Utc>,
    /// The delegation chain, presented credential first, root last.
    pub chain: Vec<ChainLink>,
}

/// One credential of a verified chain.
#[derive(Debug, Clone)]
pub struct ChainLink {
    /// The credential's ID.
    pub id: String,
    /// Its owner.
    pub owner: Urn,
    /// Its target.
    pub target: Urn,
    /// Its signer (URN, or certificate subject when it has none).
    pub signer: String,
    /// Its expiry.
    pub expires: DateTime<Utc>,
}

/// Verifies the credential document `xml` for `request`.
pub fn verify(
    xml: &[u8],
    trust: &TrustStore,
    request: &Request<'_>,
) -> Result<VerifiedCredential, SfaError> {
    let doc = Document::parse(xml)?;
    let chain = signed_chain(&doc)?;
    for link in &chain {
        rules::check_link(link, request.at)?;
    }
    let mut trusted = rules::TrustedCerts::new(trust, request.at);
    let signers = chain
        .iter()
        .map(|link| trusted.check_link(link))
        .collect::<Result<Vec<GeniCert>, _>>()?;
    for (pair, signer) in chain.windows(2).zip(&signers) {
        rules::check_delegation(&pair[0], &pair[1], signer)?;
    }
    if let (Some(root), Some(signer)) = (chain.last(), signers.last()) {
        rules::check_root_authority(root, signer)?;
    }
    let top = &chain[0].credential;
    if !top.owner_urn.same_as(request.caller) {
        return Err(SfaError::OwnerNotCaller {
            owner: top.owner_urn.to_string(),
            caller: request.caller.to_string(),
        });
    }
    if let Some(expected) = request.target.filter(|t| !top.target_urn.same_as(t)) {
        return Err(SfaError::TargetMismatch {
            target: top.target_urn.to_string(),
            expected: expected.to_string(),
        });
    }
    if let Some(operation) = request.operation {
        rules::check_operation(top, operation)?;
    }
    Ok(verified(&chain, &signers))
}

fn verified(chain: &[SignedLink<'_>], signers: &[GeniCert]) -> VerifiedCredential {
    let top = &chain[0].credential;
    VerifiedCredential {
        owner: top.owner_urn.clone(),
        target: top.target_urn.clone(),
        privileges: top.privileges.clone(),
        expires: top.expires,
        chain: chain
            .iter()
            .zip(signers)
            .map(|(link, signer)| ChainLink {
                id: link.credential.id.clone(),
                owner: link.credential.owner_urn.clone(),
                target: link.credential.target_urn.clone(),
                signer: signer.display_name(),
                expires: link.credential.expires,
            })
            .collect(),
    }
}
