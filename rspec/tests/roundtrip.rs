//! Round trip of every RSpec in the shared corpus: well-formed files parse and
//! serialize to exactly their input bytes (and so to the same libxml2 C14N);
//! the not-well-formed ones in `bad/` fail with an error naming the right line.

use rspec::tree::{Document, ParseError};
use rspec::xml2::{C14nMode, Xml2Doc};
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
                xml2.to_string().starts_with(&format!("line {line}:")),
                "{file}: libxml2 says {xml2}"
            );
        }
    }
}
