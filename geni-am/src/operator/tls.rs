//! The endpoint's HTTPS, when `tls_cert` and `tls_key` are set: OpenSSL's
//! current recommended server settings with that identity and, when
//! `client_roots` is set, a client certificate issued by one of those CAs
//! required in the handshake (OpenSSL's own chain verification: these
//! are the operator's certificates, not GENI ones).

use super::OperatorError;
use crate::config::operator::read_client_roots;
use crate::config::{OperatorConfig, TlsIdentity};
use openssl::ssl::{SslAcceptor, SslAcceptorBuilder, SslMethod, SslVerifyMode};
use openssl::x509::store::X509StoreBuilder;

/// The acceptor of `config`, `None` for plain HTTP.
pub(super) fn acceptor(
    config: &OperatorConfig,
) -> Result<Option<SslAcceptorBuilder>, OperatorError> {
    let (Some(cert), Some(key)) = (&config.tls_cert, &config.tls_key) else {
        return Ok(None);
    };
    let failed = |key: &'static str| move |problem: String| OperatorError::Tls { key, problem };
    let openssl = |error: openssl::error::ErrorStack| error.to_string();
    let identity = TlsIdentity::load(cert, key).map_err(|e| failed("tls_cert")(e.to_string()))?;
    let mut builder = SslAcceptor::mozilla_intermediate_v5(SslMethod::tls_server())
        .map_err(|e| failed("tls_cert")(openssl(e)))?;
    let mut chain = identity.chain.into_iter();
    if let Some(leaf) = chain.next() {
        builder
            .set_certificate(&leaf)
            .map_err(|e| failed("tls_cert")(openssl(e)))?;
    }
    for issuer in chain {
        builder
            .add_extra_chain_cert(issuer)
            .map_err(|e| failed("tls_cert")(openssl(e)))?;
    }
    builder
        .set_private_key(&identity.key)
        .map_err(|e| failed("tls_key")(openssl(e)))?;
    if let Some(dir) = &config.client_roots {
        let roots = read_client_roots(dir).map_err(failed("client_roots"))?;
        let mut store = X509StoreBuilder::new().map_err(|e| failed("client_roots")(openssl(e)))?;
        for root in roots {
            store
                .add_cert(root)
                .map_err(|e| failed("client_roots")(openssl(e)))?;
        }
        builder
            .set_verify_cert_store(store.build())
            .map_err(|e| failed("client_roots")(openssl(e)))?;
        builder.set_verify(SslVerifyMode::PEER | SslVerifyMode::FAIL_IF_NO_PEER_CERT);
    }
    Ok(Some(builder))
}
