//! A small, safe, read-only view of a libxml2 document for signature work:
//! a hardened parse (size and depth limits, no DOCTYPE, no entity
//! substitution, no network), element navigation, and the document's ID
//! index (`xml:id`, `id`, `ID`, `Id`) with colliding IDs refused.
//!
//! Nodes are compared by identity ([`Node::same`]), which is what binds a
//! verified signature reference to the element whose fields are read.

use libxml::bindings as ffi;
use std::collections::HashMap;
use std::ffi::CStr;
use std::marker::PhantomData;
use std::os::raw::{c_char, c_int};
use std::sync::Once;

/// The largest document accepted (credentials with long delegation chains
/// are tens of kilobytes).
pub const MAX_DOCUMENT_BYTES: usize = 1 << 20;

/// The deepest element nesting accepted.
pub const MAX_DEPTH: usize = 64;

/// The XML namespace (`xml:` prefix).
const XML_NS: &str = "http://www.w3.org/XML/1998/namespace";

/// Why a document was refused before any signature was looked at.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum XmlError {
    /// The bytes are not a well-formed XML document.
    #[error("not well-formed XML at line {line}: {message}")]
    NotWellFormed {
        /// 1-based line of the first error (0 when libxml2 gave none).
        line: u32,
        /// libxml2's message, trimmed.
        message: String,
    },
    /// The document has a DOCTYPE (and so possibly entity declarations).
    #[error("DOCTYPE and entity declarations are not allowed")]
    Doctype,
    /// The document is larger than [`MAX_DOCUMENT_BYTES`].
    #[error("document of {size} bytes exceeds the limit of {limit} bytes")]
    TooLarge {
        /// Size of the document.
        size: usize,
        /// The limit.
        limit: usize,
    },
    /// Elements are nested deeper than [`MAX_DEPTH`].
    #[error("element <{element}> at line {line} is nested deeper than {limit} levels")]
    TooDeep {
        /// The first element found too deep.
        element: String,
        /// Its line.
        line: u32,
        /// The limit.
        limit: usize,
    },
    /// Two elements carry the same ID, so a reference to it is ambiguous.
    #[error("ID {id:?} is used twice (lines {first_line} and {second_line})")]
    DuplicateId {
        /// The ID value.
        id: String,
        /// Line of the first element carrying it.
        first_line: u32,
        /// Line of the second element carrying it.
        second_line: u32,
    },
    /// libxml2 failed to canonicalize a node set.
    #[error("canonicalization of <{element}> at line {line} failed")]
    C14n {
        /// The apex element.
        element: String,
        /// Its line.
        line: u32,
    },
}

/// A parsed document; freed on drop.
#[derive(Debug)]
pub struct Document {
    ptr: ffi::xmlDocPtr,
    ids: HashMap<String, ffi::xmlNodePtr>,
}

// SAFETY: the document is owned exclusively by this value and is never
// mutated after parsing; libxml2's read functions used here are reentrant.
unsafe impl Send for Document {}
// SAFETY: see above; shared access only reads the tree.
unsafe impl Sync for Document {}

/// An element of a [`Document`], valid while the document lives.
#[derive(Debug, Clone, Copy)]
pub struct Node<'d> {
    ptr: ffi::xmlNodePtr,
    _doc: PhantomData<&'d Document>,
}

fn init() {
    static INIT: Once = Once::new();
    // SAFETY: xmlInitParser is idempotent and meant to be called once up front.
    INIT.call_once(|| unsafe { ffi::xmlInitParser() });
}

impl Document {
    /// Parses `bytes`: size limit first, then libxml2 with network access
    /// off and no entity substitution, then no DOCTYPE, the depth limit and
    /// unique IDs.
    pub fn parse(bytes: &[u8]) -> Result<Self, XmlError> {
        if bytes.len() > MAX_DOCUMENT_BYTES {
            return Err(XmlError::TooLarge {
                size: bytes.len(),
                limit: MAX_DOCUMENT_BYTES,
            });
        }
        let ptr = Parser::new()?.read(bytes)?;
        let mut doc = Self {
            ptr,
            ids: HashMap::new(),
        };
        // SAFETY: the document was just parsed and is alive.
        if unsafe { !(*ptr).intSubset.is_null() || !(*ptr).extSubset.is_null() } {
            return Err(XmlError::Doctype);
        }
        doc.index()?;
        Ok(doc)
    }

