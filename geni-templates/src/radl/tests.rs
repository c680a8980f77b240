//! Translations of small RADL documents: deploy counts, networks and
//! addresses, shell recipes, inputs, the JSON form, and refusals.

use super::translate;
use crate::yaml::choose::tests::example_offer;
use crate::{Inputs, Offer, OfferedImage, Request, Scalar, Size};

/// The example configuration's offer with a CentOS 7 image beside its
/// Ubuntu 22.04, so that `os.flavour` has something to choose between.
fn offer() -> Offer {
    let mut offer = example_offer();
    offer.sliver_types[0].images.push(OfferedImage {
        name: "urn:publicid:IDN+am.example.org+image+centos-7".into(),
        os: Some("Linux".into()),
        version: Some("7".into()),
        description: Some("CentOS 7".into()),
    });
    offer
}

fn ok(text: &str) -> Request {
    translate("t.radl", text, &Inputs::new(), &offer()).unwrap_or_else(|e| panic!("{e}"))
}

fn refused(text: &str) -> String {
    translate("t.radl", text, &Inputs::new(), &offer())
        .unwrap_err()
        .to_string()
}

#[test]
fn a_deploy_of_three_names_the_nodes_name_1_to_3_on_a_lan_with_cidr_addresses() {
    let request = ok("network public (outbound = 'yes')\n\
         network private (cidr = '192.168.5.0/24')\n\
         system wn (\n cpu.count >= 2 and\n memory.size >= 2G and\n\
         net_interface.0.connection = 'public' and\n net_interface.1.connection = 'private'\n)\n\
         deploy wn 3\n");
    let names: Vec<_> = request.nodes.iter().map(|n| n.client_id.as_str()).collect();
    assert_eq!(names, ["wn-1", "wn-2", "wn-3"]);
    assert_eq!(
        request.nodes[0].size,
        Some(Size {
            cores: 2,
            ram_mb: 2048,
            disk_gb: None
        })
    );
    // The outbound network is the control network: no interface, no link.
    assert_eq!(request.nodes[0].interfaces.len(), 1);
    assert_eq!(request.nodes[2].interfaces[0].client_id, "wn-3:if1");
    assert_eq!(request.links.len(), 1);
    assert_eq!(request.links[0].client_id, "private");
    assert_eq!(
        request.links[0].interfaces,
        ["wn-1:if1", "wn-2:if1", "wn-3:if1"]
    );
    let third = request.nodes[2].interfaces[0].ipv4.unwrap();
    assert_eq!(third.address.to_string(), "192.168.5.3");
    assert_eq!(third.netmask.to_string(), "255.255.255.0");
}

#[test]
fn a_fixed_ip_is_kept_and_skipped_by_the_cidr_numbering() {
    let request = ok("network lan (cidr = '10.1.0.0/16')\n\
         system a (net_interface.0.connection = 'lan' and net_interface.0.ip = '10.1.0.1')\n\
         system b (net_interface.0.connection = 'lan')\n");
    let addresses: Vec<String> = request
        .nodes
        .iter()
        .map(|n| n.interfaces[0].ipv4.unwrap().address.to_string())
        .collect();
    assert_eq!(addresses, ["10.1.0.1", "10.1.0.2"]);
    assert_eq!(
        request.nodes[0].interfaces[0]
            .ipv4
            .unwrap()
            .netmask
            .to_string(),
        "255.255.0.0"
    );
}

#[test]
fn os_flavour_and_version_choose_the_offered_image() {
    let request = ok(
        "system db (disk.0.os.name = 'linux' and disk.0.os.flavour = 'centos' and disk.0.os.version >= '7')",
    );
    assert_eq!(
        request.nodes[0].image.as_deref(),
        Some("urn:publicid:IDN+am.example.org+image+centos-7")
    );
    let text =
        refused("system db (\n disk.0.os.flavour = 'ubuntu' and disk.0.os.version = '16.04'\n)");
    assert!(
        text.starts_with("t.radl:1:1: system 'db': no offered image matches disk.0.os.flavour = 'ubuntu' and disk.0.os.version = '16.04'; offered images: urn:publicid:IDN+am.example.org+image+ubuntu-22.04 (Linux 22.04)"),
        "{text}"
    );
}

#[test]
fn an_image_url_naming_an_offered_image_is_that_image() {
    let request = ok("system a (disk.0.image.url = 'one://cloud.example/centos-7')");
    assert_eq!(
        request.nodes[0].image.as_deref(),
        Some("urn:publicid:IDN+am.example.org+image+centos-7")
    );
    let text = refused("system a (disk.0.image.url = 'aws://us-east-1/ami-1')");
    assert!(
        text.contains("no offered image matches disk.0.image.url = 'aws://us-east-1/ami-1'"),
        "{text}"
    );
}

#[test]
fn a_shell_recipe_becomes_an_execute_service_of_its_system() {
    let request = ok(
        "system web ()\nconfigure web (\n@begin\n#!/bin/bash\napt-get install -y nginx\n@end\n)\ndeploy web 1\n",
    );
    let execute = &request.nodes[0].executes[0];
    assert_eq!(execute.shell, "bash");
    assert_eq!(execute.command, "#!/bin/bash\napt-get install -y nginx");
}

#[test]
fn contextualize_applies_recipes_by_step_and_an_empty_one_applies_none() {
    let text = "system a ()\n\
        configure first (\n@begin\n#!/bin/sh\necho 1\n@end\n)\n\
        configure second (\n@begin\n#!/bin/sh\necho 2\n@end\n)\n\
        contextualize (\n system a configure second step 2\n system a configure first step 1\n)\n";
    let commands: Vec<String> = ok(text).nodes[0]
        .executes
        .iter()
        .map(|e| e.command.clone())
        .collect();
    assert_eq!(commands, ["#!/bin/sh\necho 1", "#!/bin/sh\necho 2"]);
    let none =
        ok("system a ()\nconfigure a (\n@begin\n#!/bin/sh\necho\n@end\n)\ncontextualize ()\n");
    assert!(none.nodes[0].executes.is_empty());
}

