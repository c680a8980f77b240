//! RSpec validation: is this document an RSpec of the expected kind, valid
//! against the project's schemas (`xsd/`), and sound where a schema cannot
//! tell?
//!
//! Steps, each reported as [`Issue`]s naming line and element:
//! 1. a secure libxml2 parse (no DOCTYPE, no entities, no network);
//! 2. identification: namespace of the document element (GENI v3 or
//!    ProtoGENI v2) and its `type` (advertisement, request, manifest),
//!    optionally required to be a given kind;
//! 3. XSD validation with the embedded, precompiled [`SchemaSet`]: unknown
//!    extension namespaces are accepted unchecked, the extensions the
//!    project knows (stitching, ssh-user, opstate, jFed proxy) are checked;
//! 4. for requests, the one rule of [`semantic`](self) the schemas cannot
//!    express and without which no aggregate can serve a request (unique
//!    `client_id`s), on the lossless [`tree`](crate::tree). What only the
//!    serving aggregate can judge (the ends of its own links, the sliver
//!    type of its own nodes) it checks itself.
//!
//! Before any of this, the tree parse enforces the [`Limits`] (size, depth,
//! attributes, nodes), so libxml2 only ever sees bounded documents.
//!
//! A [`Validator`] is cheap to clone and safe to use from many threads.

mod identify;
mod schema_set;
mod semantic;

pub use schema_set::{SchemaError, SchemaSet};

use crate::tree::{Document, Limits, ParseError};
use geni_xml::XmlError;
use std::fmt;

/// The RSpec languages the aggregate understands, told apart by namespace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RspecVersion {
    /// GENI RSpec v3, `http://www.geni.net/resources/rspec/3`.
    GeniV3,
    /// ProtoGENI RSpec v2, `http://www.protogeni.net/resources/rspec/2`.
    ProtoGeniV2,
}

impl RspecVersion {
    /// The namespace of the version's elements.
    pub fn namespace(self) -> &'static str {
        match self {
            Self::GeniV3 => "http://www.geni.net/resources/rspec/3",
            Self::ProtoGeniV2 => "http://www.protogeni.net/resources/rspec/2",
        }
    }

    /// The version whose namespace is `ns`.
    pub fn from_namespace(ns: &str) -> Option<Self> {
        [Self::GeniV3, Self::ProtoGeniV2]
            .into_iter()
            .find(|v| v.namespace() == ns)
    }
}

/// The three kinds of RSpec, from the document element's `type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RspecKind {
    /// What an aggregate offers (ListResources).
    Advertisement,
    /// What an experimenter asks for (Allocate, CreateSliver).
    Request,
    /// What an aggregate granted (Allocate, Provision, Describe).
    Manifest,
}

impl RspecKind {
    /// The value of the `type` attribute for this kind.
    pub fn type_attribute(self) -> &'static str {
        match self {
            Self::Advertisement => "advertisement",
            Self::Request => "request",
            Self::Manifest => "manifest",
        }
    }

    /// The kind whose `type` attribute is `value`.
    pub fn from_type_attribute(value: &str) -> Option<Self> {
        [Self::Advertisement, Self::Request, Self::Manifest]
            .into_iter()
            .find(|k| k.type_attribute() == value.trim())
    }

    /// "an advertisement", "a request", "a manifest".
    fn with_article(self) -> &'static str {
        match self {
            Self::Advertisement => "an advertisement",
            Self::Request => "a request",
            Self::Manifest => "a manifest",
        }
    }
}

/// What a problem is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum IssueKind {
    /// The document is larger than allowed.
    Limit,
    /// The bytes are not well-formed XML, or declare a DOCTYPE.
    Syntax,
    /// The document element is not in an RSpec namespace.
    Namespace,
    /// Not an `<rspec>`, or not of the expected type.
    DocumentType,
    /// The document breaks the schema.
    Schema,
    /// A rule schemas cannot express (unique ids, references).
    Semantic,
}

