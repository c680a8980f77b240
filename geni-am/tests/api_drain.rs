//! Draining through the AM API (v3 and v2), turned on and off by the
//! operator's path (`Aggregate::set_draining`, as `geni-am admin drain`
//! does): new Allocates and CreateSlivers are refused with UNAVAILABLE (11)
//! and a message saying the aggregate is draining, while existing slivers
//! are provisioned, renewed, acted on, described and deleted as before;
//! GetVersion says so and ListResources shows no node available; turning
//! it off restores allocation.

mod api_support;
mod core_support;

use api_support::*;
use chrono::{TimeDelta, Utc};
use geni_xmlrpc::Value;

/// Allocates the corpus request into slice `name` over v3.
fn allocate(w: &World, slice: &str, cred: &str) -> api_support::Answer {
    w.v3(
        "Allocate",
        vec![s(slice), creds(&[cred]), s(request()), st(&[])],
    )
}

#[test]
fn a_drained_aggregate_refuses_allocate_with_code_11_and_keeps_existing_slivers_working() {
    let w = World::new();
    let slice = w.slice_urn("drained");
    let cred = w.slice_credential("drained", 30);
    let c = || creds(&[&cred]);
    let urns = sliver_urns(get(allocate(&w, &slice, &cred).ok(), "geni_slivers"));
    assert_eq!(urns.len(), 2);

    assert!(
        w.aggregate
            .set_draining("ops", true, "host upgrade")
            .unwrap()
    );

    let other = w.slice_urn("newcomer");
    let other_cred = w.slice_credential("newcomer", 30);
    let refused = allocate(&w, &other, &other_cred);
    let message = refused.fails_with(11);
    assert!(message.contains("draining"), "{message}");
    assert!(message.contains("host upgrade"), "{message}");
    assert!(
        message.contains("existing slivers keep working"),
        "{message}"
    );
    allocate(&w, &slice, &cred).fails_with(11);

    // What exists keeps working.
    let p = w.v3("Provision", vec![strings(&[&slice]), c(), st(&[geni3()])]);
    assert_eq!(items(get(p.ok(), "geni_slivers")).len(), 2);
    let started = w.v3(
        "PerformOperationalAction",
        vec![strings(&[&slice]), c(), s("geni_start"), st(&[])],
    );
    assert_eq!(items(started.ok()).len(), 2);
    let renew_to = time(Utc::now() + TimeDelta::days(3));
    let renewed = w.v3(
        "Renew",
        vec![strings(&[&slice]), c(), s(&renew_to), st(&[])],
    );
    assert_eq!(items(renewed.ok()).len(), 2);
    let status = w.v3("Status", vec![strings(&[&slice]), c(), st(&[])]);
    assert_eq!(sliver_urns(get(status.ok(), "geni_slivers")).len(), 2);
    let described = w.v3("Describe", vec![strings(&[&slice]), c(), st(&[geni3()])]);
    assert!(text(described.ok(), "geni_rspec").contains("type=\"manifest\""));
    let deleted = w.v3("Delete", vec![strings(&[&urns[0]]), c(), st(&[])]);
    assert_eq!(items(deleted.ok()).len(), 1);

    assert!(w.aggregate.set_draining("ops", false, "").unwrap());
    let again = allocate(&w, &other, &other_cred);
    assert_eq!(sliver_urns(get(again.ok(), "geni_slivers")).len(), 2);
}

#[test]
fn a_drained_aggregate_refuses_create_sliver_with_code_11() {
    let w = World::new();
    w.aggregate.set_draining("ops", true, "").unwrap();
    let slice = w.slice_urn("v2drained");
    let cred = w.slice_credential("v2drained", 30);
    let users = Value::Array(vec![]);
    let create = || {
        w.v2(
            "CreateSliver",
            vec![
                s(&slice),
                strings(&[&cred]),
                s(request()),
                users.clone(),
                st(&[]),
            ],
        )
    };
    let message = create().fails_with(11).to_owned();
    assert!(message.contains("draining"), "{message}");
    w.v2("SliverStatus", vec![s(&slice), strings(&[&cred]), st(&[])])
        .fails_with(12);
    w.aggregate.set_draining("ops", false, "").unwrap();
    assert!(matches!(create().ok(), Value::String(m) if m.contains("type=\"manifest\"")));
}

#[test]
fn get_version_and_list_resources_show_the_drain() {
    let w = World::new();
    let user = w.user_credential();
    let version = w.v3("GetVersion", vec![]);
    assert_eq!(
        get(version.ok(), "geni_am_draining"),
        &Value::Boolean(false)
    );
    let ad = |available: bool| {
        let a = w.v3(
            "ListResources",
            vec![
                creds(&[&user]),
                st(&[geni3(), ("geni_available", Value::Boolean(available))]),
            ],
        );
        let Value::String(ad) = a.ok() else {
            panic!("the advertisement is not a string")
        };
        ad.clone()
    };
    assert_eq!(ad(true).matches("<node ").count(), 2);

    w.aggregate.set_draining("ops", true, "").unwrap();
    let version = w.v3("GetVersion", vec![]);
    assert_eq!(get(version.ok(), "geni_am_draining"), &Value::Boolean(true));
    let since = geni_am::time::parse(text(version.ok(), "geni_am_draining_since")).unwrap();
    assert!((Utc::now() - since).num_seconds().abs() < 60, "{since}");
    let v2 = w.v2("GetVersion", vec![]);
    assert_eq!(get(v2.ok(), "geni_am_draining"), &Value::Boolean(true));
    let all = ad(false);
    assert_eq!(all.matches("<node ").count(), 2, "nodes stay listed");
    assert!(!all.contains("<available now=\"true\""), "{all}");
    assert_eq!(ad(true).matches("<node ").count(), 0);

    w.aggregate.set_draining("ops", false, "").unwrap();
    assert_eq!(ad(true).matches("<node ").count(), 2);
}

#[test]
fn a_drain_begun_by_another_process_shows_in_get_version_within_a_second() {
    let w = World::new();
    let drained = |w: &World| get(w.v3("GetVersion", vec![]).ok(), "geni_am_draining").clone();
    assert_eq!(drained(&w), Value::Boolean(false));
    let other =
        geni_am::core::Aggregate::new(w.aggregate.store().clone(), w.aggregate.config().clone())
            .unwrap();
    other.set_draining("ops", true, "").unwrap();
    let other_slice = w.slice_urn("elsewhere");
    let cred = w.slice_credential("elsewhere", 30);
    allocate(&w, &other_slice, &cred).fails_with(11);
    std::thread::sleep(std::time::Duration::from_millis(1100));
    assert_eq!(drained(&w), Value::Boolean(true));
}
