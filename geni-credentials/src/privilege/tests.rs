//! Unit tests of the privilege table, `*` expansion and delegation subsets.

use super::*;
use crate::urn::Urn;

fn set(entries: &[(&str, bool)]) -> PrivilegeSet {
    entries.iter().map(|(n, d)| Privilege::new(n, *d)).collect()
}

fn slice() -> Urn {
    Urn::parse("urn:publicid:IDN+geni-am.test+slice+s1").unwrap()
}

#[test]
fn method_table_matches_gcf() {
    let need = |v, m, s| requirement(v, m, s).unwrap();
    assert_eq!(
        need(ApiVersion::V3, "GetVersion", false).target,
        CredentialTarget::None
    );
    let list = need(ApiVersion::V3, "ListResources", false);
    assert_eq!((list.target, list.operation), (CredentialTarget::Any, None));
    for (method, op) in [
        ("Describe", "getsliceresources"),
        ("Status", "getsliceresources"),
        ("Allocate", "createsliver"),
        ("Provision", "createsliver"),
        ("PerformOperationalAction", "createsliver"),
        ("Renew", "renewsliver"),
        ("Delete", "deleteslice"),
        ("Shutdown", "shutdown"),
    ] {
        let r = need(ApiVersion::V3, method, true);
        assert_eq!(
            (r.target, r.operation),
            (CredentialTarget::Slice, Some(op)),
            "{method}"
        );
    }
    assert_eq!(
        need(ApiVersion::V2, "SliverStatus", true).operation,
        Some("getsliceresources")
    );
    assert_eq!(
        need(ApiVersion::V2, "ListResources", true).operation,
        Some("getsliceresources")
    );
    assert_eq!(need(ApiVersion::V2, "ListResources", false).operation, None);
    assert_eq!(
        need(ApiVersion::V3, "ListResources", true).target,
        CredentialTarget::Any
    );
    assert!(requirement(ApiVersion::V2, "Allocate", true).is_none());
    assert!(requirement(ApiVersion::V3, "CreateSliver", true).is_none());
}

#[test]
fn slice_privileges_allow_the_slice_methods() {
    let gcf_slice = set(&[
        ("refresh", false),
        ("embed", false),
        ("bind", false),
        ("control", false),
        ("info", false),
    ]);
    for op in [
        "createsliver",
        "getsliceresources",
        "renewsliver",
        "deleteslice",
        "shutdown",
        "SliverStatus",
    ] {
        assert!(gcf_slice.allows(op), "{op}");
    }
    let info_only = set(&[("info", true)]);
    let err = requirement(ApiVersion::V3, "Allocate", true)
        .unwrap()
        .check(&info_only)
        .unwrap_err();
    assert_eq!(err.kind(), crate::refusal::RefusalKind::Forbidden);
    assert!(err.to_string().contains("\"createsliver\""), "{err}");
    assert!(err.to_string().contains("info (delegatable)"), "{err}");
}

#[test]
fn star_expands_to_the_target_defaults() {
    let star = set(&[("*", true)]);
    assert!(
        !star.allows("getsliceresources"),
        "bare * only allows the five AM calls"
    );
    assert!(star.allows("createsliver"));
    let expanded = star.expand_star(&slice());
    assert_eq!(
        expanded,
        set(&[
            ("refresh", true),
            ("embed", true),
            ("bind", true),
            ("control", true),
            ("info", true)
        ])
    );
    assert!(expanded.allows("getsliceresources"));
    let user = Urn::parse("urn:publicid:IDN+geni-am.test+user+alice").unwrap();
    assert_eq!(
        star.expand_star(&user),
        set(&[("refresh", true), ("resolve", true), ("info", true)])
    );
    let sa = Urn::parse("urn:publicid:IDN+geni-am.test+authority+sa").unwrap();
    assert_eq!(default_privileges(&sa), ["authority", "sa", "ma"]);
    let am = Urn::parse("urn:publicid:IDN+geni-am.test+authority+am").unwrap();
    assert!(default_privileges(&am).is_empty());
}

#[test]
fn authority_allows_everything() {
    let authority = set(&[("authority", false)]);
    assert!(authority.allows("createsliver"));
    assert!(authority.allows("anything-at-all"));
    assert!(!set(&[("unknown", true)]).allows("createsliver"));
}

#[test]
fn delegation_needs_delegatable_covering_parents() {
    let parent = set(&[("control", true), ("info", false)]);
    assert!(set(&[("control", false)]).is_subset_of(&parent));
    assert!(
        !set(&[("info", false)]).is_subset_of(&parent),
        "info is not delegatable"
    );
    assert!(
        !set(&[("embed", false)]).is_subset_of(&parent),
        "embed allows shutdown, control does not"
    );
    assert!(set(&[("embed", true), ("sa", true)]).is_subset_of(&set(&[("authority", true)])));
    assert!(set(&[]).is_subset_of(&parent));
    assert!(set(&[("custom", false)]).is_subset_of(&set(&[("CUSTOM", true)])));
    assert!(!set(&[("custom", false)]).is_subset_of(&set(&[("control", true)])));
    assert_eq!(parent.delegatable(), set(&[("control", true)]));
    assert!(parent.contains("CONTROL"));
}
