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

/// Runs `geni-am cred verify` with the topdomain root trusted and the NITOS
/// user as caller.
fn verify(extra: &[&str], credential: &str) -> Output {
    let roots = tempfile::tempdir().unwrap();
    std::fs::copy(
        corpus("certs/sfa-gids/topdomain.gid"),
        roots.path().join("topdomain.gid"),
    )
    .unwrap();
    Command::new(env!("CARGO_BIN_EXE_geni-am"))
        .args(["cred", "verify", "--roots"])
        .arg(roots.path())
        .arg("--caller")
        .arg(corpus("certs/sfa-gids/jfed.gid"))
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
    assert!(
        stdout(&output).contains("refused (CREDENTIAL_EXPIRED)"),
        "{output:?}"
    );
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
