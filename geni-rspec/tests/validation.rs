//! RSpec validation against the shared corpus of real RSpecs:
//!
//! * verdict agreement: for every official RSpec row of `VALIDATION.tsv`,
//!   the full validation (schemas and request rules) gives the same
//!   valid/invalid verdict as `xmllint --nonet --schema` with the official
//!   schemas, checking the document as the kind the official run did;
//! * every file of `rspec/bad/` is refused with a precise error;
//! * the stitching extension is accepted as geni-tools' stitcher writes it,
//!   and still checked.

use geni_rspec::{Invalid, IssueKind, RspecKind, RspecVersion, Validator};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus")
}

fn read(relative: &str) -> Vec<u8> {
    let path = corpus().join(relative);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// One row of `VALIDATION.tsv`.
struct Row {
    file: String,
    schema: String,
    valid: bool,
    first_error: String,
}

fn rows() -> Vec<Row> {
    let text = String::from_utf8(read("VALIDATION.tsv")).unwrap();
    text.lines()
        .skip(1)
        .filter(|line| !line.trim().is_empty())
        .map(|line| {
            let cols: Vec<&str> = line.split('\t').collect();
            assert!(cols.len() >= 3, "short row: {line}");
            Row {
                file: cols[0].to_owned(),
                schema: cols[1].to_owned(),
                valid: cols[2] == "yes",
                first_error: cols.get(3).unwrap_or(&"").trim_matches('"').to_owned(),
            }
        })
        .collect()
}

/// The RSpec language and kind a schema column stands for, or why the row
/// is none of the project's business.
fn target(schema: &str) -> Result<(RspecVersion, RspecKind), &'static str> {
    if schema.starts_with("xsd/credential/") || schema.starts_with("xsd/sfa/") {
        return Err("credential schema: credentials are the credentials crate's business");
    }
    if schema.starts_with("xsd/third-party/") {
        return Err("FOAM OpenFlow reservation schema: the aggregate offers no OpenFlow");
    }
    let version = if schema.starts_with("xsd/2/") {
        RspecVersion::ProtoGeniV2
    } else {
        RspecVersion::GeniV3
    };
    let stem = schema.rsplit('/').next().unwrap_or_default();
    let kind = match stem.trim_end_matches(".xsd").trim_end_matches("-with-ext") {
        "ad" => RspecKind::Advertisement,
        "request" => RspecKind::Request,
        "manifest" => RspecKind::Manifest,
        other => panic!("unknown schema {other} in VALIDATION.tsv"),
    };
    Ok((version, kind))
}

/// Whether a row gives the verdict of an official GENI schema. The
/// `validation/wrappers/*-with-ext.xsd` rows add the extension schemas of
/// the corpus (stitching 0.1, which predates the `<capabilities>` that
/// geni-tools' stitcher writes) to the official schemas: they are not the
/// official verdict, and the project's schemas accept what the stitcher
/// writes.
fn official(row: &Row) -> bool {
    !row.schema.starts_with("validation/wrappers/")
}

/// The full validation (`geni-am rspec validate --as KIND`, and Allocate
/// for requests) gives the official schemas' verdict on every RSpec of the
/// corpus, validated as the kind the official run checked it against.
#[test]
fn full_validation_agrees_with_the_official_schemas_on_every_corpus_rspec() {
    let validator = Validator::new().unwrap();
    let all = rows();
    let (mut checked, mut skipped, mut wrapped) = (0, 0, 0);
    let mut disagreements = Vec::new();
    for row in &all {
        let Ok((_, kind)) = target(&row.schema) else {
            skipped += 1;
            continue;
        };
        if !official(row) {
            wrapped += 1;
            continue;
        }
        checked += 1;
        let ours = validator.validate_as(&read(&row.file), kind);
        if ours.is_ok() != row.valid {
            disagreements.push(format!(
                "{} as {}: official {}, ours {}",
                row.file,
                kind.type_attribute(),
                if row.valid { "valid" } else { &row.first_error },
                match &ours {
                    Ok(_) => "valid".to_owned(),
                    Err(invalid) => invalid.to_string(),
                }
            ));
        }
    }
    assert!(
        disagreements.is_empty(),
        "{} of {checked} verdicts disagree:\n{}",
        disagreements.len(),
        disagreements.join("\n")
    );
    // 479 rows: 41 credential and FOAM rows, 198 rows of the wrapper
    // schemas, and the 240 official verdicts checked here.
    assert_eq!(checked, 240, "official RSpec verdicts checked");
    assert_eq!(skipped, 41, "credential and third-party rows");
    assert_eq!(wrapped, 198, "wrapper rows");
}

