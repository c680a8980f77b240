//! The rules a signed chain must satisfy beyond its signatures (GENI
//! credentials specification, "SFA credentials": validation): every link is a `privilege` credential that has not expired; its
//! owner, target and signer certificates chain to the trust roots at the
//! chosen time; each delegation is signed by the parent's owner, keeps the
//! parent's target, does not outlive the parent and only passes on
//! delegatable privileges; the root credential's signer is an authority
//! over its target; and the presented credential grants the operation the
//! call needs.

use super::SfaError;
use super::binding::SignedLink;
use super::model::CredentialElement;
use crate::cert::GeniCert;
use crate::privilege::{MissingPrivilege, Privilege, PrivilegeSet};
use crate::trust::{TrustError, TrustStore};
use crate::urn::UrnType;
use chrono::{DateTime, Utc};

/// Type and expiry of one credential.
pub fn check_link(link: &SignedLink<'_>, at: DateTime<Utc>) -> Result<(), SfaError> {
    let credential = &link.credential;
    if credential.kind != "privilege" {
        return Err(SfaError::NotPrivilege {
            credential: credential.id.clone(),
            kind: credential.kind.clone(),
        });
    }
    if credential.expires <= at {
        return Err(SfaError::Expired {
            credential: credential.id.clone(),
            expires: credential.expires,
            at,
        });
    }
    Ok(())
}

/// Certificate checks against the trust roots, each distinct leaf verified
/// once per credential (a chain repeats its target and owners), and the
/// time window in which every chain verified stays valid.
pub struct TrustedCerts<'t> {
    trust: &'t TrustStore,
    at: DateTime<Utc>,
    verified: Vec<GeniCert>,
    window: (DateTime<Utc>, DateTime<Utc>),
}

impl<'t> TrustedCerts<'t> {
    /// Checks against `trust` at time `at`.
    pub fn new(trust: &'t TrustStore, at: DateTime<Utc>) -> Self {
        Self {
            trust,
            at,
            verified: Vec::new(),
            window: (DateTime::<Utc>::MIN_UTC, DateTime::<Utc>::MAX_UTC),
        }
    }

    /// From the latest notBefore to the earliest notAfter of every
    /// certificate of every chain verified so far.
    pub fn window(&self) -> (DateTime<Utc>, DateTime<Utc>) {
        self.window
    }

    /// Verifies the owner, target and signer certificates of `link`;
    /// returns the signer.
    pub fn check_link(&mut self, link: &SignedLink<'_>) -> Result<GeniCert, SfaError> {
        let id = &link.credential.id;
        let untrusted = |source: TrustError, role| SfaError::Untrusted {
            credential: id.clone(),
            role,
            source: Box::new(source),
        };
        let signature = &link.signature;
        let signer = GeniCert::from_x509(signature.signer.clone())
            .map_err(|e| untrusted(TrustError::Certificate(e), "signer"))?;
        if !self.seen(&signer) {
            let others: Vec<GeniCert> = signature
                .certificates
                .iter()
                .filter_map(|c| GeniCert::from_x509(c.clone()).ok())
                .collect();
            self.check(&signer, &others)
                .map_err(|e| untrusted(e, "signer"))?;
        }
        for (role, chain) in [
            ("owner", &link.credential.owner),
            ("target", &link.credential.target),
        ] {
            if let Some((leaf, rest)) = chain.split_first() {
                self.check(leaf, rest).map_err(|e| untrusted(e, role))?;
            }
        }
        Ok(signer)
    }

    /// Whether `leaf` already verified during this check.
    fn seen(&self, leaf: &GeniCert) -> bool {
        self.verified.iter().any(|v| v.same_cert(leaf))
    }

    fn check(&mut self, leaf: &GeniCert, untrusted: &[GeniCert]) -> Result<(), TrustError> {
        if self.seen(leaf) {
            return Ok(());
        }
        let (from, until) = self
            .trust
            .verify_shared(leaf, untrusted, self.at)?
            .validity();
        self.window = (self.window.0.max(from), self.window.1.min(until));
        self.verified.push(leaf.clone());
        Ok(())
    }
}

