//! Safe access to libxml2 for what the RSpec engine needs from it: a secure
//! parse into libxml2's own DOM (no network, no entity substitution, no DTD
//! loading, no DOCTYPE at all) and XML canonicalization (C14N).
//!
//! Schema validation builds on [`Xml2Doc`]; tests use [`Xml2Doc::c14n`] as the
//! independent oracle for the lossless tree's round trip.

use libxml::bindings as ffi;
use std::ffi::CStr;
use std::os::raw::c_int;
use std::sync::Once;

/// Why libxml2 refused a document.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Xml2Error {
    /// The bytes are not a well-formed XML document.
    #[error("line {line}: {message}")]
    NotWellFormed {
        /// 1-based line of the first error (0 when libxml2 gave none).
        line: u32,
        /// libxml2's message, trimmed.
        message: String,
    },
    /// The document declares a DOCTYPE; RSpecs and credentials never need one
    /// and it is the door to entity expansion attacks.
    #[error("DOCTYPE declarations are not allowed")]
    Doctype,
    /// The document is larger than libxml2 can take in one call.
    #[error("document of {0} bytes is too large")]
    TooLarge(usize),
    /// libxml2 failed to canonicalize the document.
    #[error("canonicalization failed")]
    C14n,
}

/// The document element as libxml2 read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RootElement {
    /// Resolved namespace URI, if the element is in one.
    pub namespace: Option<String>,
    /// Name without prefix.
    pub local_name: String,
    /// 1-based line of the start tag.
    pub line: u32,
    /// Attributes without a namespace, as (name, value), in document order.
    pub attributes: Vec<(String, String)>,
}

impl RootElement {
    /// The value of the un-prefixed attribute `name`.
    pub fn attribute(&self, name: &str) -> Option<&str> {
        self.attributes
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// The canonicalization algorithms of the W3C recommendations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum C14nMode {
    /// Canonical XML 1.0 (inclusive).
    Inclusive,
    /// Exclusive XML Canonicalization 1.0.
    Exclusive,
}

/// A document parsed by libxml2; freed on drop.
#[derive(Debug)]
pub struct Xml2Doc {
    ptr: ffi::xmlDocPtr,
}

// SAFETY: the document is owned exclusively by this value and libxml2's tree
// functions used here touch no thread-local state beyond the error slot.
unsafe impl Send for Xml2Doc {}

/// Options that make libxml2 safe for hostile input: no network access, no
/// entity substitution (XML_PARSE_NOENT is never set), no DTD loading. Line
/// numbers above 65535 are kept so errors in large documents point right.
const SECURE_OPTIONS: c_int =
    (ffi::xmlParserOption_XML_PARSE_NONET | ffi::xmlParserOption_XML_PARSE_BIG_LINES) as c_int;

/// Initialises libxml2's global state once per process.
pub(crate) fn init() {
    static INIT: Once = Once::new();
    // SAFETY: xmlInitParser is idempotent and meant to be called once up front.
    INIT.call_once(|| unsafe { ffi::xmlInitParser() });
}

impl Xml2Doc {
    /// Parses `bytes` with libxml2, refusing DOCTYPEs and network access.
    pub fn parse(bytes: &[u8]) -> Result<Self, Xml2Error> {
        init();
        let len = c_int::try_from(bytes.len()).map_err(|_| Xml2Error::TooLarge(bytes.len()))?;
        // SAFETY: the context is created, used and freed here; the buffer
        // outlives the call; a null document means failure and is not freed.
        unsafe {
            let ctxt = ffi::xmlNewParserCtxt();
            if ctxt.is_null() {
                return Err(not_well_formed(0, "libxml2 could not allocate a parser"));
            }
            let mut first: Option<Xml2Error> = None;
            (*ctxt)._private = (&mut first as *mut Option<Xml2Error>).cast();
            if !(*ctxt).sax.is_null() {
                (*(*ctxt).sax).serror = Some(keep_first_error);
            }
            let ptr = ffi::xmlCtxtReadMemory(
                ctxt,
                bytes.as_ptr().cast(),
                len,
                c"rspec.xml".as_ptr(),
                std::ptr::null(),
                SECURE_OPTIONS,
            );
            let error = &(*ctxt).lastError;
            // Namespace errors (undeclared prefix, bad xmlns) leave
            // `wellFormed` set; they make the document unusable all the same.
            let broken = (*ctxt).wellFormed == 0 || (*ctxt).nsWellFormed == 0;
            let failure = (ptr.is_null() || broken).then(|| {
                first
                    .take()
                    .unwrap_or_else(|| not_well_formed(error.line, &c_message(error.message)))
            });
            (*ctxt)._private = std::ptr::null_mut();
            ffi::xmlFreeParserCtxt(ctxt);
            let doc = (!ptr.is_null()).then_some(Self { ptr });
            if let Some(failure) = failure {
                return Err(failure);
            }
            let doc = doc.ok_or_else(|| not_well_formed(0, "libxml2 returned no document"))?;
            if !(*doc.ptr).intSubset.is_null() || !(*doc.ptr).extSubset.is_null() {
                return Err(Xml2Error::Doctype);
            }
            Ok(doc)
        }
    }

    /// The libxml2 document, for the crate's schema validation; it stays
    /// owned (and freed) by `self`.
    pub(crate) fn as_ptr(&self) -> ffi::xmlDocPtr {
        self.ptr
    }

