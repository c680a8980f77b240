//! GENI URNs: `urn:publicid:IDN+<authority>+<type>+<name>`.
//!
//! [`Urn::parse`] applies the reference implementation's validity checks
//! (gcf `is_valid_urn`: the prefix, at least four `+`-separated parts, no
//! whitespace, `|`, `?`, `/` or `#`) plus non-empty parts and sub-authorities.
//! Name rules per type (slice, sliver, user, tool) are checked by
//! [`Urn::check_name`] and [`Urn::parse_as`]. The text is kept exactly as
//! written, so formatting a parsed URN gives back the input.

mod hrn;
mod names;
mod publicid;

use hrn::hrn_is_authority_for;
pub use names::UrnType;
use names::check_name;
use publicid::from_urn_form;
pub use publicid::{publicid_to_urn, urn_to_publicid};

use crate::refusal::RefusalKind;
use std::fmt;
use std::str::FromStr;

/// The fixed start of every GENI URN.
pub const URN_PREFIX: &str = "urn:publicid:IDN+";
/// Longest URN accepted, in bytes.
pub const MAX_URN_LEN: usize = 1024;

/// Why a text is not an acceptable GENI URN.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum UrnError {
    /// The text does not start with `urn:publicid:IDN+`.
    #[error("{0:?} is not a GENI URN: it must start with \"urn:publicid:IDN+\"")]
    BadPrefix(String),
    /// The text is longer than `MAX_URN_LEN`.
    #[error("URN is {len} bytes long; at most {MAX_URN_LEN} are accepted")]
    TooLong {
        /// Length of the rejected text.
        len: usize,
    },
    /// The text holds a character URNs may not contain.
    #[error(
        "URN {urn:?} contains {found:?}, which a GENI URN may not contain (no whitespace, '|', '?', '/', '#' or control characters)"
    )]
    ForbiddenChar {
        /// The rejected text.
        urn: String,
        /// The offending character.
        found: char,
    },
    /// One of authority, type and name is missing or empty.
    #[error("URN {urn:?} has no {part}: expected urn:publicid:IDN+<authority>+<type>+<name>")]
    MissingPart {
        /// The rejected text.
        urn: String,
        /// Which part is missing.
        part: &'static str,
    },
    /// The authority has an empty sub-authority (`a::b`, `:a`, `a:`).
    #[error("URN {urn:?} has an empty sub-authority in {authority:?}")]
    EmptySubAuthority {
        /// The rejected text.
        urn: String,
        /// The authority part.
        authority: String,
    },
    /// The name breaks the GENI rule for its type.
    #[error("{kind} name {name:?} is not allowed: {rule}")]
    BadName {
        /// The URN type whose rule applies.
        kind: String,
        /// The rejected name.
        name: String,
        /// The rule, in words.
        rule: &'static str,
    },
    /// The URN has another type than the one required.
    #[error("URN {urn:?} is of type {found:?}, expected {expected:?}")]
    WrongType {
        /// The rejected text.
        urn: String,
        /// The required type.
        expected: String,
        /// The type found.
        found: String,
    },
    /// A public identifier does not start with the `IDN` keyword.
    #[error("{0:?} is not a GENI public identifier: expected \"IDN <authority> <type> <name>\"")]
    NotPublicId(String),
}

impl UrnError {
    /// The GENI outcome of presenting such a URN in a credential or certificate.
    pub fn kind(&self) -> RefusalKind {
        RefusalKind::CredentialInvalid
    }
}

/// A parsed GENI URN; the original text is kept and [`Display`](fmt::Display) returns it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Urn {
    text: String,
    kind: UrnType,
    /// Byte ranges of authority, type and name within `text`.
    authority_end: usize,
    type_end: usize,
}