/// The rules of one delegation: `child` was derived from `parent` and
/// signed by `child_signer`.
pub fn check_delegation(
    child: &SignedLink<'_>,
    parent: &SignedLink<'_>,
    child_signer: &GeniCert,
) -> Result<(), SfaError> {
    let (child, parent) = (&child.credential, &parent.credential);
    let broken = |message: String| SfaError::Delegation {
        credential: child.id.clone(),
        message,
    };
    if !parent
        .owner
        .first()
        .is_some_and(|o| o.same_cert(child_signer))
    {
        return Err(broken(format!(
            "it is signed by {}, not by {}, the owner of its parent {:?}",
            child_signer.display_name(),
            parent.owner_urn,
            parent.id
        )));
    }
    let same_target = child
        .target
        .first()
        .zip(parent.target.first())
        .is_some_and(|(c, p)| c.same_cert(p));
    if !same_target {
        return Err(broken(format!(
            "it targets {} but its parent {:?} targets {}",
            child.target_urn, parent.id, parent.target_urn
        )));
    }
    if child.expires > parent.expires {
        return Err(broken(format!(
            "it expires at {}, after its parent {:?} ({})",
            child.expires, parent.id, parent.expires
        )));
    }
    for wanted in child.privileges.iter() {
        check_delegated(child, parent, wanted).map_err(broken)?;
    }
    Ok(())
}

/// Whether delegatable privileges of `parent` cover every privilege
/// `wanted` stands for (`*` expanded by each credential's target type).
fn check_delegated(
    child: &CredentialElement,
    parent: &CredentialElement,
    wanted: &Privilege,
) -> Result<(), String> {
    let held = parent.privileges.expand_star(&parent.target_urn);
    let wanted_set: PrivilegeSet = std::iter::once(wanted.clone()).collect();
    for right in wanted_set.expand_star(&child.target_urn).iter() {
        if held.iter().any(|p| p.covers(right)) {
            continue;
        }
        let held_anyway = held.iter().any(|p| {
            let delegatable = Privilege::new(&p.name, true);
            delegatable.covers(right)
        });
        return Err(if held_anyway {
            format!(
                "privilege {:?} is not delegatable in its parent {:?}",
                wanted.name, parent.id
            )
        } else {
            format!(
                "privilege {:?} is not held by its parent {:?}: a child may not escalate",
                wanted.name, parent.id
            )
        });
    }
    Ok(())
}

/// The root credential's signer must have issued the target certificate,
/// or be an authority whose namespace covers the target.
pub fn check_root_authority(root: &SignedLink<'_>, signer: &GeniCert) -> Result<(), SfaError> {
    let credential = &root.credential;
    let issued_target = signer
        .x509()
        .public_key()
        .ok()
        .zip(credential.target.first())
        .is_some_and(|(key, target)| target.x509().verify(&key).unwrap_or(false));
    let authority = signer.urn().is_some_and(|urn| {
        *urn.urn_type() == UrnType::Authority && urn.is_authority_for(&credential.target_urn)
    });
    if issued_target || authority {
        return Ok(());
    }
    Err(SfaError::RootNotAuthority {
        credential: credential.id.clone(),
        signer: signer.display_name(),
        target: credential.target_urn.to_string(),
    })
}

/// The presented credential must grant `operation` (an SFA operation such
/// as `createsliver`, or a privilege name).
pub fn check_operation(top: &CredentialElement, operation: &str) -> Result<(), SfaError> {
    let held = top.privileges.expand_star(&top.target_urn);
    if held.allows(operation) || held.contains(operation) {
        return Ok(());
    }
    Err(SfaError::PrivilegeMissing(MissingPrivilege {
        operation: operation.to_owned(),
        held: top.privileges.clone(),
    }))
}
