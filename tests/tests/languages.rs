//! Templates as requests, end to end through the real binary on the
//! simulated cloud: every document of `languages/MANIFEST.tsv` (TOSCA,
//! RADL, HOT) that is translatable Allocates (AM API v3, a plain XML-RPC
//! client) into a manifest naming the template's nodes — the nodes
//! `geni-am translate` finds against the same configuration, whose RSpec
//! `geni-am rspec validate` accepts — and is Deleted; every unsupported
//! one is refused with code 1 (BADARGS) naming the construct, by Allocate
//! and by `geni-am translate` (exit 1). Plus `geni_template_inputs`,
//! CreateSliver (v2) with a RADL document, and GetVersion's entries.

use geni_am_tests::aggregate::{ALICE, Aggregate, DEMO_SLICE, set};
use geni_am_tests::calls::{call, creds, s, st, strs, users};
use geni_am_tests::database::Store;
use geni_am_tests::flows::{ALICE_KEY, Slice};
use geni_am_tests::requests::{corpus, node_client_ids};
use geni_xmlrpc::Value;
use std::path::Path;
use std::process::{Command, Output};

/// The images the corpus's templates ask for, as `(name, os, version,
/// description)`.
const IMAGES: [(&str, &str, &str); 7] = [
    ("ubuntu-22.04", "22.04", "Ubuntu 22.04 LTS"),
    ("ubuntu-16.04", "16.04", "Ubuntu 16.04 LTS"),
    ("ubuntu-12.04", "12.04", "Ubuntu 12.04 LTS"),
    ("rhel-6.5", "6.5", "Red Hat Enterprise Linux 6.5"),
    ("cirros-0.3.2", "0.3.2", "CirrOS 0.3.2"),
    ("fedora-18", "18", "Fedora 18"),
    (
        "F18-x86_64-cfntools",
        "18",
        "Fedora 18 with the CloudFormation tools",
    ),
];

/// An aggregate offering `default-vm` (1 core, 1 GiB unless sized; up to 4
/// cores, 8 GiB, 40 GB) with the corpus's images, and the flavours the
/// corpus's EC2 and OpenStack RADL templates name.
fn start() -> Aggregate {
    Aggregate::start_with(Store::Sqlite, |config| {
        let image = |(name, version, description): (&str, &str, &str)| {
            let mut image = toml::Table::new();
            image.insert(
                "name".into(),
                format!("urn:publicid:IDN+geni-am.test+image+{name}").into(),
            );
            image.insert("os".into(), "Linux".into());
            image.insert("version".into(), version.into());
            image.insert("description".into(), description.into());
            toml::Value::Table(image)
        };
        let flavour = |name: &str, cpus: i64, memory_mb: i64, images: Vec<toml::Value>| {
            let mut flavour = toml::Table::new();
            flavour.insert("name".into(), name.into());
            flavour.insert("cpus".into(), cpus.into());
            flavour.insert("memory_mb".into(), memory_mb.into());
            flavour.insert("max_cores".into(), 4.into());
            flavour.insert("max_ram_mb".into(), 8192.into());
            flavour.insert("max_disk_gb".into(), 40.into());
            flavour.insert("disk_images".into(), toml::Value::Array(images));
            toml::Value::Table(flavour)
        };
        let all = IMAGES.map(image).to_vec();
        let ubuntu = vec![image(IMAGES[0])];
        set(
            config,
            &["backend", "sim", "sliver_types"],
            toml::Value::Array(vec![
                flavour("default-vm", 1, 1024, all),
                flavour("t1.micro", 1, 613, ubuntu.clone()),
                flavour("Medium", 2, 4096, ubuntu.clone()),
                flavour("XLarge", 4, 8192, ubuntu),
            ]),
        );
    })
}