    /// Walks the tree once: depth limit and ID index.
    fn index(&mut self) -> Result<(), XmlError> {
        let Some(root) = self.root() else {
            return Ok(());
        };
        let mut ids = HashMap::new();
        let mut stack = vec![(root.ptr, 1usize)];
        while let Some((ptr, depth)) = stack.pop() {
            let node = Node::wrap(ptr);
            if depth > MAX_DEPTH {
                return Err(XmlError::TooDeep {
                    element: node.name().to_owned(),
                    line: node.line(),
                    limit: MAX_DEPTH,
                });
            }
            for id in node.ids() {
                if let Some(first) = ids.insert(id.clone(), ptr) {
                    return Err(XmlError::DuplicateId {
                        id,
                        first_line: Node::wrap(first).line(),
                        second_line: node.line(),
                    });
                }
            }
            let first = stack.len();
            stack.extend(node.children().map(|c| (c.ptr, depth + 1)));
            stack[first..].reverse();
        }
        self.ids = ids;
        Ok(())
    }

    /// The root element.
    pub fn root(&self) -> Option<Node<'_>> {
        // SAFETY: the document is alive; xmlDocGetRootElement only reads it.
        let ptr = unsafe { ffi::xmlDocGetRootElement(self.ptr) };
        (!ptr.is_null()).then(|| Node::wrap(ptr))
    }

    /// The element carrying ID `id` (IDs are unique, see [`Document::parse`]).
    pub fn element_by_id(&self, id: &str) -> Option<Node<'_>> {
        self.ids.get(id).map(|&ptr| Node::wrap(ptr))
    }

    /// Every element of the document in document order.
    pub fn elements(&self) -> Vec<Node<'_>> {
        let mut out = Vec::new();
        let mut stack: Vec<Node<'_>> = self.root().into_iter().collect();
        while let Some(node) = stack.pop() {
            out.push(node);
            let mut children: Vec<_> = node.children().collect();
            children.reverse();
            stack.extend(children);
        }
        out
    }

    /// The raw libxml2 document, for canonicalization.
    pub(crate) fn raw(&self) -> ffi::xmlDocPtr {
        self.ptr
    }
}

impl Drop for Document {
    fn drop(&mut self) {
        // SAFETY: the pointer came from xmlCtxtReadMemory and is freed once.
        unsafe { ffi::xmlFreeDoc(self.ptr) }
    }
}

impl<'d> Node<'d> {
    fn wrap(ptr: ffi::xmlNodePtr) -> Self {
        Self {
            ptr,
            _doc: PhantomData,
        }
    }

    /// The raw libxml2 node, for canonicalization.
    pub(crate) fn raw(self) -> ffi::xmlNodePtr {
        self.ptr
    }

    /// Whether `self` and `other` are the very same element.
    pub fn same(self, other: Node<'_>) -> bool {
        std::ptr::eq(self.ptr, other.ptr)
    }

