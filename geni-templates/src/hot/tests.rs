//! Translating small HOT templates: what maps and what is refused.

use super::translate;
use crate::yaml::choose::tests::example_offer;
use crate::{Inputs, OutputValue, Scalar, Size};

const HEAD: &str = "heat_template_version: 2016-10-14\n";

fn run(body: &str, inputs: &Inputs) -> Result<crate::Request, String> {
    translate("h.yaml", &format!("{HEAD}{body}"), inputs, &example_offer())
        .map_err(|e| e.to_string())
}

const NET: &str = "parameters:
  size:
    type: number
    default: 2
resources:
  net:
    type: OS::Neutron::Net
  subnet:
    type: OS::Neutron::Subnet
    properties:
      network: { get_resource: net }
      cidr: 10.2.0.0/24
      gateway_ip: 10.2.0.1
      allocation_pools: [ { start: 10.2.0.20, end: 10.2.0.30 } ]
  a_port:
    type: OS::Neutron::Port
    properties:
      network: { get_resource: net }
      fixed_ips: [ { subnet: { get_resource: subnet }, ip_address: 10.2.0.5 } ]
  a:
    type: OS::Nova::Server
    properties:
      flavor: m1.small
      image: ubuntu-22.04
      networks: [ { port: { get_resource: a_port } } ]
      user_data:
        str_replace:
          template: |
            #!/bin/bash
            echo $GREETING
          params:
            $GREETING: hello
  b:
    type: OS::Nova::Server
    properties:
      flavor: default-vm
      networks: [ { network: { get_resource: net } }, { network: public } ]
  vol:
    type: OS::Cinder::Volume
    properties: { size: { get_param: size } }
  att:
    type: OS::Cinder::VolumeAttachment
    properties: { instance_uuid: { get_resource: a }, volume_id: { get_resource: vol } }
outputs:
  a_ip: { value: { get_attr: [a_port, fixed_ips] } }
  b_ip: { value: { get_attr: [b, networks, net, 0] } }
  b_control: { value: { get_attr: [b, first_address] } }
";

#[test]
fn servers_on_a_new_net_become_vms_with_addressed_interfaces_on_one_link() {
    let request = run(NET, &Inputs::new()).unwrap();
    let (a, b) = (&request.nodes[0], &request.nodes[1]);
    assert_eq!(
        a.size,
        Some(Size {
            cores: 1,
            ram_mb: 2048,
            disk_gb: Some(22)
        }),
        "m1.small and a 2 GB volume"
    );
    assert_eq!(
        a.image.as_deref(),
        Some("urn:publicid:IDN+am.example.org+image+ubuntu-22.04")
    );
    assert_eq!(a.executes[0].shell, "bash");
    assert_eq!(a.executes[0].command, "#!/bin/bash\necho hello\n");
    assert_eq!(
        (b.sliver_type.as_deref(), b.size),
        (Some("default-vm"), None)
    );
    assert_eq!(a.interfaces[0].client_id, "a_port");
    assert_eq!(
        a.interfaces[0].ipv4.unwrap().address.to_string(),
        "10.2.0.5"
    );
    assert_eq!(
        b.interfaces.len(),
        1,
        "the public network is the control network"
    );
    assert_eq!(b.interfaces[0].client_id, "b:if0");
    assert_eq!(
        b.interfaces[0].ipv4.unwrap().address.to_string(),
        "10.2.0.20"
    );
    assert_eq!(request.links[0].interfaces, ["a_port", "b:if0"]);
    let values: Vec<&OutputValue> = request.outputs.iter().map(|o| &o.value).collect();
    assert_eq!(
        values[0],
        &OutputValue::Address {
            node: "a".into(),
            interface: Some("a_port".into())
        }
    );
    assert_eq!(
        values[1],
        &OutputValue::Address {
            node: "b".into(),
            interface: Some("b:if0".into())
        }
    );
    assert_eq!(
        values[2],
        &OutputValue::Address {
            node: "b".into(),
            interface: None
        }
    );
}

#[test]
fn a_parameter_breaking_its_constraint_or_not_declared_is_refused() {
    let body = NET.replace(
        "default: 2\n",
        "default: 2\n    constraints:\n      - range: { min: 1, max: 4 }\n",
    );
    let inputs: Inputs = [
        ("size".to_string(), Scalar::Int(9)),
        ("zone".to_string(), Scalar::Str("x".into())),
    ]
    .into();
    let err = run(&body, &inputs).unwrap_err();
    assert!(
        err.contains(
            "h.yaml:0: parameter 'zone' was given but the template declares no such parameter"
        ),
        "{err}"
    );
    assert!(
        err.contains(
            "h.yaml:7: parameter 'size' is '9', which breaks its constraint range: {min: 1, max: 4}"
        ),
        "{err}"
    );
}

#[test]
fn an_unknown_flavor_or_image_is_refused_naming_what_is_offered() {
    let err = run(
        &NET.replace("flavor: m1.small", "flavor: m9.huge")
            .replace("image: ubuntu-22.04", "image: F18-x86_64-cfntools"),
        &Inputs::new(),
    )
    .unwrap_err();
    assert!(err.contains("h.yaml:24: server 'a': flavor 'm9.huge' is neither an offered sliver type (default-vm) nor a known flavour (m1.tiny, m1.small, m1.medium, m1.large, m1.xlarge)"), "{err}");
    assert!(err.contains("server 'a': no offered image matches the image 'F18-x86_64-cfntools'; the images offered are: urn:publicid:IDN+am.example.org+image+ubuntu-22.04"), "{err}");
    let err = run(
        &NET.replace("flavor: m1.small", "flavor: m1.large"),
        &Inputs::new(),
    )
    .unwrap_err();
    assert!(err.contains("server 'a': asks for 82 GB of disk; sliver type 'default-vm' offers at most 40 GB of disk"), "{err}");
}

