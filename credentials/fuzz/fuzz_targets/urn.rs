//! Fuzz target: URN parsing never panics; an accepted URN formats back to
//! exactly its input, re-parses to the same parts, and its public id, HRN
//! and name rule can be computed.

#![no_main]

use credentials::urn::{Urn, publicid_to_urn};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = publicid_to_urn(text);
    let Ok(urn) = Urn::parse(text) else {
        return;
    };
    assert_eq!(urn.to_string(), text, "formatting changed the URN");
    let again = Urn::from_parts(urn.authority(), urn.type_text(), urn.name())
        .expect("the parts of a valid URN rebuild it");
    assert_eq!(again, urn);
    let _ = (urn.to_publicid(), urn.hrn(), urn.check_name());
    assert!(urn.is_authority_for(&urn), "a URN is an authority for itself");
});
