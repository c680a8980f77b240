//! The OpenNebula backend when things go wrong, against the OpenNebula
//! simulator playing 5.x, 6.x and 7.x: an injected boot failure and a quota
//! refusal end in `geni_failed` with oned's text, expiry terminates the VMs
//! and frees the link network, an aggregate killed after oned created a VM
//! but before the VM's id was recorded creates no second VM, an aggregate
//! killed while it destroys a VM takes the job up again as soon as it
//! restarts (not when the dead run's lease ends), and the reconciler
//! terminates VMs no sliver owns and fails slivers whose VM vanished.

use chrono::{Duration, Utc};
use geni_am_tests::aggregate::{DEMO_SLICE, set};
use geni_am_tests::calls::Sliver;
use geni_am_tests::database::Store;
use geni_am_tests::flows::{Slice, urns};
use geni_am_tests::opennebula::{self as one, DONE, RUNNING};
use geni_am_tests::requests;
use std::time::{Duration as StdDuration, Instant};

geni_am_tests::on_opennebula!(
    boot_failure,
    quota_refusal,
    expiry,
    crash_between_create_and_store,
    kill_during_destroy,
    reconciler
);

/// Polls Status until the only sliver is `geni_failed`: that sliver.
fn wait_failed(slice: &mut Slice<'_>) -> Sliver {
    let mut failed = None;
    one::wait_for("the sliver failed", || {
        let slivers = slice.status(&[DEMO_SLICE]).ok().slivers();
        failed = slivers.into_iter().find(|s| s.operational == "geni_failed");
        failed.is_some()
    });
    failed.expect("a failed sliver")
}

fn boot_failure(version: &str, store: Store) {
    let sim = one::start_sim(version);
    let aggregate = one::start_aggregate(store, &sim);
    let mut client = aggregate.client(3);
    let mut slice = one::demo_slice(&aggregate, &mut client);
    let urn = urns(&slice.allocate(&requests::vms(&["doomed"])).slivers()).remove(0);
    sim.fail_next_boots(1);
    slice.provision(&[DEMO_SLICE]);
    slice.action(&[DEMO_SLICE], "geni_start").ok();
    let failed = wait_failed(&mut slice);
    let vm = one::vm_of(&sim, &urn);
    let error = vm.error.clone().expect("the simulator set the VM's ERROR");
    assert!(
        failed.error.contains(&error),
        "geni_error {:?} carries oned's ERROR {error:?}",
        failed.error
    );
    slice.delete(&[DEMO_SLICE]);
    one::wait_terminated(&sim, &urn);
}

fn quota_refusal(version: &str, store: Store) {
    let sim = one::start_sim(version);
    let aggregate = one::start_aggregate(store, &sim);
    let mut client = aggregate.client(3);
    let mut slice = one::demo_slice(&aggregate, &mut client);
    slice.allocate(&requests::vms(&["over-quota"]));
    sim.set_vm_quota(Some(0));
    slice.provision(&[DEMO_SLICE]);
    let failed = wait_failed(&mut slice);
    assert!(
        failed.error.contains("limit of 0 reached for VMS quota"),
        "geni_error carries oned's quota text: {:?}",
        failed.error
    );
    assert!(sim.vm_ids().is_empty(), "no VM created");
    assert_eq!(
        sim.call_count("one.template.instantiate"),
        1,
        "a quota refusal is not retried"
    );
    slice.delete(&[DEMO_SLICE]);
}

fn expiry(version: &str, store: Store) {
    let sim = one::start_sim(version);
    let aggregate = one::start_aggregate(store, &sim);
    let mut client = aggregate.client(3);
    let mut slice = one::demo_slice(&aggregate, &mut client);
    let (sliver_urns, link) = one::lan_up(&sim, &mut slice, &["e1", "e2"]);

    let soon = Utc::now() + Duration::seconds(3);
    slice
        .renew(&[DEMO_SLICE], &geni_am::time::format(&soon))
        .ok();
    for urn in &sliver_urns {
        one::wait_terminated(&sim, urn);
    }
    one::wait_network_gone(&sim, link.id);
}

