//! Certificate keys read without OpenSSL 3.0's provider decoders
//! (docs/PERFORMANCE.md, "Handshakes without provider decoders").
//!
//! OpenSSL 3.0 and 3.1 decode the public key of every certificate they
//! read (a TLS peer's chain, at every handshake) by building a decoder
//! context: a search of every decoder and key manager of the providers,
//! name by name under global locks, about 0.2 ms per certificate and the
//! largest single cost of a new TLS connection. They use the built-in
//! decoder instead, and run the key's operations with the built-in
//! methods, when an engine provides the key type's methods.
//! [`use_builtin_key_methods`] registers such an engine for RSA and EC
//! keys, whose methods are OpenSSL's own built-in ones: the same library
//! code verifies, signs and derives, reached without the provider
//! lookups, and every check (chain verification, security level, the
//! signature algorithms allowed) is unchanged. OpenSSL 3.2 and later keep
//! the decoder contexts they build, and there the engine is not
//! registered.
//!
//! Keys read from PEM or DER private-key files stay with their provider
//! and then sign through the built-in methods: TLS handshakes and
//! messages (`EVP_DigestSign`) work, but OpenSSL 3.0 cannot sign an X.509
//! structure (a certificate) so, since it asks the signing context for the
//! algorithm identifier as a provider parameter. A process must not
//! register the engine before it has issued its certificates: `geni-am
//! serve` issues none and registers it at start, `geni-am bench` once the
//! certificates of its run are issued, and the other commands that issue
//! certificates never.

use crate::openssl_glue;
use std::sync::OnceLock;

/// The OpenSSL versions (`OPENSSL_VERSION_NUMBER`) that build a decoder
/// context for every key they decode: 3.0 and 3.1.
const REBUILDING_DECODERS: std::ops::Range<i64> = 0x3000_0000..0x3020_0000;

/// Makes the process decode and use RSA and EC keys with OpenSSL's
/// built-in methods when its OpenSSL is one that rebuilds decoders (see
/// the module documentation); whether they are. Call it before the
/// threads that use OpenSSL start, and after the last certificate this
/// process issues; later calls return the first answer.
pub fn use_builtin_key_methods() -> bool {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    *REGISTERED.get_or_init(|| {
        REBUILDING_DECODERS.contains(&openssl::version::number())
            && openssl_glue::use_builtin_key_methods()
    })
}
