//! The OpenNebula backend under test: an OpenNebula simulator
//! ([`onesim::OneSim`]) started in the test process for one server release,
//! seeded like a small site (two hosts, the recorded template `geni-small`
//! with a site entry added to its CONTEXT, the image `geni-img`, the parent
//! network `geni-net`), and the real aggregate started with
//! `[backend] kind = "opennebula"` pointing at it. [`on_opennebula!`] runs a
//! suite for every server release (5.x, 6.x, 7.x) on SQLite, and on the
//! newest also on PostgreSQL. The inspection helpers read the simulator's
//! own documents with the driver's parsers.
//!
//! [`on_opennebula!`]: crate::on_opennebula

use crate::aggregate::{Aggregate, set};
use crate::creds::DevAuthority;
use crate::database::Store;
use crate::flows::Slice;
use geni_am_opennebula::docs::{self, VmDoc, VnetDoc};
use geni_am_opennebula::names;
use geni_am_opennebula::rpc::{Answer, ClientSettings, OneClient, OneRpc, Param, Session};
use onesim::{Delays, OneSim, SimSettings};
use std::time::{Duration, Instant};

/// The releases every suite runs against: 5.x (5.10+, with
/// `one.vmpool.infoextended`), 6.x and 7.x.
pub const VERSIONS: [&str; 3] = ["5.12.0", "6.10.0", "7.4.0"];
/// The session the simulator's `oneadmin` account accepts.
pub const SESSION: &str = "oneadmin:onetest";
/// The simulator's template the request's sliver type instantiates.
pub const TEMPLATE_ID: i32 = 0;
/// The network link networks are reserved from: `geni-links`, added by
/// [`start_sim`] beside the recorded `geni-net`, with the addresses
/// [`crate::requests::lan_address`] asks for.
pub const PARENT_NETWORK: i32 = 1;
/// The first address of [`PARENT_NETWORK`]'s range (100 addresses).
pub const LINKS_FIRST_IP: &str = "10.1.1.1";
/// The label that tags the aggregate's VMs (`LABELS = "<label>/<URN>"`).
pub const LABEL: &str = "geni-e2e";
/// A CONTEXT entry the seeded template carries and every VM must keep.
pub const SITE_ENTRY: (&str, &str) = ("SITE_NOTE", "from the site's template");
/// The VLAN_ID of the parent network links are reserved from.
pub const PARENT_VLAN_ID: u32 = 3;
/// The host the simulator adds beside its recorded `localhost`.
pub const SECOND_HOST: &str = "node2";
/// How long a simulator-side condition is awaited.
const WAIT: Duration = Duration::from_secs(60);
/// STATE of a VM that is gone for good.
pub const DONE: i32 = 6;
/// STATE and LCM_STATE of a running VM.
pub const RUNNING: (i32, i32) = (3, 3);
/// STATE of a powered-off VM.
pub const POWEROFF: i32 = 8;

/// Starts a simulator playing `version`, with life-cycle phases of 50 ms,
/// seeded with a second host, a parent network for links (a VXLAN with
/// VLAN_ID [`PARENT_VLAN_ID`]) and a site entry in the template's CONTEXT.
pub fn start_sim(version: &str) -> OneSim {
    let sim = OneSim::start(SimSettings {
        version: version.to_owned(),
        delays: Delays::uniform(Duration::from_millis(50), Duration::ZERO),
        ..SimSettings::default()
    });
    assert_eq!(sim.add_host(SECOND_HOST), 1, "the second host's id");
    let mut links = onesim::xml::parse(onesim::seed::VNET).expect("the seeded network parses");
    links.set_value("ID", PARENT_NETWORK.to_string());
    links.set_value("NAME", "geni-links");
    let vlan = PARENT_VLAN_ID.to_string();
    links.set_value("VN_MAD", "vxlan");
    links.set_value("VLAN_ID", &vlan);
    if let Some(template) = links.child_mut("TEMPLATE") {
        template.set_value("VN_MAD", "vxlan");
        template.set_value("VLAN_ID", &vlan);
    }
    if let Some(ar) = links
        .child_mut("AR_POOL")
        .and_then(|pool| pool.child_mut("AR"))
    {
        ar.set_value("IP", LINKS_FIRST_IP);
        ar.set_value("MAC", "02:00:0a:01:01:01");
        ar.set_value("IP_END", "10.1.1.100");
        ar.set_value("MAC_END", "02:00:0a:01:01:64");
    }
    sim.add_vnet(links);
    let mut template =
        onesim::xml::parse(onesim::seed::TEMPLATE).expect("the seeded template parses");
    template
        .child_mut("TEMPLATE")
        .and_then(|t| t.child_mut("CONTEXT"))
        .expect("the seeded template has a CONTEXT")
        .children_mut()
        .push(onesim::xml::Element::cdata(SITE_ENTRY.0, SITE_ENTRY.1));
    sim.put_template(template);
    sim
}

