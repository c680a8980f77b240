//! Fuzz target: certificate parsing (PEM chains or DER) never panics, and
//! every accessor of an accepted certificate works.

#![no_main]

use credentials::cert::parse_chain;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(chain) = parse_chain(data) else {
        return;
    };
    for cert in &chain {
        let _ = (cert.require_urn(), cert.uuid(), cert.emails(), cert.dns_names());
        let _ = (cert.legacy(), cert.algorithms(), cert.is_self_signed(), cert.key_id());
        let der = cert.to_der();
        let again = credentials::cert::GeniCert::from_der(&der).expect("own DER re-parses");
        assert!(again.same_cert(cert));
    }
});
