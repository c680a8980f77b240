//! Typed views read real corpus RSpecs (requests, advertisements, manifests,
//! v3 and ProtoGENI v2) and write GENI attributes that read back.

use geni_rspec::Document;
use geni_rspec::{NodeMut, RSpec, RSpecMut, ViewError};
use geni_rspec::{RspecKind, RspecVersion};
use std::path::{Path, PathBuf};

fn corpus(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/corpus")
        .join(relative)
}

fn load(relative: &str) -> Document {
    Document::parse(&std::fs::read(corpus(relative)).unwrap()).unwrap()
}

fn files_in(relative: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(corpus(relative))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.is_file())
        .collect();
    files.sort();
    files
}

#[test]
fn request_nodes_services_interfaces_and_ips() {
    let doc = load("rspec/request/ffund-tcpip__3-static-routing.xml");
    let rspec = RSpec::new(&doc).unwrap();
    assert_eq!(rspec.version(), RspecVersion::GeniV3);
    assert_eq!(rspec.rspec_type(), Some(RspecKind::Request));
    let romeo = rspec.node("romeo").unwrap();
    let sliver = romeo.sliver_type().unwrap();
    assert_eq!(sliver.name().as_deref(), Some("emulab-xen"));
    let image = sliver.disk_images().next().unwrap();
    assert_eq!(
        image.name().as_deref(),
        Some("urn:publicid:IDN+emulab.net+image+emulab-ops:UBUNTU18-64-STD")
    );
    let services = romeo.services().unwrap();
    let executes: Vec<_> = services.executes().collect();
    assert_eq!(executes.len(), 2);
    assert_eq!(executes[0].shell().as_deref(), Some("/bin/sh"));
    assert_eq!(
        executes[0].command().as_deref(),
        Some("wget -O - https://git.io/vSLc2 | bash")
    );
    let interface = romeo.interfaces().next().unwrap();
    assert_eq!(interface.client_id().as_deref(), Some("interface-1"));
    let ip = interface.ips().next().unwrap();
    assert_eq!(ip.address().as_deref(), Some("10.10.0.100"));
    assert_eq!(ip.netmask().as_deref(), Some("255.255.255.0"));
    assert_eq!(ip.kind().as_deref(), Some("ipv4"));
    assert!(romeo.component_manager_id().is_none(), "romeo is unbound");
}

#[test]
fn links_span_component_managers_and_ignore_extension_links() {
    let doc = load("rspec/request/emulab__utahcloud-utahms.rspec");
    let rspec = RSpec::new(&doc).unwrap();
    // The stitching extension has <link>s of its own; only the core one counts.
    assert_eq!(rspec.links().count(), 1);
    let link = rspec.link("mylink").unwrap();
    let managers: Vec<String> = link.component_managers().map(|c| c.into_owned()).collect();
    assert_eq!(managers.len(), 3);
    assert_eq!(
        managers[1],
        "urn:publicid:IDN+utah.cloudlab.us+authority+cm"
    );
    let ends: Vec<String> = link
        .interface_refs()
        .filter_map(|r| r.client_id().map(|c| c.into_owned()))
        .collect();
    assert_eq!(ends, ["utahem:if0", "utahcl:if0"]);
    let property = link.properties().next().unwrap();
    assert_eq!(property.source_id().as_deref(), Some("utahcl:if0"));
    assert_eq!(property.dest_id().as_deref(), Some("utahem:if0"));
    assert_eq!(property.capacity().as_deref(), Some("10000"));
    let node = rspec.node("utahem").unwrap();
    assert_eq!(node.exclusive(), Some(false));
    assert_eq!(
        node.component_manager_id().as_deref(),
        Some("urn:publicid:IDN+emulab.net+authority+cm")
    );
}

#[test]
fn advertisement_nodes_hardware_availability_location_images() {
    let doc = load("rspec/advertisement/geni-portal__rspec-instageni-clemson-edu.xml");
    let rspec = RSpec::new(&doc).unwrap();
    assert_eq!(rspec.rspec_type(), Some(RspecKind::Advertisement));
    let pc3 = rspec
        .nodes()
        .find(|n| n.component_name().as_deref() == Some("pc3"))
        .unwrap();
    assert_eq!(
        pc3.component_id().as_deref(),
        Some("urn:publicid:IDN+instageni.clemson.edu+node+pc3")
    );
    assert_eq!(pc3.exclusive(), Some(false));
    assert_eq!(pc3.available_now(), Some(true));
    let hardware: Vec<String> = pc3
        .hardware_types()
        .filter_map(|h| h.name().map(|n| n.into_owned()))
        .collect();
    assert_eq!(hardware.len(), 8);
    assert_eq!(hardware[0], "dl360");
    let location = pc3.location().unwrap();
    assert_eq!(location.country().as_deref(), Some("US"));
    assert_eq!(location.latitude().as_deref(), Some("34.678333"));
    assert_eq!(location.longitude().as_deref(), Some("-82.839167"));
    let images: Vec<_> = pc3.sliver_type().unwrap().disk_images().collect();
    assert_eq!(images.len(), 4);
    assert_eq!(images[1].os().as_deref(), Some("Linux"));
    assert_eq!(images[1].version().as_deref(), Some("12.04"));
    assert_eq!(images[3].default().as_deref(), Some("true"));
    assert_eq!(
        images[3].description().as_deref(),
        Some("Generic osid for openvz virtual nodes.")
    );
}

