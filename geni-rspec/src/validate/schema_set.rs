//! The compiled schema set: the project's XSD files from `xsd/`, embedded in
//! the binary, compiled once by libxml2 per RSpec version and kind, and used
//! to validate parsed documents.
//!
//! Schema files are only ever read from memory: an external entity loader
//! maps URLs under [`VIRTUAL_BASE`] onto the embedded files and refuses every
//! other URL, so neither compiling schemas nor validating documents touches
//! the network or the disk. The compiled schemas are immutable and shared;
//! each validation gets its own libxml2 validation context, so concurrent
//! validations from several threads are safe.

use super::{Issue, IssueKind, RspecKind, RspecVersion};
use crate::tree::{Document, NodeId};
use crate::xml2::{self, Xml2Doc};
use libxml::bindings as ffi;
use std::ffi::{CStr, CString};
use std::os::raw::{c_char, c_int, c_void};
use std::sync::{Once, OnceLock};

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

/// One compiled schema; freed on drop.
struct Compiled(ffi::xmlSchemaPtr);

// SAFETY: a compiled xmlSchema is never modified after xmlSchemaParse;
// libxml2 supports validating with one schema from several threads as long
// as each uses its own validation context, which `SchemaSet::validate` does.
unsafe impl Send for Compiled {}
// SAFETY: see above; shared references only ever read the schema.
unsafe impl Sync for Compiled {}

impl Drop for Compiled {
    fn drop(&mut self) {
        // SAFETY: the pointer came from xmlSchemaParse and is freed once.
        unsafe { ffi::xmlSchemaFree(self.0) }
    }
}

/// The compiled schemas for every RSpec version and kind.
pub struct SchemaSet {
    /// Indexed by [`slot`].
    compiled: Vec<Compiled>,
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
        xml2::init();
        install_loader();
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
        doc: &Xml2Doc,
        version: RspecVersion,
        kind: RspecKind,
        tree: Option<&Document>,
    ) -> Vec<Issue> {
        let mut found = self.collect(doc, version, kind);
        if let Some(tree) = tree {
            for (issue, path) in found.issues.iter_mut().zip(&found.paths) {
                if let Some(element) = path.as_deref().and_then(|p| follow(tree, p)) {
                    issue.line = tree.line(element);
                }
            }
        }
        found.issues
    }

    fn collect(&self, doc: &Xml2Doc, version: RspecVersion, kind: RspecKind) -> Collector {
        let schema = &self.compiled[slot(version, kind)];
        let mut found = Collector::default();
        // SAFETY: the validation context is created, used and freed here;
        // the callback's user pointer is `found`, alive for the whole call;
        // the document outlives the call.
        unsafe {
            let ctxt = ffi::xmlSchemaNewValidCtxt(schema.0);
            if ctxt.is_null() {
                found.push(
                    internal_issue("libxml2 could not allocate a validation context"),
                    None,
                );
                return found;
            }
            ffi::xmlSchemaSetValidStructuredErrors(
                ctxt,
                Some(collect_issue),
                (&mut found as *mut Collector).cast(),
            );
            let rc = ffi::xmlSchemaValidateDoc(ctxt, doc.as_ptr());
            ffi::xmlSchemaFreeValidCtxt(ctxt);
            if rc != 0 && found.issues.is_empty() {
                found.push(
                    internal_issue("libxml2 reported an error without details"),
                    None,
                );
            }
        }
        found
    }
}

/// What the error callbacks collect: the issues and, for each, the path of
/// its element (child-element indices from the document element) when
/// libxml2 could not keep the element's line.
#[derive(Default)]
struct Collector {
    issues: Vec<Issue>,
    paths: Vec<Option<Vec<usize>>>,
}

impl Collector {
    fn push(&mut self, issue: Issue, path: Option<Vec<usize>>) {
        self.issues.push(issue);
        self.paths.push(path);
    }
}

/// The element of `tree` at `path` (child-element indices from the root).
fn follow(tree: &Document, path: &[usize]) -> Option<NodeId> {
    path.iter()
        .try_fold(tree.root(), |at, &index| tree.elements(at).nth(index))
}