/// `(file, expected)` of every row of the languages manifest.
fn rows() -> Vec<(String, String)> {
    corpus("languages/MANIFEST.tsv")
        .lines()
        .skip(1)
        .filter_map(|line| {
            let fields: Vec<&str> = line.split('\t').collect();
            (fields.len() > 5).then(|| (fields[0].to_owned(), fields[5].to_owned()))
        })
        .collect()
}

/// The words a refusal of each `unsupported:` label names.
fn construct(label: &str) -> &'static str {
    match label {
        "configure" => "configure '",
        "autoscaling" => "scaling",
        "object-storage" => "object storage",
        "software-component" => "software component",
        "load-balancer" => "load balancer",
        "container" => "container",
        "kubernetes" => "Kubernetes",
        "software-config" => "software configuration",
        other => panic!("no construct known for unsupported:{other}"),
    }
}

fn geni_am(args: &[&str], file: &Path) -> Output {
    Command::new(geni_am_tests::geni_am_bin())
        .args(args)
        .arg(file)
        .output()
        .expect("geni-am runs")
}

fn allocate(
    client: &mut geni_am::client::Client,
    credential: &str,
    text: &str,
    options: Value,
) -> geni_am_tests::calls::Envelope {
    call(
        client,
        "Allocate",
        vec![s(DEMO_SLICE), creds(credential), s(text), options],
    )
}

fn delete_slice(client: &mut geni_am::client::Client, credential: &str) {
    let deleted = call(
        client,
        "Delete",
        vec![strs(&[DEMO_SLICE]), creds(credential), st(vec![])],
    );
    assert_eq!(deleted.code, 0, "Delete failed: {}", deleted.output);
}

