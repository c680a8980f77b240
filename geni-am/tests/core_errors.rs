//! Every refusal the core makes, with the GENI code the API answers it
//! with (GENI AM API v3, "Return Codes"): bad requests (empty, malformed, real broken RSpecs from the
//! corpus, a manifest or advertisement sent as a request, wrong namespace,
//! DOCTYPE), unsatisfiable requests, unknown slices and slivers, wrong URN
//! types, renewals out of range, unknown and misplaced actions.

mod core_support;

use chrono::TimeDelta;
use core_support::*;
use geni_am::core::{ProvisionOptions, RenewOptions};
use geni_am::geni::{AmError, GeniCode};
use geni_am::model::{AllocationState, OperationalState, Selector};

fn allocate_err(f: &Fixture, rspec: &str) -> AmError {
    f.am.allocate(&principal(30), SLICE, rspec)
        .unwrap_err()
        .answered()
}

/// Allocate of a one-node request with `from` replaced by `to`.
fn variant_err(f: &Fixture, from: &str, to: &str) -> AmError {
    let rspec = request(&["n1"], "default-vm").replacen(from, to, 1);
    assert_ne!(
        rspec,
        request(&["n1"], "default-vm"),
        "`{from}` not in the request"
    );
    allocate_err(f, &rspec)
}

/// The errors of every changing operation on `sel`.
fn errors_of_changes(f: &Fixture, sel: &Selector) -> Vec<AmError> {
    let p = principal(30);
    let t = start() + TimeDelta::days(1);
    vec![
        f.am.renew(&p, sel, t, RenewOptions::default())
            .unwrap_err()
            .answered(),
        f.am.delete(&p, sel).unwrap_err().answered(),
        f.am.perform_action(&p, sel, "geni_start", false, None)
            .unwrap_err()
            .answered(),
        f.am.provision(&p, sel, &ProvisionOptions::default())
            .unwrap_err()
            .answered(),
    ]
}

fn assert_code(err: &AmError, code: GeniCode, needle: &str) {
    assert_eq!(err.code, code, "{err}");
    assert!(
        err.message.contains(needle),
        "`{needle}` not in: {}",
        err.message
    );
}

#[test]
fn empty_and_blank_requests_are_badargs() {
    let f = fixture();
    for rspec in ["", "  \n\t "] {
        assert_code(&allocate_err(&f, rspec), GeniCode::BadArgs, "empty");
    }
}

#[test]
fn malformed_request_is_badargs_naming_the_line() {
    let f = fixture();
    let broken = request(&["n1"], "default-vm").replace("</rspec>", "<rspec>");
    let err = allocate_err(&f, &broken);
    assert_code(&err, GeniCode::BadArgs, "line");
}

#[test]
fn real_broken_rspecs_from_the_corpus_are_refused_precisely() {
    let f = fixture();
    let dir = corpus().join("rspec/bad");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let text = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
        let err = allocate_err(&f, &text);
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let expected =
            if name.contains("ps103") || name.contains("two-nodes") || name.contains("ofelia") {
                GeniCode::BadVersion
            } else {
                GeniCode::BadArgs
            };
        assert_eq!(err.code, expected, "{name}: {err}");
        assert!(err.message.contains("line"), "{name}: {err}");
        if name.ends_with("bad.xml.sample") && !name.starts_with("gram") {
            assert!(err.message.contains("manifest"), "{name}: {err}");
        }
        seen += 1;
    }
    assert!(
        seen >= 10,
        "only {seen} broken RSpecs found in {}",
        dir.display()
    );
    assert!(
        f.am.describe(&slice()).unwrap().slivers.is_empty(),
        "nothing allocated"
    );
}

#[test]
fn manifest_and_advertisement_sent_as_request_are_refused() {
    let f = fixture();
    let manifest =
        f.am.allocate(&principal(30), SLICE, &request(&["n1"], "default-vm"))
            .unwrap()
            .manifest;
    assert_code(&allocate_err(&f, &manifest), GeniCode::BadArgs, "manifest");
    let ad = f.am.advertisement(false).unwrap();
    assert_code(&allocate_err(&f, &ad), GeniCode::BadArgs, "advertisement");
    let real = corpus().join("rspec/manifest");
    let first = std::fs::read_dir(&real)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let text = String::from_utf8_lossy(&std::fs::read(&first).unwrap()).into_owned();
    let err = allocate_err(&f, &text);
    assert!(
        matches!(err.code, GeniCode::BadArgs | GeniCode::BadVersion),
        "{}: {err}",
        first.display()
    );
}