#[test]
fn advertisement_opstate_machine() {
    let doc = load("rspec/advertisement/geni-portal__rspec-geni-it-cornell-edu.xml");
    let rspec = RSpec::new(&doc).unwrap();
    let opstate = rspec.opstates().next().unwrap();
    assert_eq!(
        opstate.aggregate_manager_id().as_deref(),
        Some("urn:publicid:IDN+geni.it.cornell.edu+authority+cm")
    );
    assert_eq!(opstate.start().as_deref(), Some("geni_notready"));
    let types: Vec<String> = opstate.sliver_types().map(|t| t.into_owned()).collect();
    assert_eq!(types, ["raw-pc", "emulab-openvz", "emulab-xen"]);
    let notready = opstate.state("geni_notready").unwrap();
    let start = notready.actions().next().unwrap();
    assert_eq!(start.name().as_deref(), Some("geni_start"));
    assert_eq!(start.next().as_deref(), Some("geni_configuring"));
    assert_eq!(start.description().as_deref(), Some("Boot the node"));
    let failed = opstate.state("geni_failed").unwrap();
    assert!(
        failed
            .description()
            .unwrap()
            .starts_with("The node has failed")
    );
    let stopping = opstate.state("geni_stopping").unwrap();
    assert_eq!(stopping.waits().count(), 2);
    assert_eq!(opstate.states().count(), 6);
}

#[test]
fn manifest_sliver_ids_hosts_logins_and_link_vlans() {
    let doc =
        load("rspec/manifest/geni-tools__ahtest-manifest-rspec-utah-geniracks-net-protogeniv2.xml");
    let rspec = RSpec::new(&doc).unwrap();
    assert_eq!(rspec.rspec_type(), Some(RspecKind::Manifest));
    let node = rspec.node("ig-utah1").unwrap();
    assert_eq!(
        node.sliver_id().as_deref(),
        Some("urn:publicid:IDN+utah.geniracks.net+sliver+16299")
    );
    assert_eq!(
        node.component_id().as_deref(),
        Some("urn:publicid:IDN+utah.geniracks.net+node+pc2")
    );
    let hosts: Vec<String> = node.hosts().map(|h| h.into_owned()).collect();
    assert_eq!(hosts, ["request1.ahtest.emulab-net.utah.geniracks.net"]);
    let login = node.services().unwrap().logins().next().unwrap();
    assert_eq!(login.authentication().as_deref(), Some("ssh-keys"));
    assert_eq!(login.hostname().as_deref(), Some("pc2.utah.geniracks.net"));
    assert_eq!(login.port().as_deref(), Some("22"));
    assert_eq!(login.username().as_deref(), Some("ahelsing"));
    let interface = node.interfaces().next().unwrap();
    assert_eq!(
        interface.sliver_id().as_deref(),
        Some("urn:publicid:IDN+utah.geniracks.net+sliver+761")
    );
    assert_eq!(interface.mac_address().as_deref(), Some("10604B9600D6"));
    let link = rspec.link("link-ig-utah1-ig-gpo1").unwrap();
    assert_eq!(link.vlantag().as_deref(), Some("1000"));
    assert_eq!(
        link.sliver_id().as_deref(),
        Some("urn:publicid:IDN+utah.geniracks.net+sliver+760")
    );
    let end = link.interface_refs().next().unwrap();
    assert_eq!(
        end.sliver_id().as_deref(),
        Some("urn:publicid:IDN+utah.geniracks.net+sliver+761")
    );
    assert_eq!(link.component_managers().count(), 2);
}

