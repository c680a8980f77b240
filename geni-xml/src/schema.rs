//! W3C XML Schema validation with libxml2: a schema compiled once from
//! in-memory files (served by the entity loader of [`crate::init`], so
//! compiling never touches the network or the disk), then used to validate
//! parsed documents. A compiled schema is immutable and shared; each
//! validation gets its own libxml2 validation context, so concurrent
//! validations from several threads are safe.

use crate::dom::Document;
use crate::init::{InMemoryFiles, serving};
use crate::text::message;
use libxml::bindings as ffi;
use std::ffi::{CStr, CString};
use std::os::raw::c_void;

/// One message libxml2 gave while compiling a schema or validating a
/// document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaMessage {
    /// 1-based line of the element concerned (or of the error), 0 if none.
    pub line: u32,
    /// Local name of the element concerned, if one is.
    pub element: Option<String>,
    /// libxml2's message, trimmed.
    pub message: String,
    /// The element's position as child-element indices from the document
    /// element, given when libxml2 could not keep its line (lines above
    /// 65535 are stored in 16 bits).
    pub path: Option<Vec<usize>>,
}

/// A compiled schema; freed on drop.
pub struct Schema(ffi::xmlSchemaPtr);

// SAFETY: a compiled xmlSchema is never modified after xmlSchemaParse;
// libxml2 supports validating with one schema from several threads as long
// as each uses its own validation context, which `Schema::validate` does.
unsafe impl Send for Schema {}
// SAFETY: see above; shared references only ever read the schema.
unsafe impl Sync for Schema {}

impl std::fmt::Debug for Schema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Schema").finish_non_exhaustive()
    }
}

impl Drop for Schema {
    fn drop(&mut self) {
        // SAFETY: the pointer came from xmlSchemaParse and is freed once.
        unsafe { ffi::xmlSchemaFree(self.0) }
    }
}

impl Schema {
    /// Compiles the schema at `path` of `files`, resolving its imports and
    /// includes among `files` only. Warnings count as failures (an import
    /// that cannot be resolved is only a warning to libxml2, but it would
    /// silently leave a namespace unchecked).
    pub fn compile(files: InMemoryFiles, path: &str) -> Result<Self, Vec<SchemaMessage>> {
        let fail = |message: String| {
            vec![SchemaMessage {
                line: 0,
                element: None,
                message,
                path: None,
            }]
        };
        let url = CString::new(format!("{}{path}", files.base)).map_err(|e| fail(e.to_string()))?;
        let mut messages: Vec<SchemaMessage> = Vec::new();
        // SAFETY: the parser context is created, used and freed here; the
        // user pointer of the error callback is `messages`, alive for the
        // whole call.
        let schema = serving(files, || unsafe {
            let ctxt = ffi::xmlSchemaNewParserCtxt(url.as_ptr());
            if ctxt.is_null() {
                return Err(fail(
                    "libxml2 could not allocate a schema parser".to_owned(),
                ));
            }
            ffi::xmlSchemaSetParserStructuredErrors(
                ctxt,
                Some(collect_any),
                (&mut messages as *mut Vec<SchemaMessage>).cast(),
            );
            let schema = ffi::xmlSchemaParse(ctxt);
            ffi::xmlSchemaFreeParserCtxt(ctxt);
            Ok(schema)
        })?;
        if schema.is_null() || !messages.is_empty() {
            if !schema.is_null() {
                // SAFETY: compiled above and not shared yet.
                unsafe { ffi::xmlSchemaFree(schema) };
            }
            if messages.is_empty() {
                return Err(fail("libxml2 could not compile the schema".to_owned()));
            }
            return Err(messages);
        }
        Ok(Self(schema))
    }

    /// Validates `doc`; returns every error libxml2 reports (warnings
    /// aside), in document order, empty when the document is valid.
    /// Validation records the document's IDs in it, hence `&mut`.
    pub fn validate(&self, doc: &mut Document) -> Vec<SchemaMessage> {
        let mut found: Vec<SchemaMessage> = Vec::new();
        let internal = |message: &str| SchemaMessage {
            line: 0,
            element: None,
            message: message.to_owned(),
            path: None,
        };
        // SAFETY: the validation context is created, used and freed here;
        // the callback's user pointer is `found`, alive for the whole call;
        // the document outlives the call and is not shared meanwhile.
        unsafe {
            let ctxt = ffi::xmlSchemaNewValidCtxt(self.0);
            if ctxt.is_null() {
                found.push(internal("libxml2 could not allocate a validation context"));
                return found;
            }
            ffi::xmlSchemaSetValidStructuredErrors(
                ctxt,
                Some(collect_errors),
                (&mut found as *mut Vec<SchemaMessage>).cast(),
            );
            let rc = ffi::xmlSchemaValidateDoc(ctxt, doc.raw());
            ffi::xmlSchemaFreeValidCtxt(ctxt);
            if rc != 0 && found.is_empty() {
                found.push(internal("libxml2 reported an error without details"));
            }
        }
        found
    }
}