#[test]
fn doctype_and_entities_are_refused() {
    let f = fixture();
    let doctype = "<!DOCTYPE rspec [<!ENTITY x SYSTEM \"file:///etc/passwd\">]>\n<rspec xmlns=";
    assert_code(
        &variant_err(&f, "<rspec xmlns=", doctype),
        GeniCode::BadArgs,
        "DOCTYPE",
    );
}

#[test]
fn unknown_namespace_is_badversion() {
    let f = fixture();
    let err = variant_err(&f, "rspec/3\"", "rspec/9\"");
    assert_code(&err, GeniCode::BadVersion, "namespace");
}

#[test]
fn unknown_sliver_type_image_and_component_are_badargs() {
    let f = fixture();
    let err = variant_err(&f, "\"default-vm\"", "\"m1.huge\"");
    assert_code(&err, GeniCode::BadArgs, "default-vm");
    let image = "<sliver_type name=\"default-vm\"><disk_image name=\"urn:publicid:IDN+x+image+win95\"/></sliver_type>";
    let err = variant_err(&f, "<sliver_type name=\"default-vm\"/>", image);
    assert_code(&err, GeniCode::BadArgs, IMAGE);
    let bound = "component_id=\"urn:publicid:IDN+am.test.example+node+nowhere\" exclusive";
    assert_code(
        &variant_err(&f, "exclusive", bound),
        GeniCode::BadArgs,
        "nowhere",
    );
}

#[test]
fn requests_beyond_capacity_are_insufficient_nodes_and_allocate_nothing() {
    let f = fixture_with(&[host("h1", 2)]);
    let err = allocate_err(&f, &request(&["a", "b", "c"], "default-vm"));
    assert_code(&err, GeniCode::InsufficientNodes, "`c`");
    assert!(
        f.am.describe(&slice()).unwrap().slivers.is_empty(),
        "all or nothing"
    );
    f.am.allocate(&principal(30), SLICE, &request(&["a", "b"], "default-vm"))
        .expect("what fits is allocated");
}

#[test]
fn exclusive_nodes_need_an_empty_component() {
    let f = fixture_with(&[host("h1", 4)]);
    f.am.allocate(&principal(30), SLICE, &request(&["a"], "default-vm"))
        .unwrap();
    let err = variant_err(&f, "exclusive=\"false\"", "exclusive=\"true\"");
    assert_code(&err, GeniCode::InsufficientNodes, "exclusive");
}

#[test]
fn too_many_slivers_for_one_slice_is_toobig() {
    let mut f = fixture_with(&[host("h1", 8)]);
    let mut config = config();
    config.policy.max_slivers_per_slice = 2;
    let store = f.am.store().clone();
    let clock = f.clock.clone();
    f.am = geni_am::core::Aggregate::new(store, config)
        .unwrap()
        .with_clock(std::sync::Arc::new(move || clock.now()));
    assert_code(
        &allocate_err(&f, &request(&["a", "b", "c"], "default-vm")),
        GeniCode::TooBig,
        "limit is 2",
    );
}

#[test]
fn requests_with_nothing_for_this_aggregate_are_badargs() {
    let f = fixture();
    let elsewhere =
        "component_manager_id=\"urn:publicid:IDN+other.example+authority+cm\" exclusive";
    assert_code(
        &variant_err(&f, "exclusive", elsewhere),
        GeniCode::BadArgs,
        CM,
    );
}

#[test]
fn an_expired_credential_cannot_allocate() {
    let f = fixture();
    let mut p = principal(1);
    p.credential_expires = start() - TimeDelta::seconds(1);
    let err =
        f.am.allocate(&p, SLICE, &request(&["n1"], "default-vm"))
            .unwrap_err()
            .answered();
    assert_code(&err, GeniCode::Expired, "expired");
}

#[test]
fn unknown_slice_describes_empty_and_is_searchfailed_elsewhere() {
    let f = fixture();
    let d = f.am.describe(&slice()).unwrap();
    assert!(d.slivers.is_empty());
    assert!(d.manifest.contains("type=\"manifest\"") && !d.manifest.contains("<node"));
    let mut errors = errors_of_changes(&f, &slice());
    errors.push(f.am.status(&slice()).unwrap_err().answered());
    for err in errors {
        assert_code(&err, GeniCode::SearchFailed, SLICE);
    }
}

