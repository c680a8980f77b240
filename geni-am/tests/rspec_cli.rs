//! End to end: `geni-am rspec validate` on real corpus files, run as the
//! built binary.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn corpus(relative: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/corpus")
        .join(relative)
}

fn validate(args: &[&str], files: &[&Path]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_geni-am"))
        .args(["rspec", "validate"])
        .args(args)
        .args(files)
        .output()
        .expect("run geni-am")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn a_valid_request_prints_valid_and_exits_0() {
    let file = corpus("rspec/request/emulab__utahcloud-utahms.rspec");
    let output = validate(&["--as", "request"], &[&file]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_eq!(stdout(&output), format!("{}: valid\n", file.display()));
}

#[test]
fn a_manifest_sent_as_request_prints_file_line_element_message_and_exits_1() {
    let file = corpus("rspec/bad/geni-tools__bad.xml.sample");
    let output = validate(&["--as", "request"], &[&file]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let text = stdout(&output);
    let expected = format!("{}:9: rspec: this is a manifest RSpec", file.display());
    assert!(text.starts_with(&expected), "{text}");
}

#[test]
fn a_not_well_formed_file_reports_its_line() {
    let file = corpus("rspec/bad/iof-tools__twist_all.rspec");
    let output = validate(&[], &[&file]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    assert!(
        stdout(&output).starts_with(&format!("{}:2: ", file.display())),
        "{}",
        stdout(&output)
    );
}

#[test]
fn every_file_is_reported_and_an_unreadable_one_exits_2() {
    let good = corpus("rspec/advertisement/felix__adv-rspec.xml");
    let missing = corpus("rspec/request/no-such-file.xml");
    let output = validate(&[], &[&missing, &good]);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    assert_eq!(stdout(&output), format!("{}: valid\n", good.display()));
    let errors = String::from_utf8_lossy(&output.stderr);
    assert!(
        errors.contains(&format!("{}: cannot read", missing.display())),
        "{errors}"
    );
}

#[test]
fn requests_and_manifests_the_official_schemas_accept_are_valid() {
    let requests = [
        "rspec/request/geni-tools__amapi2-request.xml",
        "rspec/request/felix__request.ro.xml",
        "rspec/request/geni-tools__stitcherTestFiles_scs-expanded-request-rspec.xml",
    ]
    .map(corpus);
    let manifests =
        ["rspec/manifest/geni-tools__stitcherTestFiles_ahtest-manifest-rspec-utah-geniracks-net-protogeniv2.xml"]
            .map(corpus);
    for (kind, files) in [("request", &requests[..]), ("manifest", &manifests[..])] {
        let paths: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
        let output = validate(&["--as", kind], &paths);
        assert_eq!(output.status.code(), Some(0), "{output:?}");
        let expected: String = files
            .iter()
            .map(|f| format!("{}: valid\n", f.display()))
            .collect();
        assert_eq!(stdout(&output), expected);
    }
}
