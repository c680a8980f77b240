//! The jobs drive the simulated cloud through whole sliver lifecycles over
//! a SQLite store, the slivers allocated, provisioned and acted on through
//! the core: provision, start, restart, update users, stop; boot failures
//! and refused creations end in `geni_failed` with the backend's message,
//! where further actions are refused at once; transient errors are
//! retried, capacity refusals only while destructions are pending.

mod core_support;
mod jobs_support;

on_both_stores!(
    slivers_go_from_provisioned_to_ready_and_back_through_every_action,
    a_failed_boot_fails_the_sliver_with_the_backend_message,
    starting_a_failed_sliver_is_refused_at_once_and_leaves_it_failed,
    a_refused_creation_fails_the_sliver_without_retrying,
    transient_backend_errors_are_retried_until_the_vm_exists,
    a_host_still_full_of_deleted_slivers_vms_delays_creation,
);

use chrono::{TimeDelta, Utc};
use geni_am::geni::GeniCode;
use geni_am::model::{OperationalState as Op, Selector};
use geni_am_backend::Compute;
use jobs_support::{ALICE, AUTHORITY, Harness, SLICE, alice, fast_jobs, small_vm};

fn provisioned(harness: &mut Harness) -> Vec<String> {
    let urns = harness.provision(Utc::now() + TimeDelta::days(5));
    harness.start(fast_jobs());
    urns
}

fn slivers_go_from_provisioned_to_ready_and_back_through_every_action(mut harness: Harness) {
    let urns = provisioned(&mut harness);
    assert_eq!(urns.len(), 2, "the corpus request has two nodes");
    for urn in &urns {
        let row = harness.wait_state(urn, Op::NotReady);
        let notes = row.annotations.value().clone();
        assert!(notes.backend_id.is_some(), "the VM id is recorded");
        assert!(notes.hostname.unwrap().ends_with(".sim.geni-am.test"));
    }
    assert_eq!(harness.cloud.vms_created(), 2);

    let urn = &urns[0];
    harness.act(urn, "geni_start", None);
    let ready = harness.wait_state(urn, Op::Ready);
    let notes = ready.annotations.value().clone();
    assert_eq!(notes.logins.len(), 1);
    assert_eq!(notes.logins[0].username, "alice");
    assert_eq!(Some(&notes.logins[0].hostname), notes.hostname.as_ref());
    let hostname = notes.hostname.clone().unwrap();
    let described = harness
        .aggregate
        .describe(&Selector::Slice(SLICE.into()))
        .unwrap();
    assert!(
        described
            .manifest
            .contains(&format!("hostname=\"{hostname}\"")),
        "the manifest shows the login: {}",
        described.manifest
    );

    harness.act(urn, "geni_restart", None);
    harness.wait_state(urn, Op::Ready);

    let new_keys = [alice(&["ssh-rsa AAAAB3 alice@desktop"])];
    harness.act(urn, "geni_update_users", Some(&new_keys));
    harness.wait_state(urn, Op::Ready);
    let vm = geni_am_backend::VmHandle(notes.backend_id.clone().unwrap());
    assert_eq!(
        harness.cloud.users_of(&vm).unwrap()[ALICE],
        vec!["ssh-rsa AAAAB3 alice@desktop"]
    );

    harness.act(urn, "geni_stop", None);
    harness.wait_state(urn, Op::NotReady);
    let seen = harness.cloud.observe(&vm).unwrap();
    assert_eq!(seen.state, geni_am_backend::VmState::Stopped);
    assert_eq!(harness.cloud.vms_created(), 2, "no VM was created twice");
}

/// Provisions two slivers and fails the boot of the second: their URNs.
fn second_boot_failed(harness: &mut Harness) -> Vec<String> {
    let urns = provisioned(harness);
    let urn = &urns[1];
    harness.wait_state(urn, Op::NotReady);
    harness
        .cloud
        .fail_next_boot(urn, "the simulated guest kernel panicked");
    harness.act(urn, "geni_start", None);
    urns
}

fn a_failed_boot_fails_the_sliver_with_the_backend_message(mut harness: Harness) {
    let urns = second_boot_failed(&mut harness);
    let failed = harness.wait_state(&urns[1], Op::Failed);
    assert_eq!(failed.error, "the simulated guest kernel panicked");
    assert_eq!(
        harness.wait_state(&urns[0], Op::NotReady).error,
        "",
        "the other sliver is untouched"
    );
}