#[test]
fn unknown_or_deleted_slivers_are_searchfailed_everywhere() {
    let f = fixture();
    let p = principal(30);
    let a =
        f.am.allocate(&p, SLICE, &request(&["n1", "n2"], "default-vm"))
            .unwrap();
    let deleted = a.slivers[1].urn.clone();
    f.am.delete(&p, &slivers(&[&deleted])).unwrap();
    let invalid = format!("urn:publicid:IDN+{AUTHORITY}+sliver+INVALID");
    for urn in [invalid.as_str(), deleted.as_str()] {
        let sel = slivers(&[&a.slivers[0].urn, urn]);
        let mut errors = errors_of_changes(&f, &sel);
        errors.push(f.am.describe(&sel).unwrap_err().answered());
        errors.push(f.am.status(&sel).unwrap_err().answered());
        for err in errors {
            assert_code(&err, GeniCode::SearchFailed, urn);
        }
    }
    let left = f.am.status(&slice()).unwrap().slivers;
    assert_eq!(left.len(), 1, "failed calls changed nothing");
    assert_eq!(left[0].allocation, AllocationState::Allocated);
}

#[test]
fn slivers_of_another_slice_are_searchfailed() {
    let f = fixture();
    let a =
        f.am.allocate(&principal(30), SLICE, &request(&["n1"], "default-vm"))
            .unwrap();
    let other = Selector::Slivers {
        slice_urn: "urn:publicid:IDN+ch.test.example:proj+slice+other".into(),
        urns: vec![a.slivers[0].urn.clone()],
    };
    assert_code(
        &f.am.status(&other).unwrap_err().answered(),
        GeniCode::SearchFailed,
        "slice+other",
    );
}

#[test]
fn node_and_non_urns_are_badargs() {
    let f = fixture();
    for (urn, needle) in [
        (format!("urn:publicid:IDN+{AUTHORITY}+node+h1"), "node URN"),
        ("not-a-urn".to_owned(), "not a URN"),
    ] {
        let err = f.am.describe(&slivers(&[&urn])).unwrap_err().answered();
        assert_code(&err, GeniCode::BadArgs, needle);
    }
}

#[test]
fn renew_out_of_range_is_refused_and_alap_clamps() {
    let f = fixture();
    let p = principal(10);
    provisioned(&f, &["n1"]);
    let strict = RenewOptions::default();
    let past_slice = start() + TimeDelta::days(12);
    assert_code(
        &f.am
            .renew(&p, &slice(), past_slice, strict)
            .unwrap_err()
            .answered(),
        GeniCode::OutOfRange,
        "credential",
    );
    let past = start() - TimeDelta::hours(1);
    assert_code(
        &f.am
            .renew(&p, &slice(), past, strict)
            .unwrap_err()
            .answered(),
        GeniCode::OutOfRange,
        "not in the future",
    );
    assert_eq!(
        f.am.status(&slice()).unwrap().slivers[0].expires,
        start() + TimeDelta::days(7),
        "refused renewals change nothing"
    );
    let alap = RenewOptions {
        extend_alap: true,
        ..strict
    };
    let r = f.am.renew(&p, &slice(), past_slice, alap).unwrap();
    assert_eq!(r[0].expires, start() + TimeDelta::days(10));
    let best = RenewOptions {
        best_effort: true,
        ..strict
    };
    let r = f.am.renew(&p, &slice(), past_slice, best).unwrap();
    assert_eq!(
        r[0].expires,
        start() + TimeDelta::days(10),
        "failed sliver keeps its expiry"
    );
    assert!(r[0].error.contains("credential"), "{}", r[0].error);
}

#[test]
fn unknown_and_empty_actions_are_unsupported() {
    let f = fixture();
    let p = principal(30);
    provisioned(&f, &["n1"]);
    for action in ["", "random_action"] {
        let err =
            f.am.perform_action(&p, &slice(), action, false, None)
                .unwrap_err()
                .answered();
        assert_code(&err, GeniCode::Unsupported, "not supported");
    }
}