/// The stitcher's expanded request, as the corpus holds it (it carries
/// `<capabilities>` in its stitching links).
const STITCHED_REQUEST: &str =
    "rspec/request/geni-tools__stitcherTestFiles_scs-expanded-request-rspec.xml";

#[test]
fn stitching_as_the_stitcher_writes_it_is_valid() {
    let bytes = read(STITCHED_REQUEST);
    assert!(String::from_utf8_lossy(&bytes).contains("<capabilities>"));
    let found = Validator::new()
        .unwrap()
        .validate_as(&bytes, RspecKind::Request);
    assert_eq!(found.map(|v| v.kind), Ok(RspecKind::Request));
}

#[test]
fn stitching_is_still_checked() {
    let text = String::from_utf8(read(STITCHED_REQUEST)).unwrap();
    let broken = text.replacen(
        "<capability>consumer</capability>",
        "<capability>consumer</capability><vlan>1</vlan>",
        1,
    );
    let invalid = Validator::new()
        .unwrap()
        .validate_as(broken.as_bytes(), RspecKind::Request)
        .unwrap_err();
    let first = &invalid.issues[0];
    assert_eq!(
        (first.kind, first.line, first.element.as_deref()),
        (IssueKind::Schema, 101, Some("vlan")),
        "{first}"
    );
}

