//! Translating small TOSCA templates: what maps and what is refused.

use super::translate;
use crate::yaml::choose::tests::example_offer;
use crate::{Inputs, OutputValue, Scalar, Size};

const HEAD: &str = "tosca_definitions_version: tosca_simple_yaml_1_0\n";

fn ok(body: &str, inputs: &Inputs) -> crate::Request {
    translate("t.yml", &format!("{HEAD}{body}"), inputs, &example_offer())
        .unwrap_or_else(|e| panic!("{e}"))
}

fn refused(body: &str, inputs: &Inputs) -> String {
    translate("t.yml", &format!("{HEAD}{body}"), inputs, &example_offer())
        .unwrap_err()
        .to_string()
}

const VM: &str = "topology_template:
  inputs:
    cpus:
      type: integer
      default: 2
      constraints:
        - in_range: [1, 4]
  node_templates:
    vm:
      type: Compute
      capabilities:
        host:
          properties:
            num_cpus: { get_input: cpus }
            mem_size: 2 GB
            disk_size: 10 GB
        os:
          properties:
            type: linux
            distribution: ubuntu
            version: 22.04
  outputs:
    ip:
      value: { get_attribute: [vm, public_address] }
    greeting:
      value: { concat: [hello, ' ', { get_input: cpus }] }
";

#[test]
fn a_compute_node_becomes_a_sized_vm_with_the_matching_image() {
    let request = ok(VM, &Inputs::new());
    let vm = &request.nodes[0];
    assert_eq!(vm.client_id, "vm");
    assert_eq!(vm.sliver_type.as_deref(), Some("default-vm"));
    assert_eq!(
        vm.size,
        Some(Size {
            cores: 2,
            ram_mb: 2048,
            disk_gb: Some(10)
        })
    );
    assert_eq!(
        vm.image.as_deref(),
        Some("urn:publicid:IDN+am.example.org+image+ubuntu-22.04")
    );
    assert_eq!(
        request.outputs[0].value,
        OutputValue::Address {
            node: "vm".into(),
            interface: None
        }
    );
    assert_eq!(
        request.outputs[1].value,
        OutputValue::Literal("hello 2".into())
    );
}

#[test]
fn an_input_value_breaking_its_constraint_is_refused() {
    let inputs: Inputs = [("cpus".to_string(), Scalar::Int(8))].into();
    let err = refused(VM, &inputs);
    assert_eq!(
        err,
        "t.yml:8: input 'cpus' is '8', which breaks its constraint in_range: [1, 4]"
    );
}

#[test]
fn an_unknown_image_is_refused_naming_the_images_offered() {
    let err = refused(&VM.replace("22.04\n", "12.04\n"), &Inputs::new());
    assert!(err.starts_with("t.yml:10: node 'vm': no offered image matches the operating system type linux, distribution ubuntu, version 12.04; the images offered are: urn:publicid:IDN+am.example.org+image+ubuntu-22.04"), "{err}");
}

#[test]
fn a_get_input_of_an_undeclared_input_is_refused_naming_it() {
    let err = refused(
        &VM.replace(
            "get_input: cpus }\n            mem",
            "get_input: cores }\n            mem",
        ),
        &Inputs::new(),
    );
    assert_eq!(
        err,
        "t.yml:15: get_input 'cores': the template declares no such input"
    );
}

#[test]
fn a_software_component_is_refused_with_its_line() {
    let body = "topology_template:\n  node_templates:\n    db:\n      type: tosca.nodes.Database\n    vm:\n      type: tosca.nodes.Compute\n";
    assert_eq!(
        refused(body, &Inputs::new()),
        "t.yml:5: node 'db' of type tosca.nodes.Database: a database, a software component: not supported by this aggregate"
    );
}

