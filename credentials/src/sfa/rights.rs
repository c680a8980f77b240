//! SFA rights as gcf's `rights.py` defines them (AMAPI.md §6.5): which
//! operations each privilege allows, how `*` expands by the target's type,
//! and when a parent's privilege covers a child's.

use crate::urn::{Urn, UrnType};

/// Privilege name → the operations it allows (`*` = every operation).
const TABLE: &[(&str, &[&str])] = &[
    (
        "authority",
        &[
            "register",
            "remove",
            "update",
            "resolve",
            "list",
            "getcredential",
            "*",
        ],
    ),
    ("refresh", &["remove", "update"]),
    ("resolve", &["resolve", "list", "getcredential"]),
    (
        "sa",
        &[
            "getticket",
            "redeemslice",
            "redeemticket",
            "createslice",
            "createsliver",
            "deleteslice",
            "deletesliver",
            "updateslice",
            "getsliceresources",
            "loanresources",
            "stopslice",
            "startslice",
            "renewsliver",
            "resetslice",
            "listslices",
            "listnodes",
            "getpolicy",
            "sliverstatus",
        ],
    ),
    (
        "embed",
        &[
            "getticket",
            "redeemslice",
            "redeemticket",
            "createslice",
            "createsliver",
            "renewsliver",
            "deleteslice",
            "deletesliver",
            "updateslice",
            "sliverstatus",
            "getsliceresources",
            "shutdown",
        ],
    ),
    ("bind", &["getticket", "loanresources", "redeemticket"]),
    (
        "control",
        &[
            "updateslice",
            "createslice",
            "createsliver",
            "renewsliver",
            "sliverstatus",
            "stopslice",
            "startslice",
            "deleteslice",
            "deletesliver",
            "resetslice",
            "getsliceresources",
            "getgids",
        ],
    ),
    ("info", &["listslices", "listnodes", "getpolicy"]),
    (
        "ma",
        &[
            "setbootstate",
            "getbootstate",
            "reboot",
            "getgids",
            "gettrustedcerts",
        ],
    ),
    ("operator", &["gettrustedcerts", "getgids"]),
];

/// The operations privilege `name` allows (empty for unknown names).
fn operations(name: &str) -> &'static [&'static str] {
    TABLE
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map_or(&[], |(_, ops)| ops)
}

/// The privileges `name` stands for on `target`: `*` becomes the default
/// rights of the target's type, other names stand for themselves.
pub fn expand<'n>(name: &'n str, target: &Urn) -> Vec<&'n str> {
    if name != "*" {
        return vec![name];
    }
    match target.urn_type() {
        UrnType::Slice => vec!["refresh", "embed", "bind", "control", "info"],
        UrnType::User => vec!["refresh", "resolve", "info"],
        UrnType::Authority => match target.name().to_ascii_lowercase().as_str() {
            "sa" => vec!["authority", "sa"],
            "ma" | "cm" | "sm" | "am" => vec!["authority", "ma"],
            _ => vec!["authority", "sa", "ma"],
        },
        _ => vec!["operator"],
    }
}

/// Whether privilege `name` allows `operation` (case-insensitive).
pub fn allows(name: &str, operation: &str) -> bool {
    operations(name)
        .iter()
        .any(|op| *op == "*" || op.eq_ignore_ascii_case(operation))
}

/// Whether holding `parent` is enough to grant `child` (gcf
/// `Right.is_superset`, with unknown names covered only by themselves).
pub fn covers(parent: &str, child: &str) -> bool {
    let child_ops = operations(child);
    if child_ops.is_empty() {
        return parent.eq_ignore_ascii_case(child);
    }
    child_ops.iter().all(|op| allows(parent, op))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn urn(text: &str) -> Urn {
        Urn::parse(text).unwrap()
    }

    #[test]
    fn star_expands_by_target_type() {
        let slice = urn("urn:publicid:IDN+example.org+slice+s1");
        assert_eq!(
            expand("*", &slice),
            ["refresh", "embed", "bind", "control", "info"]
        );
        let sa = urn("urn:publicid:IDN+example.org+authority+sa");
        assert_eq!(expand("*", &sa), ["authority", "sa"]);
        assert_eq!(expand("control", &sa), ["control"]);
    }

    #[test]
    fn coverage_follows_the_operation_table() {
        assert!(allows("embed", "shutdown"));
        assert!(!allows("control", "shutdown"));
        assert!(allows("authority", "anything"));
        assert!(covers("sa", "bind") && !covers("embed", "bind") && !covers("info", "bind"));
        assert!(covers("authority", "control"));
        assert!(covers("pi", "pi") && !covers("control", "pi"));
    }
}
