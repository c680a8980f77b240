//! Every TOSCA and HOT document of the public corpus
//! (`shared/corpus/languages`): each one `MANIFEST.tsv` calls
//! `translatable` translates, several into exactly the nodes, sizes,
//! links and outputs expected; each `unsupported:*` one is refused with a
//! message naming the construct and its line.

use geni_templates::{
    Inputs, Offer, OfferedImage, OfferedSliverType, OutputValue, Refusals, Request, Size, hot,
    tosca,
};
use std::path::PathBuf;

fn corpus() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus/languages")
}

fn image(name: &str, version: &str, description: &str) -> OfferedImage {
    OfferedImage {
        name: format!("urn:publicid:IDN+am.example.org+image+{name}"),
        os: Some("Linux".to_owned()),
        version: Some(version.to_owned()),
        description: Some(description.to_owned()),
    }
}

/// An aggregate configured like deploy/geni-am.example.toml (`default-vm`:
/// 1 core and 1024 MB unless sized, at most 4 cores, 8192 MB, 40 GB),
/// offering besides Ubuntu 22.04 the images the corpus templates ask for.
fn offer() -> Offer {
    Offer {
        sliver_types: vec![OfferedSliverType {
            name: "default-vm".to_owned(),
            max_size: Some(Size {
                cores: 4,
                ram_mb: 8192,
                disk_gb: Some(40),
            }),
            default_size: Size {
                cores: 1,
                ram_mb: 1024,
                disk_gb: None,
            },
            images: vec![
                image("ubuntu-22.04", "22.04", "Ubuntu 22.04 LTS"),
                image("ubuntu-16.04", "16.04", "Ubuntu 16.04 LTS"),
                image("ubuntu-12.04", "12.04", "Ubuntu 12.04 LTS"),
                image("rhel-6.5", "6.5", "Red Hat Enterprise Linux 6.5"),
                image("cirros-0.3.2", "0.3.2", "CirrOS 0.3.2"),
                image("fedora-18", "18", "Fedora 18"),
                image(
                    "F18-x86_64-cfntools",
                    "18",
                    "Fedora 18 with the CloudFormation tools",
                ),
            ],
        }],
    }
}

/// The offer of deploy/geni-am.example.toml as it is: Ubuntu 22.04 only.
fn example_offer() -> Offer {
    let mut offer = offer();
    offer.sliver_types[0].images.truncate(1);
    offer
}

fn translate(file: &str, offer: &Offer) -> Result<Request, Refusals> {
    let text = std::fs::read_to_string(corpus().join(file)).unwrap();
    let name = file.rsplit('/').next().unwrap();
    if file.starts_with("tosca/") {
        tosca::translate(name, &text, &Inputs::new(), offer)
    } else {
        hot::translate(name, &text, &Inputs::new(), offer)
    }
}

fn ok(file: &str) -> Request {
    let name = format!(
        "{}/{file}",
        if file.contains("heat-templates") {
            "heat"
        } else {
            "tosca"
        }
    );
    translate(&name, &offer()).unwrap_or_else(|e| panic!("{e}"))
}

fn size(cores: u32, ram_mb: u64, disk_gb: Option<u64>) -> Option<Size> {
    Some(Size {
        cores,
        ram_mb,
        disk_gb,
    })
}

fn address(node: &str, interface: Option<&str>) -> OutputValue {
    OutputValue::Address {
        node: node.to_owned(),
        interface: interface.map(str::to_owned),
    }
}

/// Checks that names are unique and every link and output names what
/// the request holds.
fn assert_consistent(file: &str, request: &Request) {
    let mut nodes = std::collections::BTreeSet::new();
    let mut interfaces = std::collections::BTreeMap::new();
    for node in &request.nodes {
        assert!(
            nodes.insert(node.client_id.as_str()),
            "{file}: node {} twice",
            node.client_id
        );
        for iface in &node.interfaces {
            let dup = interfaces.insert(iface.client_id.as_str(), node.client_id.as_str());
            assert!(dup.is_none(), "{file}: interface {} twice", iface.client_id);
        }
    }
    for link in &request.links {
        for iface in &link.interfaces {
            assert!(
                interfaces.contains_key(iface.as_str()),
                "{file}: link {} joins no {iface}",
                link.client_id
            );
        }
    }
    for output in &request.outputs {
        if let OutputValue::Address { node, interface } = &output.value {
            assert!(
                nodes.contains(node.as_str()),
                "{file}: output {} of no node {node}",
                output.name
            );
            if let Some(iface) = interface {
                assert_eq!(
                    interfaces.get(iface.as_str()),
                    Some(&node.as_str()),
                    "{file}: output {}",
                    output.name
                );
            }
        }
    }
}

