//! Every recorded document of every folder and version is dispatched by its
//! root element to its parser and parses; files that are not such a
//! document are listed here with the reason, so a new file cannot be
//! skipped silently.

use super::super::*;
use super::{recorded, recorded_dir, response_string};
use geni_rspec::Document;
use std::collections::BTreeMap;
use std::path::Path;

/// Files that hold no `oned` object document, with the reason.
const NOT_DOCUMENTS: &[(&str, &str)] = &[
    ("MANIFEST.tsv", "provenance table"),
    ("oned-7.4.0/INDEX.md", "description of the recording"),
    (
        "oned-7.4.0/states.txt",
        "transition log, checked by the phase tests",
    ),
    (
        "oned-7.4.0/summary.json",
        "call summary with parsed results",
    ),
    (
        "pyone-5.4/session-integration.json",
        "pyone replay session; its XML is in rpc/",
    ),
    (
        "pyone-5.4/session-auth-error.json",
        "recorded failure array, no document",
    ),
    ("issues/auth-error-strings.txt", "error texts, no document"),
    (
        "issues/faults-type-mismatch.txt",
        "fault texts, no document",
    ),
    (
        "issues/one-3647-wire-one.image.lock.txt",
        "tcpdump of a lock call, no document",
    ),
    ("issues/quota-error-strings.txt", "error texts, no document"),
    (
        "docs/scheduler-driver-action-7.0.xml.txt",
        "scheduler driver input with `...` elisions: not well-formed XML",
    ),
];

/// Root elements of documents the driver never reads, with the reason.
const OTHER_KINDS: &[(&str, &str)] = &[
    (
        "CLUSTER_POOL",
        "clusters: the driver reads CLUSTER_ID from hosts",
    ),
    ("DATASTORE_POOL", "datastores: not read by the driver"),
    ("MARKETPLACE_POOL", "marketplaces: not used"),
    ("MARKETPLACEAPP", "marketplace apps: not used"),
    ("MARKETPLACEAPP_POOL", "marketplace apps: not used"),
    (
        "OPENNEBULA_CONFIGURATION",
        "oned.conf dump (system.config): not an object",
    ),
];

/// What a parser read: the number of objects and their debug rendering.
struct Read {
    objects: usize,
    rendered: String,
}

fn read_one<T: std::fmt::Debug>(parsed: Result<T, DocError>) -> Result<Read, DocError> {
    parsed.map(|doc| Read {
        objects: 1,
        rendered: format!("{doc:?}"),
    })
}

fn read_pool<T: std::fmt::Debug>(parsed: Result<Vec<T>, DocError>) -> Result<Read, DocError> {
    parsed.map(|pool| Read {
        objects: pool.len(),
        rendered: format!("{pool:?}"),
    })
}

/// Parses `xml` with the parser for its root element; `None` for a root
/// of [`OTHER_KINDS`].
fn dispatch(xml: &str) -> Option<Result<Read, DocError>> {
    let doc = Document::parse(xml.as_bytes()).expect("recorded documents are well-formed");
    let root = doc.local_name(doc.root()).to_string();
    Some(match root.as_str() {
        "VM" => read_one(parse_vm(xml)),
        "VM_POOL" => read_pool(parse_vm_pool(xml)),
        "HOST" => read_one(parse_host(xml)),
        "HOST_POOL" => read_pool(parse_host_pool(xml)),
        "VMTEMPLATE" => read_one(parse_template(xml)),
        "VMTEMPLATE_POOL" => read_pool(parse_template_pool(xml)),
        "IMAGE" => read_one(parse_image(xml)),
        "IMAGE_POOL" => read_pool(parse_image_pool(xml)),
        "VNET" => read_one(parse_vnet(xml)),
        "VNET_POOL" => read_pool(parse_vnet_pool(xml)),
        "USER" => read_one(parse_user(xml)),
        "USER_POOL" => read_pool(parse_user_pool(xml)),
        other => {
            assert!(
                OTHER_KINDS.iter().any(|(kind, _)| *kind == other),
                "root <{other}> has no parser and is not listed in OTHER_KINDS"
            );
            return None;
        }
    })
}

fn files_below(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("recorded folder is readable") {
        let path = entry.expect("directory entry").path();
        if path.is_dir() {
            files_below(&path, out);
        } else {
            out.push(path);
        }
    }
}

#[test]
fn every_recorded_document_parses_with_the_parser_of_its_root() {
    let root = recorded_dir();
    let mut files = Vec::new();
    files_below(&root, &mut files);
    files.sort();
    let mut parsed_per_folder: BTreeMap<String, usize> = BTreeMap::new();
    let mut objects = 0;
    let mut failures = Vec::new();
    for path in &files {
        let relative = path
            .strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let folder = relative.split('/').next().unwrap().to_string();
        if folder == "xsd" || NOT_DOCUMENTS.iter().any(|(p, _)| *p == relative) {
            continue;
        }
        let text = recorded(&relative);
        let document = if relative.ends_with(".request.xml") {
            // A <methodCall>: what the client sent, not a document.
            continue;
        } else if relative.ends_with(".response.xml") {
            let twin = relative.replace(".response.xml", ".payload.xml");
            match response_string(&text).filter(|s| s.starts_with('<')) {
                Some(exact) => exact,
                None => {
                    assert!(
                        !root.join(&twin).exists(),
                        "{relative}: no document in the reply, but {twin} exists"
                    );
                    continue;
                }
            }
        } else {
            text
        };
        match dispatch(&document) {
            Some(Ok(read)) => {
                objects += read.objects;
                *parsed_per_folder.entry(folder).or_default() += 1;
            }
            Some(Err(e)) => failures.push(format!("{relative}: {e}")),
            None => {}
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    for folder in [
        "docs",
        "oca-ruby-legacy",
        "oned-7.4.0",
        "pyone-5.4",
        "python-oca-4.x",
        "quattor-4.x",
    ] {
        assert!(
            parsed_per_folder.get(folder).copied().unwrap_or(0) > 0,
            "no document of {folder} was parsed: {parsed_per_folder:?}"
        );
    }
    assert!(objects > 100, "only {objects} objects read");
    for (listed, _) in NOT_DOCUMENTS {
        assert!(root.join(listed).exists(), "{listed} is listed but gone");
    }
}

#[test]
fn pretty_printed_payloads_read_like_the_exact_strings_oned_sent() {
    let root = recorded_dir().join("oned-7.4.0");
    let mut compared = 0;
    for entry in std::fs::read_dir(&root).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        let Some(call) = name.strip_suffix(".payload.xml") else {
            continue;
        };
        let (payload, exact) = super::recorded_call(call);
        let (Some(pretty), Some(sent)) = (dispatch(&payload), dispatch(&exact)) else {
            continue;
        };
        let (pretty, sent) = (pretty.expect(call), sent.expect(call));
        assert_eq!(pretty.rendered, sent.rendered, "{call}");
        compared += 1;
    }
    assert!(compared >= 35, "only {compared} payloads compared");
}
