//! End to end: `geni-am rspec manifest --cm URN REQUEST` on real corpus
//! files, run as the built binary.

use geni_rspec::Document;
use geni_rspec::RSpec;
use geni_rspec::{RspecKind, Validator};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const UTAH_EMULAB: &str = "urn:publicid:IDN+emulab.net+authority+cm";

fn corpus(relative: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/corpus")
        .join(relative)
}

fn manifest(cm: &str, file: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_geni-am"))
        .args(["rspec", "manifest", "--cm", cm])
        .arg(file)
        .output()
        .expect("run geni-am")
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn own_nodes_get_placeholder_slivers_and_foreign_ones_pass_through() {
    let file = corpus("rspec/request/emulab__utahcloud-utahms.rspec");
    let output = manifest(UTAH_EMULAB, &file);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let doc = Document::parse(&output.stdout).unwrap();
    let rspec = RSpec::new(&doc).unwrap();
    assert_eq!(rspec.rspec_type(), Some(RspecKind::Manifest));
    assert!(rspec.schema_location().unwrap().contains(
        "http://www.geni.net/resources/rspec/3 http://www.geni.net/resources/rspec/3/manifest.xsd"
    ));
    let ours = rspec.node("utahem").unwrap();
    assert_eq!(
        ours.sliver_id().as_deref(),
        Some("urn:publicid:IDN+emulab.net+sliver+utahem")
    );
    let interface = ours.interfaces().next().unwrap();
    assert_eq!(
        interface.sliver_id().as_deref(),
        Some("urn:publicid:IDN+emulab.net+sliver+utahem-if0")
    );
    let theirs = rspec.node("utahcl").unwrap();
    assert_eq!(theirs.sliver_id(), None);
    let request = Document::parse(&std::fs::read(&file).unwrap()).unwrap();
    let original = RSpec::new(&request).unwrap().node("utahcl").unwrap().id();
    assert_eq!(
        doc.node_to_bytes(theirs.id()),
        request.node_to_bytes(original)
    );
    let link = rspec.link("mylink").unwrap();
    assert_eq!(
        link.sliver_id().as_deref(),
        Some("urn:publicid:IDN+emulab.net+sliver+mylink")
    );
}

#[test]
fn the_preview_of_a_single_aggregate_request_validates_as_a_manifest() {
    let file = corpus("rspec/request/geni-tutorials__ig-clemson.rspec");
    let output = manifest("urn:publicid:IDN+instageni.clemson.edu+authority+cm", &file);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let validator = Validator::new().unwrap();
    validator
        .validate_as(&output.stdout, RspecKind::Manifest)
        .unwrap_or_else(|e| panic!("{e}"));
}

/// Runs the command, expects exit code 1 with nothing on standard output,
/// and returns the error text.
fn failure(cm: &str, file: &Path) -> String {
    let output = manifest(cm, file);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    assert!(output.stdout.is_empty());
    let text = stderr(&output);
    assert!(
        text.starts_with(&format!("error: {}: ", file.display())),
        "{text}"
    );
    text
}

#[test]
fn a_file_that_does_not_parse_exits_1_naming_file_and_line() {
    let text = failure(UTAH_EMULAB, &corpus("rspec/bad/omf_sfa__rspec-test.xml"));
    assert!(
        text.contains("1812"),
        "the line of the mismatched tag: {text}"
    );
}

#[test]
fn a_manifest_is_not_a_request() {
    let text = failure(UTAH_EMULAB, &corpus("rspec/bad/geni-tools__bad.xml.sample"));
    assert!(
        text.contains("line 9: <rspec type=\"manifest\"> is not a request"),
        "{text}"
    );
}

#[test]
fn an_advertisement_is_not_a_request() {
    let file = corpus("rspec/advertisement/geni-portal__rspec-instageni-clemson-edu.xml");
    let text = failure(UTAH_EMULAB, &file);
    assert!(
        text.contains("<rspec type=\"advertisement\"> is not a request"),
        "{text}"
    );
}

#[test]
fn a_cm_that_is_not_a_urn_is_refused() {
    let text = failure(
        "emulab.net",
        &corpus("rspec/request/emulab__utahcloud-utahms.rspec"),
    );
    assert!(
        text.contains("`emulab.net` is not a component manager URN"),
        "{text}"
    );
}

#[test]
fn a_missing_file_is_reported() {
    let text = failure(UTAH_EMULAB, Path::new("/nonexistent/request.xml"));
    assert!(text.contains("cannot read"), "{text}");
}

#[test]
fn a_file_over_the_size_limit_is_refused_before_reading() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("huge.xml");
    let file = std::fs::File::create(&path).unwrap();
    let limit = geni_rspec::Limits::default().max_bytes as u64;
    file.set_len(limit + 1).unwrap();
    let text = failure(UTAH_EMULAB, &path);
    assert!(text.contains("larger than the"), "{text}");
}