/// Points the aggregate's configuration at `sim`: `kind = "opennebula"`,
/// the sliver type of [`crate::requests::SLIVER_TYPE`] instantiating
/// [`TEMPLATE_ID`], links reserved from [`PARENT_NETWORK`], and a poller
/// that looks at VMs in transition five times a second.
pub fn configure(table: &mut toml::Table, sim: &OneSim) {
    let section: toml::Table = format!(
        r#"
kind = "opennebula"

[opennebula]
endpoint = "{endpoint}"
session = "{SESSION}"
timeout_secs = 30
label = "{LABEL}"

[[opennebula.sliver_types]]
name = "{sliver_type}"
template_id = {TEMPLATE_ID}
cpu = 0.5
vcpu = 1
memory_mb = 512

[opennebula.links]
parent_network = {PARENT_NETWORK}
size = 8
"#,
        endpoint = sim.endpoint(),
        sliver_type = crate::requests::SLIVER_TYPE,
    )
    .parse()
    .expect("the OpenNebula section is TOML");
    table.insert("backend".into(), toml::Value::Table(section));
    set(table, &["jobs", "poll_interval_ms"], 200.into());
}

/// Starts the aggregate on `store` with the OpenNebula backend on `sim`.
pub fn start_aggregate(store: Store, sim: &OneSim) -> Aggregate {
    start_aggregate_with(store, sim, |_| {})
}

/// [`start_aggregate`] after `edit` changed the configuration further.
pub fn start_aggregate_with(
    store: Store,
    sim: &OneSim,
    edit: impl FnOnce(&mut toml::Table),
) -> Aggregate {
    Aggregate::start_with(store, |table| {
        configure(table, sim);
        edit(table);
    })
}

/// A v3 view of the development slice with a credential valid for a week.
pub fn demo_slice<'c>(aggregate: &Aggregate, client: &'c mut geni_am::client::Client) -> Slice<'c> {
    let (urn, credential) = DevAuthority::open(aggregate.dir())
        .slice_credential("demo", chrono::Utc::now() + chrono::Duration::days(7));
    Slice {
        client,
        urn,
        credential,
    }
}

/// Provisions every sliver of `slice` with alice's key, starts them and
/// waits until they are `geni_ready`.
pub fn bring_up(slice: &mut Slice<'_>) {
    let urn = slice.urn.clone();
    slice.provision(&[&urn]);
    slice.action(&[&urn], "geni_start").ok();
    slice.wait_ready(&[&urn]);
}

/// Waits until every VM tagged with `sliver_urn` is DONE.
pub fn wait_terminated(sim: &OneSim, sliver_urn: &str) {
    wait_for("the VM terminated", || {
        vms_of(sim, sliver_urn)
            .iter()
            .all(|vm| vm.state == i64::from(DONE))
    });
}

/// Allocates `client_ids` on one LAN, brings them up and returns their
/// sliver URNs (sorted) and the one network the simulator gained for the
/// link.
pub fn lan_up(sim: &OneSim, slice: &mut Slice<'_>, client_ids: &[&str]) -> (Vec<String>, VnetDoc) {
    let before = sim.vnet_ids();
    let allocated = slice.allocate(&crate::requests::vms_on_lan(client_ids));
    let sliver_urns = crate::flows::urns(&allocated.slivers());
    bring_up(slice);
    let mut links: Vec<VnetDoc> = vnets(sim)
        .into_iter()
        .filter(|net| !before.iter().any(|id| i64::from(*id) == net.id))
        .collect();
    assert_eq!(links.len(), 1, "one network for the link: {links:?}");
    (sliver_urns, links.remove(0))
}

/// Waits until the simulator no longer holds network `id`.
pub fn wait_network_gone(sim: &OneSim, id: i64) {
    wait_for("the link network deleted", || {
        !sim.vnet_ids().iter().any(|held| i64::from(*held) == id)
    });
}