    /// The local name.
    pub fn name(self) -> &'d str {
        // SAFETY: element nodes always have a name owned by the document.
        unsafe { c_str((*self.ptr).name.cast()) }
    }

    /// The namespace URI, if the element is in one.
    pub fn namespace(self) -> Option<&'d str> {
        // SAFETY: `ns` is null or points at a namespace owned by the document.
        unsafe {
            let ns = (*self.ptr).ns;
            (!ns.is_null()).then(|| c_str((*ns).href.cast()))
        }
    }

    /// Whether the element has local name `name` in namespace `ns` (`None`:
    /// no namespace).
    pub fn is(self, ns: Option<&str>, name: &str) -> bool {
        self.name() == name && self.namespace() == ns
    }

    /// The 1-based source line.
    pub fn line(self) -> u32 {
        // SAFETY: the node is alive; xmlGetLineNo only reads it.
        let line = unsafe { ffi::xmlGetLineNo(self.ptr) };
        u32::try_from(line).unwrap_or(0)
    }

    /// The parent element (`None` at the root).
    pub fn parent(self) -> Option<Node<'d>> {
        // SAFETY: the node is alive; `parent` is null or a live node.
        let parent = unsafe { (*self.ptr).parent };
        // SAFETY: checked non-null before reading its type.
        let is_element =
            !parent.is_null() && unsafe { (*parent).type_ } == ffi::xmlElementType_XML_ELEMENT_NODE;
        is_element.then(|| Node::wrap(parent))
    }

    /// The child elements, in order.
    pub fn children(self) -> impl Iterator<Item = Node<'d>> {
        // SAFETY: the node is alive.
        let mut next = unsafe { (*self.ptr).children };
        std::iter::from_fn(move || {
            while !next.is_null() {
                let current = next;
                // SAFETY: `current` is a live sibling in the same document.
                let (kind, after) = unsafe { ((*current).type_, (*current).next) };
                next = after;
                if kind == ffi::xmlElementType_XML_ELEMENT_NODE {
                    return Some(Node::wrap(current));
                }
            }
            None
        })
    }

    /// The child elements named `name` in namespace `ns`.
    pub fn children_named<'a>(
        self,
        ns: Option<&'a str>,
        name: &'a str,
    ) -> impl Iterator<Item = Node<'d>> + 'a
    where
        'd: 'a,
    {
        self.children().filter(move |c| c.is(ns, name))
    }

    /// The value of attribute `name` in namespace `ns` (`None`: no namespace).
    pub fn attribute(self, ns: Option<&str>, name: &str) -> Option<String> {
        self.attributes()
            .find(|(a_ns, a_name, _)| *a_ns == ns && *a_name == name)
            .map(|(_, _, value)| value)
    }

    /// Every attribute as (namespace, local name, value).
    pub fn attributes(self) -> impl Iterator<Item = (Option<&'d str>, &'d str, String)> {
        // SAFETY: the node is alive.
        let mut next = unsafe { (*self.ptr).properties };
        std::iter::from_fn(move || {
            if next.is_null() {
                return None;
            }
            let attr = next;
            // SAFETY: `attr` is a live attribute of this element; its value
            // is returned freshly allocated and freed here.
            unsafe {
                next = (*attr).next;
                let ns = (*attr).ns;
                let ns = (!ns.is_null()).then(|| c_str((*ns).href.cast()));
                let name = c_str((*attr).name.cast());
                let raw = ffi::xmlNodeListGetString((*self.ptr).doc, (*attr).children, 1);
                let value = take_xml_string(raw);
                Some((ns, name, value))
            }
        })
    }

    /// The element's namespace declarations and attributes as written
    /// (qualified name, unescaped value), declarations first.
    pub fn source_attributes(self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        // SAFETY: the node is alive; its namespace declarations and their
        // strings belong to the document.
        unsafe {
            let mut ns = (*self.ptr).nsDef;
            while let Some(decl) = ns.as_ref() {
                let prefix = c_str(decl.prefix.cast());
                let name = if prefix.is_empty() {
                    "xmlns".to_owned()
                } else {
                    format!("xmlns:{prefix}")
                };
                out.push((name, c_str(decl.href.cast()).to_owned()));
                ns = decl.next;
            }
            let mut attr = (*self.ptr).properties;
            while let Some(a) = attr.as_ref() {
                let prefix = a.ns.as_ref().map_or("", |ns| c_str(ns.prefix.cast()));
                let local = c_str(a.name.cast());
                let name = if prefix.is_empty() {
                    local.to_owned()
                } else {
                    format!("{prefix}:{local}")
                };
                let value = take_xml_string(ffi::xmlNodeListGetString(a.doc, a.children, 1));
                out.push((name, value));
                attr = a.next;
            }
        }
        out
    }

    /// The IDs this element carries (`xml:id`, and unprefixed `id`, `ID`,
    /// `Id`).
    pub fn ids(self) -> impl Iterator<Item = String> {
        self.attributes().filter_map(|(ns, name, value)| {
            let is_id = match ns {
                Some(XML_NS) => name == "id",
                None => matches!(name, "id" | "ID" | "Id"),
                Some(_) => false,
            };
            is_id.then_some(value)
        })
    }

    /// The concatenated text content of the element and its descendants.
    pub fn text(self) -> String {
        // SAFETY: the node is alive; the returned string is freed here.
        unsafe { take_xml_string(ffi::xmlNodeGetContent(self.ptr)) }
    }

    /// Whether the element has child elements.
    pub fn has_children(self) -> bool {
        self.children().next().is_some()
    }

    /// Serialises the element as it is (no re-indentation), without the
    /// namespace declarations it inherits from its ancestors.
    pub fn dump(self) -> Vec<u8> {
        // SAFETY: the buffer is created, filled from the live node, copied
        // and freed here.
        unsafe {
            let buf = ffi::xmlBufferCreate();
            if buf.is_null() {
                return Vec::new();
            }
            ffi::xmlNodeDump(buf, (*self.ptr).doc, self.ptr, 0, 0);
            let len = usize::try_from(ffi::xmlBufferLength(buf)).unwrap_or(0);
            let content = ffi::xmlBufferContent(buf);
            let out = if content.is_null() {
                Vec::new()
            } else {
                std::slice::from_raw_parts(content, len).to_vec()
            };
            ffi::xmlBufferFree(buf);
            out
        }
    }
}

