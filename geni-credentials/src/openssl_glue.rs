//! The OpenSSL calls the `openssl` crate does not wrap, each behind a safe
//! function: a certificate's CA flag and public-key bits, and the two
//! settings of one chain verification (time and callback) that trust
//! building needs to verify as GENI tools do.
//!
//! This is the only module of the crate allowed `unsafe`: the functions
//! take the `openssl` crate's safe references, so the raw pointers handed
//! to OpenSSL are always live, and nothing borrowed from OpenSSL outlives
//! the reference it came from.
#![allow(unsafe_code)]

use foreign_types::ForeignTypeRef;
use openssl::asn1::Asn1BitStringRef;
use openssl::x509::verify::X509VerifyParamRef;
use openssl::x509::{X509Ref, X509StoreContextRef};
use openssl_sys as ffi;
use std::os::raw::c_int;

unsafe extern "C" {
    /// OpenSSL: the subjectPublicKey BIT STRING of a certificate (borrowed).
    fn X509_get0_pubkey_bitstr(x: *const ffi::X509) -> *mut ffi::ASN1_BIT_STRING;
    /// OpenSSL: install a verification callback on one store context.
    fn X509_STORE_CTX_set_verify_cb(
        ctx: *mut ffi::X509_STORE_CTX,
        cb: Option<unsafe extern "C" fn(c_int, *mut ffi::X509_STORE_CTX) -> c_int>,
    );
    /// OpenSSL: the verification parameters of one store context (borrowed).
    fn X509_STORE_CTX_get0_param(ctx: *mut ffi::X509_STORE_CTX) -> *mut ffi::X509_VERIFY_PARAM;
}

/// The CA flag of basicConstraints, from OpenSSL's cached extension flags.
pub(crate) fn ca_flag(cert: &X509Ref) -> bool {
    // SAFETY: `cert` is a valid certificate; the call only fills OpenSSL's
    // extension cache of that certificate and returns its flags.
    let flags = unsafe { ffi::X509_get_extension_flags(cert.as_ptr()) };
    flags & ffi::EXFLAG_CA != 0
}

/// The subjectPublicKey BIT STRING of `cert`, borrowed from it.
pub(crate) fn public_key_bits(cert: &X509Ref) -> Option<&Asn1BitStringRef> {
    // SAFETY: `cert` is valid; the returned pointer is borrowed from it and
    // the reference handed out lives no longer than `cert`.
    unsafe {
        let ptr = X509_get0_pubkey_bitstr(cert.as_ptr());
        (!ptr.is_null()).then(|| Asn1BitStringRef::from_ptr(ptr))
    }
}

/// Sets the verification time of `ctx` (seconds since the epoch) and the
/// callback that lets a trust anchor without `CA:TRUE` pass.
pub(crate) fn verify_at_accepting_non_ca_anchors(ctx: &mut X509StoreContextRef, at: i64) {
    // SAFETY: `ctx` is an initialised context that outlives these calls;
    // the parameters belong to the context, and the callback is a plain
    // function that only reads the context.
    unsafe {
        X509VerifyParamRef::from_ptr_mut(X509_STORE_CTX_get0_param(ctx.as_ptr())).set_time(at);
        X509_STORE_CTX_set_verify_cb(ctx.as_ptr(), Some(accept_non_ca_anchor));
    }
}

/// Lets a trust anchor without `CA:TRUE` pass; every other error stands.
unsafe extern "C" fn accept_non_ca_anchor(ok: c_int, ctx: *mut ffi::X509_STORE_CTX) -> c_int {
    if ok == 1 {
        return 1;
    }
    // SAFETY: OpenSSL passes the live context being verified.
    let ctx = unsafe { X509StoreContextRef::from_ptr(ctx) };
    let at_anchor = ctx
        .chain()
        .is_some_and(|chain| ctx.error_depth() as usize + 1 == chain.len());
    c_int::from(ctx.error().as_raw() == ffi::X509_V_ERR_INVALID_CA && at_anchor)
}