    /// The document element: its namespace, local name, line and
    /// un-prefixed attributes (None for a document without elements).
    pub fn root_element(&self) -> Option<RootElement> {
        // SAFETY: the document is alive; the nodes, names and attribute
        // values read here belong to it (values are copied and released
        // with libxml2's deallocator).
        unsafe {
            let root = ffi::xmlDocGetRootElement(self.ptr);
            if root.is_null() {
                return None;
            }
            let ns = (*root).ns;
            let namespace =
                (!ns.is_null() && !(*ns).href.is_null()).then(|| c_message((*ns).href.cast()));
            let mut attributes = Vec::new();
            let mut attr = (*root).properties;
            while !attr.is_null() {
                if (*attr).ns.is_null() {
                    let value = ffi::xmlNodeGetContent(attr.cast());
                    let text = if value.is_null() {
                        String::new()
                    } else {
                        c_message(value.cast())
                    };
                    attributes.push((c_message((*attr).name.cast()), text));
                    if let (Some(free), false) = (ffi::xmlFree, value.is_null()) {
                        free(value.cast());
                    }
                }
                attr = (*attr).next;
            }
            Some(RootElement {
                namespace,
                local_name: c_message((*root).name.cast()),
                line: u32::try_from(ffi::xmlGetLineNo(root)).unwrap_or(0),
                attributes,
            })
        }
    }

    /// Canonicalizes the whole document (comments dropped, as in the W3C
    /// default for signatures and comparisons).
    pub fn c14n(&self, mode: C14nMode) -> Result<Vec<u8>, Xml2Error> {
        let mode = match mode {
            C14nMode::Inclusive => ffi::xmlC14NMode_XML_C14N_1_0,
            C14nMode::Exclusive => ffi::xmlC14NMode_XML_C14N_EXCLUSIVE_1_0,
        } as c_int;
        let mut out: *mut ffi::xmlChar = std::ptr::null_mut();
        // SAFETY: the document is alive; libxml2 allocates `out`, which is
        // copied and then released with libxml2's own deallocator.
        unsafe {
            let len = ffi::xmlC14NDocDumpMemory(
                self.ptr,
                std::ptr::null_mut(),
                mode,
                std::ptr::null_mut(),
                0,
                &mut out,
            );
            if len < 0 || out.is_null() {
                return Err(Xml2Error::C14n);
            }
            let bytes = std::slice::from_raw_parts(out, len as usize).to_vec();
            if let Some(free) = ffi::xmlFree {
                free(out.cast());
            }
            Ok(bytes)
        }
    }
}

impl Drop for Xml2Doc {
    fn drop(&mut self) {
        // SAFETY: the pointer came from xmlCtxtReadMemory and is freed once.
        unsafe { ffi::xmlFreeDoc(self.ptr) }
    }
}

/// libxml2's structured error callback during [`Xml2Doc::parse`]: keeps the
/// first error, which names the real mistake (later ones are consequences).
unsafe extern "C" fn keep_first_error(user: *mut std::os::raw::c_void, error: ffi::xmlErrorPtr) {
    // SAFETY: libxml2 passes the parser context as `user` (its default user
    // data) and `_private` points at the `Option` living in `parse`.
    unsafe {
        let ctxt = user as ffi::xmlParserCtxtPtr;
        if ctxt.is_null() || error.is_null() || (*ctxt)._private.is_null() {
            return;
        }
        let first = &mut *((*ctxt)._private as *mut Option<Xml2Error>);
        if first.is_none() && (*error).level >= ffi::xmlErrorLevel_XML_ERR_ERROR {
            *first = Some(not_well_formed((*error).line, &c_message((*error).message)));
        }
    }
}

fn not_well_formed(line: c_int, message: &str) -> Xml2Error {
    Xml2Error::NotWellFormed {
        line: u32::try_from(line).unwrap_or(0),
        message: message.trim().to_owned(),
    }
}

/// Copies a C string from libxml2 (null gives a generic text).
///
/// # Safety
/// `ptr` must be null or point to a NUL-terminated string.
pub(crate) unsafe fn c_message(ptr: *const std::os::raw::c_char) -> String {
    if ptr.is_null() {
        return "not well-formed".to_owned();
    }
    // SAFETY: guaranteed by the caller.
    unsafe { CStr::from_ptr(ptr) }
        .to_string_lossy()
        .into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c14n_normalises_attribute_order_and_empty_elements() {
        let doc = Xml2Doc::parse(br#"<a y="2" x="1"><b/></a>"#).unwrap();
        assert_eq!(
            doc.c14n(C14nMode::Inclusive).unwrap(),
            br#"<a x="1" y="2"><b></b></a>"#
        );
    }

    #[test]
    fn refuses_doctype_and_entities() {
        let bomb = br#"<!DOCTYPE r [<!ENTITY a "aaaa">]><r>&a;</r>"#;
        assert_eq!(Xml2Doc::parse(bomb).unwrap_err(), Xml2Error::Doctype);
    }

    #[test]
    fn reports_the_line_of_a_syntax_error() {
        match Xml2Doc::parse(b"<a>\n<b>\n</a>").unwrap_err() {
            Xml2Error::NotWellFormed { line, message } => {
                assert_eq!(line, 3);
                assert!(message.contains("mismatch"), "{message}");
            }
            other => panic!("unexpected {other:?}"),
        }
    }
}
