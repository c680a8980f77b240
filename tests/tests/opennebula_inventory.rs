//! The advertisement and capacity with the OpenNebula backend, against the
//! OpenNebula simulator playing 5.x, 6.x and 7.x: hosts counted as the
//! scheduler counts them (CPU share and memory, less what other users'
//! VMs hold) and advertised with the hypervisor oned reports.

use geni_am_tests::calls::{call, creds, with_version};
use geni_am_tests::database::Store;
use geni_am_tests::opennebula as one;
use geni_am_tests::requests;

geni_am_tests::on_opennebula!(
    half_cpu_vms_fill_a_host_as_the_scheduler_places_them,
    hosts_are_advertised_as_the_hypervisor_oned_reports
);

/// The advertisement as alice sees it.
fn advertisement(aggregate: &geni_am_tests::aggregate::Aggregate) -> String {
    let mut client = aggregate.client(3);
    let user_credential = aggregate.read("alice-user-cred.xml");
    call(
        &mut client,
        "ListResources",
        vec![creds(&user_credential), with_version(vec![])],
    )
    .ok()
    .text()
    .to_owned()
}

fn half_cpu_vms_fill_a_host_as_the_scheduler_places_them(version: &str, store: Store) {
    let sim = one::start_sim(version);
    // localhost has 2 CPUs (MAX_CPU 200); node2 has none.
    sim.set_host_capacity(0, 200, 16_777_216);
    sim.set_host_capacity(1, 0, 0);
    // Another OpenNebula user's VM holds half a CPU of localhost.
    let outside = one::instantiate_outside_with(&sim, "<CPU>0.5</CPU>");
    one::wait_for("the other user's VM placed", || {
        sim.vm_state(outside).is_some_and(|(state, _)| state == 3)
    });
    let aggregate = one::start_aggregate(store, &sim);
    let mut client = aggregate.client(3);
    let mut slice = one::demo_slice(&aggregate, &mut client);
    // CPU 0.5 each: 1.5 free CPUs take three (VCPU would count two, and
    // ignoring the other user's VM four).
    slice.allocate(&requests::vms(&["a", "b", "c"]));
    let fourth = slice.try_allocate(&requests::vms(&["d"]));
    assert_ne!(fourth.code, 0, "a fourth half-CPU VM allocated: {fourth:?}");
    assert!(
        fourth.output.contains("no component has room"),
        "{}",
        fourth.output
    );
}

fn hosts_are_advertised_as_the_hypervisor_oned_reports(version: &str, store: Store) {
    let sim = one::start_sim(version);
    sim.set_host_hypervisor(1, "kvm");
    let aggregate = one::start_aggregate(store, &sim);
    let ad = advertisement(&aggregate);
    for hardware_type in ["dummy-host", "kvm-host"] {
        assert_eq!(
            ad.matches(&format!("<hardware_type name=\"{hardware_type}\"/>"))
                .count(),
            1,
            "{hardware_type} once: {ad}"
        );
    }
}
