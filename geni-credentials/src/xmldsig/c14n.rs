//! Canonicalization of one element's subtree in its document context, as
//! XML-DSig needs it: the node set is the apex element and its descendants
//! (their attributes and in-scope namespaces included), optionally minus one
//! excluded subtree (the enveloped-signature transform). Inherited namespace
//! declarations and `xml:*` attributes come out as the W3C algorithms say,
//! because libxml2 sees the real document. Output is collected as raw bytes.

use super::algorithm::C14nMethod;
use super::dom::{Document, Node, XmlError};
use libxml::bindings as ffi;
use std::ffi::CString;
use std::os::raw::{c_char, c_int, c_void};

/// Which nodes are in the canonicalized node set.
struct NodeSet {
    apex: ffi::xmlNodePtr,
    excluded: ffi::xmlNodePtr,
}

impl NodeSet {
    /// Whether `node` is `target` or one of its descendants.
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

unsafe extern "C" fn is_visible(
    user: *mut c_void,
    node: ffi::xmlNodePtr,
    parent: ffi::xmlNodePtr,
) -> c_int {
    if user.is_null() || node.is_null() {
        return 0;
    }
    // SAFETY: `user` is the `NodeSet` passed to xmlC14NExecute below and the
    // nodes come from the document being canonicalized.
    unsafe { c_int::from((*(user as *const NodeSet)).contains(node, parent)) }
}

unsafe extern "C" fn collect(context: *mut c_void, buffer: *const c_char, len: c_int) -> c_int {
    let Ok(n) = usize::try_from(len) else {
        return -1;
    };
    if context.is_null() || (buffer.is_null() && n > 0) {
        return -1;
    }
    // SAFETY: `context` is the `Vec<u8>` passed to xmlOutputBufferCreateIO
    // below; libxml2 hands over `len` readable bytes.
    unsafe {
        let out = &mut *(context as *mut Vec<u8>);
        if n > 0 {
            out.extend_from_slice(std::slice::from_raw_parts(buffer.cast::<u8>(), n));
        }
    }
    len
}

/// Canonicalizes `apex` and its subtree (minus `excluded` and its subtree)
/// with `method`; `inclusive_prefixes` is the exclusive C14N
/// `InclusiveNamespaces PrefixList` (ignored by inclusive C14N).
pub fn canonicalize(
    doc: &Document,
    apex: Node<'_>,
    excluded: Option<Node<'_>>,
    method: C14nMethod,
    inclusive_prefixes: &[String],
) -> Result<Vec<u8>, XmlError> {
    let failed = || XmlError::C14n {
        element: apex.name().to_owned(),
        line: apex.line(),
    };
    let set = NodeSet {
        apex: apex.raw(),
        excluded: excluded.map_or(std::ptr::null_mut(), Node::raw),
    };
    let prefixes: Vec<CString> = inclusive_prefixes
        .iter()
        .map(|p| CString::new(p.as_str()).map_err(|_| failed()))
        .collect::<Result<_, _>>()?;
    let mut prefix_ptrs: Vec<*mut ffi::xmlChar> = prefixes
        .iter()
        .map(|p| p.as_ptr() as *mut ffi::xmlChar)
        .collect();
    prefix_ptrs.push(std::ptr::null_mut());
    let mode = if method.exclusive() {
        ffi::xmlC14NMode_XML_C14N_EXCLUSIVE_1_0
    } else {
        ffi::xmlC14NMode_XML_C14N_1_0
    } as c_int;
    let mut out: Vec<u8> = Vec::with_capacity(4096);
    // SAFETY: the output buffer writes into `out`, which outlives it; `set`
    // and `prefix_ptrs` outlive the call; the buffer is closed (freed) once.
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
            doc.raw(),
            Some(is_visible),
            (&set as *const NodeSet).cast_mut().cast(),
            mode,
            if method.exclusive() && !inclusive_prefixes.is_empty() {
                prefix_ptrs.as_mut_ptr()
            } else {
                std::ptr::null_mut()
            },
            c_int::from(method.with_comments()),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn c14n(xml: &str, id: &str, method: C14nMethod) -> String {
        let doc = Document::parse(xml.as_bytes()).unwrap();
        let apex = doc.element_by_id(id).unwrap();
        String::from_utf8(canonicalize(&doc, apex, None, method, &[]).unwrap()).unwrap()
    }

    #[test]
    fn inclusive_c14n_carries_inherited_namespaces_and_xml_attributes() {
        let xml = r#"<r xmlns:x="urn:x" xmlns:y="urn:y" xml:lang="en"><c xml:id="k" b="2" a="1"><d/></c></r>"#;
        assert_eq!(
            c14n(xml, "k", C14nMethod::Inclusive),
            r#"<c xmlns:x="urn:x" xmlns:y="urn:y" a="1" b="2" xml:id="k" xml:lang="en"><d></d></c>"#
        );
    }

    #[test]
    fn exclusive_c14n_drops_unused_inherited_namespaces() {
        let xml = r#"<r xmlns:x="urn:x" xmlns:y="urn:y"><c xml:id="k" x:a="1"/></r>"#;
        assert_eq!(
            c14n(xml, "k", C14nMethod::Exclusive),
            r#"<c xmlns:x="urn:x" xml:id="k" x:a="1"></c>"#
        );
    }

    #[test]
    fn multibyte_text_survives_large_output() {
        let text = "é€😀".repeat(3000);
        let xml = format!(r#"<r><c xml:id="k">{text}</c></r>"#);
        assert_eq!(
            c14n(&xml, "k", C14nMethod::Inclusive),
            format!(r#"<c xml:id="k">{text}</c>"#)
        );
    }

    #[test]
    fn excluded_subtree_and_comments_are_left_out() {
        let xml = r#"<r><c xml:id="k"><!--x--><s><t/></s><u/></c></r>"#;
        let doc = Document::parse(xml.as_bytes()).unwrap();
        let apex = doc.element_by_id("k").unwrap();
        let s = apex.children().next().unwrap();
        let out = canonicalize(&doc, apex, Some(s), C14nMethod::Inclusive, &[]).unwrap();
        assert_eq!(out, br#"<c xml:id="k"><u></u></c>"#);
    }
}