/// The line libxml2 gave in the official run (`line N: ...`).
fn official_line(first_error: &str) -> u32 {
    first_error
        .strip_prefix("line ")
        .and_then(|rest| rest.split(':').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no line in {first_error:?}"))
}

fn refuse_as_request(file: &str) -> Invalid {
    Validator::new()
        .unwrap()
        .validate_as(&read(file), RspecKind::Request)
        .expect_err(file)
}

#[test]
fn not_well_formed_files_are_refused_with_the_official_line() {
    let all = rows();
    let broken = [
        "rspec/bad/emulab__example-request-rspec.xml",
        "rspec/bad/emulab__request.xml",
        "rspec/bad/fiteagle-sfa__pnode.rspec",
        "rspec/bad/geni-tools__gib-advert.rspec",
        "rspec/bad/iof-tools__twist_all.rspec",
        "rspec/bad/omf_sfa__rspec-test.xml",
    ];
    for file in broken {
        let row = all.iter().find(|r| r.file == file).expect(file);
        let invalid = refuse_as_request(file);
        let issue = &invalid.issues[0];
        assert_eq!(issue.kind, IssueKind::Syntax, "{file}: {issue}");
        assert_eq!(
            issue.line,
            official_line(&row.first_error),
            "{file}: {issue}"
        );
        assert!(!issue.message.is_empty(), "{file}");
    }
}

/// Asserts that each file, sent as a request, is refused on its document
/// element (line 1) with an issue of `kind` whose message says every
/// `needle`.
fn assert_refused_on_root(files: &[&str], kind: IssueKind, needles: &[&str]) {
    for file in files {
        let issue = &refuse_as_request(file).issues[0];
        assert_eq!(issue.kind, kind, "{file}: {issue}");
        assert_eq!(issue.element.as_deref(), Some("rspec"), "{file}: {issue}");
        for needle in needles {
            assert!(issue.message.contains(needle), "{file}: {issue}");
        }
    }
}

const EXPECTED_V3: &str = "expected http://www.geni.net/resources/rspec/3";

#[test]
fn a_wrong_namespace_is_refused_naming_the_expected_one() {
    assert_refused_on_root(
        &["rspec/bad/geni-lib3__ps103.xml"],
        IssueKind::Namespace,
        &["http://www.geni.net/resource/rspec/3 is not", EXPECTED_V3],
    );
}

#[test]
fn a_missing_namespace_is_refused_naming_the_expected_one() {
    assert_refused_on_root(
        &[
            "rspec/bad/geni-tools__two-nodes.rspec",
            "rspec/bad/ofelia-ocf__request.xml",
        ],
        IssueKind::Namespace,
        &["in no namespace", EXPECTED_V3],
    );
}

#[test]
fn a_manifest_sent_as_a_request_is_refused_saying_so() {
    assert_refused_on_root(
        &[
            "rspec/bad/geni-tools__bad.xml.sample",
            "rspec/bad/gram__bad.xml.sample",
        ],
        IssueKind::DocumentType,
        &["this is a manifest RSpec", "a request RSpec"],
    );
}

#[test]
fn every_bad_file_is_covered_above() {
    let listed: HashSet<String> = std::fs::read_dir(corpus().join("rspec/bad"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        listed.len(),
        11,
        "new files in rspec/bad need a test: {listed:?}"
    );
}

/// A GENI v3 manifest with one node whose `<services>` hold `services`.
fn manifest_with_services(services: &str) -> String {
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<rspec xmlns="http://www.geni.net/resources/rspec/3" type="manifest"
       xmlns:ssh-user="http://www.geni.net/resources/rspec/ext/user/1"
       xmlns:proxy="http://jfed.iminds.be/proxy/1.0"
       xmlns:x="urn:example:unknown-extension">
  <node client_id="n1" sliver_id="urn:publicid:IDN+example.org+sliver+1" x:layout="12,34">
    <sliver_type name="default-vm"/>
    <services>
{services}
    </services>
  </node>
</rspec>"#
    )
}

fn manifest_issues(services: &str) -> Vec<String> {
    let doc = manifest_with_services(services);
    match Validator::new()
        .unwrap()
        .validate_as(doc.as_bytes(), RspecKind::Manifest)
    {
        Ok(_) => Vec::new(),
        Err(invalid) => invalid.issues.iter().map(ToString::to_string).collect(),
    }
}

/// Asserts that the manifest with `services` has exactly one problem,
/// described by `needle`.
fn assert_one_issue(services: &str, needle: &str) {
    let issues = manifest_issues(services);
    assert_eq!(issues.len(), 1, "{issues:?}");
    assert!(issues[0].contains(needle), "{issues:?}");
}

const LOGIN: &str =
    r#"<login authentication="ssh-keys" hostname="node1.example.org" port="22" username="alice"/>"#;

#[test]
fn the_ssh_user_extension_is_accepted_as_specified() {
    let services = format!(
        r#"{LOGIN}
<ssh-user:services_user login="alice" user_urn="urn:publicid:IDN+example.org+user+alice">
  <ssh-user:public_key>ssh-rsa AAAAB3Nza alice@example.org</ssh-user:public_key>
  <ssh-user:public_key>ssh-ed25519 AAAAC3Nza alice@laptop</ssh-user:public_key>
</ssh-user:services_user>"#
    );
    assert_eq!(manifest_issues(&services), Vec::<String>::new());
}

#[test]
fn the_ssh_user_extension_is_checked() {
    let services = r#"<ssh-user:services_user user_urn="urn:publicid:IDN+example.org+user+alice">
<ssh-user:key>ssh-rsa AAAA</ssh-user:key></ssh-user:services_user>"#;
    let issues = manifest_issues(services);
    assert_eq!(issues.len(), 2, "{issues:?}");
    assert!(
        issues[0].contains("services_user: The attribute 'login' is required"),
        "{issues:?}"
    );
    assert!(
        issues[1].contains("key: This element is not expected"),
        "{issues:?}"
    );
}

#[test]
fn the_proxy_extension_is_accepted_and_checked() {
    let good = format!(
        r#"<proxy:proxy proxy="proxy@gw.example.org:22" for="alice@node1.example.org:22"/>
<login authentication="ssh-keys" hostname="gw.example.org" port="22" username="proxy"/>
{LOGIN}"#
    );
    assert_eq!(manifest_issues(&good), Vec::<String>::new());
    assert_one_issue(
        r#"<proxy:proxy proxy="proxy@gw.example.org:22"/>"#,
        "proxy: The attribute 'for' is required",
    );
}

#[test]
fn unknown_extensions_pass_but_unknown_rspec_elements_do_not() {
    let unknown = r#"<x:anything x:at="1"><x:deeper/></x:anything>"#;
    assert_eq!(manifest_issues(unknown), Vec::<String>::new());
    assert_one_issue("<gizmo/>", "gizmo: This element is not expected");
}

#[test]
fn the_opstate_extension_is_checked() {
    let ad = |state: &str| {
        format!(
            r#"<rspec xmlns="http://www.geni.net/resources/rspec/3" type="advertisement"
       xmlns:opstate="http://www.geni.net/resources/rspec/ext/opstate/1">
<opstate:rspec_opstate aggregate_manager_id="urn:publicid:IDN+example.org+authority+am" start="geni_notready">
  <opstate:sliver_type name="default-vm"/>
  {state}
</opstate:rspec_opstate>
</rspec>"#
        )
    };
    let validator = Validator::new().unwrap();
    let good = ad(r#"<opstate:state name="geni_notready">
    <opstate:action name="geni_start" next="geni_configuring"><opstate:description>Boot</opstate:description></opstate:action>
    <opstate:description>Not running.</opstate:description>
  </opstate:state>
  <opstate:state name="geni_configuring">
    <opstate:wait type="geni_success" next="geni_ready"/>
  </opstate:state>"#);
    assert_eq!(
        validator.validate(good.as_bytes()).map(|v| v.kind),
        Ok(RspecKind::Advertisement)
    );
    let bad = ad(
        r#"<opstate:state name="geni ready"><opstate:action name="geni_stop"/></opstate:state>"#,
    );
    let invalid = validator.validate(bad.as_bytes()).unwrap_err();
    let text = invalid.to_string();
    assert_eq!(invalid.issues.len(), 2, "{text}");
    assert!(
        text.contains("'geni ready' is not accepted by the pattern"),
        "{text}"
    );
    assert!(text.contains("The attribute 'next' is required"), "{text}");
}

#[test]
fn concurrent_validations_agree_with_sequential_ones() {
    let files: Vec<String> = rows()
        .into_iter()
        .filter(|row| target(&row.schema).is_ok())
        .map(|row| row.file)
        .take(60)
        .collect();
    let validator = Validator::new().unwrap();
    let verdict = |file: &String| validator.validate(&read(file)).map_err(|e| e.issues);
    let sequential: Vec<_> = files.iter().map(verdict).collect();
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..4)
            .map(|_| scope.spawn(|| files.iter().map(verdict).collect::<Vec<_>>()))
            .collect();
        for worker in workers {
            assert!(worker.join().unwrap() == sequential);
        }
    });
}

#[test]
fn errors_beyond_line_65535_keep_their_line() {
    let mut doc =
        String::from("<rspec xmlns=\"http://www.geni.net/resources/rspec/3\" type=\"request\">\n");
    for i in 0..70_000 {
        doc.push_str(&format!(
            "<node client_id=\"n{i}\"><sliver_type name=\"vm\"/></node>\n"
        ));
    }
    doc.push_str("<node/>\n</rspec>\n");
    let invalid = Validator::new()
        .unwrap()
        .validate(doc.as_bytes())
        .unwrap_err();
    let issue = &invalid.issues[0];
    assert_eq!(
        (issue.line, issue.element.as_deref()),
        (70_002, Some("node")),
        "{issue}"
    );
}