/// Every VM the simulator holds, as `one.vm.info` documents.
pub fn vms(sim: &OneSim) -> Vec<VmDoc> {
    sim.vm_ids()
        .into_iter()
        .filter_map(|id| sim.vm_document(id))
        .map(|xml| docs::parse_vm(&xml).expect("the simulator's VM document parses"))
        .collect()
}

/// The VMs tagged with `sliver_urn` (any state).
pub fn vms_of(sim: &OneSim, sliver_urn: &str) -> Vec<VmDoc> {
    vms(sim)
        .into_iter()
        .filter(|vm| tag_of(vm) == Some(sliver_urn))
        .collect()
}

/// The sliver URN a VM is tagged with by this aggregate's label.
pub fn tag_of(vm: &VmDoc) -> Option<&str> {
    names::tag_from_labels(LABEL, vm.labels.as_deref()?)
}

/// The one VM tagged with `sliver_urn`.
pub fn vm_of(sim: &OneSim, sliver_urn: &str) -> VmDoc {
    let mut found = vms_of(sim, sliver_urn);
    assert_eq!(found.len(), 1, "one VM for {sliver_urn}: {found:?}");
    found.remove(0)
}

/// Instantiates the template on the simulator as an operator (or a lost
/// call of this aggregate) would, with `LABELS = labels`: the new VM's id.
pub fn instantiate_outside(sim: &OneSim, labels: &str) -> i32 {
    instantiate_outside_with(sim, &format!("<LABELS>{labels}</LABELS>"))
}

/// Instantiates the template on the simulator as another OpenNebula user
/// would, with `extra` elements (e.g. `<CPU>0.5</CPU>`) in its extra
/// template, not on hold: the new VM's id.
pub fn instantiate_outside_with(sim: &OneSim, extra: &str) -> i32 {
    let session = Session::parse(SESSION).expect("the test session parses");
    let client = OneClient::new(ClientSettings::new(&sim.endpoint(), session))
        .expect("a client of the simulator");
    let extra = format!("<TEMPLATE>{extra}</TEMPLATE>");
    let params = [
        Param::Int(TEMPLATE_ID),
        Param::Str("outside".into()),
        Param::Bool(false),
        Param::Str(extra),
        Param::Bool(false),
    ];
    match client.call("one.template.instantiate", &params) {
        Ok(Answer::Int(id)) => i32::try_from(id).expect("a VM id"),
        other => panic!("instantiate on the simulator: {other:?}"),
    }
}

/// The networks the simulator holds.
pub fn vnets(sim: &OneSim) -> Vec<VnetDoc> {
    sim.vnet_ids()
        .into_iter()
        .filter_map(|id| sim.vnet_document(id))
        .map(|xml| docs::parse_vnet(&xml).expect("the simulator's network document parses"))
        .collect()
}

/// The value of `key` in a VM's CONTEXT.
pub fn context_value<'v>(vm: &'v VmDoc, key: &str) -> Option<&'v str> {
    vm.context
        .iter()
        .find(|(name, _)| name == key)
        .map(|(_, value)| value.as_str())
}

/// Waits (bounded) until `condition` holds, naming `what` on timeout.
pub fn wait_for(what: &str, mut condition: impl FnMut() -> bool) {
    let started = Instant::now();
    while !condition() {
        assert!(started.elapsed() < WAIT, "not {what} after {WAIT:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Defines, for each named function `fn NAME(version: &str, store: Store)`,
/// a module `NAME` with one test per release of [`VERSIONS`] on SQLite and
/// one on PostgreSQL for the newest release (skipped with a notice when
/// `DATABASE_URL` is unset, unless `GENI_AM_REQUIRE_ALL=1`).
#[macro_export]
macro_rules! on_opennebula {
    ($($name:ident),* $(,)?) => {$(
        mod $name {
            use $crate::database::Store;
            use $crate::opennebula::VERSIONS;

            fn sqlite(version: &str) {
                let store = Store::for_test("sqlite", stringify!($name));
                super::$name(version, store.expect("SQLite is always available"));
            }

            #[test]
            fn one_5_sqlite() {
                sqlite(VERSIONS[0]);
            }

            #[test]
            fn one_6_sqlite() {
                sqlite(VERSIONS[1]);
            }

            #[test]
            fn one_7_sqlite() {
                sqlite(VERSIONS[2]);
            }

            #[test]
            fn one_7_postgres() {
                if let Some(store) = Store::for_test("postgres", stringify!($name)) {
                    super::$name(VERSIONS[2], store);
                }
            }
        }
    )*};
}
