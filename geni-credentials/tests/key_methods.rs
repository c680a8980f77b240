//! With OpenSSL's built-in RSA and EC key methods registered
//! (`geni_credentials::key_methods`, a choice for the whole process, hence
//! a test binary of its own): certificate keys read afterwards are decoded
//! without a provider, and chains, signatures and TLS handshakes verify
//! and refuse as before, signed with keys read from PEM files as a server
//! reads its own (which OpenSSL keeps with its provider). Every test
//! registers them first.

#![allow(unsafe_code)]

use chrono::Utc;
use foreign_types::ForeignTypeRef;
use geni_credentials::devca::{Authority, Identity, KeyType};
use geni_credentials::key_methods::use_builtin_key_methods;
use geni_credentials::{GeniCert, TrustStore, parse_chain};
use openssl::hash::MessageDigest;
use openssl::pkey::{PKey, PKeyRef, Private, Public};
use openssl::sign::{Signer, Verifier};
use openssl::ssl::{SslAcceptor, SslConnector, SslMethod, SslVerifyMode};
use openssl::x509::store::X509StoreBuilder;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::raw::c_void;

unsafe extern "C" {
    /// OpenSSL: the provider holding a key, null for a key of the built-in methods.
    fn EVP_PKEY_get0_provider(key: *const openssl_sys::EVP_PKEY) -> *const c_void;
}

/// Whether this OpenSSL rebuilds a decoder context for every key it reads (3.0, 3.1).
fn rebuilds_decoders() -> bool {
    (0x3000_0000..0x3020_0000).contains(&openssl::version::number())
}

/// `identity`'s chain read again, so that its keys are decoded now.
fn reread(identity: &Identity) -> Vec<GeniCert> {
    parse_chain(identity.chain_pem().as_bytes()).unwrap()
}

/// `identity`'s private key read again from PEM, as a server reads its own.
fn reread_key(identity: &Identity) -> PKey<Private> {
    PKey::private_key_from_pem(identity.key_pem().unwrap().as_bytes()).unwrap()
}

fn is_provided(key: &PKeyRef<Public>) -> bool {
    // SAFETY: `key` is a live key; the provider is only compared with null.
    !unsafe { EVP_PKEY_get0_provider(key.as_ptr()) }.is_null()
}

#[test]
fn keys_of_certificates_read_afterwards_are_decoded_without_a_provider() {
    assert_eq!(use_builtin_key_methods(), rebuilds_decoders());
    let root = Authority::root("geni-am.test", "sa").unwrap();
    let am = root
        .server_with_key("am", &["localhost"], KeyType::EcdsaP256)
        .unwrap();
    for cert in reread(&am) {
        let key = cert.x509().public_key().unwrap();
        assert_eq!(is_provided(&key), !rebuilds_decoders());
    }
}

#[test]
fn chains_verify_and_untrusted_ones_are_refused_as_before() {
    use_builtin_key_methods();
    let root = Authority::root("geni-am.test", "sa").unwrap();
    let other = Authority::root("other.test", "sa").unwrap();
    let mut trust = TrustStore::new();
    trust.add_root(reread(root.identity()).remove(0));
    let alice = reread(&root.user("alice").unwrap());
    trust.verify_chain(&alice, Utc::now()).unwrap();
    let mallory = reread(&other.user("mallory").unwrap());
    assert!(trust.verify_chain(&mallory, Utc::now()).is_err());
}

#[test]
fn signatures_verify_and_a_changed_message_is_refused_for_rsa_and_ec_keys() {
    use_builtin_key_methods();
    let root = Authority::root("geni-am.test", "sa").unwrap();
    let rsa = root.user("alice").unwrap();
    let ec = root
        .server_with_key("am", &["localhost"], KeyType::EcdsaP256)
        .unwrap();
    for identity in [rsa, ec] {
        let private = reread_key(&identity);
        let mut signer = Signer::new(MessageDigest::sha256(), &private).unwrap();
        let signature = signer.sign_oneshot_to_vec(b"GetVersion").unwrap();
        let key = reread(&identity)[0].x509().public_key().unwrap();
        let verifies = |message: &[u8]| {
            Verifier::new(MessageDigest::sha256(), &key)
                .unwrap()
                .verify_oneshot(&signature, message)
                .unwrap_or(false)
        };
        assert!(verifies(b"GetVersion"));
        assert!(!verifies(b"GetVersioN"));
    }
}

/// One TLS 1.3 handshake between a server with `server_key` and `client`,
/// each verifying the other against `root`: whether both accepted.
fn handshake(root: &Authority, server_key: KeyType, client: &Identity) -> bool {
    let trusting = || {
        let mut store = X509StoreBuilder::new().unwrap();
        store.add_cert(root.cert().x509().clone()).unwrap();
        store.build()
    };
    let am = root
        .server_with_key("am", &["localhost"], server_key)
        .unwrap();
    let mut server = SslAcceptor::mozilla_intermediate_v5(SslMethod::tls_server()).unwrap();
    server.set_certificate(am.cert().x509()).unwrap();
    server.set_private_key(&reread_key(&am)).unwrap();
    server.set_cert_store(trusting());
    server.set_verify(SslVerifyMode::PEER | SslVerifyMode::FAIL_IF_NO_PEER_CERT);
    let server = server.build();
    let mut connector = SslConnector::builder(SslMethod::tls_client()).unwrap();
    connector.set_certificate(client.cert().x509()).unwrap();
    connector.set_private_key(&reread_key(client)).unwrap();
    connector.set_cert_store(trusting());
    let connector = connector.build();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let connecting = std::thread::spawn(move || {
        let tcp = TcpStream::connect(addr).unwrap();
        // The server's verdict on the client arrives after the client's Finished.
        connector
            .connect("localhost", tcp)
            .is_ok_and(|mut tls| tls.read(&mut [0]).is_ok_and(|n| n == 1))
    });
    let (tcp, _) = listener.accept().unwrap();
    let accepted = server
        .accept(tcp)
        .is_ok_and(|mut tls| tls.write(b"!").is_ok());
    connecting.join().unwrap() && accepted
}

#[test]
fn tls_handshakes_verify_both_sides_and_refuse_an_untrusted_client() {
    use_builtin_key_methods();
    let root = Authority::root("geni-am.test", "sa").unwrap();
    let other = Authority::root("other.test", "sa").unwrap();
    let alice = root.user("alice").unwrap();
    let mallory = other.user("mallory").unwrap();
    for server_key in [KeyType::EcdsaP256, KeyType::Rsa] {
        assert!(handshake(&root, server_key, &alice));
        assert!(!handshake(&root, server_key, &mallory));
    }
}