impl Urn {
    /// Parses and checks a URN (see the module documentation for the rules).
    pub fn parse(text: &str) -> Result<Urn, UrnError> {
        if text.len() > MAX_URN_LEN {
            return Err(UrnError::TooLong { len: text.len() });
        }
        let rest = text
            .strip_prefix(URN_PREFIX)
            .ok_or_else(|| UrnError::BadPrefix(text.to_owned()))?;
        if let Some(found) = text
            .chars()
            .find(|c| c.is_whitespace() || c.is_control() || matches!(c, '|' | '?' | '/' | '#'))
        {
            return Err(UrnError::ForbiddenChar {
                urn: text.to_owned(),
                found,
            });
        }
        let missing = |part| UrnError::MissingPart {
            urn: text.to_owned(),
            part,
        };
        let mut parts = rest.splitn(3, '+');
        let authority = parts
            .next()
            .filter(|a| !a.is_empty())
            .ok_or_else(|| missing("authority"))?;
        let kind = parts
            .next()
            .filter(|t| !t.is_empty())
            .ok_or_else(|| missing("type"))?;
        parts
            .next()
            .filter(|n| !n.is_empty())
            .ok_or_else(|| missing("name"))?;
        if authority.split(':').any(str::is_empty) {
            return Err(UrnError::EmptySubAuthority {
                urn: text.to_owned(),
                authority: authority.to_owned(),
            });
        }
        let authority_end = URN_PREFIX.len() + authority.len();
        let type_end = authority_end + 1 + kind.len();
        Ok(Urn {
            text: text.to_owned(),
            kind: UrnType::from_text(kind),
            authority_end,
            type_end,
        })
    }

    /// Parses a URN that must be of type `expected` and follow that type's name rule.
    pub fn parse_as(text: &str, expected: &UrnType) -> Result<Urn, UrnError> {
        let urn = Urn::parse(text)?;
        if urn.urn_type() != expected {
            return Err(UrnError::WrongType {
                urn: text.to_owned(),
                expected: expected.as_str().to_owned(),
                found: urn.type_text().to_owned(),
            });
        }
        urn.check_name()?;
        Ok(urn)
    }

    /// Builds a URN from its parts, written in URN form (`a:b`, not `a//b`).
    pub fn from_parts(authority: &str, kind: &str, name: &str) -> Result<Urn, UrnError> {
        Urn::parse(&format!("{URN_PREFIX}{authority}+{kind}+{name}"))
    }

    /// The authority as written, sub-authorities separated by `:` (`ch.geni.net:proj`).
    pub fn authority(&self) -> &str {
        &self.text[URN_PREFIX.len()..self.authority_end]
    }

    /// The authority split into its top-level authority and sub-authorities.
    pub fn sub_authorities(&self) -> Vec<&str> {
        self.authority().split(':').collect()
    }

    /// The object type.
    pub fn urn_type(&self) -> &UrnType {
        &self.kind
    }

    /// The object type exactly as written.
    pub fn type_text(&self) -> &str {
        &self.text[self.authority_end + 1..self.type_end]
    }

    /// The name as written (may contain `+`).
    pub fn name(&self) -> &str {
        &self.text[self.type_end + 1..]
    }

    /// The whole URN as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Checks the name against the GENI rule for this URN's type.
    pub fn check_name(&self) -> Result<(), UrnError> {
        check_name(&self.kind, self.name())
    }

    /// The public identifier this URN transcribes (`IDN a//b type name`).
    pub fn to_publicid(&self) -> String {
        format!("IDN {}", from_urn_form(&self.text[URN_PREFIX.len()..]))
    }

    /// The SFA human-readable name (see `hrn_components` for the format).
    pub fn hrn(&self) -> String {
        hrn::hrn_of(
            self.authority(),
            self.kind == UrnType::Authority,
            self.name(),
        )
    }

    /// Whether this URN's HRN is an authority for `other`'s (equal, or a
    /// whole-component prefix). The caller decides whether `self` must be of
    /// type `authority`.
    pub fn is_authority_for(&self, other: &Urn) -> bool {
        hrn_is_authority_for(&self.hrn(), &other.hrn())
    }

    /// GENI identity comparison: authority and type case-insensitive, names
    /// of slices and users case-insensitive, other names exact.
    pub fn same_as(&self, other: &Urn) -> bool {
        let names_match = if self.kind.case_insensitive_names() {
            self.name().eq_ignore_ascii_case(other.name())
        } else {
            self.name() == other.name()
        };
        self.kind == other.kind
            && self.authority().eq_ignore_ascii_case(other.authority())
            && names_match
    }
}

impl fmt::Display for Urn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl FromStr for Urn {
    type Err = UrnError;

    fn from_str(s: &str) -> Result<Urn, UrnError> {
        Urn::parse(s)
    }
}

#[cfg(test)]
mod tests;
