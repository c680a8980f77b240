//! The TLS side of the server: an OpenSSL acceptor that requires a client
//! certificate chaining to the trust roots (intermediates sent by the
//! client are used to build the chain), and the check run once per
//! connection after the handshake, which verifies the peer chain again with
//! `geni_credentials::trust` (GENI namespace rule included) and attaches the
//! outcome to the connection.
//!
//! Legacy client certificates (MD5/SHA-1 signatures, 1024-bit RSA) are
//! accepted without lowering the security level of the TLS session itself:
//! the verify callback forgives exactly the "too weak" chain errors, and
//! `geni_credentials::trust` (which accepts them for configured roots only)
//! makes the decision.

use crate::config::TlsIdentity;
use chrono::Utc;
use geni_credentials::GeniCert;
use geni_credentials::{TrustStore, VerifiedChain};
use openssl::ssl::{SslAcceptor, SslAcceptorBuilder, SslMethod, SslRef, SslVerifyMode, SslVersion};
use openssl::x509::X509StoreContextRef;
use openssl::x509::store::X509StoreBuilder;
use openssl::x509::verify::X509VerifyFlags;
use openssl_sys as ffi;
use std::sync::Arc;

/// The caller of one connection, as established after the handshake.
#[derive(Debug, Clone)]
pub enum PeerIdentity {
    /// The client's chain verified against the trust roots.
    Verified(Arc<VerifiedChain>),
    /// The client presented a certificate that is not accepted, and why.
    Refused(String),
}

/// Chain errors forgiven during the handshake because legacy GENI
/// certificates carry them; the full check after the handshake decides.
fn is_legacy_weakness(error: i32) -> bool {
    matches!(
        error,
        ffi::X509_V_ERR_CA_MD_TOO_WEAK
            | ffi::X509_V_ERR_EE_KEY_TOO_SMALL
            | ffi::X509_V_ERR_CA_KEY_TOO_SMALL
    )
}

/// The handshake's verify callback: OpenSSL's verdict, except for legacy weaknesses.
fn verify_peer(preverified: bool, ctx: &mut X509StoreContextRef) -> bool {
    preverified || is_legacy_weakness(ctx.error().as_raw())
}

/// Builds the acceptor: the server's chain and key, TLS 1.2 or newer,
/// client certificates required and verified against `trust`.
pub fn acceptor(
    identity: &TlsIdentity,
    trust: &TrustStore,
) -> Result<SslAcceptorBuilder, openssl::error::ErrorStack> {
    let mut builder = SslAcceptor::mozilla_intermediate_v5(SslMethod::tls_server())?;
    builder.set_min_proto_version(Some(SslVersion::TLS1_2))?;
    let mut certs = identity.chain.iter();
    if let Some(leaf) = certs.next() {
        builder.set_certificate(leaf)?;
    }
    for issuer in certs {
        builder.add_extra_chain_cert(issuer.clone())?;
    }
    builder.set_private_key(&identity.key)?;
    builder.check_private_key()?;
    let mut store = X509StoreBuilder::new()?;
    for root in trust.roots() {
        store.add_cert(root.x509().clone())?;
    }
    store.set_flags(X509VerifyFlags::PARTIAL_CHAIN)?;
    builder.set_cert_store(store.build());
    builder.set_verify_callback(
        SslVerifyMode::PEER | SslVerifyMode::FAIL_IF_NO_PEER_CERT,
        verify_peer,
    );
    Ok(builder)
}

/// Verifies the peer chain of an established session with the trust store.
pub fn peer_identity(ssl: &SslRef, trust: &TrustStore) -> PeerIdentity {
    let Some(leaf) = ssl.peer_certificate() else {
        return PeerIdentity::Refused("no client certificate was presented".into());
    };
    let leaf = match GeniCert::from_x509(leaf) {
        Ok(leaf) => leaf,
        Err(e) => return PeerIdentity::Refused(format!("client certificate: {e}")),
    };
    // On the server side OpenSSL's peer chain holds what the client sent
    // after its leaf; unreadable certificates are left out of the candidates.
    let sent: Vec<GeniCert> = ssl
        .peer_cert_chain()
        .map(|stack| {
            stack
                .iter()
                .filter_map(|x509| GeniCert::from_x509(x509.to_owned()).ok())
                .collect()
        })
        .unwrap_or_default();
    match trust.verify(&leaf, &sent, Utc::now()) {
        Ok(chain) => PeerIdentity::Verified(Arc::new(chain)),
        Err(e) => PeerIdentity::Refused(format!("client certificate not trusted: {e}")),
    }
}
