//! The v3 lifecycle on SQLite: Allocate → Provision → actions → Status →
//! Describe → Renew → Delete, with the states, expiries, jobs and
//! manifests each step must produce.

mod core_support;

use chrono::TimeDelta;
use core_support::*;
use geni_am::core::ProvisionOptions;
use geni_am::core::RenewOptions;
use geni_am::geni::GeniCode;
use geni_am::model::JobKind;
use geni_am::model::{AllocationState, OperationalState};

#[test]
fn allocate_creates_allocated_slivers_with_the_short_timeout_and_a_manifest() {
    let f = fixture();
    let a =
        f.am.allocate(&principal(30), SLICE, &request(&["n1", "n2"], "default-vm"))
            .unwrap();
    assert_eq!(a.slivers.len(), 2);
    for s in &a.slivers {
        assert_eq!(s.allocation, AllocationState::Allocated);
        assert_eq!(s.operational, OperationalState::PendingAllocation);
        assert_eq!(s.expires, start() + TimeDelta::minutes(10));
        assert!(
            s.urn
                .starts_with(&format!("urn:publicid:IDN+{AUTHORITY}+sliver+"))
        );
        assert!(
            a.manifest.contains(&format!("sliver_id=\"{}\"", s.urn)),
            "{}",
            a.manifest
        );
    }
    assert!(a.manifest.contains("type=\"manifest\""));
    assert!(
        a.manifest
            .contains("http://www.geni.net/resources/rspec/3/manifest.xsd")
    );
    assert!(a.manifest.contains("client_id=\"n1\"") && a.manifest.contains("client_id=\"n2\""));
    assert!(
        a.manifest
            .contains(&format!("component_manager_id=\"{CM}\""))
    );
}

#[test]
fn allocation_never_outlives_the_credential() {
    let f = fixture();
    let mut p = principal(1);
    p.credential_expires = start() + TimeDelta::minutes(4);
    let a =
        f.am.allocate(&p, SLICE, &request(&["n1"], "default-vm"))
            .unwrap();
    assert_eq!(a.slivers[0].expires, start() + TimeDelta::minutes(4));
}

#[test]
fn full_lifecycle_moves_through_the_states_and_queues_jobs() {
    let f = fixture();
    let p = principal(30);
    let a =
        f.am.allocate(&p, SLICE, &request(&["n1", "n2"], "default-vm"))
            .unwrap();
    let urn = a.slivers[0].urn.clone();

    let options = ProvisionOptions {
        users: vec![alice()],
        ..ProvisionOptions::default()
    };
    let prov = f.am.provision(&p, &slice(), &options).unwrap();
    assert_eq!(prov.slivers.len(), 2);
    for s in &prov.slivers {
        assert_eq!(s.allocation, AllocationState::Provisioned);
        assert_eq!(s.operational, OperationalState::PendingAllocation);
        assert_eq!(s.expires, start() + TimeDelta::days(7), "default lease");
    }
    let jobs = f.am.store().jobs_of_sliver(&urn).unwrap();
    assert_eq!(jobs.len(), 1);
    assert_eq!(jobs[0].kind, JobKind::Provision);

    // The worker reports the VM created and its addresses.
    let store = f.am.store();
    store
        .set_operational_state(&urn, OperationalState::NotReady, f.clock.now())
        .unwrap();
    let annotations = geni_am::model::SliverAnnotations {
        backend_id: Some("vm-17".into()),
        hostname: Some("n1.am.test.example".into()),
        interfaces: vec![geni_am::model::InterfaceAddresses {
            client_id: "n1:if0".into(),
            mac_address: Some("02:00:00:00:00:01".into()),
            ips: vec![("10.0.0.1".into(), "255.255.255.0".into())],
            ..Default::default()
        }],
        ..Default::default()
    };
    assert!(
        store
            .set_annotations(&urn, &annotations, f.clock.now())
            .unwrap()
    );

    let started =
        f.am.perform_action(&p, &slivers(&[&urn]), "geni_start", false, None)
            .unwrap();
    assert_eq!(started[0].operational, OperationalState::Configuring);
    let kinds: Vec<JobKind> = store
        .jobs_of_sliver(&urn)
        .unwrap()
        .iter()
        .map(|j| j.kind)
        .collect();
    assert_eq!(kinds, [JobKind::Provision, JobKind::Start]);
    store
        .set_operational_state(&urn, OperationalState::Ready, f.clock.now())
        .unwrap();

    let status = f.am.status(&slice()).unwrap();
    assert_eq!(status.slice_urn, SLICE);
    let mine = status.slivers.iter().find(|s| s.urn == urn).unwrap();
    assert_eq!(mine.operational, OperationalState::Ready);
    assert_eq!(mine.error, "");

    let described = f.am.describe(&slice()).unwrap();
    let m = &described.manifest;
    assert!(m.contains("<host name=\"n1.am.test.example\""), "{m}");
    assert!(m.contains("hostname=\"n1.am.test.example\""), "login: {m}");
    assert!(m.contains("username=\"alice\""), "{m}");
    assert!(m.contains("mac_address=\"02:00:00:00:00:01\""), "{m}");
    assert!(m.contains("address=\"10.0.0.1\""), "{m}");
    assert!(
        m.contains("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKx alice@laptop"),
        "{m}"
    );
    assert!(
        m.contains("user_urn=\"urn:publicid:IDN+ch.test.example+user+alice\""),
        "{m}"
    );

    let longer = start() + TimeDelta::days(20);
    let renewed =
        f.am.renew(&p, &slice(), longer, RenewOptions::default())
            .unwrap();
    assert!(renewed.iter().all(|s| s.expires == longer));
    let shorter = start() + TimeDelta::days(1);
    let renewed =
        f.am.renew(&p, &slice(), shorter, RenewOptions::default())
            .unwrap();
    assert!(
        renewed.iter().all(|s| s.expires == shorter),
        "shortening is allowed"
    );

    let deleted = f.am.delete(&p, &slice()).unwrap();
    assert_eq!(deleted.len(), 2);
    for s in &deleted {
        assert_eq!(s.allocation, AllocationState::Unallocated);
        assert_eq!(s.expires, shorter, "previous expiry reported");
    }
    assert_eq!(
        store.jobs_of_sliver(&urn).unwrap().last().unwrap().kind,
        JobKind::Destroy
    );
    assert_eq!(
        f.am.status(&slice()).unwrap_err().answered().code,
        GeniCode::SearchFailed
    );
    let after = f.am.describe(&slice()).unwrap();
    assert!(after.slivers.is_empty());
    assert!(!after.manifest.contains("<node"));
    assert!(
        !store
            .set_operational_state(&urn, OperationalState::Ready, f.clock.now())
            .unwrap(),
        "a deleted sliver is never changed"
    );
}