/// The words a refusal of each `unsupported:` label must contain.
fn construct_words(label: &str) -> &'static str {
    match label {
        "autoscaling" => "scaling",
        "object-storage" => "object storage",
        "software-component" => "software component",
        "load-balancer" => "load balancer",
        "container" => "container",
        "kubernetes" => "Kubernetes",
        "software-config" => "software configuration",
        other => panic!("no words known for unsupported:{other}"),
    }
}

#[test]
fn every_tosca_and_hot_document_translates_or_is_refused_as_the_manifest_says() {
    let manifest = std::fs::read_to_string(corpus().join("MANIFEST.tsv")).unwrap();
    let mut seen = 0;
    for row in manifest.lines().skip(1) {
        let fields: Vec<&str> = row.split('\t').collect();
        let (file, expected) = (fields[0], fields[5]);
        if !(file.starts_with("tosca/") || file.starts_with("heat/")) {
            continue;
        }
        seen += 1;
        let result = translate(file, &offer());
        match expected.strip_prefix("unsupported:") {
            None => {
                let request = result.unwrap_or_else(|e| panic!("{file} should translate:\n{e}"));
                assert!(!request.nodes.is_empty(), "{file}: no VM");
                assert_consistent(file, &request);
            }
            Some(label) => {
                let refusals = result.expect_err(file);
                let words = construct_words(label);
                assert!(
                    refusals
                        .refusals
                        .iter()
                        .any(|r| r.line > 0 && r.message.contains(words)),
                    "{file}: no refusal with a line names '{words}':\n{refusals}"
                );
            }
        }
    }
    assert_eq!(seen, 33, "21 TOSCA and 12 HOT documents");
}

#[test]
fn tosca_helloworld_is_one_vm_of_two_cores_512_mb_10_gb_on_rhel() {
    let request = ok("openstack-heat-translator__samples_tests_data_tosca_helloworld.yaml");
    assert_eq!(request.nodes.len(), 1);
    let vm = &request.nodes[0];
    assert_eq!(vm.client_id, "my_server");
    assert_eq!(vm.sliver_type.as_deref(), Some("default-vm"));
    assert_eq!(vm.size, size(2, 512, Some(10)));
    assert_eq!(
        vm.image.as_deref(),
        Some("urn:publicid:IDN+am.example.org+image+rhel-6.5")
    );
    assert!(request.links.is_empty() && request.outputs.is_empty());
}

#[test]
fn tosca_helloworld_is_refused_where_rhel_is_not_offered_listing_what_is() {
    let err = translate(
        "tosca/openstack-heat-translator__samples_tests_data_tosca_helloworld.yaml",
        &example_offer(),
    )
    .unwrap_err()
    .to_string();
    assert_eq!(
        err,
        "openstack-heat-translator__samples_tests_data_tosca_helloworld.yaml:7: node 'my_server': no offered image matches the operating system type Linux, distribution RHEL, version 6.5; the images offered are: urn:publicid:IDN+am.example.org+image+ubuntu-22.04 (Linux 22.04) \"Ubuntu 22.04 LTS\""
    );
}

#[test]
fn tosca_single_server_leaves_the_unset_cpus_input_to_the_aggregate() {
    let request = ok("openstack-heat-translator__samples_tests_data_tosca_single_server.yaml");
    let vm = &request.nodes[0];
    assert_eq!(
        vm.size,
        size(1, 4, Some(10)),
        "cores from the type, 4 MB as written"
    );
    assert_eq!(
        vm.image.as_deref(),
        Some("urn:publicid:IDN+am.example.org+image+ubuntu-12.04")
    );
    assert_eq!(request.outputs[0].name, "private_ip");
    assert_eq!(request.outputs[0].value, address("my_server", None));
}