#[test]
fn every_request_node_has_a_client_id_through_the_views() {
    let mut nodes = 0;
    for dir in ["rspec/request", "rspec/request/v2"] {
        for path in files_in(dir) {
            let doc = Document::parse(&std::fs::read(&path).unwrap()).unwrap();
            let rspec = RSpec::new(&doc).unwrap();
            for node in rspec.nodes() {
                nodes += 1;
                // The omf_sfa v2 files name nodes with a non-standard `id`.
                if node.client_id().is_none() {
                    assert!(
                        path.display().to_string().contains("omf_sfa"),
                        "{}: line {} has no client_id",
                        path.display(),
                        node.line()
                    );
                }
            }
        }
    }
    assert!(nodes > 300, "only {nodes} nodes read");
}

#[test]
fn v2_requests_read_with_virtual_ids() {
    let doc = load("rspec/request/v2/emulab__linktest-v2.rspec");
    let rspec = RSpec::new(&doc).unwrap();
    assert_eq!(rspec.version(), RspecVersion::ProtoGeniV2);
    assert!(rspec.nodes().count() >= 2);
    assert!(rspec.nodes().all(|n| n.client_id().is_some()));
    assert!(rspec.links().all(|l| l.client_id().is_some()));
}

#[test]
fn a_non_rspec_root_is_refused_with_its_name_and_line() {
    let doc = Document::parse(
        b"<?xml version=\"1.0\"?>\n<rspec xmlns=\"http://www.geni.net/resource/rspec/3\"/>",
    )
    .unwrap();
    match RSpec::new(&doc).unwrap_err() {
        ViewError::NotAnRspec {
            line,
            found,
            namespace,
        } => {
            assert_eq!(line, 2);
            assert_eq!(found, "rspec");
            assert_eq!(namespace, "http://www.geni.net/resource/rspec/3");
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn writes_read_back_and_leave_the_rest_alone() {
    let mut doc = load("rspec/request/ffund-tcpip__3-static-routing.xml");
    let original = doc.to_bytes();
    let id = RSpec::new(&doc).unwrap().node("romeo").unwrap().id();
    {
        let mut root = RSpecMut::new(&mut doc).unwrap();
        root.set_type(RspecKind::Manifest);
        root.set_expires("2030-01-01T00:00:00Z");
    }
    let mut node = NodeMut::new(&mut doc, id);
    node.set_sliver_id("urn:publicid:IDN+a.example+sliver+1");
    node.set_component_manager_id("urn:publicid:IDN+a.example+authority+cm");
    node.set_exclusive(true);
    node.add_host("romeo.a.example");
    node.add_host("romeo.a.example");
    node.services_mut()
        .add_login("ssh-keys", "romeo.a.example", 22, Some("alice"));
    {
        let mut interface = node.interface_mut("interface-1").unwrap();
        interface.set_mac_address("02:00:00:00:00:01");
        interface.add_ip("10.10.0.100", Some("255.255.255.0"), Some("ipv4"));
        interface.add_ip("fd00::1", Some("64"), Some("ipv6"));
    }
    let rspec = RSpec::new(&doc).unwrap();
    assert_eq!(rspec.rspec_type(), Some(RspecKind::Manifest));
    assert_eq!(rspec.expires().as_deref(), Some("2030-01-01T00:00:00Z"));
    let romeo = rspec.node("romeo").unwrap();
    assert_eq!(
        romeo.sliver_id().as_deref(),
        Some("urn:publicid:IDN+a.example+sliver+1")
    );
    assert_eq!(romeo.exclusive(), Some(true));
    assert_eq!(romeo.hosts().count(), 1, "the same host is not added twice");
    let login = romeo.services().unwrap().logins().next().unwrap();
    assert_eq!(login.port().as_deref(), Some("22"));
    assert_eq!(login.username().as_deref(), Some("alice"));
    assert_eq!(
        romeo.services().unwrap().executes().count(),
        2,
        "executes kept"
    );
    let interface = romeo.interfaces().next().unwrap();
    assert_eq!(
        interface.mac_address().as_deref(),
        Some("02:00:00:00:00:01")
    );
    let ips: Vec<String> = interface
        .ips()
        .filter_map(|ip| ip.address().map(|a| a.into_owned()))
        .collect();
    assert_eq!(
        ips,
        ["10.10.0.100", "fd00::1"],
        "an address already there is not repeated"
    );
    // Everything after romeo is byte-for-byte what was read.
    let juliet = rspec.node("juliet").unwrap().id();
    let tail = doc.node_to_bytes(juliet);
    let original_text = String::from_utf8(original).unwrap();
    assert!(original_text.contains(std::str::from_utf8(&tail).unwrap()));
    let reparsed = Document::parse(&doc.to_bytes()).unwrap();
    assert_eq!(reparsed.to_bytes(), doc.to_bytes());
}