#[test]
fn actions_in_the_wrong_state_are_unsupported_and_best_effort_reports_per_sliver() {
    let f = fixture();
    let p = principal(30);
    let a =
        f.am.allocate(&p, SLICE, &request(&["a", "b"], "default-vm"))
            .unwrap();
    let err =
        f.am.perform_action(&p, &slice(), "geni_start", false, None)
            .unwrap_err()
            .answered();
    assert_code(&err, GeniCode::Unsupported, "not provisioned");
    f.am.provision(&p, &slice(), &ProvisionOptions::default())
        .unwrap();
    let (ready, other) = (&a.slivers[0].urn, &a.slivers[1].urn);
    f.am.store()
        .set_operational_state(ready, OperationalState::Ready, f.clock.now())
        .unwrap();
    f.am.store()
        .set_operational_state(other, OperationalState::NotReady, f.clock.now())
        .unwrap();
    let err =
        f.am.perform_action(&p, &slice(), "geni_stop", false, None)
            .unwrap_err()
            .answered();
    assert_code(&err, GeniCode::Unsupported, "geni_notready");
    assert_eq!(
        f.am.status(&slivers(&[ready])).unwrap().slivers[0].operational,
        OperationalState::Ready,
        "all or nothing"
    );
    let r =
        f.am.perform_action(&p, &slice(), "geni_stop", true, None)
            .unwrap();
    let by_urn = |u: &str| r.iter().find(|s| s.urn == u).unwrap().clone();
    assert_eq!(by_urn(ready).operational, OperationalState::Stopping);
    assert_eq!(by_urn(ready).error, "");
    assert_eq!(by_urn(other).operational, OperationalState::NotReady);
    assert!(
        by_urn(other).error.contains("geni_stop is not possible"),
        "{:?}",
        by_urn(other)
    );
}

#[test]
fn update_users_needs_users_and_a_ready_sliver() {
    let f = fixture();
    let p = principal(30);
    let urns = provisioned(&f, &["a"]);
    let err =
        f.am.perform_action(&p, &slice(), "geni_update_users", false, None)
            .unwrap_err()
            .answered();
    assert_code(&err, GeniCode::BadArgs, "geni_users");
    let users = [alice()];
    let err =
        f.am.perform_action(&p, &slice(), "geni_update_users", false, Some(&users))
            .unwrap_err()
            .answered();
    assert_code(&err, GeniCode::Unsupported, "geni_pending_allocation");
    f.am.store()
        .set_operational_state(&urns[0], OperationalState::Ready, f.clock.now())
        .unwrap();
    let r =
        f.am.perform_action(&p, &slice(), "geni_update_users", false, Some(&users))
            .unwrap();
    assert_eq!(r[0].operational, OperationalState::UpdatingUsers);
    let r =
        f.am.perform_action(&p, &slice(), "geni_updating_users_cancel", false, None)
            .unwrap();
    assert_eq!(r[0].operational, OperationalState::Ready);
}

#[test]
fn provision_refuses_when_nothing_is_allocated_or_a_sliver_is_provisioned() {
    let f = fixture();
    let p = principal(30);
    let urns = provisioned(&f, &["a"]);
    let err =
        f.am.provision(&p, &slice(), &ProvisionOptions::default())
            .unwrap_err()
            .answered();
    assert_code(&err, GeniCode::Unavailable, "geni_allocated");
    let sel = slivers(&[&urns[0]]);
    let err =
        f.am.provision(&p, &sel, &ProvisionOptions::default())
            .unwrap_err()
            .answered();
    assert_code(&err, GeniCode::Refused, "geni_provisioned");
    let best = ProvisionOptions {
        best_effort: true,
        ..ProvisionOptions::default()
    };
    let r = f.am.provision(&p, &sel, &best).unwrap();
    assert_eq!(r.slivers[0].allocation, AllocationState::Provisioned);
    assert!(
        r.slivers[0].error.contains("only allocated slivers"),
        "{:?}",
        r.slivers[0]
    );
}

#[test]
fn a_shut_down_slice_refuses_changes_but_is_still_described() {
    let f = fixture();
    let p = principal(30);
    f.am.allocate(&p, SLICE, &request(&["n1"], "default-vm"))
        .unwrap();
    f.am.shutdown(&p, SLICE).unwrap();
    let mut errors = errors_of_changes(&f, &slice());
    errors.push(allocate_err(&f, &request(&["n2"], "default-vm")));
    for err in errors {
        assert_code(&err, GeniCode::Forbidden, "shut down");
        assert!(
            err.message
                .contains(&format!("shut down by {}", p.caller_urn)),
            "the refusal names who shut the slice down: {err:?}"
        );
        assert!(!err.message.contains("operators"), "{err:?}");
    }
    assert_eq!(f.am.status(&slice()).unwrap().slivers.len(), 1);
    assert_eq!(described(&f), 1);
}
