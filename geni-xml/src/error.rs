//! Why libxml2, or the limits put in front of it, refused a document.

/// Why a document was refused or could not be canonicalized.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum XmlError {
    /// The bytes are not a well-formed XML document.
    #[error("not well-formed XML at line {line}: {message}")]
    NotWellFormed {
        /// 1-based line of the first error (0 when libxml2 gave none).
        line: u32,
        /// libxml2's message, trimmed.
        message: String,
    },
    /// The document has a DOCTYPE (and so possibly entity declarations);
    /// it is the door to entity expansion attacks and no GENI document
    /// needs one.
    #[error("DOCTYPE and entity declarations are not allowed")]
    Doctype,
    /// The document is larger than the parse allows.
    #[error("document of {size} bytes exceeds the limit of {limit} bytes")]
    TooLarge {
        /// Size of the document.
        size: usize,
        /// The limit.
        limit: usize,
    },
    /// Elements are nested deeper than the parse allows.
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
        /// The apex element (empty for a document without elements).
        element: String,
        /// Its line.
        line: u32,
    },
}
