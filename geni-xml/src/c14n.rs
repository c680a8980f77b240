//! Canonical XML (W3C Canonical XML 1.0 and Exclusive XML Canonicalization
//! 1.0) of a whole document, or of one element's subtree in its document
//! context as XML-DSig needs it: the node set is the apex element and its
//! descendants (their attributes and in-scope namespaces included),
//! optionally minus one excluded subtree (the enveloped-signature
//! transform). Inherited namespace declarations and `xml:*` attributes come
//! out as the W3C algorithms say, because libxml2 sees the real document.

use crate::dom::{Document, Node};
use crate::error::XmlError;
use libxml::bindings as ffi;
use std::ffi::CString;
use std::os::raw::{c_char, c_int, c_void};

/// The canonicalization algorithms of the W3C recommendations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum C14nMode {
    /// Canonical XML 1.0 (inclusive).
    Inclusive,
    /// Exclusive XML Canonicalization 1.0.
    Exclusive,
}

impl C14nMode {
    fn libxml2(self) -> c_int {
        (match self {
            Self::Inclusive => ffi::xmlC14NMode_XML_C14N_1_0,
            Self::Exclusive => ffi::xmlC14NMode_XML_C14N_EXCLUSIVE_1_0,
        }) as c_int
    }
}

/// How one subtree is canonicalized.
#[derive(Debug, Clone, Copy)]
pub struct C14n<'a> {
    /// The algorithm.
    pub mode: C14nMode,
    /// Whether comments are kept.
    pub with_comments: bool,
    /// The exclusive algorithm's `InclusiveNamespaces PrefixList`
    /// (ignored by the inclusive one).
    pub inclusive_prefixes: &'a [String],
}

impl Document {
    /// Canonicalizes the whole document (comments dropped, as in the W3C
    /// default for signatures and comparisons).
    pub fn c14n(&self, mode: C14nMode) -> Result<Vec<u8>, XmlError> {
        let mut out: *mut ffi::xmlChar = std::ptr::null_mut();
        // SAFETY: the document is alive; libxml2 allocates `out`, which is
        // copied and then released with libxml2's own deallocator.
        unsafe {
            let len = ffi::xmlC14NDocDumpMemory(
                self.raw(),
                std::ptr::null_mut(),
                mode.libxml2(),
                std::ptr::null_mut(),
                0,
                &mut out,
            );
            let failed = || XmlError::C14n {
                element: self.root().map(|r| r.name().to_owned()).unwrap_or_default(),
                line: self.root().map_or(0, Node::line),
            };
            let Ok(len) = usize::try_from(len) else {
                return Err(failed());
            };
            if out.is_null() {
                return Err(failed());
            }
            let bytes = std::slice::from_raw_parts(out, len).to_vec();
            if let Some(free) = ffi::xmlFree {
                free(out.cast());
            }
            Ok(bytes)
        }
    }
}

impl Node<'_> {
    /// Canonicalizes this element and its subtree, minus `excluded` and its
    /// subtree, in the context of its document.
    pub fn c14n(self, excluded: Option<Node<'_>>, how: &C14n<'_>) -> Result<Vec<u8>, XmlError> {
        let failed = || XmlError::C14n {
            element: self.name().to_owned(),
            line: self.line(),
        };
        let set = NodeSet {
            apex: self.raw(),
            excluded: excluded.map_or(std::ptr::null_mut(), Node::raw),
        };
        let prefixes: Vec<CString> = how
            .inclusive_prefixes
            .iter()
            .map(|p| CString::new(p.as_str()).map_err(|_| failed()))
            .collect::<Result<_, _>>()?;
        let mut prefix_ptrs: Vec<*mut ffi::xmlChar> = prefixes
            .iter()
            .map(|p| p.as_ptr() as *mut ffi::xmlChar)
            .collect();
        prefix_ptrs.push(std::ptr::null_mut());
        let exclusive = how.mode == C14nMode::Exclusive;
        let mut out: Vec<u8> = Vec::with_capacity(4096);
        // SAFETY: the output buffer writes into `out`, which outlives it;
        // `set` and `prefix_ptrs` outlive the call; the node's document is
        // alive as long as the node; the buffer is closed (freed) once.
        let status = unsafe {
            let buf = ffi::xmlOutputBufferCreateIO(
                Some(collect),
                None,
                (&mut out as *mut Vec<u8>).cast(),
                std::ptr::null_mut(),
            );
            if buf.is_null() {
                return Err(failed());
            }
            let status = ffi::xmlC14NExecute(
                (*self.raw()).doc,
                Some(is_visible),
                (&set as *const NodeSet).cast_mut().cast(),
                how.mode.libxml2(),
                if exclusive && !how.inclusive_prefixes.is_empty() {
                    prefix_ptrs.as_mut_ptr()
                } else {
                    std::ptr::null_mut()
                },
                c_int::from(how.with_comments),
                buf,
            );
            let closed = ffi::xmlOutputBufferClose(buf);
            if closed < 0 { -1 } else { status }
        };
        if status < 0 {
            return Err(failed());
        }
        Ok(out)
    }
}

/// Which nodes are in the canonicalized node set.
struct NodeSet {
    apex: ffi::xmlNodePtr,
    excluded: ffi::xmlNodePtr,
}