/// One problem found in a document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Issue {
    /// What the problem is about.
    pub kind: IssueKind,
    /// 1-based line (0 when the problem is about the whole document).
    pub line: u32,
    /// Local name of the element concerned, if one is.
    pub element: Option<String>,
    /// What is wrong, for a person.
    pub message: String,
}

impl fmt::Display for Issue {
    /// `LINE: element: message`, or `LINE: message` without an element.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.element {
            Some(element) => write!(f, "{}: {element}: {}", self.line, self.message),
            None => write!(f, "{}: {}", self.line, self.message),
        }
    }
}

/// A document failed validation; holds every problem found, in order.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid RSpec: {}", summary(.issues))]
pub struct Invalid {
    /// The problems, at least one.
    pub issues: Vec<Issue>,
}

fn summary(issues: &[Issue]) -> String {
    let shown: Vec<String> = issues.iter().take(3).map(|i| format!("line {i}")).collect();
    let more = issues.len().saturating_sub(shown.len());
    if more == 0 {
        shown.join("; ")
    } else {
        format!("{}; and {more} more", shown.join("; "))
    }
}

impl Invalid {
    fn one(issue: Issue) -> Self {
        Self {
            issues: vec![issue],
        }
    }
}

/// What a valid document turned out to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Validated {
    /// Its language.
    pub version: RspecVersion,
    /// Its kind.
    pub kind: RspecKind,
}

/// Validates RSpec documents against the shared, compiled RSpec schemas.
#[derive(Debug, Clone)]
pub struct Validator {
    schemas: &'static SchemaSet,
    limits: Limits,
}

impl Validator {
    /// A validator over the process-wide schema set (compiled on first
    /// use) with the default [`Limits`].
    pub fn new() -> Result<Self, SchemaError> {
        Ok(Self {
            schemas: SchemaSet::shared()?,
            limits: Limits::default(),
        })
    }

    /// The same validator with other limits.
    pub fn with_limits(self, limits: Limits) -> Self {
        Self { limits, ..self }
    }

    /// Validates an RSpec of any kind.
    pub fn validate(&self, bytes: &[u8]) -> Result<Validated, Invalid> {
        self.run(bytes, None)
    }

    /// Validates an RSpec that must be of `kind` (e.g. the request of an
    /// Allocate call).
    pub fn validate_as(&self, bytes: &[u8], kind: RspecKind) -> Result<Validated, Invalid> {
        self.run(bytes, Some(kind))
    }

    /// Validates an RSpec that must be of `kind` and returns the tree the
    /// validation parsed, so that a caller reads the document without
    /// parsing it again.
    pub fn validate_and_parse(
        &self,
        bytes: &[u8],
        kind: RspecKind,
    ) -> Result<(Validated, Document), Invalid> {
        let (validated, tree) = self.check(bytes, Some(kind))?;
        let tree = tree.map_err(|error| Invalid::one(tree_issue(&error)))?;
        Ok((validated, tree))
    }

    /// Schema validation only, against the schema of `version` and `kind`
    /// whatever the document says it is (as `xmllint --schema` does). Only
    /// the size limit applies, and lines beyond 65535 are libxml2's (they
    /// may be off by one).
    pub fn check_schema(
        &self,
        bytes: &[u8],
        version: RspecVersion,
        kind: RspecKind,
    ) -> Result<(), Invalid> {
        let mut doc = self.parse(bytes)?;
        let issues = self.schemas.validate(&mut doc, version, kind, None);
        if issues.is_empty() {
            Ok(())
        } else {
            Err(Invalid { issues })
        }
    }

    fn run(&self, bytes: &[u8], expected: Option<RspecKind>) -> Result<Validated, Invalid> {
        self.check(bytes, expected).map(|(validated, _)| validated)
    }