#[test]
fn ports_on_a_network_get_addresses_from_the_pool_in_order() {
    let body = "topology_template:
  node_templates:
    a: { type: Compute }
    b: { type: Compute }
    net:
      type: tosca.nodes.network.Network
      properties: { cidr: 10.1.0.0/24, start_ip: 10.1.0.10, gateway_ip: 10.1.0.1 }
    pa:
      type: tosca.nodes.network.Port
      requirements: [ { binding: a }, { link: net } ]
    pb:
      type: tosca.nodes.network.Port
      properties: { ip_address: 10.1.0.10 }
      requirements: [ { binding: { node: b } }, { link: { node: net } } ]
  outputs:
    b_ip: { value: { get_attribute: [pb, ip_address] } }
";
    let request = ok(body, &Inputs::new());
    let address = |i: usize| {
        request.nodes[i].interfaces[0]
            .ipv4
            .unwrap()
            .address
            .to_string()
    };
    assert_eq!(
        (address(0).as_str(), address(1).as_str()),
        ("10.1.0.11", "10.1.0.10")
    );
    assert_eq!(request.nodes[0].interfaces[0].client_id, "pa");
    assert_eq!(request.links[0].client_id, "net");
    assert_eq!(request.links[0].interfaces, ["pa", "pb"]);
    assert_eq!(
        request.outputs[0].value,
        OutputValue::Address {
            node: "b".into(),
            interface: Some("pb".into())
        }
    );
}

#[test]
fn boot_scripts_at_urls_run_and_csar_files_and_playbooks_are_refused() {
    let body = "topology_template:
  node_templates:
    vm:
      type: Compute
      interfaces:
        Standard:
          create:
            implementation: https://example.org/setup.sh
            inputs: { ROLE: web }
          configure: scripts/configure.sh
          start: https://example.org/site.yml
";
    let err = refused(body, &Inputs::new());
    assert!(err.contains("t.yml:11: node 'vm': operation configure ('scripts/configure.sh'): a file beside the template"), "{err}");
    assert!(err.contains("t.yml:12: node 'vm': operation start ('https://example.org/site.yml'): an Ansible playbook"), "{err}");
    let request = ok(&body.replace("          configure: scripts/configure.sh\n          start: https://example.org/site.yml\n", ""), &Inputs::new());
    assert_eq!(
        request.nodes[0].executes[0].command,
        "curl -fsSL 'https://example.org/setup.sh' | env ROLE='web' sh"
    );
}

#[test]
fn unresolvable_imports_and_policies_are_refused() {
    let body = "imports:\n  - custom_types/wordpress.yaml\ntopology_template:\n  node_templates:\n    vm: { type: Compute }\n  policies:\n    - grow:\n        type: tosca.policies.Scaling\n";
    let err = refused(body, &Inputs::new());
    assert!(
        err.contains(
            "t.yml:3: imports 'custom_types/wordpress.yaml': the aggregate fetches nothing"
        ),
        "{err}"
    );
    assert!(err.contains("t.yml:8: policy 'grow' of type tosca.policies.Scaling: scaling (autoscaling) policies: not supported"), "{err}");
}

/// The worked example of docs/languages/tosca.md.
const WORKED: &str = r#"tosca_definitions_version: tosca_simple_yaml_1_0
topology_template:
  inputs:
    cpus:
      type: integer
      default: 2
      constraints:
        - valid_values: [ 1, 2, 4 ]
  node_templates:
    server:
      type: tosca.nodes.Compute
      capabilities:
        host:
          properties:
            num_cpus: { get_input: cpus }
            mem_size: 2 GB
            disk_size: 10 GB
        os:
          properties: { type: linux, distribution: ubuntu, version: 22.04 }
    lan:
      type: tosca.nodes.network.Network
      properties: { cidr: 10.1.0.0/24, start_ip: 10.1.0.10 }
    port:
      type: tosca.nodes.network.Port
      requirements: [ { binding: server }, { link: lan } ]
  outputs:
    server_ip:
      value: { get_attribute: [ server, public_address ] }
"#;