#[test]
fn inputs_fill_parametric_values() {
    let mut inputs = Inputs::new();
    inputs.insert("CPUs".into(), Scalar::Int(3));
    inputs.insert("NumNodes".into(), Scalar::Str("2".into()));
    let request = translate(
        "t.radl",
        "system node (cpu.count = @input.CPUs@ and memory.size >= 512M)\ndeploy node @input.NumNodes@\n",
        &inputs,
        &offer(),
    )
    .unwrap();
    assert_eq!(request.nodes.len(), 2);
    assert_eq!(
        request.nodes[0].size.map(|s| (s.cores, s.ram_mb)),
        Some((3, 512))
    );
    let text = translate(
        "t.radl",
        "system n (cpu.count = @input.CPUs@)",
        &Inputs::new(),
        &offer(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        text.contains("t.radl:1:11: input 'CPUs' has no value"),
        "{text}"
    );
}

#[test]
fn the_json_form_translates_like_the_text_form() {
    let json = r#"[
  {"class": "network", "id": "net", "outbound": "no"},
  {"class": "system", "id": "front", "cpu.count_min": 2, "memory.size_min": 1073741824,
   "net_interface.0.connection": "net"},
  {"class": "system", "id": "back", "net_interface.0.connection": "net"},
  {"class": "deploy", "system": "front", "vm_number": 1},
  {"class": "deploy", "system": "back", "vm_number": 1}
]"#;
    let request = ok(json);
    assert_eq!(
        request.nodes[0].size.map(|s| (s.cores, s.ram_mb)),
        Some((2, 1024))
    );
    assert_eq!(request.links[0].interfaces, ["front:if0", "back:if0"]);
    let text = translate(
        "t.json",
        "[\n {\"class\": \"configure\", \"id\": \"x\", \"recipes\": \"- tasks: []\"}\n]",
        &Inputs::new(),
        &offer(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        text.starts_with("t.json:2:2: configure 'x': an Ansible recipe"),
        "{text}"
    );
}

#[test]
fn what_a_vm_aggregate_cannot_honour_is_refused_with_its_place() {
    let text =
        refused("system a (\n  memory.size >= 64G and\n  gpu.count >= 1\n)\ndeploy a 1 aws\n");
    assert!(
        text.contains("t.radl:3:3: system 'a': feature gpu.count is not supported"),
        "{text}"
    );
    assert!(
        text.contains("t.radl:5:1: deploy 'a' to cloud 'aws'"),
        "{text}"
    );
    let text = refused("system a (net_interface.0.connection = 'nowhere')");
    assert!(text.contains("names no network 'nowhere'"), "{text}");
    let text = refused("deploy ghost 1");
    assert!(
        text.contains("deploy 'ghost': no system 'ghost' is defined"),
        "{text}"
    );
    let text = refused("system a ()\ndeploy a 5000");
    assert!(text.contains("at most 1000"), "{text}");
    let text = refused("system a (memory.size >= 64G)");
    assert!(
        text.contains("65536 MiB asked; sliver type default-vm gives at most 4 cores, 8192 MiB"),
        "{text}"
    );
}

#[test]
fn malformed_radl_is_reported_with_line_and_column() {
    let text = refused("system a (\n  cpu.count >= 1 and\n  memory.size >> 1G\n)");
    assert!(
        text.starts_with("t.radl:3:16: malformed RADL in system: expected a value"),
        "{text}"
    );
}

#[test]
fn a_document_too_large_is_refused() {
    let text = format!("system a ()\n{}", "#".repeat(super::MAX_DOCUMENT_BYTES));
    assert!(refused(&text).contains("at most 1048576 are accepted"));
}

mod properties {
    use super::offer;
    use crate::Inputs;
    use crate::radl::translate;
    use proptest::prelude::*;

    /// Fragments RADL documents are made of, to build near-RADL text.
    const PIECES: [&str; 24] = [
        "system ",
        "network ",
        "deploy ",
        "configure ",
        "contextualize ",
        "a ",
        "(",
        ")",
        " and ",
        "cpu.count",
        ">=",
        "=",
        "'x'",
        "2",
        "512M",
        "@begin\n#!/bin/sh\n",
        "@end",
        "\n",
        "# c\n",
        "net_interface.0.connection",
        "@input.n@",
        "contains",
        "[",
        "\"",
    ];

    proptest! {
        #[test]
        fn any_text_translates_or_is_refused_with_a_place(text in ".{0,200}") {
            if let Err(refusals) = translate("p", &text, &Inputs::new(), &offer()) {
                prop_assert!(!refusals.refusals.is_empty());
                for r in &refusals.refusals {
                    prop_assert!(r.line >= 1 && r.column.is_some_and(|c| c >= 1));
                }
            }
        }

        #[test]
        fn near_radl_text_translates_or_is_refused_with_a_place(
            pieces in proptest::collection::vec(0..PIECES.len(), 0..40)
        ) {
            let text: String = pieces.iter().map(|&i| PIECES[i]).collect();
            if let Err(refusals) = translate("p", &text, &Inputs::new(), &offer()) {
                let lines = text.lines().count().max(1);
                for r in &refusals.refusals {
                    prop_assert!(r.line >= 1 && r.line <= lines + 1, "{r} in {text:?}");
                }
            }
        }
    }
}
