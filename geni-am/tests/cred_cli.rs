//! End to end: `geni-am cred verify` on a real corpus credential, run as the
//! built binary: what it prints for a credential that verifies as of a time
//! inside its validity, and the refusal (with its GENI label) otherwise.

use std::path::PathBuf;
use std::process::{Command, Output};

fn corpus(relative: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/corpus/creds")
        .join(relative)
}

const USER_CRED: &str = "credentials/ofelia-ocf__topdomain.nitos.pi.user.cred";
const USER: &str = "urn:publicid:IDN+topdomain:nitos+user+pi";

/// The certificate chain a credential's `<owner_gid>` holds (leaf first):
/// what the owner's client presents over TLS.
fn owner_chain(credential: &str) -> String {
    let xml = std::fs::read_to_string(corpus(credential)).unwrap();
    let start = xml.find("<owner_gid>").unwrap() + "<owner_gid>".len();
    let end = xml.find("</owner_gid>").unwrap();
    xml[start..end].to_owned()
}

/// Runs `geni-am cred verify` with the topdomain root trusted and the NITOS
/// user (with the chain its client presents) as caller.
fn verify(extra: &[&str], credential: &str) -> Output {
    verify_as(&owner_chain(USER_CRED), extra, credential)
}

/// Runs `geni-am cred verify` with the topdomain root trusted and the PEM
/// chain `caller` as caller.
fn verify_as(caller: &str, extra: &[&str], credential: &str) -> Output {
    let roots = tempfile::tempdir().unwrap();
    std::fs::copy(
        corpus("certs/sfa-gids/topdomain.gid"),
        roots.path().join("topdomain.gid"),
    )
    .unwrap();
    let caller_file = roots.path().join("caller.pem.txt");
    std::fs::write(&caller_file, caller).unwrap();
    Command::new(env!("CARGO_BIN_EXE_geni-am"))
        .args(["cred", "verify", "--roots"])
        .arg(roots.path())
        .arg("--caller")
        .arg(&caller_file)
        .args(extra)
        .arg(corpus(credential))
        .output()
        .expect("run geni-am")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn a_real_user_credential_verifies_as_of_its_validity_and_prints_what_it_grants() {
    let args = [
        "--at",
        "2013-06-01T00:00:00Z",
        "--target",
        USER,
        "--privilege",
        "resolve",
    ];
    let output = verify(&args, USER_CRED);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let text = stdout(&output);
    assert!(text.contains(": verified\n"), "{text}");
    assert!(text.contains(&format!("owner:      {USER}")), "{text}");
    assert!(
        text.contains(
            "privileges: refresh (delegatable), resolve (delegatable), info (delegatable)"
        ),
        "{text}"
    );
    assert!(text.contains("expires:    2013-06-22T09:38:28Z"), "{text}");
    assert!(
        text.contains("signed by urn:publicid:IDN+topdomain:nitos+authority+sa"),
        "{text}"
    );
}

#[test]
fn the_same_credential_today_is_refused_as_expired_and_exits_1() {
    let output = verify(&[], USER_CRED);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let text = stdout(&output);
    assert!(text.contains("refused (CREDENTIAL_EXPIRED)"), "{text}");
    // The caller's own certificate expired too, and the server would refuse
    // its TLS connection before reading any credential.
    assert!(
        text.contains("caller.pem.txt: refused (CREDENTIAL_EXPIRED): the caller's certificate"),
        "{text}"
    );
}

#[test]
fn a_caller_whose_chain_does_not_reach_the_roots_is_refused_before_any_credential() {
    let leaf_only = std::fs::read_to_string(corpus("certs/sfa-gids/jfed.gid")).unwrap();
    let output = verify_as(&leaf_only, &["--at", "2013-06-01T00:00:00Z"], USER_CRED);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let text = stdout(&output);
    assert!(
        text.contains(
            "refused (CREDENTIAL_SIGNER_UNTRUSTED): the caller's certificate is not trusted"
        ),
        "{text}"
    );
    assert!(!text.contains("verified"), "{text}");
}

#[test]
fn a_caller_not_yet_valid_is_refused() {
    let output = verify(&["--at", "2001-01-01T00:00:00Z"], USER_CRED);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let text = stdout(&output);
    assert!(
        text.contains("caller.pem.txt: refused (CREDENTIAL_INVALID)")
            && text.contains("is not valid before"),
        "{text}"
    );
}

#[test]
fn speaking_for_without_a_speaks_for_credential_is_refused() {
    let output = verify(
        &[
            "--at",
            "2013-06-01T00:00:00Z",
            "--speaking-for",
            "urn:publicid:IDN+topdomain+user+someone",
        ],
        USER_CRED,
    );
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let text = stdout(&output);
    assert!(text.contains("speaks-for refused"), "{text}");
}

#[test]
fn a_credential_owned_by_someone_else_is_refused_as_a_mismatch() {
    let output = verify(
        &["--at", "2013-06-01T00:00:00Z"],
        "credentials/ofelia-ocf__topdomain.cred",
    );
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let text = stdout(&output);
    assert!(text.contains("refused (CREDENTIAL_MISMATCH)"), "{text}");
    assert!(
        text.contains("owned by urn:publicid:IDN+topdomain+authority+sa"),
        "{text}"
    );
}

#[test]
fn a_bad_time_is_a_usage_error() {
    let output = verify(&["--at", "soon"], USER_CRED);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("--at \"soon\""),
        "{output:?}"
    );
}
