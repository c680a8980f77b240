//! Verifying a presented SFA credential for one call: the document, every
//! signature of its delegation chain (bound to the credential it covers),
//! the credential type and expiry of every link, the owner, target and
//! signer certificates against the trust roots at the chosen time, the
//! delegation rules, the root signer's authority over the target, and
//! finally owner = caller, target = the call's object and the privilege the
//! call needs. The result is a [`VerifiedCredential`] or one [`SfaError`].
//!
//! # The cache of verified documents
//!
//! A user repeats the same slice credential in every call, and checking
//! it again costs a parse, C14N, digests and every RSA signature of its
//! chain. What a successful check established is therefore remembered,
//! keyed by the SHA-256 of the **whole document as presented** and by the
//! trust store's [`TrustStore::generation`], at most [`DEFAULT_CAPACITY`]
//! documents (CLOCK eviction). Skipping the signature checks on a hit is
//! safe because everything they depend on is in the key:
//!
//! * the parse, the signature-wrapping defence, C14N, the digests, the
//!   signature values and the signer certificates are all read from the
//!   document's bytes and nothing else, so the same bytes give the same
//!   outcome; and bytes differing in anything at all (one signature byte,
//!   a reordered attribute, whitespace) have a different SHA-256, short of
//!   a SHA-256 collision, which no one can produce;
//! * whether the owner, target and signer certificates chain to a trusted
//!   root depends on the roots, which the generation identifies (a reload
//!   or change of roots gives a new generation, so no verdict about other
//!   roots is ever served);
//! * what depends on time is checked again on every call: each credential
//!   of the chain must not have expired at the call's time, and the call's
//!   time must lie in the window where every certificate chain used was
//!   valid (latest notBefore to earliest notAfter) — outside it the
//!   document is verified in full again, which gives the precise refusal;
//! * what depends on the call (owner = caller, target = the call's object,
//!   the privilege the operation needs) is checked on every call.
//!
//! Only documents that passed are remembered; a refused document is
//! verified in full every time it is presented.

use super::SfaError;
use super::binding::{SignedLink, signed_chain};
use super::model::CredentialElement;
use super::rules;
use crate::cache::{BoundedCache, DEFAULT_CAPACITY};
use crate::cert::GeniCert;
use crate::privilege::PrivilegeSet;
use crate::trust::TrustStore;
use crate::urn::Urn;
use crate::xmldsig::Document;
use chrono::{DateTime, Utc};
use std::sync::{Arc, OnceLock};

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

/// Documents that verified, by trust store generation and SHA-256 of the document.
type VerifiedDocuments = BoundedCache<(u64, [u8; 32]), Arc<Checked>>;

/// The process-wide cache of verified documents.
fn verified_documents() -> &'static VerifiedDocuments {
    static CACHE: OnceLock<VerifiedDocuments> = OnceLock::new();
    CACHE.get_or_init(|| BoundedCache::new(DEFAULT_CAPACITY))
}

/// What the checks of a document that do not depend on the call established.
#[derive(Debug)]
struct Checked {
    /// The presented (top) credential.
    top: CredentialElement,
    /// The ID and expiry of each credential of the chain, top first.
    expiries: Vec<(String, DateTime<Utc>)>,
    /// When every certificate chain used is valid (both ends included).
    certificates_valid: (DateTime<Utc>, DateTime<Utc>),
    /// The result handed to callers.
    verified: VerifiedCredential,
}

/// Verifies the credential document `xml` for `request`, reusing what an
/// earlier verification of the same bytes against the same roots
/// established (see the module documentation for why that is safe).
pub fn verify(
    xml: &[u8],
    trust: &TrustStore,
    request: &Request<'_>,
) -> Result<VerifiedCredential, SfaError> {
    let key = (trust.generation(), openssl::sha::sha256(xml));
    let cache = verified_documents();
    let checked = match cache.get(&key) {
        Some(hit) if hit.still_valid(request.at)? => hit,
        _ => {
            let checked = Arc::new(check_document(xml, trust, request.at)?);
            cache.insert(key, checked.clone());
            checked
        }
    };
    answer(&checked, request)
}

/// Everything but the call's owner, target and privilege, at time `at`.
fn check_document(xml: &[u8], trust: &TrustStore, at: DateTime<Utc>) -> Result<Checked, SfaError> {
    let doc = Document::parse(xml)?;
    let chain = signed_chain(&doc)?;
    for link in &chain {
        rules::check_link(link, at)?;
    }
    let mut trusted = rules::TrustedCerts::new(trust, at);
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
    Ok(Checked {
        top: chain[0].credential.clone(),
        expiries: chain
            .iter()
            .map(|link| (link.credential.id.clone(), link.credential.expires))
            .collect(),
        certificates_valid: trusted.window(),
        verified: verified(&chain, &signers),
    })
}

impl Checked {
    /// The time-dependent checks again at `at`: an expired credential is
    /// refused as [`check_document`] refuses it; `false` when a certificate
    /// is outside its validity, so that the document is checked in full.
    fn still_valid(&self, at: DateTime<Utc>) -> Result<bool, SfaError> {
        if let Some((id, expires)) = self.expiries.iter().find(|(_, expires)| *expires <= at) {
            return Err(SfaError::Expired {
                credential: id.clone(),
                expires: *expires,
                at,
            });
        }
        let (from, until) = self.certificates_valid;
        Ok(from <= at && at <= until)
    }
}

/// The checks that depend on the call: owner, target and privilege.
fn answer(checked: &Checked, request: &Request<'_>) -> Result<VerifiedCredential, SfaError> {
    let top = &checked.top;
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
    Ok(checked.verified.clone())
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
