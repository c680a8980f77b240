//! Client chains in a TLS server's handshakes, verified against a shared
//! [`TrustStore`]: OpenSSL verifies each chain against the roots in force
//! when the connection's ClientHello arrives (the roots may be replaced
//! while the server runs, [`TrustStore::replace`]), and a chain it accepted
//! before is accepted again without verifying it: the same certificates
//! sent, in the same order (the SHA-256 of their DER, as the trust store's
//! own cache keys them), against the same roots, while every certificate
//! of the verified chain is within its validity period. A new chain always
//! gets OpenSSL's verification; the verdicts are bounded in number.
//!
//! The verdict cached is OpenSSL's, which depends on nothing else: the
//! connection's verification parameters (purpose, depth, security level,
//! verify callback) are the server's and the same for every handshake.
//! The server's own check after the handshake (the GENI rules, with
//! [`TrustStore::verify_presented`]) is not replaced; it is given the
//! chain the handshake received with the keys computed for it
//! ([`presented_chain`]), so a connection encodes and hashes its
//! certificates once.

use crate::cache::{BoundedCache, DEFAULT_CAPACITY};
use crate::openssl_glue;
use crate::trust::{PresentedChain, TrustStore};
use openssl::asn1::{Asn1Time, Asn1TimeRef};
use openssl::error::ErrorStack;
use openssl::ex_data::Index;
use openssl::ssl::{ClientHelloResponse, Ssl, SslContextBuilder, SslRef};
use openssl::stack::StackRef;
use openssl::x509::store::{X509Store, X509StoreBuilder};
use openssl::x509::verify::X509VerifyFlags;
use openssl::x509::{X509, X509StoreContext, X509StoreContextRef};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

/// A chain OpenSSL accepted: the roots' generation and the fingerprint of
/// what the client sent.
type VerdictKey = (u64, [u8; 32]);

/// When an accepted chain stays accepted: from the latest notBefore to the
/// earliest notAfter of the verified chain, in seconds since the epoch.
#[derive(Clone, Copy)]
struct Window {
    from: i64,
    until: i64,
}

/// What the handshakes of one SSL context share.
struct Verifier {
    trust: Arc<TrustStore>,
    /// The generation of the roots the context's own store holds.
    built_with: u64,
    /// After a replacement of the roots: the store of the newest roots,
    /// handed to each handshake that starts under them.
    newer: Mutex<Option<(u64, X509Store)>>,
    verdicts: BoundedCache<VerdictKey, Window>,
}

/// What one handshake records on its connection.
struct Handshake {
    /// The generation of the roots its store holds.
    generation: u64,
    /// The chain the client sent, once the verification was asked for.
    presented: Mutex<Option<Arc<PresentedChain>>>,
}

/// Where each connection keeps its [`Handshake`].
fn handshake_index() -> Result<Index<Ssl, Handshake>, ErrorStack> {
    static INDEX: OnceLock<Index<Ssl, Handshake>> = OnceLock::new();
    if let Some(index) = INDEX.get() {
        return Ok(*index);
    }
    let index = Ssl::new_ex_index()?;
    Ok(*INDEX.get_or_init(|| index))
}

/// The chain the client of `ssl` sent in its handshake, with its cache
/// keys, for [`TrustStore::verify_presented`]; none when the handshake
/// verified no chain (a resumed session) or ran without [`verify_clients`].
pub fn presented_chain(ssl: &SslRef) -> Option<Arc<PresentedChain>> {
    let handshake = ssl.ex_data(handshake_index().ok()?)?;
    handshake
        .presented
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone()
}

/// Makes the handshakes of `builder` verify client chains against the
/// roots of `trust` (see the module documentation). The verification
/// mode and callback are the caller's to set.
pub fn verify_clients(
    builder: &mut SslContextBuilder,
    trust: Arc<TrustStore>,
) -> Result<(), ErrorStack> {
    let built_with = trust.generation();
    builder.set_cert_store(store_of(&trust)?);
    let index = handshake_index()?;
    let verifier = Arc::new(Verifier {
        trust,
        built_with,
        newer: Mutex::new(None),
        verdicts: BoundedCache::new(DEFAULT_CAPACITY),
    });
    let hello = Arc::clone(&verifier);
    builder.set_client_hello_callback(move |ssl, _alert| {
        let generation = hello.trust.generation();
        if generation != hello.built_with {
            ssl.set_verify_cert_store(hello.store(generation)?)?;
        }
        let handshake = Handshake {
            generation,
            presented: Mutex::new(None),
        };
        ssl.set_ex_data(index, handshake);
        Ok(ClientHelloResponse::SUCCESS)
    });
    openssl_glue::set_cert_verify_callback(builder, move |ctx| verifier.verify(ctx))
}

