//! The OpenSSL calls the `openssl` crate does not wrap, each behind a safe
//! function: a certificate's CA flag and public-key bits, the two
//! settings of one chain verification (time and callback) that trust
//! building needs to verify as GENI tools do, and for a TLS server
//! (the handshake module) the hook that replaces the chain verification of
//! its handshakes, the chain a peer sent, and a second handle on a store;
//! and the engine that gives RSA and EC keys OpenSSL's built-in methods
//! (the key_methods module).
//!
//! This is the only module of the crate allowed `unsafe`: the functions
//! take the `openssl` crate's safe references, so the raw pointers handed
//! to OpenSSL are always live, and nothing borrowed from OpenSSL outlives
//! the reference it came from.
#![allow(unsafe_code)]

use foreign_types::{ForeignType, ForeignTypeRef};
use openssl::asn1::Asn1BitStringRef;
use openssl::error::ErrorStack;
use openssl::ssl::{SslContext, SslContextBuilder};
use openssl::stack::StackRef;
use openssl::x509::store::{X509Store, X509StoreRef};
use openssl::x509::verify::X509VerifyParamRef;
use openssl::x509::{X509, X509Ref, X509StoreContextRef};
use openssl_sys as ffi;
use std::os::raw::{c_char, c_int, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

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
    /// OpenSSL: the untrusted certificates of one store context (borrowed).
    fn X509_STORE_CTX_get0_untrusted(ctx: *const ffi::X509_STORE_CTX) -> *mut ffi::stack_st_X509;
    /// OpenSSL: replace the chain verification of a context's handshakes.
    fn SSL_CTX_set_cert_verify_callback(
        ctx: *mut ffi::SSL_CTX,
        cb: Option<unsafe extern "C" fn(*mut ffi::X509_STORE_CTX, *mut c_void) -> c_int>,
        arg: *mut c_void,
    );
    /// OpenSSL: one more reference to a store.
    fn X509_STORE_up_ref(store: *mut ffi::X509_STORE) -> c_int;
    /// OpenSSL: a new, empty engine.
    fn ENGINE_new() -> *mut c_void;
    /// OpenSSL: an engine's identifier (copied by reference: a static string).
    fn ENGINE_set_id(e: *mut c_void, id: *const c_char) -> c_int;
    /// OpenSSL: an engine's name (copied by reference: a static string).
    fn ENGINE_set_name(e: *mut c_void, name: *const c_char) -> c_int;
    /// OpenSSL: the function listing and giving an engine's key methods.
    fn ENGINE_set_pkey_meths(e: *mut c_void, f: Option<KeyMethods>) -> c_int;
    /// OpenSSL: make an engine the one asked for the key types it lists.
    fn ENGINE_register_pkey_meths(e: *mut c_void) -> c_int;
    /// OpenSSL: the built-in method of a key type (a static table entry).
    fn EVP_PKEY_meth_find(nid: c_int) -> *const c_void;
}

/// OpenSSL's `ENGINE_PKEY_METHS_PTR`: with no method to fill, lists the
/// key types; otherwise gives the method of one.
type KeyMethods =
    unsafe extern "C" fn(*mut c_void, *mut *const c_void, *mut *const c_int, c_int) -> c_int;

/// The key types [`use_builtin_key_methods`] claims.
static BUILTIN_KEY_TYPES: [c_int; 2] = [ffi::EVP_PKEY_RSA, ffi::EVP_PKEY_EC];

/// Registers, for RSA and EC keys, an engine whose methods are OpenSSL's
/// built-in ones; false if OpenSSL refused. Once registered, OpenSSL 3.0
/// decodes such keys (a certificate's among them) with its built-in
/// decoder instead of building provider decoders, and runs their
/// operations with the built-in methods. Called once per process (the
/// engine lives as long as it).
pub(crate) fn use_builtin_key_methods() -> bool {
    // SAFETY: the engine is new and ours; the strings are static; the
    // callback only reads the static table and OpenSSL's built-in methods.
    // The engine is never freed, as OpenSSL's engine table keeps it.
    unsafe {
        let engine = ENGINE_new();
        !engine.is_null()
            && ENGINE_set_id(engine, c"geni-am-builtin-keys".as_ptr()) == 1
            && ENGINE_set_name(
                engine,
                c"OpenSSL's built-in RSA and EC key methods".as_ptr(),
            ) == 1
            && ENGINE_set_pkey_meths(engine, Some(builtin_key_methods)) == 1
            && ENGINE_register_pkey_meths(engine) == 1
    }
}

