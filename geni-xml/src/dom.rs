//! The hardened parse and a small, safe, read-only view of the resulting
//! libxml2 document: element navigation, attributes, text, line numbers,
//! node identity ([`Node::same`]) and, on request, the document's ID index
//! (`xml:id`, `id`, `ID`, `Id`) with colliding IDs refused.
//!
//! The parse never substitutes entities, never touches the network and
//! refuses any DOCTYPE; size, depth and ID rules are [`ParseOptions`].

use crate::error::XmlError;
use crate::init::init;
use crate::text::{c_str, message, take_xml_string};
use libxml::bindings as ffi;
use std::collections::HashMap;
use std::ffi::CStr;
use std::marker::PhantomData;
use std::os::raw::{c_char, c_int};

/// The XML namespace (`xml:` prefix).
const XML_NS: &str = "http://www.w3.org/XML/1998/namespace";

/// What a parse allows beyond well-formedness. The default takes any size
/// libxml2 takes in one call, any depth, keeps line numbers above 65535,
/// refuses namespace errors and builds no ID index.
#[derive(Debug, Clone)]
pub struct ParseOptions {
    url: &'static CStr,
    max_bytes: Option<usize>,
    max_depth: Option<usize>,
    index_ids: bool,
    big_lines: bool,
    lenient_namespaces: bool,
}

impl Default for ParseOptions {
    fn default() -> Self {
        Self {
            url: c"document.xml",
            max_bytes: None,
            max_depth: None,
            index_ids: false,
            big_lines: true,
            lenient_namespaces: false,
        }
    }
}

impl ParseOptions {
    /// The name libxml2 gives the document (its base URL).
    pub fn named(self, url: &'static CStr) -> Self {
        Self { url, ..self }
    }

    /// Refuses documents of more than `limit` bytes before parsing.
    pub fn max_bytes(self, limit: usize) -> Self {
        Self {
            max_bytes: Some(limit),
            ..self
        }
    }

    /// Refuses elements nested deeper than `limit` levels.
    pub fn max_depth(self, limit: usize) -> Self {
        Self {
            max_depth: Some(limit),
            ..self
        }
    }

    /// Indexes the elements' IDs for [`Document::element_by_id`] and
    /// refuses a document where two elements carry the same ID.
    pub fn index_ids(self) -> Self {
        Self {
            index_ids: true,
            ..self
        }
    }

    /// Keeps libxml2's 16-bit line numbers (lines above 65535 read as
    /// 65535), as XML-DSig tooling built on libxml2 reports them.
    pub fn short_lines(self) -> Self {
        Self {
            big_lines: false,
            ..self
        }
    }

    /// Accepts documents with namespace errors (an undeclared prefix, a
    /// bad `xmlns`) as long as they are well-formed XML 1.0.
    pub fn lenient_namespaces(self) -> Self {
        Self {
            lenient_namespaces: true,
            ..self
        }
    }

    /// libxml2's parser options: never network access, never entity
    /// substitution (XML_PARSE_NOENT is never set), never DTD loading.
    fn libxml2_options(&self) -> c_int {
        let mut options = ffi::xmlParserOption_XML_PARSE_NONET;
        if self.big_lines {
            options |= ffi::xmlParserOption_XML_PARSE_BIG_LINES;
        }
        options as c_int
    }
}

/// A parsed document; freed on drop.
#[derive(Debug)]
pub struct Document {
    ptr: ffi::xmlDocPtr,
    ids: HashMap<String, ffi::xmlNodePtr>,
}

// SAFETY: the document is owned exclusively by this value; shared access
// only reads the tree through libxml2's reentrant read functions, and the
// one operation that writes to it (schema validation, which records IDs)
// takes `&mut Document`.
unsafe impl Send for Document {}
// SAFETY: see above.
unsafe impl Sync for Document {}

/// An element of a [`Document`], valid while the document lives. Two
/// nodes are the same element exactly when [`Node::same`] says so.
#[derive(Debug, Clone, Copy)]
pub struct Node<'d> {
    ptr: ffi::xmlNodePtr,
    _doc: PhantomData<&'d Document>,
}

impl Document {
    /// Parses `bytes` with the default [`ParseOptions`].
    pub fn parse(bytes: &[u8]) -> Result<Self, XmlError> {
        Self::parse_with(bytes, &ParseOptions::default())
    }

    /// Parses `bytes`: size limit first, then libxml2 with network access
    /// off and no entity substitution, then no DOCTYPE, then the depth
    /// limit and the ID index if `options` ask for them.
    pub fn parse_with(bytes: &[u8], options: &ParseOptions) -> Result<Self, XmlError> {
        let limit = options.max_bytes.unwrap_or(c_int::MAX as usize);
        let too_large = || XmlError::TooLarge {
            size: bytes.len(),
            limit,
        };
        if bytes.len() > limit {
            return Err(too_large());
        }
        let len = c_int::try_from(bytes.len()).map_err(|_| too_large())?;
        let ptr = Parser::new()?.read(bytes, len, options)?;
        let mut doc = Self {
            ptr,
            ids: HashMap::new(),
        };
        // SAFETY: the document was just parsed and is alive.
        if unsafe { !(*ptr).intSubset.is_null() || !(*ptr).extSubset.is_null() } {
            return Err(XmlError::Doctype);
        }
        if options.index_ids || options.max_depth.is_some() {
            doc.index(options)?;
        }
        Ok(doc)
    }