/// Borrows a NUL-terminated UTF-8 string owned by the document.
///
/// # Safety
/// `ptr` must be null or a NUL-terminated string living as long as `'a`.
unsafe fn c_str<'a>(ptr: *const c_char) -> &'a str {
    if ptr.is_null() {
        return "";
    }
    // SAFETY: guaranteed by the caller; libxml2 stores UTF-8.
    unsafe { CStr::from_ptr(ptr) }.to_str().unwrap_or("")
}

/// Copies and frees a string allocated by libxml2.
///
/// # Safety
/// `ptr` must be null or a string allocated by libxml2 and owned by the caller.
unsafe fn take_xml_string(ptr: *mut ffi::xmlChar) -> String {
    if ptr.is_null() {
        return String::new();
    }
    // SAFETY: guaranteed by the caller.
    let value = unsafe { CStr::from_ptr(ptr.cast()) }
        .to_string_lossy()
        .into_owned();
    if let Some(free) = unsafe { ffi::xmlFree } {
        // SAFETY: the string came from libxml2's allocator.
        unsafe { free(ptr.cast()) };
    }
    value
}

/// A libxml2 parser context that keeps the first error it reports (later
/// ones are usually consequences of it); freed on drop.
struct Parser {
    ctxt: ffi::xmlParserCtxtPtr,
    first: Box<Option<XmlError>>,
}

impl Parser {
    fn new() -> Result<Self, XmlError> {
        init();
        // SAFETY: a fresh context is owned by the returned value.
        let ctxt = unsafe { ffi::xmlNewParserCtxt() };
        if ctxt.is_null() {
            return Err(not_well_formed(0, c"out of memory".as_ptr()));
        }
        let mut parser = Self {
            ctxt,
            first: Box::new(None),
        };
        // SAFETY: the context is alive; `_private` points into the box,
        // which lives (at a stable address) as long as the context.
        unsafe {
            (*ctxt)._private = (&mut *parser.first as *mut Option<XmlError>).cast();
            if let Some(sax) = (*ctxt).sax.as_mut() {
                sax.serror = Some(Self::on_error);
            }
        }
        Ok(parser)
    }

