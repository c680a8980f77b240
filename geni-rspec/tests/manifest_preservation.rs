//! The manifest builder keeps every request intact: for every real request
//! of the corpus, the manifest is checked against the request with an
//! independent libxml2-based checker (see `manifest_preservation/checker.rs`).

#[path = "manifest_preservation/checker.rs"]
mod checker;

use geni_rspec::Document;
use geni_rspec::manifest::{
    self, Annotations, InterfaceAnnotation, IpAddress, LinkAnnotation, Login, NodeAnnotation,
    Ownership, Proxy, SshUser,
};
use geni_rspec::{Link, Node, RSpec};
use std::path::{Path, PathBuf};

/// A component manager no corpus file names: every bound node is foreign.
const TEST_CM: &str = "urn:publicid:IDN+views.test.example+authority+cm";

fn corpus(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/corpus")
        .join(relative)
}

/// The regular files of a corpus folder, sorted.
fn files_in(relative: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(corpus(relative))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.is_file())
        .collect();
    files.sort();
    files
}

/// Builds the manifest of the request in `path` for `cm` with the
/// annotations `annotate` makes, runs the independent check, and checks with
/// the project's tree that foreign nodes and links are byte-identical.
fn preserve(
    path: &Path,
    cm: &str,
    annotate: impl Fn(&Document) -> Annotations,
) -> (Document, checker::Report) {
    let bytes = std::fs::read(path).unwrap();
    let request = Document::parse(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let annotations = annotate(&request);
    let manifest = manifest::build(&request, cm, &annotations)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let report = checker::check(&bytes, &manifest.to_bytes(), cm)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let (before, after) = (
        RSpec::new(&request).unwrap(),
        RSpec::new(&manifest).unwrap(),
    );
    let owned = Ownership::of(&before, cm);
    let pairs = before
        .nodes()
        .map(|n| n.id())
        .zip(after.nodes().map(|n| n.id()));
    let pairs = pairs.chain(
        before
            .links()
            .map(|l| l.id())
            .zip(after.links().map(|l| l.id())),
    );
    for (old, new) in pairs {
        if !owned.nodes.contains(&old) && !owned.links.contains(&old) {
            let (a, b) = (request.node_to_bytes(old), manifest.node_to_bytes(new));
            assert_eq!(a, b, "{}", path.display());
        }
    }
    (manifest, report)
}

/// Runs [`preserve`] with placeholder annotations on every file of a folder
/// and checks that it saw them all (and that the folder is not empty).
fn preserve_folder(relative: &str, at_least: usize) {
    let files = files_in(relative);
    let mut checked = 0;
    for path in &files {
        preserve(path, TEST_CM, |request| {
            manifest::placeholder_annotations(request, TEST_CM).unwrap()
        });
        checked += 1;
    }
    assert_eq!(checked, files.len());
    assert!(checked >= at_least, "{relative}: only {checked} requests");
}

#[test]
fn every_v3_folder_request_is_preserved() {
    preserve_folder("rspec/request", 100);
}

#[test]
fn every_v2_folder_request_is_preserved() {
    preserve_folder("rspec/request/v2", 20);
}

/// Requests whose nodes name a component manager, for checks where that
/// CM is ours and the annotations are real.
const BOUND_REQUESTS: [&str; 6] = [
    "rspec/request/geni-tools__request-pg-ig-utah-2links.xml",
    "rspec/request/geni-tutorials__ig-clemson.rspec",
    "rspec/request/geni-lib3__custom3-2am.xml",
    "rspec/request/geni-lib3__custom5-2LAN-4am.xml",
    "rspec/request/gram__two-nodes.rspec",
    "rspec/request/v2/geni-tools__utah-request.xml",
];

/// The first `component_manager_id` named in `request`.
fn first_cm(request: &Document) -> String {
    let rspec = RSpec::new(request).unwrap();
    let cm = rspec.nodes().find_map(|n| n.component_manager_id());
    cm.unwrap().into_owned()
}

/// Annotations as the AM would write them once the slivers are ready.
fn real_annotations(request: &Document, cm: &str) -> Annotations {
    let rspec = RSpec::new(request).unwrap();
    let owned = Ownership::of(&rspec, cm);
    let mut annotations = Annotations::default();
    for (index, &id) in owned.nodes.iter().enumerate() {
        let node = Node::new(request, id);
        let client_id = node.client_id().unwrap().into_owned();
        let host = format!("vm{index}.views.test.example");
        annotations.nodes.insert(
            client_id.clone(),
            NodeAnnotation {
                sliver_id: format!("urn:publicid:IDN+views.test.example+sliver+n{index}"),
                component_id: node
                    .component_id()
                    .is_none()
                    .then(|| format!("urn:publicid:IDN+views.test.example+node+host{index}")),
                component_name: None,
                sliver_type: None,
                size: None,
                exclusive: node.exclusive_attr().is_none().then_some(false),
                hostname: Some(host.clone()),
                logins: vec![
                    Login::ssh("gw.views.test.example", 2222, "alice"),
                    Login::ssh(&host, 22, "alice"),
                ],
                users: vec![SshUser {
                    login: "alice".into(),
                    user_urn: Some("urn:publicid:IDN+ch.example+user+alice".into()),
                    public_keys: vec![
                        "ssh-ed25519 AAAA alice@laptop".into(),
                        "ssh-rsa BBBB alice@desk".into(),
                    ],
                }],
                proxy: Some(Proxy {
                    proxy: "alice@gw.views.test.example:2222".into(),
                    target: format!("alice@{host}:22"),
                }),
            },
        );
    }
    for (index, client_id) in owned.interfaces.keys().enumerate() {
        annotations.interfaces.insert(
            client_id.clone(),
            InterfaceAnnotation {
                sliver_id: Some(format!(
                    "urn:publicid:IDN+views.test.example+sliver+i{index}"
                )),
                component_id: None,
                mac_address: Some(format!("02:00:00:00:00:{index:02x}")),
                ips: vec![IpAddress::ipv4(
                    &format!("10.99.0.{}", index + 1),
                    "255.255.255.0",
                )],
            },
        );
    }
    for (index, &id) in owned.links.iter().enumerate() {
        let client_id = Link::new(request, id).client_id().unwrap().into_owned();
        annotations.links.insert(
            client_id,
            LinkAnnotation {
                sliver_id: Some(format!(
                    "urn:publicid:IDN+views.test.example+sliver+l{index}"
                )),
                vlantag: Some(format!("{}", 100 + index)),
            },
        );
    }
    annotations
}

#[test]
fn requests_bound_to_our_cm_keep_everything_and_carry_the_annotations() {
    let mut nodes_annotated = 0;
    let mut foreign_seen = 0;
    for relative in BOUND_REQUESTS {
        let path = corpus(relative);
        let request = Document::parse(&std::fs::read(&path).unwrap()).unwrap();
        let cm = first_cm(&request);
        let annotations = real_annotations(&request, &cm);
        assert!(!annotations.nodes.is_empty(), "{relative}: no node of {cm}");
        let (manifest, report) = preserve(&path, &cm, |r| real_annotations(r, &cm));
        foreign_seen += report.foreign;
        let rspec = RSpec::new(&manifest).unwrap();
        for (client_id, expected) in &annotations.nodes {
            let node = rspec.node(client_id).unwrap();
            assert_eq!(
                node.sliver_id().as_deref(),
                Some(expected.sliver_id.as_str()),
                "{relative}"
            );
            assert!(
                node.hosts()
                    .any(|h| Some(h.as_ref()) == expected.hostname.as_deref())
            );
            let services = node.services().unwrap();
            assert_eq!(
                services
                    .logins()
                    .filter(|l| l.username().as_deref() == Some("alice"))
                    .count(),
                2
            );
            let users: Vec<_> = services.users().collect();
            assert_eq!(users.len(), 1, "{relative}");
            assert_eq!(users[0].public_keys(), expected.users[0].public_keys);
            assert_eq!(services.proxies().count(), 1);
            assert!(
                node.exclusive().is_some(),
                "{relative}: exclusive set or kept"
            );
            nodes_annotated += 1;
        }
        for node in rspec.nodes() {
            for interface in node.interfaces() {
                let Some(expected) = annotations
                    .interfaces
                    .get(interface.client_id().unwrap().as_ref())
                else {
                    continue;
                };
                assert_eq!(
                    interface.mac_address().as_deref(),
                    expected.mac_address.as_deref()
                );
                let addresses: Vec<String> = interface
                    .ips()
                    .filter_map(|ip| ip.address().map(|a| a.into_owned()))
                    .collect();
                assert_eq!(
                    addresses,
                    [expected.ips[0].address.clone()],
                    "{relative}: only the reported address"
                );
            }
        }
        for (client_id, expected) in &annotations.links {
            let link = rspec.link(client_id).unwrap();
            assert_eq!(
                link.vlantag().as_deref(),
                expected.vlantag.as_deref(),
                "{relative}"
            );
        }
    }
    assert!(nodes_annotated >= BOUND_REQUESTS.len());
    assert!(
        foreign_seen > 0,
        "no request exercised a foreign node or link"
    );
}

#[test]
fn the_checker_catches_losses_and_changes() {
    let cm = "urn:publicid:IDN+emulab.net+authority+cm";
    let bytes = std::fs::read(corpus("rspec/request/emulab__utahcloud-utahms.rspec")).unwrap();
    let request = Document::parse(&bytes).unwrap();
    let annotations = manifest::placeholder_annotations(&request, cm).unwrap();
    let built = manifest::build(&request, cm, &annotations).unwrap();
    let text = String::from_utf8(built.to_bytes()).unwrap();
    let report = checker::check(&bytes, text.as_bytes(), cm).unwrap();
    assert_eq!(report.foreign, 1, "the utahcl node");
    let tampered = [
        (
            "namespace dropped",
            text.replacen(
                " xmlns:planetlab=\"http://www.planet-lab.org/resources/sfa/ext/planetlab/1\"",
                "",
                1,
            ),
        ),
        (
            "foreign attribute changed",
            text.replacen("UBUNTU14-64-STD", "UBUNTU16-64-STD", 1),
        ),
        (
            "element dropped",
            text.replacen(
                "<property capacity=\"10000\" dest_id=\"utahem:if0\" source_id=\"utahcl:if0\"/>",
                "",
                1,
            ),
        ),
        (
            "extension attribute changed",
            text.replacen("20150415:17:41:15", "20150415:17:41:16", 1),
        ),
        (
            "foreign white space changed",
            text.replacen("\"utahcl:if0\">\n\t\t<ip", "\"utahcl:if0\">\n\t\t <ip", 1),
        ),
        (
            "type not manifest",
            text.replacen("type=\"manifest\"", "type=\"request\"", 1),
        ),
    ];
    for (what, changed) in tampered {
        assert_ne!(changed, text, "{what}: the edit applies");
        assert!(
            checker::check(&bytes, changed.as_bytes(), cm).is_err(),
            "{what} not caught"
        );
    }
}