fn internal_issue(message: &str) -> Issue {
    Issue {
        kind: IssueKind::Schema,
        line: 0,
        element: None,
        message: message.to_owned(),
    }
}

/// Compiles the schema at `file` (relative to `xsd/`).
fn compile_one(file: &str) -> Result<Compiled, SchemaError> {
    let fail = |message: String| SchemaError {
        file: file.to_owned(),
        message,
    };
    let url = CString::new(format!("{VIRTUAL_BASE}{file}")).map_err(|e| fail(e.to_string()))?;
    let mut messages = Collector::default();
    // SAFETY: the parser context is created, used and freed here; the user
    // pointer of the error callback is `messages`, alive for the whole call.
    let schema = unsafe {
        let ctxt = ffi::xmlSchemaNewParserCtxt(url.as_ptr());
        if ctxt.is_null() {
            return Err(fail(
                "libxml2 could not allocate a schema parser".to_owned(),
            ));
        }
        ffi::xmlSchemaSetParserStructuredErrors(
            ctxt,
            Some(collect_compile_message),
            (&mut messages as *mut Collector).cast(),
        );
        let schema = ffi::xmlSchemaParse(ctxt);
        ffi::xmlSchemaFreeParserCtxt(ctxt);
        schema
    };
    if schema.is_null() || !messages.issues.is_empty() {
        if !schema.is_null() {
            // SAFETY: compiled above and not shared yet.
            unsafe { ffi::xmlSchemaFree(schema) };
        }
        let text: Vec<String> = messages.issues.iter().map(ToString::to_string).collect();
        return Err(fail(text.join("\n")));
    }
    Ok(Compiled(schema))
}

/// Installs [`load_embedded`] as libxml2's external entity loader, once.
fn install_loader() {
    static INSTALL: Once = Once::new();
    // SAFETY: setting the process-wide loader is a plain store in libxml2.
    INSTALL.call_once(|| unsafe { ffi::xmlSetExternalEntityLoader(Some(load_embedded)) });
}

/// The embedded file a URL names, if it names one.
fn embedded_file(url: &str) -> Option<&'static str> {
    let path = url.strip_prefix(VIRTUAL_BASE)?;
    FILES
        .iter()
        .find(|(name, _)| *name == path)
        .map(|(_, text)| *text)
}

/// libxml2 external entity loader: serves the embedded schema files and
/// refuses everything else (no network, no disk, no DTDs).
unsafe extern "C" fn load_embedded(
    url: *const c_char,
    _id: *const c_char,
    ctxt: ffi::xmlParserCtxtPtr,
) -> ffi::xmlParserInputPtr {
    if url.is_null() {
        return std::ptr::null_mut();
    }
    // SAFETY: libxml2 passes a NUL-terminated URL.
    let name = unsafe { CStr::from_ptr(url) }.to_string_lossy();
    let Some(text) = embedded_file(&name) else {
        return std::ptr::null_mut();
    };
    let Ok(len) = c_int::try_from(text.len()) else {
        return std::ptr::null_mut();
    };
    // SAFETY: the buffer copies the static text; the new input takes
    // ownership of the buffer and of the duplicated file name, both released
    // by libxml2 with the input.
    unsafe {
        let buffer = ffi::xmlParserInputBufferCreateMem(
            text.as_ptr().cast(),
            len,
            ffi::xmlCharEncoding_XML_CHAR_ENCODING_NONE,
        );
        if buffer.is_null() {
            return std::ptr::null_mut();
        }
        let input =
            ffi::xmlNewIOInputStream(ctxt, buffer, ffi::xmlCharEncoding_XML_CHAR_ENCODING_NONE);
        if input.is_null() {
            ffi::xmlFreeParserInputBuffer(buffer);
            return std::ptr::null_mut();
        }
        (*input).filename = ffi::xmlStrdup(url.cast()).cast();
        input
    }
}

