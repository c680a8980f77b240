//! Slices with several slivers and a restart, over TLS against the real
//! binary on SQLite and on PostgreSQL: a multi-sliver slice grown by two
//! Allocates and partially deleted; an aggregate killed after Provision
//! and started again answers Status and Describe unchanged, finds its
//! simulated VMs again and continues the lifecycle (start until ready,
//! Renew, Delete) without marking any sliver failed.

use geni_am_tests::aggregate::{Aggregate, DEMO_SLICE};
use geni_am_tests::calls::Sliver;
use geni_am_tests::database::Store;
use geni_am_tests::flows::{Slice, urns};
use geni_am_tests::requests::{self, node_client_ids, node_sliver_ids};

geni_am_tests::on_both_stores!(partial_delete, restart_mid_lifecycle);

fn partial_delete(store: Store) {
    let aggregate = Aggregate::start(store);
    let mut client = aggregate.client(3);
    let mut slice = Slice {
        client: &mut client,
        urn: DEMO_SLICE.to_owned(),
        credential: aggregate.read("demo-slice-cred.xml"),
    };
    let first = slice.allocate(&requests::vms(&["a", "b"])).slivers();
    let second = slice.allocate(&requests::vms(&["c"])).slivers();
    let all: Vec<Sliver> = first.iter().chain(&second).cloned().collect();
    assert_eq!(urns(&all).len(), 3, "three distinct slivers");
    slice.provision(&[DEMO_SLICE]);

    let doomed = first[0].urn.as_str();
    let deleted = slice.delete(&[doomed]);
    assert_eq!(
        urns(&deleted.slivers()),
        [doomed],
        "only the named sliver deleted"
    );

    let left: Vec<String> = urns(&all).into_iter().filter(|u| u != doomed).collect();
    let status = slice.status(&[DEMO_SLICE]).ok();
    assert_eq!(urns(&status.slivers()), left);
    let described = slice.describe(&[DEMO_SLICE]).ok();
    let mut ids = node_sliver_ids(&described.rspec());
    ids.sort();
    assert_eq!(ids, left, "the manifest lists the remaining slivers only");
    assert_eq!(node_client_ids(&described.rspec()).len(), 2);

    let gone = slice.status(&[doomed]);
    assert_eq!(gone.code, 12, "the deleted sliver is unknown: {gone:?}");
    let rest: Vec<&str> = left.iter().map(String::as_str).collect();
    slice.delete(&rest);
}

fn restart_mid_lifecycle(store: Store) {
    let mut aggregate = Aggregate::start(store);
    let credential = aggregate.read("demo-slice-cred.xml");
    let (status_before, manifest_before) = {
        let mut client = aggregate.client(3);
        let mut slice = Slice {
            client: &mut client,
            urn: DEMO_SLICE.to_owned(),
            credential: credential.clone(),
        };
        slice.allocate(&requests::vms(&["keep1", "keep2"]));
        slice.provision(&[DEMO_SLICE]);
        // The kill comes once the cloud holds the VMs, so that only a cloud
        // that keeps them lets the slivers go on after the restart.
        let status = slice
            .wait_operational(&[DEMO_SLICE], "geni_notready")
            .slivers();
        (status, slice.describe(&[DEMO_SLICE]).ok().rspec())
    };

    aggregate.restart();

    let mut client = aggregate.client(3);
    let mut slice = Slice {
        client: &mut client,
        urn: DEMO_SLICE.to_owned(),
        credential,
    };
    let status_after = slice.status(&[DEMO_SLICE]).ok().slivers();
    assert_eq!(urns(&status_after), urns(&status_before));
    for (before, after) in sorted(status_before)
        .iter()
        .zip(sorted(status_after.clone()))
    {
        assert_eq!(before.allocation, after.allocation);
        assert_eq!(before.expires, after.expires);
    }
    let manifest_after = slice.describe(&[DEMO_SLICE]).ok().rspec();
    assert_eq!(
        node_sliver_ids(&manifest_after),
        node_sliver_ids(&manifest_before)
    );
    assert_eq!(
        node_client_ids(&manifest_after),
        node_client_ids(&manifest_before)
    );

    // The simulated cloud saved its VMs, so they outlived the kill as a
    // real cloud's would: nothing is marked failed and the lifecycle goes
    // on through start, ready, renew and delete.
    assert_not_failed(&status_after);
    let started = slice.action(&[DEMO_SLICE], "geni_start").ok();
    assert_not_failed(&started.slivers());
    let ready = slice.wait_ready(&[DEMO_SLICE]).slivers();
    assert_eq!(urns(&ready), urns(&status_after));
    let until = geni_am::time::format(&(chrono::Utc::now() + chrono::Duration::days(2)));
    let renewed = slice.renew(&[DEMO_SLICE], &until).ok();
    assert!(renewed.slivers().iter().all(|s| s.expires == until));
    assert_not_failed(&slice.status(&[DEMO_SLICE]).ok().slivers());
    let deleted = slice.delete(&[DEMO_SLICE]);
    assert_eq!(urns(&deleted.slivers()), urns(&status_after));
}

fn assert_not_failed(slivers: &[Sliver]) {
    assert!(
        slivers.iter().all(|s| s.operational != "geni_failed"),
        "a sliver was marked failed: {slivers:?}"
    );
}

fn sorted(mut slivers: Vec<Sliver>) -> Vec<Sliver> {
    slivers.sort_by(|a, b| a.urn.cmp(&b.urn));
    slivers
}
