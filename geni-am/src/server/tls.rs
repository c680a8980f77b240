//! The TLS side of the server: an OpenSSL acceptor that requires a client
//! certificate chaining to the trust roots (intermediates sent by the
//! client are used to build the chain), and the check run once per
//! connection after the handshake, which verifies the peer chain again with
//! `geni_credentials::trust` (GENI namespace rule included) and attaches the
//! outcome to the connection.
//!
//! Handshakes are made cheap for clients that come back (docs/PERFORMANCE.md,
//! "TLS handshakes"): sessions resume from a bounded store of encoded
//! sessions ([`super::sessions`]; TLS 1.2 by session id, TLS 1.3 by
//! tickets naming a kept session, which OpenSSL makes far more cheaply
//! than self-contained tickets), and skip the key exchange and the
//! certificate messages; the per-connection check is served by the trust
//! store's cache of verified chains, keyed by the SHA-256 of the leaf and
//! the chain sent, so a client presenting the same chain again is not
//! verified again while every certificate of it is valid and the roots are
//! unchanged. In the handshake itself, OpenSSL's verification of a chain
//! it accepted before is not repeated either ([`handshake::verify_clients`],
//! same key, same conditions, computed once per connection and handed to
//! the check after the handshake): a *new* certificate always gets OpenSSL's
//! verification in the handshake and the full check after it. A resumed
//! session still carries
//! the client's leaf certificate (OpenSSL keeps it in the session, tickets
//! included) but no chain; its check is the chain the leaf verified with
//! when the session was established, again if still valid.
//!
//! The roots can be replaced while the server runs (SIGHUP): handshakes
//! that start afterwards verify against the new ones, with one OpenSSL
//! store per set of roots.
//!
//! Legacy client certificates (MD5/SHA-1 signatures, 1024-bit RSA) are
//! accepted without lowering the security level of the TLS session itself:
//! the verify callback forgives exactly the "too weak" chain errors, and
//! `geni_credentials::trust` (which accepts them for configured roots only)
//! makes the decision.

use super::sessions;
use crate::config::TlsIdentity;
use chrono::Utc;
use geni_credentials::{TrustError, TrustStore, VerifiedChain, handshake};
use openssl::ssl::{
    SslAcceptor, SslAcceptorBuilder, SslMethod, SslMode, SslOptions, SslRef, SslVerifyMode,
    SslVersion,
};
use openssl::x509::{X509, X509StoreContextRef, X509VerifyResult};
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

/// Names this server's sessions; OpenSSL refuses to resume a session
/// with a verified client certificate unless a context is set.
const SESSION_ID_CONTEXT: &[u8] = b"geni-am";
/// Most sessions kept for resumption (TLS 1.3 tickets included), about
/// 1 KiB each ([`sessions`]).
const SESSIONS_KEPT: usize = 1_024;
/// Tickets handed out after a TLS 1.3 handshake: each is a session kept,
/// and most GENI clients (omni) never resume.
const TLS13_TICKETS: usize = 1;

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

/// Builds the acceptor: the server's chain and key (RSA or ECDSA), TLS 1.2
/// or newer, client certificates required and verified against the roots
/// `trust` holds when each handshake starts, sessions resumable.
pub fn acceptor(
    identity: &TlsIdentity,
    trust: &Arc<TrustStore>,
) -> Result<SslAcceptorBuilder, openssl::error::ErrorStack> {
    let mut builder = SslAcceptor::mozilla_intermediate_v5(SslMethod::tls_server())?;
    builder.set_min_proto_version(Some(SslVersion::TLS1_2))?;
    let mut certs = identity.chain.iter();
    if let Some(leaf) = certs.next() {
        builder.set_certificate(leaf)?;
    }
    // A root at the end of the configured chain is not sent: a client
    // that verifies the server holds it already, and every certificate
    // sent is one more for each client to decode (with OpenSSL 3.0, a
    // tenth of a millisecond). Nor is a chain built from the trust roots
    // when none is configured.
    for issuer in certs.filter(|cert| cert.issued(cert) != X509VerifyResult::OK) {
        builder.add_extra_chain_cert(issuer.clone())?;
    }
    builder.set_mode(SslMode::NO_AUTO_CHAIN);
    // A client's flight (TLS 1.3: Certificate, CertificateVerify,
    // Finished, and often the request with them) is read in one system
    // call instead of two per record (header, then body).
    builder.set_read_ahead(true);
    builder.set_private_key(&identity.key)?;
    builder.check_private_key()?;
    handshake::verify_clients(&mut builder, Arc::clone(trust))?;
    builder.set_verify_callback(
        SslVerifyMode::PEER | SslVerifyMode::FAIL_IF_NO_PEER_CERT,
        verify_peer,
    );
    builder.set_session_id_context(SESSION_ID_CONTEXT)?;
    sessions::install(&mut builder, SESSIONS_KEPT);
    // Stateful resumption: TLS 1.2 by session id, TLS 1.3 tickets that
    // name a session in the store. OpenSSL 3 makes each stateless ticket
    // by encoding the session, decoding it again (the client's
    // certificate with it) and encoding the copy; with two tickets per
    // handshake that was 18 % of the server's CPU per new connection.
    builder.set_options(SslOptions::NO_TICKET);
    builder.set_num_tickets(TLS13_TICKETS)?;
    Ok(builder)
}

/// Verifies the peer chain of an established session with the trust store
/// (served from its cache when the same chain verified before): the chain
/// the handshake received, with the cache keys it computed.
pub fn peer_identity(ssl: &SslRef, trust: &TrustStore) -> PeerIdentity {
    let verified = match handshake::presented_chain(ssl) {
        Some(presented) => trust.verify_presented(&presented, Utc::now()),
        None => {
            let Some(leaf) = ssl.peer_certificate() else {
                return PeerIdentity::Refused("no client certificate was presented".into());
            };
            // On the server side OpenSSL's peer chain holds what the client
            // sent after its leaf; a resumed session holds none.
            let sent: Vec<X509> = ssl
                .peer_cert_chain()
                .map(|stack| stack.iter().map(ToOwned::to_owned).collect())
                .unwrap_or_default();
            if ssl.session_reused() && sent.is_empty() {
                trust.verify_resumed_x509(&leaf, Utc::now())
            } else {
                trust.verify_x509(&leaf, &sent, Utc::now())
            }
        }
    };
    match verified {
        Ok(chain) => PeerIdentity::Verified(chain),
        Err(TrustError::Certificate(e)) => {
            PeerIdentity::Refused(format!("client certificate: {e}"))
        }
        Err(e) => PeerIdentity::Refused(format!("client certificate not trusted: {e}")),
    }
}