#[test]
fn provision_uses_end_time_and_caps_it_by_the_credential() {
    let f = fixture();
    let p = principal(3);
    f.am.allocate(&p, SLICE, &request(&["n1"], "default-vm"))
        .unwrap();
    let options = ProvisionOptions {
        end_time: Some(start() + TimeDelta::days(10)),
        ..ProvisionOptions::default()
    };
    let prov = f.am.provision(&p, &slice(), &options).unwrap();
    assert_eq!(prov.slivers[0].expires, start() + TimeDelta::days(3));
}

#[test]
fn later_allocates_add_slivers_and_describe_covers_them_all() {
    let f = fixture();
    let p = principal(30);
    let first =
        f.am.allocate(&p, SLICE, &request(&["a"], "default-vm"))
            .unwrap();
    let second =
        f.am.allocate(&p, SLICE, &request(&["b"], "emulab-xen"))
            .unwrap();
    assert!(
        !second.manifest.contains("client_id=\"a\""),
        "Allocate reports only the new slivers"
    );
    let d = f.am.describe(&slice()).unwrap();
    assert_eq!(d.slivers.len(), 2);
    for urn in [&first.slivers[0].urn, &second.slivers[0].urn] {
        assert!(
            d.manifest.contains(&format!("sliver_id=\"{urn}\"")),
            "{}",
            d.manifest
        );
    }
    geni_rspec::Document::parse(d.manifest.as_bytes()).expect("merged manifest parses");
    let dup =
        f.am.allocate(&p, SLICE, &request(&["a"], "default-vm"))
            .unwrap_err()
            .answered();
    assert_eq!(dup.code, GeniCode::AlreadyExists);
}

#[test]
fn manifests_from_requests_kept_parsed_are_those_from_their_stored_texts() {
    let f = fixture();
    let p = principal(30);
    for (client_id, later) in [("c", 0), ("a", 5), ("b", 0), ("d", 1)] {
        f.clock.advance(TimeDelta::seconds(later));
        f.am.allocate(&p, SLICE, &request(&[client_id], "emulab-xen"))
            .unwrap();
    }
    let kept = f.am.provision(&p, &slice(), &Default::default()).unwrap();
    let fresh = open(&f.url, &[host("h1", 4), host("h2", 4)], &f.clock);
    let stored = fresh.describe(&slice()).unwrap();
    assert_eq!(kept.manifest, stored.manifest);
    assert_eq!(f.am.describe(&slice()).unwrap().manifest, stored.manifest);
    // Oldest first: c, then a and b (one second, in the order of their
    // ids), then d.
    let at = |c: &str| stored.manifest.find(&format!("client_id=\"{c}\"")).unwrap();
    assert!(at("c") < at("a").min(at("b")) && at("a").max(at("b")) < at("d"));
}

#[test]
fn partial_delete_leaves_the_other_slivers() {
    let f = fixture();
    let p = principal(30);
    let urns = provisioned(&f, &["a", "b", "c"]);
    let gone = &urns[1];
    let deleted = f.am.delete(&p, &slivers(&[gone])).unwrap();
    assert_eq!(deleted.len(), 1);
    let d = f.am.describe(&slice()).unwrap();
    assert_eq!(d.slivers.len(), 2);
    assert!(!d.manifest.contains("client_id=\"b\""), "{}", d.manifest);
    assert!(d.manifest.contains("client_id=\"a\"") && d.manifest.contains("client_id=\"c\""));
    let err = f.am.describe(&slivers(&[gone])).unwrap_err().answered();
    assert_eq!(err.code, GeniCode::SearchFailed);
}

