//! End to end: `geni-am cert devca|show|verify`, run as the built binary,
//! on a fresh development PKI and on the gcf test CA of the corpus.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn corpus(relative: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/corpus")
        .join(relative)
}

fn geni_am(args: &[&str], paths: &[&Path]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_geni-am"))
        .args(args)
        .args(paths)
        .output()
        .expect("run geni-am")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn devca_output_verifies_and_shows_its_identity() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("pki");
    let made = geni_am(&["cert", "devca", "--user", "alice", "--out"], &[&out]);
    assert_eq!(made.status.code(), Some(0), "{made:?}");
    assert!(stdout(&made).contains("alice-cert.pem: urn:publicid:IDN+geni-am.test+user+alice"));
    let again = geni_am(&["cert", "devca", "--out"], &[&out]);
    assert_eq!(
        again.status.code(),
        Some(1),
        "an existing root is never replaced"
    );

    let roots = dir.path().join("roots");
    std::fs::create_dir(&roots).unwrap();
    std::fs::copy(out.join("ca-cert.pem"), roots.join("ca.pem")).unwrap();
    let alice = out.join("alice-cert.pem");
    let am = out.join("am-cert.pem");
    let verified = geni_am(&["cert", "verify", "--roots"], &[&roots, &alice, &am]);
    assert_eq!(verified.status.code(), Some(0), "{verified:?}");
    let text = stdout(&verified);
    assert!(text.contains(&format!(
        "{}: trusted: urn:publicid:IDN+geni-am.test+user+alice <- urn:publicid:IDN+geni-am.test+authority+sa",
        alice.display()
    )), "{text}");

    let shown = geni_am(&["cert", "show"], &[&am]);
    let text = stdout(&shown);
    assert!(
        text.contains("  urn: urn:publicid:IDN+geni-am.test+authority+am"),
        "{text}"
    );
    assert!(text.contains("  hosts: localhost, 127.0.0.1"), "{text}");
    assert!(text.contains("  legacy: none"), "{text}");
}

#[test]
fn corpus_test_user_verifies_only_within_its_validity() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        corpus("creds/certs/gcf-test-ca/ch-cert.pem"),
        dir.path().join("ch.pem"),
    )
    .unwrap();
    let alice = corpus("creds/certs/gcf-test-ca/alice-cert.pem");
    let then = geni_am(
        &["cert", "verify", "--at", "2014-01-01T00:00:00Z", "--roots"],
        &[dir.path(), &alice],
    );
    assert_eq!(then.status.code(), Some(0), "{then:?}");
    let now = geni_am(&["cert", "verify", "--roots"], &[dir.path(), &alice]);
    assert_eq!(now.status.code(), Some(1), "{now:?}");
    assert!(
        stdout(&now).contains(": CREDENTIAL_EXPIRED: certificate "),
        "{}",
        stdout(&now)
    );

    let shown = stdout(&geni_am(&["cert", "show"], &[&alice]));
    assert!(
        shown.contains("  urn: urn:publicid:IDN+geni:gpo:portal+user+alice"),
        "{shown}"
    );
    assert!(
        shown.contains("  legacy: MD5 signature, 1024-bit RSA key"),
        "{shown}"
    );
}

#[test]
fn bad_inputs_exit_2() {
    let missing = corpus("creds/certs/no-such-dir");
    let alice = corpus("creds/certs/gcf-test-ca/alice-cert.pem");
    assert_eq!(
        geni_am(&["cert", "verify", "--roots"], &[&missing, &alice])
            .status
            .code(),
        Some(2)
    );
    let key_only = corpus("creds/certs/gcf-test-ca/alice-key.pem");
    let shown = geni_am(&["cert", "show"], &[&key_only]);
    assert_eq!(shown.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&shown.stderr).contains("no PEM certificate"));
    let roots = corpus("creds/certs/sfa-trusted");
    let bad_time = geni_am(
        &["cert", "verify", "--at", "yesterday", "--roots"],
        &[&roots, &alice],
    );
    assert_eq!(bad_time.status.code(), Some(2));
}