/// libxml2 structured error callback while validating: collects errors
/// (not warnings) into the `Vec<SchemaMessage>` behind `user`.
unsafe extern "C" fn collect_errors(user: *mut c_void, error: ffi::xmlErrorPtr) {
    // SAFETY: libxml2 passes a valid error (or null) for the callback's
    // duration; `user` is the vector registered with the context.
    unsafe {
        if !error.is_null() && (*error).level >= ffi::xmlErrorLevel_XML_ERR_ERROR {
            push(user, error);
        }
    }
}

/// libxml2 structured error callback while compiling: warnings count too.
unsafe extern "C" fn collect_any(user: *mut c_void, error: ffi::xmlErrorPtr) {
    // SAFETY: as for `collect_errors`.
    unsafe { push(user, error) }
}

/// Adds `error` to the `Vec<SchemaMessage>` behind `user`.
///
/// # Safety
/// `user` must be null or point to a live `Vec<SchemaMessage>`; `error`
/// must be null or valid, and its node (if any) live.
unsafe fn push(user: *mut c_void, error: ffi::xmlErrorPtr) {
    if user.is_null() || error.is_null() {
        return;
    }
    // SAFETY: guaranteed by the caller; parents of live nodes are live.
    unsafe {
        let found = &mut *(user as *mut Vec<SchemaMessage>);
        let element = owner_element((*error).node.cast());
        let line = if element.is_null() {
            u32::try_from((*error).line).unwrap_or(0)
        } else {
            u32::try_from(ffi::xmlGetLineNo(element)).unwrap_or(0)
        };
        // libxml2 stores element lines in 16 bits; beyond, remember where
        // the element is so the caller can find its exact line.
        let path =
            (!element.is_null() && (*element).line == u16::MAX).then(|| element_path(element));
        let name = (!element.is_null()).then(|| {
            CStr::from_ptr((*element).name.cast())
                .to_string_lossy()
                .into_owned()
        });
        found.push(SchemaMessage {
            line,
            element: name,
            message: message((*error).message),
            path,
        });
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

#[cfg(test)]
mod tests {
    use super::*;

    const SCHEMA: &str = r#"<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema"
        targetNamespace="urn:t" xmlns="urn:t" elementFormDefault="qualified">
      <xs:include schemaLocation="types.xsd"/>
      <xs:element name="r"><xs:complexType><xs:sequence>
        <xs:element name="c" type="Count" maxOccurs="unbounded"/>
      </xs:sequence></xs:complexType></xs:element>
    </xs:schema>"#;
    const TYPES: &str = r#"<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema"
        targetNamespace="urn:t" xmlns="urn:t">
      <xs:simpleType name="Count"><xs:restriction base="xs:int"/></xs:simpleType>
    </xs:schema>"#;
    const FILES: InMemoryFiles = InMemoryFiles {
        base: "test-xsd:/",
        files: &[("main.xsd", SCHEMA), ("types.xsd", TYPES)],
    };

    #[test]
    fn a_schema_compiles_from_memory_and_names_the_bad_element() {
        let schema = Schema::compile(FILES, "main.xsd").unwrap();
        let mut good = Document::parse(b"<r xmlns=\"urn:t\"><c>1</c></r>").unwrap();
        assert_eq!(schema.validate(&mut good), vec![]);
        let mut bad = Document::parse(b"<r xmlns=\"urn:t\">\n<c>x</c></r>").unwrap();
        let found = schema.validate(&mut bad);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!((found[0].line, found[0].element.as_deref()), (2, Some("c")));
    }

    #[test]
    fn an_import_outside_the_files_is_refused() {
        const OUTSIDE: InMemoryFiles = InMemoryFiles {
            base: "test-xsd:/",
            files: &[("main.xsd", SCHEMA)],
        };
        assert!(Schema::compile(OUTSIDE, "main.xsd").is_err());
    }
}
