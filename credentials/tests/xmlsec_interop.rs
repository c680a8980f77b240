//! Interoperability with the reference XML-DSig tool, both ways: credentials
//! this crate signs pass `xmlsec1 --verify` (with the flags gcf uses), and
//! credentials signed by the `xmlsec1` command line verify in process.
//! Keys and certificates are the geni-tools test CA from the shared corpus.

use credentials::sign::{self, Algorithms, CredentialSpec, Grant, SigningKey};
use credentials::xmldsig::{C14nMethod, DigestMethod, Document, Signature, SignatureMethod};
use openssl::pkey::PKey;
use openssl::x509::X509;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A time inside the validity of the corpus test CA's certificates.
const AT: &str = "2014-01-01 00:00:00";

fn ca_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus/creds/certs/gcf-test-ca")
}

fn chain(name: &str) -> Vec<X509> {
    X509::stack_from_pem(&std::fs::read(ca_dir().join(format!("{name}-cert.pem"))).unwrap())
        .unwrap()
}

fn signing_key(name: &str) -> SigningKey {
    let key = std::fs::read(ca_dir().join(format!("{name}-key.pem"))).unwrap();
    SigningKey {
        key: PKey::private_key_from_pem(&key).unwrap(),
        chain: chain(name),
    }
}

fn xmlsec1_available() -> bool {
    let found = Command::new("xmlsec1").arg("--version").output().is_ok();
    if !found {
        eprintln!("NOTICE: xmlsec1 is not installed; interop test skipped");
    }
    found
}

/// `xmlsec1 --verify` of signature `Sig_<id>` as gcf runs it.
fn xmlsec1_verifies(xml: &str, id: &str) -> bool {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cred.xml");
    std::fs::write(&file, xml).unwrap();
    let out = Command::new("xmlsec1")
        .args(["--verify", "--node-id", &format!("Sig_{id}")])
        .arg("--trusted-pem")
        .arg(ca_dir().join("ch-cert.pem"))
        .args(["--verification-time", AT])
        .arg(&file)
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
    out.status.success() && text.contains("OK")
}

fn user_credential(algorithms: Algorithms) -> String {
    let alice = chain("alice");
    let spec = CredentialSpec {
        owner: &alice,
        owner_urn: "urn:publicid:IDN+geni:gpo:portal+user+alice",
        target: &alice,
        target_urn: "urn:publicid:IDN+geni:gpo:portal+user+alice",
        expires: chrono::DateTime::parse_from_rfc3339("2015-01-01T00:00:00Z")
            .unwrap()
            .into(),
        privileges: &[Grant::new("refresh", true), Grant::new("info", false)],
    };
    sign::issue(&spec, &signing_key("ch"), algorithms).unwrap()
}

fn verify_all_in_process(xml: &str) -> usize {
    let doc = Document::parse(xml.as_bytes()).unwrap();
    let root = doc.root().unwrap();
    let sigs: Vec<_> = root
        .children_named(None, "signatures")
        .flat_map(|s| s.children())
        .collect();
    for node in &sigs {
        Signature::parse(*node).unwrap().verify(&doc).unwrap();
    }
    sigs.len()
}

#[test]
fn xmlsec1_accepts_what_we_sign_with_every_algorithm_set() {
    if !xmlsec1_available() {
        return;
    }
    for (c14n, signature, digest) in [
        (
            C14nMethod::Inclusive,
            SignatureMethod::RsaSha1,
            DigestMethod::Sha1,
        ),
        (
            C14nMethod::Exclusive,
            SignatureMethod::RsaSha256,
            DigestMethod::Sha256,
        ),
        (
            C14nMethod::InclusiveWithComments,
            SignatureMethod::RsaSha256,
            DigestMethod::Sha1,
        ),
    ] {
        let xml = user_credential(Algorithms {
            c14n,
            signature,
            digest,
        });
        assert!(
            xmlsec1_verifies(&xml, "ref0"),
            "{c14n:?}/{signature:?}/{digest:?}:\n{xml}"
        );
        assert_eq!(verify_all_in_process(&xml), 1);
    }
}

/// Blanks what a signer computes, leaving an xmlsec1 signing template.
fn template_of(xml: &str) -> String {
    let blank = |text: &str, open: &str, close: &str| -> String {
        let mut out = String::new();
        let mut rest = text;
        while let Some(start) = rest.find(open) {
            let end = rest[start..].find(close).unwrap() + start;
            out.push_str(&rest[..start + open.len()]);
            rest = &rest[end..];
        }
        out + rest
    };
    let xml = blank(xml, "<DigestValue>", "</DigestValue>");
    let xml = blank(&xml, "<SignatureValue>", "</SignatureValue>");
    blank(&xml, "<X509Data>", "</X509Data>")
}

fn xmlsec1_sign(template: &str, key: &str, id: &str, dir: &Path) -> String {
    let (input, output) = (dir.join("template.xml"), dir.join("signed.xml"));
    std::fs::write(&input, template).unwrap();
    let keys = format!(
        "{},{}",
        ca_dir().join(format!("{key}-key.pem")).display(),
        ca_dir().join(format!("{key}-cert.pem")).display()
    );
    let out = Command::new("xmlsec1")
        .args([
            "--sign",
            "--privkey-pem",
            &keys,
            "--node-id",
            &format!("Sig_{id}"),
            "--output",
        ])
        .arg(&output)
        .arg(&input)
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
    let dir = tempfile::tempdir().unwrap();
    for algorithms in [
        Algorithms::default(),
        Algorithms {
            c14n: C14nMethod::Exclusive,
            signature: SignatureMethod::RsaSha256,
            digest: DigestMethod::Sha256,
        },
    ] {
        let template = template_of(&user_credential(algorithms));
        let signed = xmlsec1_sign(&template, "ch", "ref0", dir.path());
        assert_ne!(signed, template);
        assert_eq!(verify_all_in_process(&signed), 1, "{signed}");
    }
}