    /// Walks the tree once: depth limit and ID index.
    fn index(&mut self, options: &ParseOptions) -> Result<(), XmlError> {
        let Some(root) = self.root() else {
            return Ok(());
        };
        let max_depth = options.max_depth.unwrap_or(usize::MAX);
        let mut ids = HashMap::new();
        let mut stack = vec![(root.ptr, 1usize)];
        while let Some((ptr, depth)) = stack.pop() {
            let node = Node::wrap(ptr);
            if depth > max_depth {
                return Err(XmlError::TooDeep {
                    element: node.name().to_owned(),
                    line: node.line(),
                    limit: max_depth,
                });
            }
            if options.index_ids {
                for id in node.ids() {
                    if let Some(first) = ids.insert(id.clone(), ptr) {
                        return Err(XmlError::DuplicateId {
                            id,
                            first_line: Node::wrap(first).line(),
                            second_line: node.line(),
                        });
                    }
                }
            }
            let first = stack.len();
            stack.extend(node.children().map(|c| (c.ptr, depth + 1)));
            stack[first..].reverse();
        }
        self.ids = ids;
        Ok(())
    }

    /// The document element.
    pub fn root(&self) -> Option<Node<'_>> {
        // SAFETY: the document is alive; xmlDocGetRootElement only reads it.
        let ptr = unsafe { ffi::xmlDocGetRootElement(self.ptr) };
        (!ptr.is_null()).then(|| Node::wrap(ptr))
    }

    /// The element carrying ID `id`; only documents parsed with
    /// [`ParseOptions::index_ids`] have an index (where IDs are unique).
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

    /// The libxml2 document, for canonicalization and validation; it stays
    /// owned (and freed) by `self`.
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

    /// The libxml2 node, for canonicalization.
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

    /// Reads the `len` bytes of `bytes` with network access off and no
    /// entity substitution.
    fn read(
        mut self,
        bytes: &[u8],
        len: c_int,
        options: &ParseOptions,
    ) -> Result<ffi::xmlDocPtr, XmlError> {
        // SAFETY: the context is alive and the buffer outlives the call.
        let doc = unsafe {
            ffi::xmlCtxtReadMemory(
                self.ctxt,
                bytes.as_ptr().cast(),
                len,
                options.url.as_ptr(),
                std::ptr::null(),
                options.libxml2_options(),
            )
        };
        // SAFETY: the context is alive; `doc` is null or ours to free.
        unsafe {
            // Namespace errors (undeclared prefix, bad xmlns) leave
            // `wellFormed` set; they make the document unusable all the same
            // unless the options accept them.
            let namespaces_ok = options.lenient_namespaces || (*self.ctxt).nsWellFormed != 0;
            if !doc.is_null() && (*self.ctxt).wellFormed != 0 && namespaces_ok {
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
fn not_well_formed(line: c_int, text: *const c_char) -> XmlError {
    XmlError::NotWellFormed {
        line: u32::try_from(line).unwrap_or(0),
        // SAFETY: libxml2 messages are null or NUL-terminated.
        message: unsafe { message(text) },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn signed() -> ParseOptions {
        ParseOptions::default()
            .max_bytes(1 << 20)
            .max_depth(64)
            .index_ids()
    }

    #[test]
    fn refuses_doctype_with_entities() {
        let bomb = br#"<!DOCTYPE r [<!ENTITY a "aaaa">]><r>&a;</r>"#;
        assert_eq!(Document::parse(bomb).unwrap_err(), XmlError::Doctype);
        let external = br#"<!DOCTYPE r SYSTEM "file:///etc/passwd"><r/>"#;
        assert_eq!(Document::parse(external).unwrap_err(), XmlError::Doctype);
    }

    #[test]
    fn refuses_colliding_ids_of_different_kinds() {
        let doc = b"<r>\n<a xml:id=\"x\"/>\n<b id=\"x\"/></r>";
        assert_eq!(
            Document::parse_with(doc, &signed()).unwrap_err(),
            XmlError::DuplicateId {
                id: "x".into(),
                first_line: 2,
                second_line: 3
            }
        );
        assert!(Document::parse(doc).is_ok(), "no index, no refusal");
    }

    #[test]
    fn refuses_oversized_and_too_deep_documents() {
        let big = vec![b' '; (1 << 20) + 1];
        assert!(matches!(
            Document::parse_with(&big, &signed()),
            Err(XmlError::TooLarge { .. })
        ));
        let deep = format!("{}{}", "<a>".repeat(65), "</a>".repeat(65));
        assert!(matches!(
            Document::parse_with(deep.as_bytes(), &signed()),
            Err(XmlError::TooDeep { .. })
        ));
    }

    #[test]
    fn reports_the_line_of_a_syntax_error() {
        match Document::parse(b"<a>\n<b>\n</a>").unwrap_err() {
            XmlError::NotWellFormed { line, message } => {
                assert_eq!(line, 3);
                assert!(message.contains("mismatch"), "{message}");
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn namespace_errors_are_refused_unless_lenient() {
        let doc = b"<a><x:b/></a>";
        assert!(matches!(
            Document::parse(doc),
            Err(XmlError::NotWellFormed { .. })
        ));
        let lenient = ParseOptions::default().lenient_namespaces();
        assert!(Document::parse_with(doc, &lenient).is_ok());
    }

    #[test]
    fn finds_elements_by_id_and_reads_text() {
        let doc = Document::parse_with(br#"<r><c xml:id="k">a&amp;b</c></r>"#, &signed()).unwrap();
        let c = doc.element_by_id("k").unwrap();
        assert_eq!(c.text(), "a&b");
        assert!(c.parent().unwrap().same(doc.root().unwrap()));
        assert_eq!(doc.elements().len(), 2);
    }
}