#[test]
fn tosca_two_servers_on_one_network_get_addresses_from_the_input_pool() {
    let request = ok(
        "openstack-heat-translator__samples_tests_data_network_tosca_two_servers_one_network.yaml",
    );
    let ids: Vec<&str> = request.nodes.iter().map(|n| n.client_id.as_str()).collect();
    assert_eq!(ids, ["my_server", "my_server2"]);
    assert_eq!(request.links.len(), 1);
    assert_eq!(request.links[0].client_id, "my_network");
    assert_eq!(request.links[0].interfaces, ["my_port", "my_port2"]);
    let ip = |i: usize| request.nodes[i].interfaces[0].ipv4.unwrap();
    assert_eq!(ip(0).address.to_string(), "10.0.0.100");
    assert_eq!(ip(1).address.to_string(), "10.0.0.101");
    assert_eq!(ip(1).netmask.to_string(), "255.255.255.0");
    assert_eq!(request.nodes[0].size, size(1, 512, Some(10)));
}

#[test]
fn tosca_one_server_on_three_networks_has_its_ports_in_order() {
    let request = ok(
        "openstack-heat-translator__samples_tests_data_network_tosca_one_server_three_networks.yaml",
    );
    let vm = &request.nodes[0];
    let ifaces: Vec<(&str, String)> = vm
        .interfaces
        .iter()
        .map(|i| (i.client_id.as_str(), i.ipv4.unwrap().address.to_string()))
        .collect();
    assert_eq!(
        ifaces,
        [
            ("my_port1", "192.168.1.1".to_owned()),
            ("my_port2", "192.168.2.1".to_owned()),
            ("my_port3", "192.168.3.1".to_owned())
        ]
    );
    assert_eq!(request.links.len(), 3);
    assert_eq!(
        vm.image.as_deref(),
        Some("urn:publicid:IDN+am.example.org+image+cirros-0.3.2")
    );
}

#[test]
fn tosca_block_storage_adds_its_gigabyte_to_each_server_disk() {
    let request = ok(
        "openstack-heat-translator__samples_tests_data_storage_tosca_multiple_blockstorage_with_attachment.yaml",
    );
    for vm in &request.nodes {
        assert_eq!(vm.size, size(1, 4096, Some(11)), "{}", vm.client_id);
        assert_eq!(
            vm.image.as_deref(),
            Some("urn:publicid:IDN+am.example.org+image+fedora-18")
        );
    }
    let names: Vec<&str> = request.outputs.iter().map(|o| o.name.as_str()).collect();
    assert_eq!(
        names,
        ["server_ip_1", "server_ip_2", "volume_id_1", "volume_id_2"]
    );
    assert_eq!(request.outputs[1].value, address("my_server2", None));
    assert_eq!(
        request.outputs[2].value,
        OutputValue::Literal(
            "unavailable at this aggregate: attribute volume_id of 'my_storage'".to_owned()
        )
    );
}

#[test]
fn the_indigo_simple_node_takes_its_input_defaults() {
    let request = ok("indigo-dc-tosca-templates__simple-node.yml");
    let vm = &request.nodes[0];
    assert_eq!(vm.client_id, "simple_node");
    assert_eq!(vm.size, size(1, 2048, None));
    assert_eq!(
        vm.image.as_deref(),
        Some("urn:publicid:IDN+am.example.org+image+ubuntu-16.04")
    );
    assert_eq!(request.outputs[0].value, address("simple_node", None));
}

#[test]
fn the_token_output_over_an_address_is_reported_unavailable() {
    let request = ok("openstack-tosca-parser__samples_tests_data_functions_test_token.yaml");
    assert_eq!(request.nodes[0].size, None);
    assert_eq!(request.nodes[0].sliver_type, None);
    assert!(
        matches!(&request.outputs[0].value, OutputValue::Literal(t) if t.starts_with("unavailable"))
    );
}
