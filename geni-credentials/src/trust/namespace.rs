//! The GENI namespace rule on a verified chain: every signer (each issuer,
//! and the trust root at the top) has a URN of type `authority` whose HRN is
//! an authority for the subject's HRN (gcf `GID.verify_chain`).

use super::TrustError;
use crate::cert::GeniCert;
use crate::urn::UrnType;

/// Checks the rule on `chain` (leaf first, root last). A chain of one
/// certificate is a trusted root presented as leaf: it is its own signer.
pub(super) fn check_chain(chain: &[GeniCert]) -> Result<(), TrustError> {
    for (i, subject) in chain.iter().enumerate() {
        let signer = match chain.get(i + 1) {
            Some(signer) => signer,
            None if chain.len() == 1 => subject,
            None => break,
        };
        check_pair(signer, subject)?;
    }
    Ok(())
}

/// Checks that `signer` may issue `subject` under the namespace rule.
pub(super) fn check_pair(signer: &GeniCert, subject: &GeniCert) -> Result<(), TrustError> {
    let subject_urn = subject.require_urn()?;
    let signer_urn = signer
        .urn()
        .filter(|urn| *urn.urn_type() == UrnType::Authority)
        .ok_or_else(|| TrustError::SignerNotAuthority {
            signer: signer.display_name(),
            subject: subject_urn.to_string(),
        })?;
    if !signer_urn.is_authority_for(subject_urn) {
        return Err(TrustError::NamespaceViolation {
            signer: signer_urn.to_string(),
            subject: subject_urn.to_string(),
            signer_hrn: signer_urn.hrn(),
            subject_hrn: subject_urn.hrn(),
        });
    }
    Ok(())
}