#[test]
fn the_documented_example_becomes_the_documented_request() {
    let request = translate("tosca.yml", WORKED, &Inputs::new(), &example_offer()).unwrap();
    let server = &request.nodes[0];
    assert_eq!(server.client_id, "server");
    assert_eq!(server.sliver_type.as_deref(), Some("default-vm"));
    assert_eq!(
        server.size,
        Some(Size {
            cores: 2,
            ram_mb: 2048,
            disk_gb: Some(10)
        })
    );
    assert_eq!(
        server.image.as_deref(),
        Some("urn:publicid:IDN+am.example.org+image+ubuntu-22.04")
    );
    let port = &server.interfaces[0];
    assert_eq!(port.client_id, "port");
    assert_eq!(port.ipv4.unwrap().address.to_string(), "10.1.0.10");
    assert_eq!(port.ipv4.unwrap().netmask.to_string(), "255.255.255.0");
    assert_eq!(
        (
            request.links[0].client_id.as_str(),
            request.links[0].interfaces.as_slice()
        ),
        ("lan", &["port".to_owned()][..])
    );
    assert_eq!(
        request.outputs[0].value,
        OutputValue::Address {
            node: "server".into(),
            interface: None
        }
    );
    let inputs: Inputs = [("cpus".to_string(), Scalar::Int(3))].into();
    let err = translate("tosca.yml", WORKED, &inputs, &example_offer())
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "tosca.yml:8: input 'cpus' is '3', which breaks its constraint valid_values: [1, 2, 4]"
    );
    let err = translate(
        "tosca.yml",
        &WORKED.replace("22.04", "12.04"),
        &Inputs::new(),
        &example_offer(),
    )
    .unwrap_err()
    .to_string();
    assert_eq!(
        err,
        "tosca.yml:10: node 'server': no offered image matches the operating system type linux, distribution ubuntu, version 12.04; the images offered are: urn:publicid:IDN+am.example.org+image+ubuntu-22.04 (Linux 22.04) \"Ubuntu 22.04 LTS\""
    );
}

#[test]
fn a_required_input_given_no_value_is_refused_naming_it() {
    let body = "topology_template:\n  inputs:\n    image:\n      type: string\n      required: true\n  node_templates:\n    vm:\n      type: Compute\n      capabilities:\n        os:\n          properties: { image: { get_input: image } }\n";
    assert_eq!(
        refused(body, &Inputs::new()),
        "t.yml:4: input 'image' is required and has no default: pass its value in geni_template_inputs"
    );
}

#[test]
fn operations_of_a_non_compute_node_and_node_filters_are_refused() {
    let body = "topology_template:\n  node_templates:\n    vm:\n      type: Compute\n      node_filter: {}\n    disk:\n      type: BlockStorage\n      properties: { size: 1 GB }\n      interfaces: { Standard: { create: https://example.org/format.sh } }\n";
    assert_eq!(
        refused(body, &Inputs::new()),
        "t.yml:6: node 'vm': node_filter: not supported by this aggregate\nt.yml:7: block storage 'disk' is attached to no Compute node (AttachesTo): the aggregate gives disks only to VMs\nt.yml:10: node 'disk': interfaces: not supported by this aggregate"
    );
}

#[test]
fn a_scalable_count_makes_numbered_vms_and_an_index_picks_one() {
    let body = "topology_template:
  node_templates:
    wn:
      type: Compute
      capabilities:
        scalable: { properties: { count: 3 } }
        host: { properties: { num_cpus: 2 } }
  outputs:
    second: { value: { get_attribute: [wn, private_address, 1] } }
";
    let request = ok(body, &Inputs::new());
    let ids: Vec<&str> = request.nodes.iter().map(|n| n.client_id.as_str()).collect();
    assert_eq!(ids, ["wn-1", "wn-2", "wn-3"]);
    assert!(
        request
            .nodes
            .iter()
            .all(|n| n.size.map(|s| s.cores) == Some(2))
    );
    assert_eq!(
        request.outputs[0].value,
        OutputValue::Address {
            node: "wn-2".into(),
            interface: None
        }
    );
    let err = refused(&body.replace("count: 3", "count: 0"), &Inputs::new());
    assert!(
        err.starts_with(
            "t.yml:7: node 'wn': scalable count '0' is not a whole number from 1 to 64"
        ),
        "{err}"
    );
}

#[test]
fn an_archive_artifact_becomes_an_install_service() {
    let body = "topology_template:
  node_templates:
    vm:
      type: Compute
      artifacts:
        site:
          file: https://example.org/site.tar.gz
          type: tosca.artifacts.Deployment
          deploy_path: /srv/site
        notes:
          file: notes.txt
          type: tosca.artifacts.File
";
    let err = refused(body, &Inputs::new());
    assert_eq!(
        err,
        "t.yml:11: node 'vm': artifact notes ('notes.txt'): only archives at http(s) URLs are installed by this aggregate"
    );
    let request = ok(
        &body[..body.find("        notes:").unwrap()],
        &Inputs::new(),
    );
    assert_eq!(
        request.nodes[0].installs,
        [crate::Install {
            url: "https://example.org/site.tar.gz".into(),
            install_path: "/srv/site".into()
        }]
    );
}
