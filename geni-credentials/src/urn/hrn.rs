//! SFA human-readable names (HRNs) and the GENI rule "X is an authority for Y".
//!
//! An HRN is the URN's authority with every `.` escaped as `\.` and every
//! sub-authority separator `:` turned into `.`, followed by `.name` (also
//! dot-escaped); authority URNs drop their name. `ch.geni.net:proj+slice+s1`
//! becomes `ch\.geni\.net.proj.s1` and `ch.geni.net+authority+ca` becomes
//! `ch\.geni\.net`. Authority is decided on whole HRN components, so `a` is
//! not an authority for `a\.b`.

/// Escapes the dots of one HRN component.
fn escape(part: &str) -> String {
    part.replace('.', "\\.")
}

/// Builds the HRN of a URN from its authority, type and name.
pub(super) fn hrn_of(authority: &str, is_authority: bool, name: &str) -> String {
    let mut parts: Vec<String> = authority.split(':').map(escape).collect();
    if !is_authority {
        parts.push(escape(name));
    }
    parts.join(".")
}

/// Splits an HRN into its components at the dots that are not escaped.
pub fn hrn_components(hrn: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut start = 0;
    let mut escaped = false;
    for (i, c) in hrn.char_indices() {
        match c {
            '\\' if !escaped => escaped = true,
            '.' if !escaped => {
                parts.push(&hrn[start..i]);
                start = i + 1;
            }
            _ => escaped = false,
        }
    }
    parts.push(&hrn[start..]);
    parts
}

/// Whether `parent` is an authority for `child`: the two HRNs are equal, or
/// `parent`'s components are a proper prefix of `child`'s. Components compare
/// case-insensitively, as GENI authorities do.
pub fn hrn_is_authority_for(parent: &str, child: &str) -> bool {
    let parent = hrn_components(parent);
    let child = hrn_components(child);
    parent.len() <= child.len()
        && parent
            .iter()
            .zip(&child)
            .all(|(p, c)| p.eq_ignore_ascii_case(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_hrns_like_sfa() {
        assert_eq!(
            hrn_of("ch.geni.net:proj", false, "s1"),
            "ch\\.geni\\.net.proj.s1"
        );
        assert_eq!(hrn_of("ch.geni.net", true, "ca"), "ch\\.geni\\.net");
        assert_eq!(hrn_of("a", false, "x.y"), "a.x\\.y");
    }

    #[test]
    fn splits_on_unescaped_dots_only() {
        assert_eq!(hrn_components("a\\.b.c.d"), vec!["a\\.b", "c", "d"]);
        assert_eq!(hrn_components("plain"), vec!["plain"]);
    }

    #[test]
    fn authority_rule_uses_whole_components() {
        assert!(hrn_is_authority_for("a\\.b", "a\\.b.c.d"));
        assert!(hrn_is_authority_for("a\\.b", "a\\.b"));
        assert!(!hrn_is_authority_for("a", "a\\.b"));
        assert!(!hrn_is_authority_for("a\\.b.c", "a\\.b"));
        assert!(!hrn_is_authority_for("a\\.b.c", "a\\.b.cd"));
        assert!(hrn_is_authority_for(
            "CH\\.geni\\.net",
            "ch\\.geni\\.net.proj"
        ));
    }
}