    /// Reads `bytes` with network access off and no entity substitution.
    fn read(mut self, bytes: &[u8]) -> Result<ffi::xmlDocPtr, XmlError> {
        let too_large = || XmlError::TooLarge {
            size: bytes.len(),
            limit: MAX_DOCUMENT_BYTES,
        };
        let len = c_int::try_from(bytes.len()).map_err(|_| too_large())?;
        // SAFETY: the context is alive and the buffer outlives the call.
        let doc = unsafe {
            ffi::xmlCtxtReadMemory(
                self.ctxt,
                bytes.as_ptr().cast(),
                len,
                c"credential.xml".as_ptr(),
                std::ptr::null(),
                ffi::xmlParserOption_XML_PARSE_NONET as c_int,
            )
        };
        // SAFETY: the context is alive; `doc` is null or ours to free.
        unsafe {
            if !doc.is_null() && (*self.ctxt).wellFormed != 0 {
                return Ok(doc);
            }
            if !doc.is_null() {
                ffi::xmlFreeDoc(doc);
            }
            let last = &(*self.ctxt).lastError;
            Err(self
                .first
                .take()
                .unwrap_or_else(|| not_well_formed(last.line, last.message)))
        }
    }

    /// libxml2's structured error callback.
    unsafe extern "C" fn on_error(user: *mut std::os::raw::c_void, error: ffi::xmlErrorPtr) {
        // SAFETY: libxml2 passes the parser context as `user`; `_private`
        // points at the live `first` slot set in `Parser::new`.
        unsafe {
            let ctxt = user as ffi::xmlParserCtxtPtr;
            let (Some(ctxt), Some(error)) = (ctxt.as_ref(), error.as_ref()) else {
                return;
            };
            let Some(first) = (ctxt._private as *mut Option<XmlError>).as_mut() else {
                return;
            };
            if first.is_none() && error.level >= ffi::xmlErrorLevel_XML_ERR_ERROR {
                *first = Some(not_well_formed(error.line, error.message));
            }
        }
    }
}

impl Drop for Parser {
    fn drop(&mut self) {
        // SAFETY: the context was created in `new` and is freed once; the
        // callback slot is cleared first.
        unsafe {
            (*self.ctxt)._private = std::ptr::null_mut();
            ffi::xmlFreeParserCtxt(self.ctxt);
        }
    }
}

/// Builds [`XmlError::NotWellFormed`] from libxml2's line and message.
fn not_well_formed(line: c_int, message: *const c_char) -> XmlError {
    // SAFETY: libxml2 messages are null or NUL-terminated.
    let message = unsafe { c_str(message) };
    let message = if message.is_empty() {
        "not well-formed"
    } else {
        message
    };
    XmlError::NotWellFormed {
        line: u32::try_from(line).unwrap_or(0),
        message: message.trim().to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_doctype_with_entities() {
        let bomb = br#"<!DOCTYPE r [<!ENTITY a "aaaa">]><r>&a;</r>"#;
        assert_eq!(Document::parse(bomb).unwrap_err(), XmlError::Doctype);
    }

    #[test]
    fn refuses_colliding_ids_of_different_kinds() {
        let doc = b"<r>\n<a xml:id=\"x\"/>\n<b id=\"x\"/></r>";
        assert_eq!(
            Document::parse(doc).unwrap_err(),
            XmlError::DuplicateId {
                id: "x".into(),
                first_line: 2,
                second_line: 3
            }
        );
    }

    #[test]
    fn refuses_oversized_and_too_deep_documents() {
        let big = vec![b' '; MAX_DOCUMENT_BYTES + 1];
        assert!(matches!(
            Document::parse(&big),
            Err(XmlError::TooLarge { .. })
        ));
        let deep = format!(
            "{}{}",
            "<a>".repeat(MAX_DEPTH + 1),
            "</a>".repeat(MAX_DEPTH + 1)
        );
        assert!(matches!(
            Document::parse(deep.as_bytes()),
            Err(XmlError::TooDeep { .. })
        ));
    }

    #[test]
    fn reports_line_of_syntax_error() {
        match Document::parse(b"<a>\n<b>\n</a>").unwrap_err() {
            XmlError::NotWellFormed { line, .. } => assert_eq!(line, 3),
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn finds_elements_by_id_and_reads_text() {
        let doc = Document::parse(br#"<r><c xml:id="k">a&amp;b</c></r>"#).unwrap();
        let c = doc.element_by_id("k").unwrap();
        assert_eq!(c.text(), "a&b");
        assert!(c.parent().unwrap().same(doc.root().unwrap()));
        assert_eq!(doc.elements().len(), 2);
    }
}
