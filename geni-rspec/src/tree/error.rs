//! Why a document was refused, with the 1-based line (and column) of the
//! offending byte.

/// Parse failure with 1-based line (and column where known) and a message a
/// person can act on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ParseError {
    /// The input is larger than [`Limits::max_bytes`](super::Limits::max_bytes).
    #[error("document of {size} bytes exceeds the limit of {limit} bytes")]
    TooLarge {
        /// Size of the input.
        size: usize,
        /// The limit in force.
        limit: usize,
    },
    /// The bytes are not UTF-8, or declare another encoding.
    #[error("line {line}, column {column}: {message}")]
    Encoding {
        /// 1-based line.
        line: u32,
        /// 1-based column (in characters).
        column: u32,
        /// What is wrong.
        message: String,
    },
    /// A `<!DOCTYPE` declaration; it is also the only place entities can be declared.
    #[error(
        "line {line}, column {column}: DOCTYPE declarations (and the entity declarations they carry) are not allowed; remove the <!DOCTYPE ...> block"
    )]
    Doctype {
        /// 1-based line.
        line: u32,
        /// 1-based column.
        column: u32,
    },
    /// An entity reference other than the five predefined ones.
    #[error(
        "line {line}, column {column}: unknown entity reference `&{name};`: only &amp; &lt; &gt; &apos; &quot; and character references (&#NN; &#xHH;) are allowed"
    )]
    UnknownEntity {
        /// 1-based line.
        line: u32,
        /// 1-based column.
        column: u32,
        /// The entity name as written.
        name: String,
    },
    /// An end tag that does not close the innermost open element.
    #[error(
        "line {line}, column {column}: end tag </{found}> does not match start tag <{expected}> opened on line {open_line}"
    )]
    MismatchedTag {
        /// 1-based line of the end tag.
        line: u32,
        /// 1-based column of the end tag.
        column: u32,
        /// Name of the open element.
        expected: String,
        /// Name in the end tag.
        found: String,
        /// Line of the open element's start tag.
        open_line: u32,
    },
    /// The input ends while elements are still open.
    #[error(
        "line {line}: the document ends before element <{name}> opened on line {open_line} is closed"
    )]
    Unclosed {
        /// Line of the end of the input.
        line: u32,
        /// Name of the innermost open element.
        name: String,
        /// Line of its start tag.
        open_line: u32,
    },
    /// The same attribute twice on one element.
    #[error("line {line}, column {column}: attribute `{name}` appears twice on <{element}>")]
    DuplicateAttribute {
        /// 1-based line of the second occurrence.
        line: u32,
        /// 1-based column of the second occurrence.
        column: u32,
        /// The attribute name (or `{uri}local` for two prefixes of one namespace).
        name: String,
        /// The element.
        element: String,
    },
    /// A prefix with no namespace declaration in scope.
    #[error(
        "line {line}, column {column}: namespace prefix `{prefix}` of `{name}` is not declared; add xmlns:{prefix}=\"...\" on this element or an ancestor"
    )]
    UndeclaredPrefix {
        /// 1-based line.
        line: u32,
        /// 1-based column.
        column: u32,
        /// The prefix.
        prefix: String,
        /// The element or attribute name using it.
        name: String,
    },
    /// Content before or after the document element that XML does not allow there.
    #[error("line {line}, column {column}: {what} outside the document element")]
    OutsideRoot {
        /// 1-based line.
        line: u32,
        /// 1-based column.
        column: u32,
        /// What was found (text, a second element, ...).
        what: String,
    },
    /// The input holds no element at all.
    #[error("line {line}: the document has no root element")]
    NoRoot {
        /// Line of the end of the input.
        line: u32,
    },
    /// A limit of [`Limits`](super::Limits) was exceeded.
    #[error("line {line}: more than {limit} {what}; the document is refused as too complex")]
    LimitExceeded {
        /// 1-based line where the limit was crossed.
        line: u32,
        /// What was counted.
        what: &'static str,
        /// The limit in force.
        limit: usize,
    },
    /// Any other well-formedness error.
    #[error("line {line}, column {column}: {message}")]
    Syntax {
        /// 1-based line.
        line: u32,
        /// 1-based column.
        column: u32,
        /// What is wrong.
        message: String,
    },
}

impl ParseError {
    /// The 1-based line of the error (1 for errors about the whole input).
    pub fn line(&self) -> u32 {
        self.located().0
    }

    /// The 1-based column (in characters) of the error, where one is known.
    pub fn column(&self) -> Option<u32> {
        self.located().1
    }

    /// Line and column of the error.
    fn located(&self) -> (u32, Option<u32>) {
        match self {
            Self::TooLarge { .. } => (1, None),
            Self::Encoding { line, column, .. }
            | Self::Doctype { line, column }
            | Self::UnknownEntity { line, column, .. }
            | Self::MismatchedTag { line, column, .. }
            | Self::DuplicateAttribute { line, column, .. }
            | Self::UndeclaredPrefix { line, column, .. }
            | Self::OutsideRoot { line, column, .. }
            | Self::Syntax { line, column, .. } => (*line, Some(*column)),
            Self::Unclosed { line, .. }
            | Self::NoRoot { line }
            | Self::LimitExceeded { line, .. } => (*line, None),
        }
    }
}

/// Line and column (both 1-based, column in characters) of byte `offset` of `src`.
pub(crate) fn position(src: &[u8], offset: usize) -> (u32, u32) {
    let offset = offset.min(src.len());
    let before = &src[..offset];
    let line = memchr::memchr_iter(b'\n', before).count() as u32 + 1;
    let line_start = memchr::memrchr(b'\n', before).map_or(0, |i| i + 1);
    let column = before[line_start..]
        .iter()
        .filter(|&&b| (b & 0xC0) != 0x80)
        .count() as u32
        + 1;
    (line, column)
}