impl Verifier {
    /// The store of the roots of `generation`, the one in force now: built
    /// once per generation, shared by its handshakes.
    fn store(&self, generation: u64) -> Result<X509Store, ErrorStack> {
        let mut newer = self.newer.lock().unwrap_or_else(PoisonError::into_inner);
        match &*newer {
            Some((built, store)) if *built == generation => Ok(openssl_glue::share_store(store)),
            _ => {
                let store = store_of(&self.trust)?;
                let shared = openssl_glue::share_store(&store);
                *newer = Some((generation, store));
                Ok(shared)
            }
        }
    }

    /// The handshake's verification of the chain in `ctx`: a verdict
    /// cached for it, or OpenSSL's, cached when it accepts.
    fn verify(&self, ctx: &mut X509StoreContextRef) -> bool {
        let key = record_presented(ctx);
        let now = unix_now();
        if let Some(key) = &key
            && self
                .verdicts
                .get(key)
                .is_some_and(|w| w.from <= now && now <= w.until)
        {
            return true;
        }
        let accepted = ctx.verify_cert().unwrap_or(false);
        if accepted && let (Some(key), Some(window)) = (key, ctx.chain().and_then(window)) {
            self.verdicts.insert(key, window);
        }
        accepted
    }
}

/// Records on the connection the chain the client sent (in `ctx`, its
/// leaf first); its verdict's cache key, when it can be read.
fn record_presented(ctx: &X509StoreContextRef) -> Option<VerdictKey> {
    let ssl = ctx.ex_data(X509StoreContext::ssl_idx().ok()?)?;
    let handshake = ssl.ex_data(handshake_index().ok()?)?;
    let sent = openssl_glue::untrusted(ctx)?;
    let presented = PresentedChain::new(sent.iter().map(ToOwned::to_owned).collect()).ok()?;
    let key = (handshake.generation, presented.chain_key());
    *handshake
        .presented
        .lock()
        .unwrap_or_else(PoisonError::into_inner) = Some(Arc::new(presented));
    Some(key)
}

/// The OpenSSL store a handshake verifies client chains with: the roots
/// `trust` holds now, any of them an anchor.
fn store_of(trust: &TrustStore) -> Result<X509Store, ErrorStack> {
    let mut store = X509StoreBuilder::new()?;
    for root in trust.roots() {
        store.add_cert(root.x509().clone())?;
    }
    store.set_flags(X509VerifyFlags::PARTIAL_CHAIN)?;
    Ok(store.build())
}

/// The window in which every certificate of `chain` is valid.
fn window(chain: &StackRef<X509>) -> Option<Window> {
    let epoch = Asn1Time::from_unix(0).ok()?;
    let seconds = |time: &Asn1TimeRef| -> Option<i64> {
        let diff = epoch.diff(time).ok()?;
        Some(i64::from(diff.days) * 86_400 + i64::from(diff.secs))
    };
    let mut window = Window {
        from: i64::MIN,
        until: i64::MAX,
    };
    for cert in chain {
        window.from = window.from.max(seconds(cert.not_before())?);
        window.until = window.until.min(seconds(cert.not_after())?);
    }
    Some(window)
}

