//! Property: no single-byte change to a signed credential can change what
//! it grants. Every mutant is either refused (without panicking) or, when
//! the change fell outside everything signed, grants exactly what the
//! original grants.

mod sfa_fixture;

use geni_credentials::sfa;
use proptest::prelude::*;
use sfa_fixture::pki;
use std::sync::OnceLock;

/// The original credential and what it grants, rendered for comparison.
fn original() -> &'static (String, String) {
    static ORIGINAL: OnceLock<(String, String)> = OnceLock::new();
    ORIGINAL.get_or_init(|| {
        let pki = pki();
        let xml = pki.slice_credential();
        let granted = sfa::verify(xml.as_bytes(), &pki.trust, &pki.request(&pki.alice)).unwrap();
        (xml, format!("{granted:?}"))
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn a_changed_byte_never_changes_what_is_granted(position in 0usize..1_000_000, byte in any::<u8>()) {
        let (xml, granted) = original();
        let mut mutant = xml.clone().into_bytes();
        let index = position % mutant.len();
        prop_assume!(mutant[index] != byte);
        mutant[index] = byte;
        let pki = pki();
        if let Ok(verified) = sfa::verify(&mutant, &pki.trust, &pki.request(&pki.alice)) {
            prop_assert_eq!(&format!("{verified:?}"), granted);
        }
    }
}