fn starting_a_failed_sliver_is_refused_at_once_and_leaves_it_failed(mut harness: Harness) {
    let urns = second_boot_failed(&mut harness);
    let urn = &urns[1];
    harness.wait_state(urn, Op::Failed);
    let jobs_before = harness.store.jobs_of_sliver(urn).unwrap().len();
    for action in ["geni_start", "geni_restart"] {
        let err = harness.try_act(urn, action, None).unwrap_err();
        assert_eq!(err.code, GeniCode::Unsupported, "{action}: {}", err.message);
        assert!(
            err.message.contains("geni_failed")
                && err.message.contains("the simulated guest kernel panicked")
                && err.message.contains("delete it"),
            "{action}: {}",
            err.message
        );
    }
    let row = harness.store.sliver(urn).unwrap().unwrap();
    assert_eq!(row.operational_state, Op::Failed);
    assert_eq!(row.error, "the simulated guest kernel panicked");
    assert_eq!(
        harness.store.jobs_of_sliver(urn).unwrap().len(),
        jobs_before,
        "no job was queued"
    );
}

fn a_refused_creation_fails_the_sliver_without_retrying(mut harness: Harness) {
    let urns = harness.provision(Utc::now() + TimeDelta::days(5));
    let read = harness.store.sliver(&urns[0]).unwrap().unwrap();
    let mut row = read.clone();
    row.sliver_type = "gpu-monster".into();
    harness
        .store
        .write(|conn| geni_am::store::slivers::save(conn, &read, &row))
        .unwrap();
    harness.start(fast_jobs());
    let failed = harness.wait_state(&urns[0], Op::Failed);
    assert_eq!(
        failed.error,
        "backend refused the operation: the simulated cloud has no sliver type `gpu-monster`"
    );
    let jobs = harness.store.jobs_of_sliver(&urns[0]).unwrap();
    assert_eq!((jobs[0].state.as_str(), jobs[0].attempts), ("failed", 1));
}

fn transient_backend_errors_are_retried_until_the_vm_exists(mut harness: Harness) {
    harness.cloud.fail_next_calls(3);
    let urns = provisioned(&mut harness);
    for urn in &urns {
        harness.wait_state(urn, Op::NotReady);
    }
    let attempts: i64 = urns
        .iter()
        .map(|urn| harness.store.jobs_of_sliver(urn).unwrap()[0].attempts)
        .sum();
    assert!(
        attempts >= 3,
        "{attempts} attempts for two jobs and three failures"
    );
    assert_eq!(harness.cloud.vms_created(), 2);
}

fn a_host_still_full_of_deleted_slivers_vms_delays_creation(mut harness: Harness) {
    // The store believes host1 holds twice what the cloud does (as when
    // a deleted sliver's capacity is free in the store before its VM is
    // destroyed). Four slices fill the cloud's host1 and are deleted; the
    // corpus slice, provisioned while their destructions are pending, is
    // provisioned without failing (a capacity refusal waits for them).
    let mut rows = harness.store.components().unwrap();
    for row in &mut rows {
        (row.cpus, row.memory_mb, row.max_vms) = (row.cpus * 2, row.memory_mb * 2, row.max_vms * 2);
        row.available = row.name == "host1";
    }
    harness.store.sync_components(&rows, Utc::now()).unwrap();
    for i in 0..4 {
        let slice = format!("urn:publicid:IDN+ch.geni.net:jobs+slice+full{i}");
        for urn in harness.provision_into(&slice, Utc::now() + TimeDelta::days(1)) {
            let host = format!("urn:publicid:IDN+{AUTHORITY}+node+host1");
            harness
                .cloud
                .create_vm(&small_vm(&urn, Some(host)))
                .unwrap();
        }
        harness.delete(&slice);
    }
    let urns = provisioned(&mut harness);
    for urn in &urns {
        assert_eq!(harness.wait_state(urn, Op::NotReady).error, "");
    }
    harness.wait_cloud("only the corpus slice's VMs", |cloud| {
        cloud.list_vms().unwrap().len() == 2
    });
}