fn crash_between_create_and_store(version: &str, store: Store) {
    let sim = one::start_sim(version);
    let mut aggregate = one::start_aggregate_with(store, &sim, |table| {
        set(table, &["jobs", "lease_secs"], 2.into());
    });
    let mut client = aggregate.client(3);
    let mut slice = one::demo_slice(&aggregate, &mut client);
    let urn = urns(&slice.allocate(&requests::vms(&["survivor"])).slivers()).remove(0);
    let instantiate = "one.template.instantiate";
    sim.answer_late(instantiate, StdDuration::from_secs(30));
    slice.provision(&[DEMO_SLICE]);
    one::wait_for("oned created the VM", || {
        sim.call_count(instantiate) == 1 && one::vms_of(&sim, &urn).len() == 1
    });
    drop(slice);
    aggregate.kill();
    let log_before = aggregate.log();
    assert!(
        !log_before.contains("OpenNebula VM created on hold"),
        "the aggregate learnt the VM's id before it was killed:\n{log_before}"
    );

    aggregate.restart();
    let mut client = aggregate.client(3);
    let mut slice = one::demo_slice(&aggregate, &mut client);
    slice.action(&[DEMO_SLICE], "geni_start").ok();
    slice.wait_ready(&[DEMO_SLICE]);
    assert_eq!(sim.call_count(instantiate), 1, "no second instantiate");
    assert_eq!(sim.vm_ids().len(), 1, "exactly one VM in the simulator");
    let vm = one::vm_of(&sim, &urn);
    assert_eq!((vm.state, vm.lcm_state), (3, 3), "the VM runs: {vm:?}");
    slice.delete(&[DEMO_SLICE]);
    one::wait_terminated(&sim, &urn);
}

fn kill_during_destroy(version: &str, store: Store) {
    let sim = one::start_sim(version);
    // Room for exactly one VM of half a CPU: on the first host only.
    sim.set_host_capacity(0, 50, 8 << 20);
    sim.set_host_capacity(1, 0, 8 << 20);
    let mut aggregate = one::start_aggregate(store, &sim);
    let mut client = aggregate.client(3);
    let mut slice = one::demo_slice(&aggregate, &mut client);
    let urn = urns(&slice.allocate(&requests::vms(&["first"])).slivers()).remove(0);
    one::bring_up(&mut slice);
    // oned terminates the VM at once but answers only after the kill: the
    // destroy job is leased (for the default 60 s) by a run that dies.
    let action = "one.vm.action";
    let before = sim.call_count(action);
    sim.answer_late(action, StdDuration::from_secs(30));
    slice.delete(&[DEMO_SLICE]);
    one::wait_for("the destroy job called oned", || {
        sim.call_count(action) > before
    });
    drop(slice);
    aggregate.kill();

    aggregate.restart();
    let restarted = Instant::now();
    let mut client = aggregate.client(3);
    let mut slice = one::demo_slice(&aggregate, &mut client);
    // The deleted sliver holds the only room until its destroy job is
    // done; the restarted process takes that job up at once.
    let mut answer = None;
    let mut last = None;
    while restarted.elapsed() < StdDuration::from_secs(20) {
        let reply = slice.try_allocate(&requests::vms(&["second"]));
        if reply.code == 0 {
            answer = Some(reply);
            break;
        }
        last = Some(reply.output);
        std::thread::sleep(StdDuration::from_millis(100));
    }
    let answer = answer.unwrap_or_else(|| {
        panic!(
            "the deleted sliver's capacity was still held 20 s after the restart (the dead run's lease lasts 60 s): {last:?}\n{}",
            aggregate.log()
        )
    });
    assert_eq!(answer.slivers().len(), 1);
    one::wait_terminated(&sim, &urn);
}

fn reconciler(version: &str, store: Store) {
    let sim = one::start_sim(version);
    let aggregate = one::start_aggregate_with(store, &sim, |table| {
        set(table, &["jobs", "reconcile_interval_secs"], 1.into());
    });
    let mut client = aggregate.client(3);
    let mut slice = one::demo_slice(&aggregate, &mut client);
    let urn = urns(&slice.allocate(&requests::vms(&["kept"])).slivers()).remove(0);
    one::bring_up(&mut slice);

    let orphan_urn = "urn:publicid:IDN+geni-am.test+sliver+orphan";
    let orphan = one::instantiate_outside(&sim, &format!("{}/{orphan_urn}", one::LABEL));
    let foreign = one::instantiate_outside(&sim, "someone-else/theirs");
    one::wait_for("the orphan VM terminated", || {
        sim.vm_state(orphan).is_some_and(|(state, _)| state == DONE)
    });
    assert_ne!(
        sim.vm_state(foreign).map(|(state, _)| state),
        Some(DONE),
        "a VM without this aggregate's label is left alone"
    );
    let kept = one::vm_of(&sim, &urn);
    assert_eq!(
        sim.vm_state(kept.id as i32),
        Some(RUNNING),
        "the sliver's own VM is kept"
    );

    assert!(sim.purge_vm(kept.id as i32), "the simulator purges the VM");
    let failed = wait_failed(&mut slice);
    assert_eq!(failed.urn, urn);
    assert!(
        failed.error.contains("disappeared"),
        "geni_error says the VM vanished: {failed:?}"
    );
}

/// oned 5.8 answers failures with 4-element arrays (no `<i8>` 5th
/// element): the refusal still reaches `geni_error` whole.
#[test]
fn quota_refusal_from_a_5_8_server() {
    quota_refusal("5.8.0", Store::Sqlite);
}
