//! The compiled schema set: the project's XSD files from `xsd/`, embedded in
//! the binary, compiled once by libxml2 per RSpec version and kind, and used
//! to validate parsed documents.
//!
//! Schema files are only ever read from memory: geni-xml's entity loader
//! serves the embedded files under [`VIRTUAL_BASE`] while the set compiles
//! and refuses every other URL, so neither compiling schemas nor validating
//! documents touches the network or the disk. The compiled schemas are
//! immutable and shared; concurrent validations from several threads are
//! safe.

use super::{Issue, IssueKind, RspecKind, RspecVersion};
use crate::tree::{Document, NodeId};
use geni_xml::{InMemoryFiles, Schema, SchemaMessage};
use std::sync::OnceLock;

/// The embedded schema files, by path relative to `xsd/`.
macro_rules! embedded {
    ($($path:literal),* $(,)?) => {
        &[$(($path, include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../xsd/", $path)))),*]
    };
}

static FILES: &[(&str, &str)] = embedded!(
    "core/any-extension.xsd",
    "core/common.xsd",
    "core/ad.xsd",
    "core/request-manifest.xsd",
    "core/request.xsd",
    "core/manifest.xsd",
    "3/ad.xsd",
    "3/request.xsd",
    "3/manifest.xsd",
    "2/ad.xsd",
    "2/request.xsd",
    "2/manifest.xsd",
    "ext/stitch/0.1/stitch-schema.xsd",
    "ext/user/1/manifest.xsd",
    "ext/opstate/1/ad.xsd",
    "ext/proxy/1.0/proxy.xsd",
);

/// The URL prefix under which the embedded files are served to libxml2;
/// relative `schemaLocation`s resolve against it.
const VIRTUAL_BASE: &str = "geni-am-xsd:/";

/// A schema file of the set failed to compile (a defect of the build, not
/// of any input document).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("schema {file} does not compile: {message}")]
pub struct SchemaError {
    /// The schema's path relative to `xsd/`.
    pub file: String,
    /// libxml2's messages, one per line.
    pub message: String,
}

/// The compiled schemas for every RSpec version and kind.
pub struct SchemaSet {
    /// Indexed by [`slot`].
    compiled: Vec<Schema>,
}

impl std::fmt::Debug for SchemaSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SchemaSet")
            .field("schemas", &self.compiled.len())
            .finish()
    }
}

/// Every (version, kind) pair, in slot order.
const ALL: [(RspecVersion, RspecKind); 6] = [
    (RspecVersion::GeniV3, RspecKind::Advertisement),
    (RspecVersion::GeniV3, RspecKind::Request),
    (RspecVersion::GeniV3, RspecKind::Manifest),
    (RspecVersion::ProtoGeniV2, RspecKind::Advertisement),
    (RspecVersion::ProtoGeniV2, RspecKind::Request),
    (RspecVersion::ProtoGeniV2, RspecKind::Manifest),
];

fn slot(version: RspecVersion, kind: RspecKind) -> usize {
    ALL.iter()
        .position(|&pair| pair == (version, kind))
        .unwrap_or_default()
}

/// The schema file for a version and kind, relative to `xsd/`.
fn schema_file(version: RspecVersion, kind: RspecKind) -> String {
    let dir = match version {
        RspecVersion::GeniV3 => "3",
        RspecVersion::ProtoGeniV2 => "2",
    };
    let stem = match kind {
        RspecKind::Advertisement => "ad",
        RspecKind::Request => "request",
        RspecKind::Manifest => "manifest",
    };
    format!("{dir}/{stem}.xsd")
}

impl SchemaSet {
    /// Compiles every schema of the set from the embedded files.
    pub fn compile() -> Result<Self, SchemaError> {
        let compiled = ALL
            .iter()
            .map(|&(version, kind)| compile_one(&schema_file(version, kind)))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self { compiled })
    }

    /// The process-wide schema set, compiled on first use.
    pub fn shared() -> Result<&'static SchemaSet, SchemaError> {
        static SHARED: OnceLock<Result<SchemaSet, SchemaError>> = OnceLock::new();
        SHARED
            .get_or_init(SchemaSet::compile)
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Validates `doc` against the schema of `version` and `kind`; returns
    /// every error libxml2 reports, in document order (empty when valid).
    ///
    /// libxml2 keeps element lines only up to 65535; given the same
    /// document as a `tree`, errors on elements further down get their
    /// exact line from it.
    pub fn validate(
        &self,
        doc: &mut geni_xml::Document,
        version: RspecVersion,
        kind: RspecKind,
        tree: Option<&Document>,
    ) -> Vec<Issue> {
        let schema = &self.compiled[slot(version, kind)];
        schema
            .validate(doc)
            .into_iter()
            .map(|found| {
                let mut issue = schema_issue(&found);
                if let Some((tree, path)) = tree.zip(found.path.as_deref())
                    && let Some(element) = follow(tree, path)
                {
                    issue.line = tree.line(element);
                }
                issue
            })
            .collect()
    }
}