/// Seconds since the epoch now.
fn unix_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::devca::{Authority, Identity};
    use openssl::ssl::{SslAcceptor, SslConnector, SslMethod, SslVerifyMode};
    use std::io::{Read, Write};
    use std::net::{TcpListener, TcpStream};
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// A server verifying clients against `trust`, and how many times
    /// OpenSSL's verification ran (its verify callback, once per certificate).
    fn server(trust: &Arc<TrustStore>, root: &Authority) -> (SslAcceptor, Arc<AtomicUsize>) {
        let mut builder = SslAcceptor::mozilla_intermediate_v5(SslMethod::tls_server()).unwrap();
        let identity = root.server("am", &["localhost"]).unwrap();
        builder.set_certificate(identity.cert().x509()).unwrap();
        builder.set_private_key(identity.key()).unwrap();
        verify_clients(&mut builder, Arc::clone(trust)).unwrap();
        let verified = Arc::new(AtomicUsize::new(0));
        let count = Arc::clone(&verified);
        builder.set_verify_callback(
            SslVerifyMode::PEER | SslVerifyMode::FAIL_IF_NO_PEER_CERT,
            move |preverified, _| {
                count.fetch_add(1, Ordering::Relaxed);
                preverified
            },
        );
        (builder.build(), verified)
    }

    /// One full handshake of `client` (sending its chain): when the
    /// server accepted it, the chain it recorded on the connection.
    fn handshake(server: &SslAcceptor, client: &Identity) -> Option<Option<Arc<PresentedChain>>> {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let mut connector = SslConnector::builder(SslMethod::tls_client()).unwrap();
        connector.set_certificate(client.cert().x509()).unwrap();
        for issuer in client.issuers() {
            connector
                .add_extra_chain_cert(issuer.x509().clone())
                .unwrap();
        }
        connector.set_private_key(client.key()).unwrap();
        connector.set_verify(SslVerifyMode::NONE);
        let connector = connector.build();
        let client = std::thread::spawn(move || {
            let tcp = TcpStream::connect(addr).unwrap();
            // The server's verdict arrives after the client's Finished.
            let _ = connector
                .connect("localhost", tcp)
                .map(|mut s| s.read(&mut [0]));
        });
        let (tcp, _) = listener.accept().unwrap();
        let accepted = server
            .accept(tcp)
            .ok()
            .and_then(|mut s| s.write(b"!").ok().map(|_| presented_chain(s.ssl())));
        client.join().unwrap();
        accepted
    }

    fn trusting(root: &Authority) -> TrustStore {
        let mut trust = TrustStore::new();
        trust.add_root(root.cert().clone());
        trust
    }

    #[test]
    fn a_chain_accepted_once_is_accepted_again_without_being_verified_again() {
        let root = Authority::root("geni-am.test", "sa").unwrap();
        let trust = Arc::new(trusting(&root));
        let (server, verified) = server(&trust, &root);
        let alice = root.user("alice").unwrap();
        assert!(handshake(&server, &alice).is_some());
        let first = verified.load(Ordering::Relaxed);
        assert!(first > 0, "the first handshake is verified by OpenSSL");
        assert!(handshake(&server, &alice).is_some());
        assert_eq!(verified.load(Ordering::Relaxed), first);
        let bob = root.user("bob").unwrap();
        assert!(handshake(&server, &bob).is_some());
        assert!(
            verified.load(Ordering::Relaxed) > first,
            "a new chain is verified"
        );
    }

    #[test]
    fn the_chain_a_client_sent_is_recorded_on_its_connection_verified_or_not_again() {
        let root = Authority::root("geni-am.test", "sa").unwrap();
        let trust = Arc::new(trusting(&root));
        let (server, _) = server(&trust, &root);
        let alice = root.user("alice").unwrap();
        let sent: Vec<X509> = std::iter::once(alice.cert())
            .chain(alice.issuers())
            .map(|cert| cert.x509().clone())
            .collect();
        let expected = PresentedChain::new(sent.clone()).unwrap();
        for _ in 0..2 {
            let presented = handshake(&server, &alice).unwrap().unwrap();
            assert_eq!(
                presented.leaf().to_der().unwrap(),
                sent[0].to_der().unwrap()
            );
            assert_eq!(presented.sent().len(), sent.len() - 1);
            assert_eq!(presented.chain_key(), expected.chain_key());
            assert_eq!(presented.leaf_key(), expected.leaf_key());
        }
    }

    #[test]
    fn replaced_roots_verify_every_chain_again() {
        let root = Authority::root("geni-am.test", "sa").unwrap();
        let other = Authority::root("other.test", "sa").unwrap();
        let trust = Arc::new(trusting(&root));
        let (server, verified) = server(&trust, &root);
        let alice = root.user("alice").unwrap();
        assert!(handshake(&server, &alice).is_some());
        trust.replace(trusting(&other));
        assert!(handshake(&server, &alice).is_none(), "no longer trusted");
        assert!(handshake(&server, &other.user("carol").unwrap()).is_some());
        trust.replace(trusting(&root));
        let before = verified.load(Ordering::Relaxed);
        assert!(handshake(&server, &alice).is_some());
        assert!(verified.load(Ordering::Relaxed) > before);
    }
}
