//! A certificate chain as a TLS peer presented it, leaf first, with the
//! keys the trust store's caches file it under computed once: the
//! fingerprint of the whole chain and that of its leaf alone (each a
//! [`chain_key`]). A server's handshake computes them for its own cache of
//! verdicts (the handshake module) and hands the chain on to the check
//! after the handshake, so the certificates are encoded and hashed once
//! per connection instead of three times.

use crate::cert::{CertError, MAX_CHAIN_LEN};
use crate::trust::TrustError;
use openssl::sha::Sha256;
use openssl::x509::{X509, X509Ref};

/// What a peer presented, its leaf first, with its cache keys.
pub struct PresentedChain {
    certs: Vec<X509>,
    chain_key: [u8; 32],
    leaf_key: [u8; 32],
}

impl PresentedChain {
    /// The chain `certs`, leaf first, as the peer sent it.
    pub fn new(certs: Vec<X509>) -> Result<PresentedChain, TrustError> {
        let (chain_key, leaf_key) = keys(certs.iter().map(|cert| &**cert))?;
        let leaf_key = leaf_key.ok_or(TrustError::Certificate(CertError::NoCertificate))?;
        Ok(PresentedChain {
            certs,
            chain_key,
            leaf_key,
        })
    }

    /// The leaf.
    pub fn leaf(&self) -> &X509 {
        &self.certs[0]
    }

    /// What the peer sent after its leaf.
    pub fn sent(&self) -> &[X509] {
        &self.certs[1..]
    }

    /// The key of the whole chain ([`chain_key`] of the leaf and what was sent).
    pub(crate) fn chain_key(&self) -> [u8; 32] {
        self.chain_key
    }

    /// The key of the leaf alone.
    pub(crate) fn leaf_key(&self) -> [u8; 32] {
        self.leaf_key
    }
}

/// The cache key of a presented chain: SHA-256 over each certificate's DER,
/// each preceded by its length so that no two chains share an encoding.
pub(crate) fn chain_key<'c>(
    certs: impl Iterator<Item = &'c X509Ref>,
) -> Result<[u8; 32], TrustError> {
    Ok(keys(certs)?.0)
}

/// [`chain_key`] of `certs` and, in the same pass, of their first alone
/// (none when there are no certificates).
fn keys<'c>(
    certs: impl Iterator<Item = &'c X509Ref>,
) -> Result<([u8; 32], Option<[u8; 32]>), TrustError> {
    let mut hasher = Sha256::new();
    let mut first = None;
    for cert in certs.take(MAX_CHAIN_LEN + 1) {
        let der = cert.to_der()?;
        hasher.update(&(der.len() as u64).to_be_bytes());
        hasher.update(&der);
        if first.is_none() {
            first = Some(hasher.clone().finish());
        }
    }
    Ok((hasher.finish(), first))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cert::parse_chain;
    use std::iter::once;

    /// The first certificate of a file of the corpus's gcf test CA.
    fn gcf(file: &str) -> X509 {
        let path = crate::corpus().join("creds/certs/gcf-test-ca").join(file);
        parse_chain(&std::fs::read(path).unwrap()).unwrap()[0]
            .x509()
            .clone()
    }

    #[test]
    fn the_keys_are_those_of_the_chain_and_of_its_leaf_alone() {
        let (leaf, issuer) = (&gcf("alice-cert.pem"), &gcf("ch-cert.pem"));
        let presented = PresentedChain::new(vec![leaf.clone(), issuer.clone()]).unwrap();
        assert_eq!(
            presented.chain_key(),
            chain_key([&**leaf, &**issuer].into_iter()).unwrap()
        );
        assert_eq!(presented.leaf_key(), chain_key(once(&**leaf)).unwrap());
        assert_ne!(presented.chain_key(), presented.leaf_key());
        assert_eq!(presented.sent().len(), 1);
    }

    #[test]
    fn a_chain_without_a_leaf_is_refused() {
        assert!(PresentedChain::new(Vec::new()).is_err());
    }
}