    /// Validates `bytes`; returns the tree parse beside the verdict.
    fn check(
        &self,
        bytes: &[u8],
        expected: Option<RspecKind>,
    ) -> Result<(Validated, Result<Document, ParseError>), Invalid> {
        // The tree parse enforces every limit (size, depth, attributes,
        // nodes) before libxml2 sees the bytes; its other complaints wait
        // until libxml2 has given its own, standard ones.
        let tree = Document::parse_with_limits(bytes, &self.limits);
        if let Err(error) = &tree {
            let issue = tree_issue(error);
            if issue.kind == IssueKind::Limit {
                return Err(Invalid::one(issue));
            }
        }
        let mut doc = self.parse(bytes)?;
        let root = doc.root().ok_or_else(|| {
            Invalid::one(syntax_issue(0, "the document has no element".to_owned()))
        })?;
        let (version, kind) = identify::identify(root, expected).map_err(Invalid::one)?;
        let mut issues = self
            .schemas
            .validate(&mut doc, version, kind, tree.as_ref().ok());
        if kind == RspecKind::Request {
            match &tree {
                Ok(tree) => issues.extend(semantic::check_request(tree, version.namespace())),
                Err(error) => issues.push(tree_issue(error)),
            }
        }
        if issues.is_empty() {
            Ok((Validated { version, kind }, tree))
        } else {
            Err(Invalid { issues })
        }
    }

    /// Size check, then the secure libxml2 parse.
    fn parse(&self, bytes: &[u8]) -> Result<geni_xml::Document, Invalid> {
        let max_bytes = self.limits.max_bytes;
        if bytes.len() > max_bytes {
            return Err(Invalid::one(Issue {
                kind: IssueKind::Limit,
                line: 0,
                element: None,
                message: format!(
                    "the document has {} bytes, more than the limit of {}",
                    bytes.len(),
                    max_bytes
                ),
            }));
        }
        let options = geni_xml::ParseOptions::default().named(c"rspec.xml");
        geni_xml::Document::parse_with(bytes, &options).map_err(|error| {
            Invalid::one(match error {
                XmlError::NotWellFormed { line, message } => syntax_issue(line, message),
                XmlError::Doctype => syntax_issue(
                    doctype_line(bytes),
                    "DOCTYPE declarations are not allowed in RSpecs".to_owned(),
                ),
                other => syntax_issue(0, other.to_string()),
            })
        })
    }
}

fn syntax_issue(line: u32, message: String) -> Issue {
    Issue {
        kind: IssueKind::Syntax,
        line,
        element: None,
        message,
    }
}

/// A document libxml2 accepted but the tree refused: a limit, or input the
/// tree is stricter about (e.g. a non-UTF-8 encoding).
fn tree_issue(error: &ParseError) -> Issue {
    let kind = match error {
        ParseError::TooLarge { .. } | ParseError::LimitExceeded { .. } => IssueKind::Limit,
        _ => IssueKind::Syntax,
    };
    let text = error.to_string();
    // The line is reported on its own; keep only what follows "line N[, column C]: ".
    let message = match text.split_once(": ") {
        Some((position, rest)) if position.starts_with("line ") => rest.to_owned(),
        _ => text,
    };
    Issue {
        kind,
        line: error.line(),
        element: None,
        message,
    }
}

