//! Fuzz target: parsing arbitrary bytes never panics, and whatever parses
//! serializes back to exactly the input, re-parses, and can be navigated.

#![no_main]

use libfuzzer_sys::fuzz_target;
use rspec::tree::Document;

fuzz_target!(|data: &[u8]| {
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
});
