//! Every signature of the real credentials in the shared corpus verifies in
//! process, and each one covers the credential element carrying its ID.

use geni_credentials::xmldsig::{DSIG_NS, Document, DsigError, Signature};
use std::path::PathBuf;

fn corpus_credentials() -> Vec<PathBuf> {
    let dir =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus/creds/credentials");
    let mut files: Vec<PathBuf> = ["", "slice"]
        .iter()
        .flat_map(|sub| std::fs::read_dir(dir.join(sub)).unwrap())
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files
}

fn signatures(doc: &Document) -> Vec<geni_credentials::xmldsig::Node<'_>> {
    doc.elements()
        .into_iter()
        .filter(|n| n.is(Some(DSIG_NS), "Signature"))
        .collect()
}

#[test]
fn every_corpus_signature_verifies_and_covers_its_credential() {
    let mut verified = 0;
    for path in corpus_credentials() {
        let bytes = std::fs::read(&path).unwrap();
        let doc = Document::parse(&bytes).unwrap();
        for node in signatures(&doc) {
            let sig = Signature::parse(node).unwrap();
            let v = sig
                .verify(&doc)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert_eq!(v.referenced.name(), "credential", "{}", path.display());
            verified += 1;
        }
    }
    assert!(verified >= 18, "only {verified} signatures found");
}

#[test]
fn a_changed_character_breaks_the_digest() {
    let path = corpus_credentials()
        .into_iter()
        .find(|p| p.ends_with("ofelia-ocf__ocf.cred"))
        .unwrap();
    let text = std::fs::read_to_string(path).unwrap();
    let altered = text.replacen("<expires>2013", "<expires>2033", 1);
    let doc = Document::parse(altered.as_bytes()).unwrap();
    let node = signatures(&doc)[0];
    let err = Signature::parse(node).unwrap().verify(&doc).unwrap_err();
    assert!(matches!(err, DsigError::DigestMismatch { .. }), "{err}");
}
