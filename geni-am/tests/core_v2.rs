//! AM API v2 compositions: CreateSliver (allocate + provision + start in
//! one step), SliverStatus in v2 words, RenewSliver, DeleteSliver.

mod core_support;

use chrono::TimeDelta;
use core_support::*;
use geni_am::geni::GeniCode;
use geni_am::model::JobKind;
use geni_am::model::{AllocationState, OperationalState};

#[test]
fn create_sliver_allocates_provisions_and_starts() {
    let f = fixture();
    let p = principal(30);
    let manifest =
        f.am.create_sliver(&p, SLICE, &request(&["n1", "n2"], "default-vm"), &[alice()])
            .unwrap();
    assert!(manifest.contains("type=\"manifest\""));
    let st = f.am.status(&slice()).unwrap();
    assert_eq!(st.slivers.len(), 2);
    for s in &st.slivers {
        assert_eq!(s.allocation, AllocationState::Provisioned);
        assert!(manifest.contains(&format!("sliver_id=\"{}\"", s.urn)));
        let kinds: Vec<JobKind> =
            f.am.store()
                .jobs_of_sliver(&s.urn)
                .unwrap()
                .iter()
                .map(|j| j.kind)
                .collect();
        assert_eq!(kinds, [JobKind::Provision, JobKind::Start]);
    }
    let err =
        f.am.create_sliver(&p, SLICE, &request(&["n3"], "default-vm"), &[])
            .unwrap_err()
            .answered();
    assert_eq!(err.code, GeniCode::AlreadyExists);
}

#[test]
fn create_sliver_is_all_or_nothing() {
    let f = fixture_with(&[host("h1", 1)]);
    let err =
        f.am.create_sliver(
            &principal(30),
            SLICE,
            &request(&["a", "b"], "default-vm"),
            &[],
        )
        .unwrap_err()
        .answered();
    assert_eq!(err.code, GeniCode::InsufficientNodes);
    assert!(f.am.describe(&slice()).unwrap().slivers.is_empty());
}

#[test]
fn sliver_status_speaks_v2() {
    let f = fixture();
    let p = principal(30);
    f.am.create_sliver(&p, SLICE, &request(&["n1", "n2"], "default-vm"), &[])
        .unwrap();
    let st = f.am.sliver_status(SLICE).unwrap();
    assert_eq!(st.status, "configuring");
    assert_eq!(st.expires, start() + TimeDelta::days(7));
    assert_eq!(st.resources.len(), 2);
    for r in &st.resources {
        f.am.store()
            .set_operational_state(&r.urn, OperationalState::Ready, f.clock.now())
            .unwrap();
    }
    assert_eq!(f.am.sliver_status(SLICE).unwrap().status, "ready");
    let failed = &st.resources[0].urn;
    f.am.store()
        .fail_sliver(failed, "the VM did not boot", f.clock.now())
        .unwrap();
    let st = f.am.sliver_status(SLICE).unwrap();
    assert_eq!(st.status, "failed");
    let r = st.resources.iter().find(|r| r.urn == *failed).unwrap();
    assert_eq!(
        (r.status, r.error.as_str()),
        ("failed", "the VM did not boot")
    );
}

#[test]
fn renew_and_delete_sliver() {
    let f = fixture();
    let p = principal(10);
    f.am.create_sliver(&p, SLICE, &request(&["n1"], "default-vm"), &[])
        .unwrap();
    let t = start() + TimeDelta::days(3);
    assert_eq!(f.am.renew_sliver(&p, SLICE, t, false).unwrap(), t);
    let late = start() + TimeDelta::days(40);
    let err =
        f.am.renew_sliver(&p, SLICE, late, false)
            .unwrap_err()
            .answered();
    assert_eq!(err.code, GeniCode::OutOfRange);
    assert_eq!(
        f.am.renew_sliver(&p, SLICE, late, true).unwrap(),
        start() + TimeDelta::days(10),
        "ALAP reports the real expiry"
    );
    f.am.delete_sliver(&p, SLICE).unwrap();
    assert_eq!(
        f.am.sliver_status(SLICE).unwrap_err().answered().code,
        GeniCode::SearchFailed
    );
    assert_eq!(
        f.am.delete_sliver(&p, SLICE).unwrap_err().answered().code,
        GeniCode::SearchFailed
    );
}