impl NodeSet {
    /// Whether `node` is `target` or one of its descendants (`target` is
    /// only compared, never read).
    ///
    /// # Safety
    /// `node` must be null or a live node of the document.
    unsafe fn within(mut node: ffi::xmlNodePtr, target: ffi::xmlNodePtr) -> bool {
        while !node.is_null() {
            if std::ptr::eq(node, target) {
                return true;
            }
            // SAFETY: guaranteed by the caller; parents of live nodes are live.
            node = unsafe { (*node).parent };
        }
        false
    }

    /// The node-set membership test libxml2 asks for every node.
    ///
    /// # Safety
    /// `node` must be a live node, attribute or namespace of the document
    /// and `parent` its element (for namespaces and attributes).
    unsafe fn contains(&self, node: ffi::xmlNodePtr, parent: ffi::xmlNodePtr) -> bool {
        // Namespace and attribute nodes belong to the set with their element;
        // both structures start with a pointer followed by their type.
        // SAFETY: guaranteed by the caller.
        let kind = unsafe { (*node).type_ };
        let owner = match kind {
            ffi::xmlElementType_XML_NAMESPACE_DECL | ffi::xmlElementType_XML_ATTRIBUTE_NODE => {
                parent
            }
            _ => node,
        };
        // SAFETY: `owner` is a live node per the caller's guarantee.
        unsafe {
            Self::within(owner, self.apex)
                && (self.excluded.is_null() || !Self::within(owner, self.excluded))
        }
    }
}

/// libxml2's visibility callback: whether `node` is in the [`NodeSet`]
/// behind `user`.
unsafe extern "C" fn is_visible(
    user: *mut c_void,
    node: ffi::xmlNodePtr,
    parent: ffi::xmlNodePtr,
) -> c_int {
    if user.is_null() || node.is_null() {
        return 0;
    }
    // SAFETY: `user` is the `NodeSet` passed to xmlC14NExecute and the
    // nodes come from the document being canonicalized.
    unsafe { c_int::from((*(user as *const NodeSet)).contains(node, parent)) }
}

/// libxml2's output callback: appends `len` bytes to the `Vec<u8>` behind
/// `context`.
unsafe extern "C" fn collect(context: *mut c_void, buffer: *const c_char, len: c_int) -> c_int {
    let Ok(n) = usize::try_from(len) else {
        return -1;
    };
    if context.is_null() || (buffer.is_null() && n > 0) {
        return -1;
    }
    // SAFETY: `context` is the `Vec<u8>` passed to xmlOutputBufferCreateIO;
    // libxml2 hands over `len` readable bytes.
    unsafe {
        let out = &mut *(context as *mut Vec<u8>);
        if n > 0 {
            out.extend_from_slice(std::slice::from_raw_parts(buffer.cast::<u8>(), n));
        }
    }
    len
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ParseOptions;

    const PLAIN: C14n<'static> = C14n {
        mode: C14nMode::Inclusive,
        with_comments: false,
        inclusive_prefixes: &[],
    };

    fn c14n(xml: &str, id: &str, mode: C14nMode) -> String {
        let options = ParseOptions::default().index_ids();
        let doc = Document::parse_with(xml.as_bytes(), &options).unwrap();
        let apex = doc.element_by_id(id).unwrap();
        let how = C14n { mode, ..PLAIN };
        String::from_utf8(apex.c14n(None, &how).unwrap()).unwrap()
    }

    #[test]
    fn whole_document_c14n_normalises_attribute_order_and_empty_elements() {
        let doc = Document::parse(br#"<a y="2" x="1"><b/></a>"#).unwrap();
        assert_eq!(
            doc.c14n(C14nMode::Inclusive).unwrap(),
            br#"<a x="1" y="2"><b></b></a>"#
        );
    }

    #[test]
    fn inclusive_c14n_carries_inherited_namespaces_and_xml_attributes() {
        let xml = r#"<r xmlns:x="urn:x" xmlns:y="urn:y" xml:lang="en"><c xml:id="k" b="2" a="1"><d/></c></r>"#;
        assert_eq!(
            c14n(xml, "k", C14nMode::Inclusive),
            r#"<c xmlns:x="urn:x" xmlns:y="urn:y" a="1" b="2" xml:id="k" xml:lang="en"><d></d></c>"#
        );
    }

    #[test]
    fn exclusive_c14n_drops_unused_inherited_namespaces() {
        let xml = r#"<r xmlns:x="urn:x" xmlns:y="urn:y"><c xml:id="k" x:a="1"/></r>"#;
        assert_eq!(
            c14n(xml, "k", C14nMode::Exclusive),
            r#"<c xmlns:x="urn:x" xml:id="k" x:a="1"></c>"#
        );
    }

    #[test]
    fn multibyte_text_survives_large_output() {
        let text = "é€😀".repeat(3000);
        let xml = format!(r#"<r><c xml:id="k">{text}</c></r>"#);
        assert_eq!(
            c14n(&xml, "k", C14nMode::Inclusive),
            format!(r#"<c xml:id="k">{text}</c>"#)
        );
    }

    #[test]
    fn excluded_subtree_and_comments_are_left_out() {
        let xml = r#"<r><c xml:id="k"><!--x--><s><t/></s><u/></c></r>"#;
        let options = ParseOptions::default().index_ids();
        let doc = Document::parse_with(xml.as_bytes(), &options).unwrap();
        let apex = doc.element_by_id("k").unwrap();
        let s = apex.children().next().unwrap();
        let out = apex.c14n(Some(s), &PLAIN).unwrap();
        assert_eq!(out, br#"<c xml:id="k"><u></u></c>"#);
    }
}