/// The engine's [`KeyMethods`]: OpenSSL's own, for the listed key types.
unsafe extern "C" fn builtin_key_methods(
    _engine: *mut c_void,
    method: *mut *const c_void,
    types: *mut *const c_int,
    nid: c_int,
) -> c_int {
    // SAFETY: OpenSSL passes either a place for the list of types (then
    // `method` is null) or a place for one method.
    unsafe {
        if method.is_null() {
            *types = BUILTIN_KEY_TYPES.as_ptr();
            return BUILTIN_KEY_TYPES.len() as c_int;
        }
        let found = if BUILTIN_KEY_TYPES.contains(&nid) {
            EVP_PKEY_meth_find(nid)
        } else {
            std::ptr::null()
        };
        *method = found;
        c_int::from(!found.is_null())
    }
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

/// Replaces OpenSSL's chain verification in the handshakes of `builder`
/// by `verify`: it is given the store context OpenSSL prepared for the
/// peer's chain (its leaf, what it sent, the verify callback and
/// parameters of the connection) and says whether the chain is accepted;
/// [`X509StoreContextRef::verify_cert`] runs OpenSSL's own verification.
/// A panic in `verify` refuses the chain.
pub(crate) fn set_cert_verify_callback<F>(
    builder: &mut SslContextBuilder,
    verify: F,
) -> Result<(), ErrorStack>
where
    F: Fn(&mut X509StoreContextRef) -> bool + Send + Sync + 'static,
{
    let verify = Arc::new(verify);
    let arg = Arc::as_ptr(&verify).cast_mut().cast::<c_void>();
    // The context keeps the closure alive for as long as it lives.
    builder.set_ex_data(SslContext::new_ex_index::<Arc<F>>()?, verify);
    // SAFETY: `arg` points to the closure the context's ex data owns, so
    // it lives as long as the context that passes it back; the trampoline
    // takes it as the same `F`.
    unsafe {
        SSL_CTX_set_cert_verify_callback(builder.as_ptr(), Some(cert_verify_trampoline::<F>), arg);
    }
    Ok(())
}

/// Calls the closure given to [`set_cert_verify_callback`].
unsafe extern "C" fn cert_verify_trampoline<F>(
    ctx: *mut ffi::X509_STORE_CTX,
    arg: *mut c_void,
) -> c_int
where
    F: Fn(&mut X509StoreContextRef) -> bool,
{
    // SAFETY: `arg` is the `F` registered with this callback, kept alive by
    // the SSL context running the handshake; `ctx` is the live context.
    let (verify, ctx) = unsafe {
        (
            &*arg.cast_const().cast::<F>(),
            X509StoreContextRef::from_ptr_mut(ctx),
        )
    };
    c_int::from(catch_unwind(AssertUnwindSafe(|| verify(ctx))).unwrap_or(false))
}

/// The certificates a store context was given as untrusted: in a TLS
/// handshake, what the peer sent, its leaf first.
pub(crate) fn untrusted(ctx: &X509StoreContextRef) -> Option<&StackRef<X509>> {
    // SAFETY: `ctx` is valid; the stack is borrowed from it and the
    // reference handed out lives no longer than `ctx`.
    unsafe {
        let ptr = X509_STORE_CTX_get0_untrusted(ctx.as_ptr());
        (!ptr.is_null()).then(|| StackRef::from_ptr(ptr))
    }
}

/// A second owner of `store` (OpenSSL counts the references), so that one
/// store can be handed to many connections, each taking ownership.
pub(crate) fn share_store(store: &X509StoreRef) -> X509Store {
    // SAFETY: `store` is valid; the reference taken is the one the
    // returned owner gives back when dropped.
    unsafe {
        X509_STORE_up_ref(store.as_ptr());
        X509Store::from_ptr(store.as_ptr())
    }
}