/// The line of the first `<!DOCTYPE`, for the error message.
fn doctype_line(bytes: &[u8]) -> u32 {
    let at = bytes
        .windows(9)
        .position(|w| w == b"<!DOCTYPE")
        .unwrap_or(0);
    let newlines = bytes[..at].iter().filter(|&&b| b == b'\n').count();
    u32::try_from(newlines + 1).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const REQUEST: &str = r#"<?xml version="1.0"?>
<rspec xmlns="http://www.geni.net/resources/rspec/3" type="request">
  <node client_id="a"><sliver_type name="default-vm"/></node>
</rspec>"#;

    #[test]
    fn a_minimal_request_is_valid() {
        let found = Validator::new()
            .unwrap()
            .validate(REQUEST.as_bytes())
            .unwrap();
        assert_eq!(found.kind, RspecKind::Request);
        assert_eq!(found.version, RspecVersion::GeniV3);
    }

    /// The issues of a document that must be refused under `limits`.
    fn refuse(doc: &str, limits: Limits) -> Vec<Issue> {
        let validator = Validator::new().unwrap().with_limits(limits);
        validator.validate(doc.as_bytes()).unwrap_err().issues
    }

    #[test]
    fn oversized_documents_are_refused_before_parsing() {
        let limits = Limits {
            max_bytes: 10,
            ..Limits::default()
        };
        assert_eq!(refuse(REQUEST, limits)[0].kind, IssueKind::Limit);
    }

    #[test]
    fn a_doctype_is_refused_with_its_line() {
        let doc = "<?xml version=\"1.0\"?>\n<!DOCTYPE rspec [<!ENTITY a \"b\">]>\n<rspec/>";
        let issues = refuse(doc, Limits::default());
        assert_eq!((issues[0].kind, issues[0].line), (IssueKind::Syntax, 2));
    }

    #[test]
    fn depth_and_attribute_limits_apply_to_every_kind() {
        let depth = Limits {
            max_depth: 2,
            ..Limits::default()
        };
        let issues = refuse(REQUEST, depth);
        assert_eq!((issues[0].kind, issues[0].line), (IssueKind::Limit, 3));
        let ad = "<rspec xmlns=\"http://www.geni.net/resources/rspec/3\" type=\"advertisement\"\n a=\"1\" b=\"2\"/>";
        let attributes = Limits {
            max_attributes: 2,
            ..Limits::default()
        };
        let issues = refuse(ad, attributes);
        assert_eq!(issues.len(), 1);
        assert_eq!(issues[0].kind, IssueKind::Limit);
    }

    #[test]
    fn semantic_problems_follow_schema_problems() {
        let doc = REQUEST.replace("</node>", "</node>\n  <node client_id=\"a\" bogus=\"1\"/>");
        let issues = refuse(&doc, Limits::default());
        assert_eq!(issues.len(), 2, "{issues:?}");
        assert_eq!((issues[0].kind, issues[0].line), (IssueKind::Schema, 4));
        assert_eq!((issues[1].kind, issues[1].line), (IssueKind::Semantic, 4));
        assert!(issues[1].message.contains("client_id 'a' is already used"));
    }

    #[test]
    fn a_node_without_sliver_type_is_a_valid_request() {
        let doc = REQUEST.replace("<sliver_type name=\"default-vm\"/>", "");
        let found = Validator::new()
            .unwrap()
            .validate_as(doc.as_bytes(), RspecKind::Request);
        assert_eq!(found.map(|v| v.kind), Ok(RspecKind::Request));
    }

    #[test]
    fn schema_errors_name_line_and_element() {
        let doc = REQUEST.replace("<node client_id=\"a\">", "<node>");
        let issue = &refuse(&doc, Limits::default())[0];
        assert_eq!(issue.kind, IssueKind::Schema);
        assert_eq!(issue.line, 3);
        assert_eq!(issue.element.as_deref(), Some("node"));
        assert!(issue.message.contains("client_id"), "{issue}");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// Hostile edits of a valid request (a byte overwritten, the
        /// document cut short) never panic, and every problem points inside
        /// the document.
        #[test]
        fn damaged_requests_are_refused_cleanly(at in 0usize..REQUEST.len(), byte in any::<u8>(), cut in any::<bool>()) {
            let mut bytes = REQUEST.as_bytes().to_vec();
            if cut {
                bytes.truncate(at);
            } else {
                bytes[at] = byte;
            }
            let lines = u32::try_from(bytes.split(|&b| b == b'\n').count()).unwrap();
            if let Err(invalid) = Validator::new().unwrap().validate_as(&bytes, RspecKind::Request) {
                prop_assert!(!invalid.issues.is_empty());
                for issue in &invalid.issues {
                    prop_assert!(issue.line <= lines, "{issue} beyond {lines} lines");
                    prop_assert!(!issue.message.is_empty());
                }
            }
        }
    }
}
