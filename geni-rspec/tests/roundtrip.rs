//! Round trip of every RSpec in the shared corpus: well-formed files parse and
//! serialize to exactly their input bytes (and so to the same libxml2 C14N);
//! the not-well-formed ones in `bad/` fail with an error naming the right line.

use geni_rspec::{Document, ParseError};
use geni_xml::{C14nMode, Document as Xml2Doc, XmlError};
use std::path::{Path, PathBuf};

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus/rspec")
}

/// Every file below `dir`, sorted.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                todo.push(path);
            } else {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// The corpus files that are not well-formed XML (see the corpus MANIFEST),
/// with the line each error must name.
const NOT_WELL_FORMED: &[(&str, u32, &str)] = &[
    (
        "bad/emulab__example-request-rspec.xml",
        5,
        "empty local part",
    ),
    ("bad/emulab__request.xml", 24, "must be in quotes"),
    ("bad/fiteagle-sfa__pnode.rspec", 7, "appears twice"),
    ("bad/geni-tools__gib-advert.rspec", 17, "prefix `emulab`"),
    (
        "bad/iof-tools__twist_all.rspec",
        2,
        "<rspec> opened on line 1",
    ),
    (
        "bad/omf_sfa__rspec-test.xml",
        1812,
        "</link> does not match",
    ),
];

#[test]
fn every_well_formed_corpus_rspec_round_trips_byte_for_byte() {
    let root = corpus();
    let all = files(&root);
    assert!(all.len() >= 230, "only {} corpus files found", all.len());
    let mut round_tripped = 0;
    for path in &all {
        let rel = path
            .strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        if NOT_WELL_FORMED.iter().any(|(f, _, _)| *f == rel) {
            continue;
        }
        let input = std::fs::read(path).unwrap();
        let doc = Document::parse(&input).unwrap_or_else(|e| panic!("{rel}: {e}"));
        let output = doc.to_bytes();
        assert!(output == input, "{rel}: output differs from input");
        let ours = Xml2Doc::parse(&output)
            .unwrap()
            .c14n(C14nMode::Inclusive)
            .unwrap();
        let theirs = Xml2Doc::parse(&input)
            .unwrap()
            .c14n(C14nMode::Inclusive)
            .unwrap();
        assert_eq!(ours, theirs, "{rel}: C14N differs");
        let root = doc.node_to_bytes(doc.root());
        assert!(
            memchr::memmem::find(&input, &root).is_some(),
            "{rel}: the root element is not written as in the input"
        );
        round_tripped += 1;
    }
    assert_eq!(round_tripped, all.len() - NOT_WELL_FORMED.len());
}

#[test]
fn not_well_formed_corpus_rspecs_fail_on_the_right_line() {
    let root = corpus();
    for (file, line, words) in NOT_WELL_FORMED {
        let input = std::fs::read(root.join(file)).unwrap();
        let err: ParseError = Document::parse(&input).expect_err(file);
        assert_eq!(err.line(), *line, "{file}: {err}");
        let message = err.to_string();
        assert!(message.contains(words), "{file}: {message}");
        assert!(
            message.starts_with(&format!("line {line}")),
            "{file}: {message}"
        );
        if let Err(xml2) = Xml2Doc::parse(&input) {
            assert!(
                matches!(xml2, XmlError::NotWellFormed { line: at, .. } if at == *line),
                "{file}: libxml2 says {xml2}"
            );
        }
    }
}

const GENI: &str = "http://www.geni.net/resources/rspec/3";
const EMULAB: &str = "http://www.protogeni.net/resources/rspec/ext/emulab/1";
const JFED: &str = "http://jfed.iminds.be/rspec/ext/jfed/1";

/// Replaces the one occurrence of `from` in `text`.
fn replace_once(text: &str, from: &str, to: &str) -> String {
    assert_eq!(text.matches(from).count(), 1, "{from:?} must occur once");
    text.replacen(from, to, 1)
}

fn c14n(bytes: &[u8]) -> Vec<u8> {
    Xml2Doc::parse(bytes)
        .unwrap()
        .c14n(C14nMode::Inclusive)
        .unwrap()
}

#[test]
fn edits_of_a_corpus_request_give_the_expected_document() {
    let path = corpus().join("request/geni-tutorials__ig-clemson.rspec");
    let input = std::fs::read_to_string(path).unwrap();
    let mut doc = Document::parse(input.as_bytes()).unwrap();
    let root = doc.root();
    let nodes: Vec<_> = doc.elements_named(root, GENI, "node").collect();
    let link = doc.elements_named(root, GENI, "link").next().unwrap();

    doc.set_attribute(nodes[0], "exclusive", "true");
    doc.set_attribute(nodes[0], "sliver_id", "urn:publicid:IDN+am+sliver+1&2");
    assert!(doc.remove_attribute(nodes[1], "component_id"));
    let location = doc.append_element(nodes[2], JFED, "jfed", "location");
    doc.set_attribute(location, "x", "1.5");
    doc.set_attribute(location, "y", "2");
    doc.set_attribute_ns(link, EMULAB, "emulab", "vlantag", "100");
    let link_type = doc.elements_named(link, GENI, "link_type").next().unwrap();
    doc.remove(link_type);
    let extra = doc.append_element(link, EMULAB, "emulab", "trivial_ok");
    doc.append_text(extra, "yes");

    let mut expected = replace_once(
        &input,
        "<node client_id=\"host1\" exclusive=\"false\" component_id=\"urn:publicid:IDN+instageni.clemson.edu+node+pc3\" component_manager_id=\"urn:publicid:IDN+instageni.clemson.edu+authority+cm\">",
        "<node client_id=\"host1\" exclusive=\"true\" component_id=\"urn:publicid:IDN+instageni.clemson.edu+node+pc3\" component_manager_id=\"urn:publicid:IDN+instageni.clemson.edu+authority+cm\" sliver_id=\"urn:publicid:IDN+am+sliver+1&amp;2\">",
    );
    expected = replace_once(
        &expected,
        " component_id=\"urn:publicid:IDN+instageni.clemson.edu+node+pc1\"",
        "",
    );
    expected = replace_once(
        &expected,
        "<ip address=\"10.10.1.3\" netmask=\"255.255.255.0\" type=\"ipv4\"/>\n    </interface>\n",
        &format!(
            "<ip address=\"10.10.1.3\" netmask=\"255.255.255.0\" type=\"ipv4\"/>\n    </interface>\n    <jfed:location xmlns:jfed=\"{JFED}\" x=\"1.5\" y=\"2\"/>\n"
        ),
    );
    expected = replace_once(
        &expected,
        "<link client_id=\"link-2\">",
        "<link client_id=\"link-2\" emulab:vlantag=\"100\">",
    );
    expected = replace_once(&expected, "\n    <link_type name=\"lan\"/>", "");
    expected = replace_once(
        &expected,
        "<emulab:openflow_controller url=\"tcp:CONTROLLER_IP:6653\"/>\n",
        "<emulab:openflow_controller url=\"tcp:CONTROLLER_IP:6653\"/>\n    <emulab:trivial_ok>yes</emulab:trivial_ok>\n",
    );

    let output = doc.to_bytes();
    assert_eq!(c14n(&output), c14n(expected.as_bytes()));
    assert_eq!(String::from_utf8(output.clone()).unwrap(), expected);

    let again = Document::parse(&output).unwrap();
    let location = again
        .descendants(again.root())
        .find(|&e| again.local_name(e) == "location")
        .unwrap();
    assert!(again.is_element(location, JFED, "location"));
    assert_eq!(again.attribute(location, "x").as_deref(), Some("1.5"));
    let link = again
        .elements_named(again.root(), GENI, "link")
        .next()
        .unwrap();
    assert_eq!(
        again.attribute_ns(link, EMULAB, "vlantag").as_deref(),
        Some("100")
    );
    let node = again
        .elements_named(again.root(), GENI, "node")
        .next()
        .unwrap();
    assert_eq!(
        again.attribute(node, "sliver_id").as_deref(),
        Some("urn:publicid:IDN+am+sliver+1&2")
    );
}

#[test]
fn removing_every_attribute_and_child_keeps_namespaces_correct() {
    let path = corpus().join(
        "manifest/geni-tools__ahtest-manifest-rspec-instageni-gpolab-bbn-com-protogeniv2.xml",
    );
    let input = std::fs::read(path).unwrap();
    let mut doc = Document::parse(&input).unwrap();
    let root = doc.root();
    let children: Vec<_> = doc.elements(root).collect();
    for child in children {
        let names: Vec<String> = doc
            .attributes(child)
            .filter(|a| a.prefix.is_none())
            .map(|a| a.local.to_owned())
            .collect();
        for name in names {
            assert!(doc.remove_attribute(child, &name));
        }
        let foreign = doc.append_element(child, "urn:test:ext", "t", "mark");
        doc.set_attribute_ns(foreign, "urn:test:other", "o", "a", "<1>");
    }
    let output = doc.to_bytes();
    let again = Document::parse(&output).unwrap();
    assert_eq!(again.to_bytes(), output);
    for child in again.elements(again.root()) {
        assert!(again.attributes(child).all(|a| a.prefix.is_some()));
        let mark = again
            .elements_named(child, "urn:test:ext", "mark")
            .next()
            .unwrap();
        assert_eq!(
            again.attribute_ns(mark, "urn:test:other", "a").as_deref(),
            Some("<1>")
        );
    }
    // libxml2 reads the same document (C14N of our output is stable through it).
    let canonical = c14n(&output);
    assert_eq!(c14n(&canonical), canonical);
}