#[test]
fn every_template_of_the_corpus_allocates_or_is_refused_naming_its_construct() {
    let aggregate = start();
    let mut client = aggregate.client(3);
    let credential = aggregate.read("demo-slice-cred.xml");
    let config = aggregate.config().display().to_string();
    let rows = rows();
    assert!(
        rows.len() >= 45,
        "the corpus lists {} documents",
        rows.len()
    );
    let mut failures = Vec::new();
    for (file, expected) in rows {
        let path = geni_am_tests::corpus_dir().join("languages").join(&file);
        let text = corpus(&format!("languages/{file}"));
        let translated = geni_am(&["translate", "--to", "rspec", "--config", &config], &path);
        let answer = allocate(&mut client, &credential, &text, st(vec![]));
        if expected == "translatable" {
            let rspec = String::from_utf8_lossy(&translated.stdout).into_owned();
            if !translated.status.success() {
                failures.push(format!(
                    "{file}: translate failed: {}",
                    String::from_utf8_lossy(&translated.stderr)
                ));
                continue;
            }
            let request = aggregate.dir().join("translated.xml");
            std::fs::write(&request, &rspec).expect("request written");
            let valid = geni_am(&["rspec", "validate", "--as", "request"], &request);
            assert!(
                valid.status.success(),
                "{file}: the translation is no valid request: {}\n{rspec}",
                String::from_utf8_lossy(&valid.stdout)
            );
            let mut names = node_client_ids(&rspec);
            if answer.code != 0 {
                failures.push(format!(
                    "{file}: Allocate answered {}: {}",
                    answer.code, answer.output
                ));
                continue;
            }
            let manifest = answer.rspec();
            let mut manifest_names = node_client_ids(&manifest);
            names.sort();
            manifest_names.sort();
            assert!(!names.is_empty(), "{file}: no nodes");
            assert_eq!(manifest_names, names, "{file}: manifest nodes\n{manifest}");
            assert!(manifest.contains("type=\"manifest\""), "{file}");
            delete_slice(&mut client, &credential);
        } else {
            let words = construct(expected.trim_start_matches("unsupported:"));
            if answer.code != 1 || !answer.output.contains(words) {
                failures.push(format!(
                    "{file}: Allocate answered {} without naming {words:?}: {}",
                    answer.code, answer.output
                ));
                continue;
            }
            assert!(
                answer.output.lines().all(|l| l.starts_with("template:")),
                "{file}: every refusal line names the template and a line: {}",
                answer.output
            );
            let stderr = String::from_utf8_lossy(&translated.stderr);
            assert_eq!(translated.status.code(), Some(1), "{file}: {stderr}");
            assert!(stderr.contains(words), "{file}: {stderr}");
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_radl_template_becomes_a_manifest_of_its_systems_sized_as_asked() {
    let aggregate = start();
    let mut client = aggregate.client(3);
    let credential = aggregate.read("demo-slice-cred.xml");
    let text = corpus("languages/radl/grycap-ec3__templates_ubuntu-opennebula.radl");
    let manifest = allocate(&mut client, &credential, &text, st(vec![]))
        .ok()
        .rspec();
    assert_eq!(node_client_ids(&manifest), ["front", "wn"]);
    // front: cpu.count>=1 and memory.size>=3096m.
    assert!(manifest.contains("cores=\"1\" ram=\"3096\""), "{manifest}");
    // one://opennebula-host/vm-id is another cloud's image: the offered
    // image its disk.0.os.* describe (Ubuntu 16.04) stands for it.
    assert!(manifest.contains("image+ubuntu-16.04\""), "{manifest}");
    delete_slice(&mut client, &credential);
}

#[test]
fn template_inputs_reach_the_template_and_malformed_ones_are_badargs_naming_the_key() {
    let aggregate = start();
    let mut client = aggregate.client(3);
    let credential = aggregate.read("demo-slice-cred.xml");
    let radl = "system node (cpu.count = @input.CPUs@ and memory.size >= 512M)\n\
                deploy node @input.NumNodes@\n";
    let inputs = st(vec![(
        "geni_template_inputs",
        st(vec![("CPUs", Value::Integer(2)), ("NumNodes", s("2"))]),
    )]);
    let manifest = allocate(&mut client, &credential, radl, inputs)
        .ok()
        .rspec();
    assert_eq!(node_client_ids(&manifest), ["node-1", "node-2"]);
    assert!(manifest.contains("cores=\"2\" ram=\"512\""), "{manifest}");
    delete_slice(&mut client, &credential);

    let missing = allocate(&mut client, &credential, radl, st(vec![]));
    assert_eq!(missing.code, 1);
    assert!(
        missing
            .output
            .contains("template:1:14: input 'CPUs' has no value"),
        "{}",
        missing.output
    );
    let malformed = st(vec![(
        "geni_template_inputs",
        st(vec![("CPUs", Value::Array(vec![]))]),
    )]);
    let answer = allocate(&mut client, &credential, radl, malformed);
    assert_eq!(answer.code, 1);
    assert!(
        answer.output.contains("input `CPUs` must be"),
        "{}",
        answer.output
    );
    let not_a_struct = st(vec![("geni_template_inputs", s("CPUs=2"))]);
    let answer = allocate(&mut client, &credential, radl, not_a_struct);
    assert_eq!(answer.code, 1);
    assert!(
        answer
            .output
            .contains("geni_template_inputs must be a struct")
    );
    let malformed_radl = allocate(
        &mut client,
        &credential,
        "system a (\n cpu.count >>",
        st(vec![]),
    );
    assert_eq!(malformed_radl.code, 1);
    assert!(
        malformed_radl
            .output
            .starts_with("template:2:13: malformed RADL"),
        "{}",
        malformed_radl.output
    );
}

#[test]
fn a_tosca_template_allocates_through_a_plain_xmlrpc_client_and_its_output_gets_the_vms_address() {
    let aggregate = start();
    let mut client = aggregate.client(3);
    let credential = aggregate.read("demo-slice-cred.xml");
    let text = corpus(
        "languages/tosca/openstack-heat-translator__samples_tests_data_tosca_single_server.yaml",
    );
    let inputs = st(vec![(
        "geni_template_inputs",
        st(vec![("cpus", Value::Integer(2))]),
    )]);
    let manifest = allocate(&mut client, &credential, &text, inputs)
        .ok()
        .rspec();
    assert_eq!(node_client_ids(&manifest), ["my_server"], "{manifest}");
    assert!(manifest.contains("cores=\"2\""), "{manifest}");
    // The outputs extension passes into the manifest like any extension.
    assert!(
        manifest.contains("xmlns:tmpl=\"http://geni-am.org/resources/rspec/ext/templates/1\""),
        "{manifest}"
    );
    assert!(
        manifest.contains("<tmpl:output name=\"private_ip\" node=\"my_server\""),
        "{manifest}"
    );
    // Once the VM runs, the output holds its control address.
    let mut slice = Slice {
        client: &mut client,
        urn: DEMO_SLICE.to_owned(),
        credential: credential.clone(),
    };
    slice.provision(&[DEMO_SLICE]);
    slice.action(&[DEMO_SLICE], "geni_start");
    slice.wait_ready(&[DEMO_SLICE]);
    let described = slice.describe(&[DEMO_SLICE]).rspec();
    let output = described
        .split("<tmpl:output ")
        .nth(1)
        .unwrap_or_else(|| panic!("no output in {described}"));
    assert!(
        output.starts_with("name=\"private_ip\" node=\"my_server\" value=\""),
        "{described}"
    );
    delete_slice(&mut client, &credential);
}

#[test]
fn createsliver_v2_takes_a_radl_document() {
    let aggregate = start();
    let mut client = aggregate.client(2);
    let slice_creds = Value::Array(vec![s(&aggregate.read("demo-slice-cred.xml"))]);
    let radl = "network private (cidr = '10.9.0.0/24')\n\
                system a (net_interface.0.connection = 'private')\n\
                system b (net_interface.0.connection = 'private')\n";
    let created = call(
        &mut client,
        "CreateSliver",
        vec![
            s(DEMO_SLICE),
            slice_creds.clone(),
            s(radl),
            users(ALICE, ALICE_KEY),
            st(vec![]),
        ],
    )
    .ok();
    let manifest = created.text();
    assert_eq!(node_client_ids(manifest), ["a", "b"]);
    assert!(manifest.contains("10.9.0.2"), "{manifest}");
    call(
        &mut client,
        "DeleteSliver",
        vec![s(DEMO_SLICE), slice_creds, st(vec![])],
    )
    .ok();
}

#[test]
fn getversion_lists_each_request_language() {
    let aggregate = start();
    let mut client = aggregate.client(3);
    let version = call(&mut client, "GetVersion", vec![]).ok();
    let Value::Array(entries) = version.member("geni_request_rspec_versions") else {
        panic!("no request versions");
    };
    let kinds: Vec<String> = entries
        .iter()
        .map(|e| {
            let field = |n| {
                geni_xmlrpc::member(e, n)
                    .and_then(geni_xmlrpc::as_str)
                    .unwrap_or("")
            };
            format!("{} {}", field("type"), field("version"))
        })
        .collect();
    assert_eq!(kinds, ["GENI 3", "TOSCA 1.0", "RADL 1.1", "HOT 2013-05-23"]);
}

#[test]
fn translate_reads_the_file_or_exits_2() {
    let missing = geni_am(&["translate"], Path::new("/nonexistent/template.radl"));
    assert_eq!(missing.status.code(), Some(2));
    let path =
        geni_am_tests::corpus_dir().join("languages/radl/grycap-ec3__templates_ubuntu-ec2.radl");
    // Without --config, the example configuration offers only default-vm.
    let refused = geni_am(&["translate"], &path);
    assert_eq!(refused.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.starts_with("grycap-ec3__templates_ubuntu-ec2.radl:8:1: system 'front': instance_type 't1.micro' is not offered; offered sliver types: default-vm"),
        "{stderr}"
    );
}