#[test]
fn reaper_deletes_expired_slivers_to_the_second_and_frees_capacity() {
    let f = fixture_with(&[host("h1", 1)]);
    let p = principal(30);
    let a =
        f.am.allocate(&p, SLICE, &request(&["n1"], "default-vm"))
            .unwrap();
    f.clock
        .advance(TimeDelta::minutes(10) - TimeDelta::seconds(1));
    let store = f.am.store();
    assert!(
        store.reap_expired(f.clock.now()).unwrap().is_empty(),
        "not yet expired"
    );
    assert_eq!(
        f.am.status(&slice()).unwrap().slivers[0].urn,
        a.slivers[0].urn
    );
    f.clock.advance(TimeDelta::seconds(1));
    assert_eq!(
        f.am.status(&slice()).unwrap_err().answered().code,
        GeniCode::SearchFailed,
        "an expired sliver is gone even before the reaper runs"
    );
    let reaped = store.reap_expired(f.clock.now()).unwrap();
    assert_eq!(reaped, [a.slivers[0].urn.clone()]);
    let row = store.sliver(&a.slivers[0].urn).unwrap().unwrap();
    assert_eq!(row.allocation_state, AllocationState::Unallocated);
    f.am.allocate(&p, SLICE, &request(&["n1"], "default-vm"))
        .expect("capacity is free again");
}

#[test]
fn a_reaper_that_finds_nothing_expired_does_not_wait_for_the_writers_turn() {
    let f = fixture_with(&[host("h1", 1)]);
    let a =
        f.am.allocate(&principal(30), SLICE, &request(&["n1"], "default-vm"))
            .unwrap();
    let now = f.clock.now();
    let reaped = beside_an_open_write(f.am.store(), move |store| store.reap_expired(now));
    assert!(reaped.unwrap().is_empty(), "not yet expired");
    let later = now + TimeDelta::minutes(10);
    assert_eq!(
        f.am.store().reap_expired(later).unwrap(),
        [a.slivers[0].urn.clone()],
        "reaped once expired"
    );
}

#[test]
fn shutdown_stops_running_slivers() {
    let f = fixture();
    let p = principal(30);
    let urns = provisioned(&f, &["n1"]);
    let urn = &urns[0];
    f.am.store()
        .set_operational_state(urn, OperationalState::Ready, f.clock.now())
        .unwrap();
    f.am.shutdown(&p, SLICE).unwrap();
    f.am.shutdown(&p, SLICE)
        .expect("repeating Shutdown is harmless");
    let st = f.am.status(&slice()).unwrap();
    assert_eq!(st.slivers[0].operational, OperationalState::Stopping);
    assert_eq!(
        f.am.store()
            .jobs_of_sliver(urn)
            .unwrap()
            .last()
            .unwrap()
            .kind,
        JobKind::Stop
    );
    assert_eq!(described(&f), 1, "kept for forensics");
}

#[test]
fn events_record_what_happened() {
    let f = fixture();
    let p = principal(30);
    provisioned(&f, &["n1"]);
    f.am.delete(&p, &slice()).unwrap();
    let kinds: Vec<&str> =
        f.am.store()
            .slice_events(SLICE)
            .unwrap()
            .into_iter()
            .map(|e| e.kind.as_str())
            .collect();
    for wanted in ["allocate", "provision", "delete"] {
        assert!(kinds.contains(&wanted), "{wanted} in {kinds:?}");
    }
}

#[test]
fn a_deleted_slivers_capacity_is_held_until_its_vm_is_destroyed() {
    let f = fixture_with(&[host("h1", 1)]);
    let p = principal(30);
    f.am.allocate(&p, SLICE, &request(&["n1"], "default-vm"))
        .unwrap();
    f.am.provision(&p, &slice(), &ProvisionOptions::default())
        .unwrap();
    f.am.delete(&p, &slice()).unwrap();
    let again = f.am.allocate(&p, SLICE, &request(&["n2"], "default-vm"));
    assert!(
        again.is_err(),
        "the VM still takes the host until the destroy job is done"
    );
    let store = f.am.store();
    let jobs = store
        .claim_jobs("worker", f.clock.now(), TimeDelta::minutes(1), 10)
        .unwrap();
    let kinds: Vec<JobKind> = jobs.iter().map(|j| j.kind).collect();
    assert_eq!(
        kinds,
        [JobKind::Destroy],
        "the destroy supersedes the provision"
    );
    assert!(
        f.am.allocate(&p, SLICE, &request(&["n2"], "default-vm"))
            .is_err(),
        "the destroy job is still running"
    );
    store
        .finish_job(&jobs[0].id, "worker", f.clock.now())
        .unwrap();
    f.am.allocate(&p, SLICE, &request(&["n2"], "default-vm"))
        .expect("capacity is free once the VM is destroyed");
}
