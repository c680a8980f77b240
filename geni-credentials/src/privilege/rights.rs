//! SFA privileges (gcf/SFA `rights.py`): which operations each privilege
//! allows, the default privileges of a target type (what `*` expands to),
//! and privilege sets with the delegation subset test.

use crate::urn::{Urn, UrnType};
use std::fmt;

/// Privilege name → operations it allows. An operation list containing `*`
/// allows every operation.
const PRIVILEGE_TABLE: &[(&str, &[&str])] = &[
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
    (
        "*",
        &[
            "createsliver",
            "deletesliver",
            "sliverstatus",
            "renewsliver",
            "shutdown",
        ],
    ),
];

/// The operations a privilege allows (`None` for a privilege SFA does not know).
pub fn operations(privilege: &str) -> Option<&'static [&'static str]> {
    PRIVILEGE_TABLE
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case(privilege))
        .map(|(_, ops)| *ops)
}

/// One privilege of a credential.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Privilege {
    /// The privilege name as written (`*`, `control`, …); compared case-insensitively.
    pub name: String,
    /// Whether the owner may delegate it.
    pub can_delegate: bool,
}

impl Privilege {
    /// A privilege named `name`.
    pub fn new(name: &str, can_delegate: bool) -> Privilege {
        Privilege {
            name: name.trim().to_owned(),
            can_delegate,
        }
    }

    /// Whether this privilege allows `operation` (case-insensitive).
    pub fn allows(&self, operation: &str) -> bool {
        operations(&self.name).is_some_and(|ops| {
            ops.contains(&"*") || ops.iter().any(|op| op.eq_ignore_ascii_case(operation))
        })
    }

    /// Whether this (parent) privilege covers `child` for delegation: it must
    /// be delegatable, and allow everything, or every operation of `child`.
    /// A privilege unknown to SFA is covered only by one of the same name or
    /// one allowing everything.
    pub fn covers(&self, child: &Privilege) -> bool {
        if !self.can_delegate {
            return false;
        }
        let Some(mine) = operations(&self.name) else {
            return self.name.eq_ignore_ascii_case(&child.name);
        };
        if mine.contains(&"*") {
            return true;
        }
        match operations(&child.name) {
            Some(theirs) => theirs.iter().all(|op| mine.contains(op)),
            None => self.name.eq_ignore_ascii_case(&child.name),
        }
    }
}

impl fmt::Display for Privilege {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.name)?;
        if self.can_delegate {
            f.write_str(" (delegatable)")?;
        }
        Ok(())
    }
}

/// The privileges of one credential.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PrivilegeSet {
    privileges: Vec<Privilege>,
}

impl PrivilegeSet {
    /// An empty set.
    pub fn new() -> PrivilegeSet {
        PrivilegeSet::default()
    }

    /// Adds a privilege.
    pub fn push(&mut self, privilege: Privilege) {
        self.privileges.push(privilege);
    }

    /// The privileges, in order.
    pub fn iter(&self) -> impl Iterator<Item = &Privilege> {
        self.privileges.iter()
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.privileges.is_empty()
    }

    /// Whether a privilege of this name is in the set (case-insensitive).
    pub fn contains(&self, name: &str) -> bool {
        self.privileges
            .iter()
            .any(|p| p.name.eq_ignore_ascii_case(name))
    }

    /// Whether some privilege allows `operation`.
    pub fn allows(&self, operation: &str) -> bool {
        self.privileges.iter().any(|p| p.allows(operation))
    }

    /// Whether this (child) set may be delegated from `parent`: every
    /// privilege here is covered by a delegatable privilege of `parent`.
    pub fn is_subset_of(&self, parent: &PrivilegeSet) -> bool {
        self.privileges
            .iter()
            .all(|child| parent.privileges.iter().any(|p| p.covers(child)))
    }

    /// The privileges that may be delegated further.
    pub fn delegatable(&self) -> PrivilegeSet {
        self.privileges
            .iter()
            .filter(|p| p.can_delegate)
            .cloned()
            .collect()
    }

    /// Replaces every `*` by the default privileges of `target`'s type, each
    /// inheriting the `*` entry's delegatability (gcf's credential decoding).
    pub fn expand_star(&self, target: &Urn) -> PrivilegeSet {
        let mut out = PrivilegeSet::new();
        for privilege in &self.privileges {
            if privilege.name == "*" {
                for name in default_privileges(target) {
                    out.push(Privilege::new(name, privilege.can_delegate));
                }
            } else {
                out.push(privilege.clone());
            }
        }
        out
    }
}

impl FromIterator<Privilege> for PrivilegeSet {
    fn from_iter<I: IntoIterator<Item = Privilege>>(iter: I) -> PrivilegeSet {
        PrivilegeSet {
            privileges: iter.into_iter().collect(),
        }
    }
}

impl fmt::Display for PrivilegeSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<String> = self.privileges.iter().map(ToString::to_string).collect();
        f.write_str(&names.join(", "))
    }
}

/// The privileges an object of `target`'s type gets by default (gcf
/// `determine_rights` on the SFA type: `authority+sa` is plain
/// `authority`, other authorities are `authority+<name>`).
pub fn default_privileges(target: &Urn) -> &'static [&'static str] {
    match target.urn_type() {
        UrnType::User => &["refresh", "resolve", "info"],
        UrnType::Slice => &["refresh", "embed", "bind", "control", "info"],
        UrnType::Authority => match target.name().to_ascii_lowercase().as_str() {
            "sa" => &["authority", "sa", "ma"],
            "ma" | "cm" | "sm" => &["authority", "ma"],
            _ => &[],
        },
        UrnType::Other(kind) if kind.eq_ignore_ascii_case("component") => &["operator"],
        _ => &[],
    }
}
