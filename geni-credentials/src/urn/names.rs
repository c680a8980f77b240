//! URN object types and the GENI naming rules for slices, slivers, users and tools.

use super::UrnError;
use std::fmt;

/// Longest user name accepted. The GENI documents say 8 characters, but
/// federation portals (Fed4FIRE, the GENI portal) issue longer names.
pub const MAX_USER_NAME: usize = 64;
/// Longest slice name (GENI: 19 characters).
pub const MAX_SLICE_NAME: usize = 19;
/// Longest tool name (GENI: 64 characters).
pub const MAX_TOOL_NAME: usize = 64;

/// The object type of a URN (its third part). Types are compared
/// case-insensitively; unknown types are kept as written.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum UrnType {
    /// `authority` (name `sa`, `ma`, `am`, `cm`, `ch`, `ca`, …).
    Authority,
    /// `interface`.
    Interface,
    /// `link`.
    Link,
    /// `node`.
    Node,
    /// `slice`.
    Slice,
    /// `sliver`.
    Sliver,
    /// `user`.
    User,
    /// `vlan`.
    Vlan,
    /// `tool`.
    Tool,
    /// Any other type seen in the wild (`image`, `stitchport`, `log`, …).
    Other(String),
}

impl UrnType {
    /// Reads a type as written in a URN (already checked to be non-empty).
    pub(super) fn from_text(text: &str) -> UrnType {
        match text.to_ascii_lowercase().as_str() {
            "authority" => UrnType::Authority,
            "interface" => UrnType::Interface,
            "link" => UrnType::Link,
            "node" => UrnType::Node,
            "slice" => UrnType::Slice,
            "sliver" => UrnType::Sliver,
            "user" => UrnType::User,
            "vlan" => UrnType::Vlan,
            "tool" => UrnType::Tool,
            _ => UrnType::Other(text.to_owned()),
        }
    }

    /// The canonical (lower-case) spelling of a known type, or an unknown type as written.
    pub fn as_str(&self) -> &str {
        match self {
            UrnType::Authority => "authority",
            UrnType::Interface => "interface",
            UrnType::Link => "link",
            UrnType::Node => "node",
            UrnType::Slice => "slice",
            UrnType::Sliver => "sliver",
            UrnType::User => "user",
            UrnType::Vlan => "vlan",
            UrnType::Tool => "tool",
            UrnType::Other(text) => text,
        }
    }

    /// Whether names of this type compare case-insensitively (slices and users).
    pub fn case_insensitive_names(&self) -> bool {
        matches!(self, UrnType::Slice | UrnType::User)
    }
}

impl fmt::Display for UrnType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Checks `name` against the GENI rule for `kind`; types without a rule accept any name.
pub fn check_name(kind: &UrnType, name: &str) -> Result<(), UrnError> {
    let bad = |rule: &'static str| UrnError::BadName {
        kind: kind.as_str().to_owned(),
        name: name.to_owned(),
        rule,
    };
    let mut chars = name.chars();
    let first = chars.next();
    match kind {
        UrnType::Slice => {
            let ok = first.is_some_and(|c| c.is_ascii_alphanumeric())
                && chars.all(|c| c.is_ascii_alphanumeric() || c == '-')
                && name.len() <= MAX_SLICE_NAME;
            ok.then_some(()).ok_or_else(|| {
                bad("1 to 19 letters, digits or hyphens, not starting with a hyphen")
            })
        }
        UrnType::Sliver => {
            let ok = !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'));
            ok.then_some(())
                .ok_or_else(|| bad("letters, digits, '.', '-' or '_' only"))
        }
        UrnType::User => {
            let ok = first.is_some_and(|c| c.is_ascii_alphabetic())
                && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
                && name.len() <= MAX_USER_NAME;
            ok.then_some(())
                .ok_or_else(|| bad("a letter, then letters, digits or '_' (at most 64 characters)"))
        }
        UrnType::Tool => {
            let ok = first.is_some_and(|c| c.is_ascii_alphabetic())
                && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '@' | '.'))
                && name.len() <= MAX_TOOL_NAME;
            ok.then_some(()).ok_or_else(|| {
                bad("a letter, then letters, digits, '-', '_', '@' or '.' (at most 64 characters)")
            })
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slice_names() {
        assert!(check_name(&UrnType::Slice, "s1").is_ok());
        assert!(check_name(&UrnType::Slice, "My-slice-0123456789").is_ok());
        assert!(check_name(&UrnType::Slice, "-bad").is_err());
        assert!(check_name(&UrnType::Slice, "a_b").is_err());
        assert!(check_name(&UrnType::Slice, "abcdefghij0123456789").is_err());
    }

    #[test]
    fn user_names_are_lenient_on_length() {
        assert!(check_name(&UrnType::User, "alice").is_ok());
        assert!(check_name(&UrnType::User, "expedient").is_ok());
        assert!(check_name(&UrnType::User, "a_very_long_portal_user_name").is_ok());
        assert!(check_name(&UrnType::User, "1abc").is_err());
        assert!(check_name(&UrnType::User, "a-b").is_err());
    }

    #[test]
    fn sliver_and_tool_names() {
        assert!(check_name(&UrnType::Sliver, "vm-1.a_b").is_ok());
        assert!(check_name(&UrnType::Sliver, "a:b").is_err());
        assert!(check_name(&UrnType::Tool, "portal-gpo").is_ok());
        assert!(check_name(&UrnType::Tool, "jfed@host.example").is_ok());
        assert!(check_name(&UrnType::Tool, "9tool").is_err());
    }

    #[test]
    fn name_error_names_the_rule() {
        let err = check_name(&UrnType::Slice, "-x").unwrap_err().to_string();
        assert!(err.contains("slice name \"-x\""), "{err}");
        assert!(err.contains("not starting with a hyphen"), "{err}");
    }

    #[test]
    fn types_compare_case_insensitively() {
        assert_eq!(UrnType::from_text("SLICE"), UrnType::Slice);
        assert_eq!(UrnType::from_text("image").as_str(), "image");
    }
}