#[test]
fn refused_resources_name_their_construct_and_line() {
    let body = "resources:\n  s:\n    type: OS::Nova::Server\n  lb:\n    type: OS::Octavia::LoadBalancer\n  cfg:\n    type: OS::Heat::SoftwareConfig\n";
    let err = run(body, &Inputs::new()).unwrap_err();
    assert_eq!(
        err,
        "h.yaml:5: resource 'lb' of type OS::Octavia::LoadBalancer: a load balancer: not supported by this aggregate\nh.yaml:7: resource 'cfg' of type OS::Heat::SoftwareConfig: software configuration (SoftwareConfig and deployments), which needs a configuration agent on the VM: not supported by this aggregate"
    );
}

#[test]
fn user_data_that_is_not_a_shell_script_is_refused() {
    let body = "resources:\n  s:\n    type: OS::Nova::Server\n    properties:\n      user_data: |\n        #cloud-config\n        packages: [git]\n";
    let err = run(body, &Inputs::new()).unwrap_err();
    assert!(
        err.starts_with(
            "h.yaml:7: server 's': user_data that is not a sh or bash script ('#cloud-config')"
        ),
        "{err}"
    );
}

/// The worked example of docs/languages/hot.md.
const WORKED: &str = r#"heat_template_version: 2013-05-23
parameters:
  image:
    type: string
    default: ubuntu-22.04
  vol_size:
    type: number
    default: 5
    constraints:
      - range: { min: 1, max: 10 }
resources:
  private_net:
    type: OS::Neutron::Net
  private_subnet:
    type: OS::Neutron::Subnet
    properties:
      network_id: { get_resource: private_net }
      cidr: 10.0.0.0/24
      gateway_ip: 10.0.0.1
      allocation_pools: [ { start: 10.0.0.10, end: 10.0.0.20 } ]
  server1:
    type: OS::Nova::Server
    properties:
      image: { get_param: image }
      flavor: m1.small
      key_name: mykey
      networks:
        - port: { get_resource: server1_port }
      user_data: |
        #!/bin/sh
        echo ready > /tmp/ready
  server1_port:
    type: OS::Neutron::Port
    properties:
      network_id: { get_resource: private_net }
      fixed_ips:
        - subnet_id: { get_resource: private_subnet }
  server1_floating_ip:
    type: OS::Neutron::FloatingIP
    properties:
      floating_network: public
      port_id: { get_resource: server1_port }
  data:
    type: OS::Cinder::Volume
    properties: { size: { get_param: vol_size } }
  data_attachment:
    type: OS::Cinder::VolumeAttachment
    properties:
      instance_uuid: { get_resource: server1 }
      volume_id: { get_resource: data }
outputs:
  server1_private_ip:
    value: { get_attr: [ server1_port, fixed_ips ] }
  server1_public_ip:
    value: { get_attr: [ server1_floating_ip, floating_ip_address ] }
"#;

#[test]
fn the_documented_example_becomes_the_documented_request() {
    let request = translate("heat.yaml", WORKED, &Inputs::new(), &example_offer()).unwrap();
    assert_eq!(request.nodes.len(), 1);
    let server = &request.nodes[0];
    assert_eq!(server.client_id, "server1");
    assert_eq!(server.sliver_type.as_deref(), Some("default-vm"));
    assert_eq!(
        server.size,
        Some(Size {
            cores: 1,
            ram_mb: 2048,
            disk_gb: Some(25)
        })
    );
    assert_eq!(
        server.image.as_deref(),
        Some("urn:publicid:IDN+am.example.org+image+ubuntu-22.04")
    );
    assert_eq!(server.executes[0].shell, "sh");
    assert_eq!(
        server.executes[0].command,
        "#!/bin/sh\necho ready > /tmp/ready\n"
    );
    let port = &server.interfaces[0];
    assert_eq!(port.client_id, "server1_port");
    assert_eq!(port.ipv4.unwrap().address.to_string(), "10.0.0.10");
    assert_eq!(port.ipv4.unwrap().netmask.to_string(), "255.255.255.0");
    assert_eq!(request.links[0].client_id, "private_net");
    assert_eq!(request.links[0].interfaces, ["server1_port"]);
    assert_eq!(
        request.outputs[0].value,
        OutputValue::Address {
            node: "server1".into(),
            interface: Some("server1_port".into())
        }
    );
    assert_eq!(
        request.outputs[1].value,
        OutputValue::Address {
            node: "server1".into(),
            interface: None
        }
    );
    let inputs: Inputs = [("vol_size".to_string(), Scalar::Int(50))].into();
    let err = translate("heat.yaml", WORKED, &inputs, &example_offer())
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "heat.yaml:10: parameter 'vol_size' is '50', which breaks its constraint range: {min: 1, max: 10}"
    );
}

#[test]
fn a_get_param_of_an_undeclared_parameter_is_refused_naming_it() {
    let body = "resources:\n  s:\n    type: OS::Nova::Server\n    properties: { flavor: { get_param: size } }\n";
    assert_eq!(
        run(body, &Inputs::new()).unwrap_err(),
        "h.yaml:5: get_param 'size': the template declares no such parameter"
    );
}