/// libxml2 structured error callback while validating: collects errors
/// (not warnings) into the [`Collector`] behind `user`.
unsafe extern "C" fn collect_issue(user: *mut c_void, error: ffi::xmlErrorPtr) {
    // SAFETY: libxml2 passes a valid error (or null) for the callback's
    // duration; `user` is the `Collector` registered with the context.
    unsafe {
        if !error.is_null() && (*error).level >= ffi::xmlErrorLevel_XML_ERR_ERROR {
            push_issue(user, error);
        }
    }
}

/// libxml2 structured error callback while compiling: warnings count too
/// (an import that cannot be resolved is only a warning to libxml2, but it
/// would silently leave an extension unchecked).
unsafe extern "C" fn collect_compile_message(user: *mut c_void, error: ffi::xmlErrorPtr) {
    // SAFETY: as for `collect_issue`.
    unsafe { push_issue(user, error) }
}

/// Adds `error` to the [`Collector`] behind `user`.
///
/// # Safety
/// `user` must be null or point to a live `Collector`; `error` must be
/// null or valid, and its node (if any) live.
unsafe fn push_issue(user: *mut c_void, error: ffi::xmlErrorPtr) {
    if user.is_null() || error.is_null() {
        return;
    }
    // SAFETY: guaranteed by the caller; parents of live nodes are live.
    unsafe {
        let found = &mut *(user as *mut Collector);
        let element = owner_element((*error).node.cast());
        let line = if element.is_null() {
            u32::try_from((*error).line).unwrap_or(0)
        } else {
            u32::try_from(ffi::xmlGetLineNo(element)).unwrap_or(0)
        };
        // libxml2 stores element lines in 16 bits; beyond, remember where
        // the element is so the tree can give its exact line.
        let path =
            (!element.is_null() && (*element).line == u16::MAX).then(|| element_path(element));
        let name = (!element.is_null()).then(|| {
            CStr::from_ptr((*element).name.cast())
                .to_string_lossy()
                .into_owned()
        });
        let message = xml2::c_message((*error).message);
        let issue = Issue {
            kind: IssueKind::Schema,
            line,
            element: name,
            message: tidy_message(&message),
        };
        found.push(issue, path);
    }
}

/// The element an error is about: the node itself, or the owner of an
/// attribute; null when there is none.
///
/// # Safety
/// `node` must be null or point to a live libxml2 node.
unsafe fn owner_element(node: ffi::xmlNodePtr) -> ffi::xmlNodePtr {
    // SAFETY: guaranteed by the caller; parents of live nodes are live.
    unsafe {
        let mut node = node;
        if !node.is_null() && (*node).type_ == ffi::xmlElementType_XML_ATTRIBUTE_NODE {
            node = (*node).parent;
        }
        if is_element(node) {
            node
        } else {
            std::ptr::null_mut()
        }
    }
}

/// Child-element indices leading from the document element to `element`.
///
/// # Safety
/// `element` must point to a live element node of a document.
unsafe fn element_path(element: ffi::xmlNodePtr) -> Vec<usize> {
    let mut path = Vec::new();
    let mut at = element;
    // SAFETY: guaranteed by the caller; siblings and parents of live nodes
    // are live.
    unsafe {
        while is_element((*at).parent) {
            let mut index = 0;
            let mut sibling = (*at).prev;
            while !sibling.is_null() {
                index += usize::from(is_element(sibling));
                sibling = (*sibling).prev;
            }
            path.push(index);
            at = (*at).parent;
        }
    }
    path.reverse();
    path
}

/// Whether `node` is a (non-null) element.
///
/// # Safety
/// `node` must be null or point to a live libxml2 node.
unsafe fn is_element(node: ffi::xmlNodePtr) -> bool {
    // SAFETY: guaranteed by the caller.
    !node.is_null() && unsafe { (*node).type_ } == ffi::xmlElementType_XML_ELEMENT_NODE
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
        assert!(embedded_file("geni-am-xsd:/3/request.xsd").is_some());
        assert!(embedded_file("http://www.geni.net/resources/rspec/3/request.xsd").is_none());
        assert!(embedded_file("geni-am-xsd:/../etc/passwd").is_none());
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
