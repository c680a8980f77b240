//! The bodies of the rspec fuzz targets, one function per target. The
//! fuzz targets call them with libFuzzer's inputs; `geni-am/tests/fuzz_replay.rs`
//! includes this file and calls them with every committed seed and crash
//! input, so a regression fails `cargo test`.

use geni_rspec::Document;
use geni_rspec::manifest::{Ownership, build, check_request, placeholder_annotations};
use geni_rspec::{Node, RSpec};
use geni_rspec::{RspecKind, Validator};
use std::sync::OnceLock;

/// The component manager the request path builds manifests for.
const CM: &str = "urn:publicid:IDN+fuzz.example.org+authority+cm";

/// `parse`: parsing `data` never panics, and whatever parses serializes
/// back to exactly the input, re-parses, and can be navigated.
pub fn parse(data: &[u8]) {
    let Ok(doc) = Document::parse(data) else {
        return;
    };
    let out = doc.to_bytes();
    assert_eq!(out, data, "round trip changed the bytes");
    let again = Document::parse(&out).expect("serialized output must re-parse");
    assert_eq!(again.to_bytes(), out);
    for n in std::iter::once(doc.root()).chain(doc.descendants(doc.root())) {
        let _ = doc.text(n);
        let _ = doc.attributes(n).count();
        let _ = doc.namespace_declarations(n).count();
        let _ = (doc.namespace(n), doc.prefix(n), doc.line(n));
        assert!(!doc.node_to_bytes(n).is_empty());
    }
}

/// `request`: `data` goes the way an Allocate request does — schema and
/// request-rule validation, the document tree, the nodes of this
/// aggregate read as Allocate reads them, and the manifest built from the
/// request — without panicking; a request that validates parses, and a
/// manifest that is built parses again.
pub fn request(data: &[u8]) {
    let valid = validator().validate_as(data, RspecKind::Request).is_ok();
    let doc = match Document::parse(data) {
        Ok(doc) => doc,
        Err(e) => {
            assert!(!valid, "a request that validates must parse: {e}");
            return;
        }
    };
    let Ok(root) = RSpec::new(&doc) else {
        return;
    };
    for &id in &Ownership::of(&root, CM).nodes {
        let node = Node::new(&doc, id);
        let _ = (
            node.line(),
            node.client_id(),
            node.component_id(),
            node.exclusive(),
        );
        if let Some(sliver_type) = node.sliver_type() {
            let _ = sliver_type.name();
            for image in sliver_type.disk_images() {
                let _ = image.name();
            }
        }
        for interface in node.interfaces() {
            let _ = interface.client_id();
        }
    }
    if check_request(&doc).is_err() {
        return;
    }
    let Ok(annotations) = placeholder_annotations(&doc, CM) else {
        return;
    };
    if let Ok(manifest) = build(&doc, CM, &annotations) {
        let bytes = manifest.to_bytes();
        if let Err(e) = Document::parse(&bytes) {
            panic!("a built manifest must parse: {e}");
        }
    }
}

/// The validator Allocate uses (schemas compiled once per process).
fn validator() -> &'static Validator {
    static VALIDATOR: OnceLock<Validator> = OnceLock::new();
    VALIDATOR.get_or_init(|| Validator::new().expect("the embedded RSpec schemas compile"))
}
