//! Chain building and X.509 verification with OpenSSL's `X509StoreContext`,
//! tuned for GENI: verification at a given time, any configured root is an
//! anchor (self-signed or not, as gcf treats its trusted certificates),
//! MD5/SHA-1 and 1024-bit RSA accepted (security level 0 for this store
//! only), and a root without basicConstraints accepted as anchor (gcf does
//! not require roots to be CAs) while every other issuer must be a CA.

use super::TrustError;
use crate::cert::{GeniCert, MAX_CHAIN_LEN};
use crate::openssl_glue;
use chrono::{DateTime, Utc};
use openssl::error::ErrorStack;
use openssl::stack::Stack;
use openssl::x509::store::{X509Store, X509StoreBuilder};
use openssl::x509::verify::{X509VerifyFlags, X509VerifyParam};
use openssl::x509::{X509, X509StoreContext, X509VerifyResult};
use openssl_sys as ffi;
use std::os::raw::c_int;

/// The outcome of OpenSSL's verification, read inside the context.
enum Outcome {
    Verified(Vec<X509>),
    Failed {
        error: X509VerifyResult,
        depth: usize,
        current: Option<X509>,
    },
}

/// Builds the OpenSSL store of `roots` with the GENI verification
/// parameters (every root an anchor, security level 0, depth limit).
pub(super) fn build_store(roots: &[GeniCert]) -> Result<X509Store, ErrorStack> {
    let mut builder = X509StoreBuilder::new()?;
    for root in roots {
        builder.add_cert(root.x509().clone())?;
    }
    let mut param = X509VerifyParam::new()?;
    param.set_auth_level(0);
    param.set_depth(MAX_CHAIN_LEN as c_int);
    param.set_flags(X509VerifyFlags::PARTIAL_CHAIN)?;
    builder.set_param(&param)?;
    Ok(builder.build())
}

/// Builds the chain of `leaf` to a root of `store` and verifies it at `at`.
/// Returns the chain, leaf first and anchor last, as the caller's
/// certificates (`leaf`, `untrusted` or `roots`) where they match.
pub(super) fn build_and_verify(
    store: &X509Store,
    roots: &[GeniCert],
    leaf: &GeniCert,
    untrusted: &[GeniCert],
    at: DateTime<Utc>,
) -> Result<Vec<GeniCert>, TrustError> {
    let mut intermediates = Stack::new()?;
    for cert in untrusted.iter().take(MAX_CHAIN_LEN) {
        intermediates.push(cert.x509().clone())?;
    }
    let mut context = X509StoreContext::new()?;
    let outcome = context.init(store, leaf.x509(), &intermediates, |ctx| {
        openssl_glue::verify_at_accepting_non_ca_anchors(ctx, at.timestamp());
        let verified = ctx.verify_cert()?;
        Ok(match (verified, ctx.chain()) {
            (true, Some(chain)) if !chain.is_empty() => {
                Outcome::Verified(chain.iter().map(|c| c.to_owned()).collect())
            }
            _ => Outcome::Failed {
                error: ctx.error(),
                depth: ctx.error_depth() as usize,
                current: ctx.current_cert().map(|c| c.to_owned()),
            },
        })
    })?;
    let known = || std::iter::once(leaf).chain(untrusted).chain(roots);
    let lookup = |x509: X509| match known().find(|c| c.x509().as_ref() == x509.as_ref()) {
        Some(cert) => Ok(cert.clone()),
        None => GeniCert::from_x509(x509),
    };
    match outcome {
        Outcome::Verified(chain) => chain
            .into_iter()
            .map(|x509| lookup(x509).map_err(TrustError::from))
            .collect(),
        Outcome::Failed {
            error,
            depth,
            current,
        } => {
            let current = current.map(lookup).transpose()?;
            Err(classify(error, depth, current.as_ref().unwrap_or(leaf), at))
        }
    }
}

/// Turns OpenSSL's verification error into a precise [`TrustError`].
fn classify(
    error: X509VerifyResult,
    depth: usize,
    cert: &GeniCert,
    at: DateTime<Utc>,
) -> TrustError {
    let subject = cert.display_name();
    match error.as_raw() {
        ffi::X509_V_ERR_CERT_HAS_EXPIRED => TrustError::Expired {
            subject,
            depth,
            not_after: cert.not_after(),
            at,
        },
        ffi::X509_V_ERR_CERT_NOT_YET_VALID => TrustError::NotYetValid {
            subject,
            depth,
            not_before: cert.not_before(),
            at,
        },
        ffi::X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT
        | ffi::X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY
        | ffi::X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE
        | ffi::X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT
        | ffi::X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN
        | ffi::X509_V_ERR_CERT_UNTRUSTED => TrustError::UntrustedRoot {
            subject,
            issuer: cert.issuer(),
        },
        ffi::X509_V_ERR_INVALID_CA => TrustError::NotACa { subject, depth },
        ffi::X509_V_ERR_CERT_SIGNATURE_FAILURE
        | ffi::X509_V_ERR_UNABLE_TO_DECRYPT_CERT_SIGNATURE
        | ffi::X509_V_ERR_UNABLE_TO_DECODE_ISSUER_PUBLIC_KEY => {
            TrustError::BadSignature { subject, depth }
        }
        _ => TrustError::Rejected {
            subject,
            depth,
            reason: error.error_string().to_owned(),
        },
    }
}