/// The issue a libxml2 schema message reports.
fn schema_issue(found: &SchemaMessage) -> Issue {
    Issue {
        kind: IssueKind::Schema,
        line: found.line,
        element: found.element.clone(),
        message: tidy_message(&found.message),
    }
}

/// The element of `tree` at `path` (child-element indices from the root).
fn follow(tree: &Document, path: &[usize]) -> Option<NodeId> {
    path.iter()
        .try_fold(tree.root(), |at, &index| tree.elements(at).nth(index))
}

/// Compiles the schema at `file` (relative to `xsd/`).
fn compile_one(file: &str) -> Result<Schema, SchemaError> {
    let files = InMemoryFiles {
        base: VIRTUAL_BASE,
        files: FILES,
    };
    Schema::compile(files, file).map_err(|messages| {
        let text: Vec<String> = messages
            .iter()
            .map(|m| schema_issue(m).to_string())
            .collect();
        SchemaError {
            file: file.to_owned(),
            message: text.join("\n"),
        }
    })
}

/// Drops libxml2's "Element '{ns}name': " prefix (the element is reported
/// separately) and trailing whitespace.
fn tidy_message(message: &str) -> String {
    let message = message.trim();
    let Some(rest) = message.strip_prefix("Element '") else {
        return message.to_owned();
    };
    let Some(end) = rest.find('\'') else {
        return message.to_owned();
    };
    let after = &rest[end + 1..];
    after
        .strip_prefix(": ")
        .or_else(|| after.strip_prefix(", "))
        .unwrap_or(message)
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_schema_compiles() {
        let set = SchemaSet::compile().unwrap();
        assert_eq!(set.compiled.len(), ALL.len());
    }

    /// Every `.xsd` under `dir`, relative to `base`.
    fn xsd_files(base: &std::path::Path, dir: &std::path::Path, found: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                xsd_files(base, &path, found);
            } else if path.extension().is_some_and(|e| e == "xsd") {
                let relative = path.strip_prefix(base).unwrap();
                found.push(relative.to_string_lossy().replace('\\', "/"));
            }
        }
    }

    #[test]
    fn every_schema_file_in_xsd_is_embedded() {
        let base = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../xsd");
        let mut on_disk = Vec::new();
        xsd_files(&base, &base, &mut on_disk);
        on_disk.sort();
        let mut embedded: Vec<String> = FILES.iter().map(|(name, _)| name.to_string()).collect();
        embedded.sort();
        assert_eq!(on_disk, embedded);
    }

    #[test]
    fn the_catalog_points_at_existing_folders() {
        let base = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../xsd");
        let catalog = std::fs::read_to_string(base.join("catalog.xml")).unwrap();
        let prefixes: Vec<&str> = catalog
            .split("rewritePrefix=\"")
            .skip(1)
            .filter_map(|rest| rest.split('"').next())
            .collect();
        assert_eq!(prefixes.len(), 12);
        for prefix in prefixes {
            assert!(base.join(prefix).is_dir(), "{prefix}");
        }
    }

    #[test]
    fn the_loader_serves_only_embedded_files() {
        let files = InMemoryFiles {
            base: VIRTUAL_BASE,
            files: FILES,
        };
        assert!(files.lookup("geni-am-xsd:/3/request.xsd").is_some());
        assert!(
            files
                .lookup("http://www.geni.net/resources/rspec/3/request.xsd")
                .is_none()
        );
        assert!(files.lookup("geni-am-xsd:/../etc/passwd").is_none());
    }

    #[test]
    fn messages_lose_the_element_prefix() {
        assert_eq!(
            tidy_message("Element '{urn:x}a', attribute 'b': The attribute 'b' is not allowed.\n"),
            "attribute 'b': The attribute 'b' is not allowed."
        );
        assert_eq!(
            tidy_message("Element '{urn:x}a': This element is not expected."),
            "This element is not expected."
        );
        assert_eq!(tidy_message("Other text"), "Other text");
    }
}
