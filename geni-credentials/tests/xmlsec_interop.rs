//! Interoperability with the reference XML-DSig tool, both ways: every
//! signature of credentials (and delegations) this crate signs passes
//! `xmlsec1 --verify` run as gcf runs it, and credentials signed by the
//! `xmlsec1` command line verify in process, for each accepted algorithm set,
//! and so does the corpus ABAC template once `xmlsec1` has signed it.

mod common;
mod sfa_fixture;

use chrono::Utc;
use geni_credentials::devca::Identity;
use geni_credentials::privilege::Privilege;
use geni_credentials::sfa;
use geni_credentials::sfa::time::format_expiry;
use geni_credentials::sign::Algorithms;
use geni_credentials::speaksfor;
use geni_credentials::xmldsig::{C14nMethod, DigestMethod, SignatureMethod};
use sfa_fixture::{all_delegatable, days, pki};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The algorithm sets exercised: the gcf profile and the modern one.
const ALGORITHMS: [Algorithms; 3] = [
    Algorithms {
        c14n: C14nMethod::Inclusive,
        signature: SignatureMethod::RsaSha1,
        digest: DigestMethod::Sha1,
    },
    Algorithms {
        c14n: C14nMethod::Exclusive,
        signature: SignatureMethod::RsaSha256,
        digest: DigestMethod::Sha256,
    },
    Algorithms {
        c14n: C14nMethod::InclusiveWithComments,
        signature: SignatureMethod::RsaSha256,
        digest: DigestMethod::Sha1,
    },
];

fn xmlsec1_available() -> bool {
    let found = Command::new("xmlsec1").arg("--version").output().is_ok();
    if !found {
        common::missing_prerequisite("xmlsec1 is not installed");
    }
    found
}

/// Writes `text` to `dir/name` and returns the path.
fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// `xmlsec1 --verify` of signature `Sig_<id>` against the PKI root, as gcf
/// runs it.
fn xmlsec1_verifies(xml: &str, id: &str) -> bool {
    let dir = tempfile::tempdir().unwrap();
    let root = write(dir.path(), "root.pem", &pki().root.cert().to_pem());
    let file = write(dir.path(), "cred.xml", xml);
    let out = Command::new("xmlsec1")
        .args([
            "--verify",
            "--node-id",
            &format!("Sig_{id}"),
            "--trusted-pem",
        ])
        .arg(root)
        .arg(file)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stderr);
    out.status.success() && text.contains("OK")
}

fn slice_credential(algorithms: Algorithms) -> String {
    let pki = pki();
    let (root, alice, slice) = (pki.root.identity(), &pki.alice, &pki.slice);
    pki.credential(root, alice, slice, &all_delegatable(), days(7), algorithms)
}

#[test]
fn xmlsec1_accepts_what_we_sign_with_every_algorithm_set() {
    if !xmlsec1_available() {
        return;
    }
    for algorithms in ALGORITHMS {
        let xml = slice_credential(algorithms);
        assert!(xmlsec1_verifies(&xml, "ref0"), "{algorithms:?}:\n{xml}");
    }
}

#[test]
fn xmlsec1_accepts_every_signature_of_a_delegation_chain_we_sign() {
    if !xmlsec1_available() {
        return;
    }
    let pki = pki();
    let control = [Privilege::new("control", true)];
    let first = slice_credential(ALGORITHMS[0]);
    let second = pki.delegate(
        &first,
        &pki.alice,
        &pki.bob,
        &control,
        days(3),
        ALGORITHMS[1],
    );
    let third = pki.delegate(
        &second,
        &pki.bob,
        &pki.carol,
        &control,
        days(2),
        ALGORITHMS[2],
    );
    for id in ["ref0", "ref1", "ref2"] {
        assert!(xmlsec1_verifies(&third, id), "{id}:\n{third}");
    }
}

/// Blanks what a signer computes, leaving an `xmlsec1 --sign` template.
fn template_of(xml: &str) -> String {
    let mut out = xml.to_owned();
    for element in ["DigestValue", "SignatureValue", "X509Data"] {
        let (open, close) = (format!("<{element}>"), format!("</{element}>"));
        let start = out.find(&open).unwrap() + open.len();
        let end = out.find(&close).unwrap();
        out.replace_range(start..end, "");
    }
    out
}

/// Signs `template` with `xmlsec1 --sign` using `signer`'s key and chain.
fn xmlsec1_sign(template: &str, signer: &Identity) -> String {
    let dir = tempfile::tempdir().unwrap();
    let key = write(dir.path(), "key.pem", &signer.key_pem().unwrap());
    let cert = write(dir.path(), "cert.pem", &signer.chain_pem());
    let input = write(dir.path(), "template.xml", template);
    let output = dir.path().join("signed.xml");
    let out = Command::new("xmlsec1")
        .args(["--sign", "--node-id", "Sig_ref0", "--privkey-pem"])
        .arg(format!("{},{}", key.display(), cert.display()))
        .arg("--output")
        .arg(&output)
        .arg(input)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::read_to_string(output).unwrap()
}

#[test]
fn credentials_signed_by_xmlsec1_verify_in_process() {
    if !xmlsec1_available() {
        return;
    }
    let pki = pki();
    for algorithms in ALGORITHMS {
        let template = template_of(&slice_credential(algorithms));
        let signed = xmlsec1_sign(&template, pki.root.identity());
        assert!(signed.contains("<X509Certificate>"), "{signed}");
        let v = sfa::verify(signed.as_bytes(), &pki.trust, &pki.request(&pki.alice))
            .unwrap_or_else(|e| panic!("{algorithms:?}: {e}\n{signed}"));
        assert!(v.owner.same_as(pki.alice.urn()));
    }
}

/// The corpus's unsigned ABAC template, filled in for "the portal tool
/// speaks for alice" and signed by `xmlsec1` with alice's key, is accepted
/// by the speaks-for verifier.
#[test]
fn the_corpus_abac_template_signed_by_xmlsec1_verifies_as_speaks_for() {
    if !xmlsec1_available() {
        return;
    }
    let pki = pki();
    let tool = pki.root.tool("portal").unwrap();
    let path = common::corpus().join("creds/templates/geni-ch__abac_credential.xml");
    let keyid = pki.alice.cert().key_id();
    let template = std::fs::read_to_string(path)
        .unwrap()
        .replace("@expires@", &format_expiry(days(1)))
        .replace("@subject_keyid@", &keyid)
        .replace("@subject_role@", &format!("speaks_for_{keyid}"))
        .replace("@target_keyid@", &tool.cert().key_id())
        .replace("@target_role@", "");
    let signed = xmlsec1_sign(&template, &pki.alice);
    let statement = speaksfor::verify(
        signed.as_bytes(),
        &pki.trust,
        &tool.chain(),
        pki.alice.urn(),
        Utc::now(),
    )
    .unwrap_or_else(|e| panic!("{e}\n{signed}"));
    assert!(statement.user.same_as(pki.alice.urn()));
}

#[test]
fn xmlsec1_accepts_speaks_for_statements_we_sign() {
    if !xmlsec1_available() {
        return;
    }
    let pki = pki();
    let tool = pki.root.tool("portal").unwrap();
    let signer = pki.alice.signing_key();
    let xml =
        geni_credentials::sign::speaks_for(&signer, tool.cert(), days(1), ALGORITHMS[0]).unwrap();
    assert!(xmlsec1_verifies(&xml, "ref0"), "{xml}");
}
