//! Every RADL document of the shared corpus (`languages/radl/`), as
//! `languages/MANIFEST.tsv` classifies it: the translatable ones become
//! requests that validate as GENI v3 request RSpecs, with the nodes,
//! sizes, types and images the documents ask for; the others are refused
//! naming the construct (`configure` for the Ansible recipes) with its
//! line.

use geni_rspec::{RspecKind, Validator};
use geni_templates::{Inputs, Offer, OfferedImage, OfferedSliverType, Request, Size, radl};
use std::path::PathBuf;

fn corpus() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus/languages")
}

/// An aggregate like the example configuration's (`default-vm`, up to 4
/// cores, 8 GiB, 40 GB; Ubuntu 22.04), whose operator also named three
/// flavours after those the corpus's EC2 and OpenStack templates ask for.
fn offer() -> Offer {
    let ubuntu = OfferedImage {
        name: "urn:publicid:IDN+am.example.org+image+ubuntu-22.04".into(),
        os: Some("Linux".into()),
        version: Some("22.04".into()),
        description: Some("Ubuntu 22.04 LTS".into()),
    };
    let kind = |name: &str, cores, ram_mb| OfferedSliverType {
        name: name.into(),
        max_size: Some(Size {
            cores,
            ram_mb,
            disk_gb: Some(40),
        }),
        default_size: Size {
            cores: 1,
            ram_mb: ram_mb.min(1024),
            disk_gb: None,
        },
        images: vec![ubuntu.clone()],
    };
    Offer {
        sliver_types: vec![
            kind("default-vm", 4, 8192),
            kind("t1.micro", 1, 613),
            kind("Medium", 2, 4096),
            kind("XLarge", 8, 16384),
        ],
    }
}

/// `(file, expected)` of every RADL row of the manifest.
fn rows() -> Vec<(String, String)> {
    let manifest = std::fs::read_to_string(corpus().join("MANIFEST.tsv")).expect("MANIFEST.tsv");
    manifest
        .lines()
        .skip(1)
        .filter_map(|line| {
            let fields: Vec<&str> = line.split('\t').collect();
            (fields.len() > 5 && fields[0].starts_with("radl/"))
                .then(|| (fields[0].to_owned(), fields[5].to_owned()))
        })
        .collect()
}

fn translate(file: &str) -> Result<Request, geni_templates::Refusals> {
    let text = std::fs::read_to_string(corpus().join(file)).expect("corpus file");
    radl::translate(file, &text, &Inputs::new(), &offer())
}

#[test]
fn every_radl_document_of_the_corpus_translates_or_is_refused_as_the_manifest_says() {
    let rows = rows();
    assert_eq!(rows.len(), 12, "the corpus has twelve RADL documents");
    let validator = Validator::new().expect("schemas");
    for (file, expected) in rows {
        match (translate(&file), expected.as_str()) {
            (Ok(request), "translatable") => {
                let text = request.to_rspec();
                validator
                    .validate_as(text.as_bytes(), RspecKind::Request)
                    .unwrap_or_else(|e| panic!("{file}: {e}\n{text}"));
                assert!(!request.nodes.is_empty(), "{file}: no nodes");
            }
            (Err(refusals), "translatable") => panic!("{file} refused:\n{refusals}"),
            (Ok(_), expected) => panic!("{file} translated, but the manifest says {expected}"),
            (Err(refusals), expected) => {
                let construct = expected.trim_start_matches("unsupported:");
                let text = refusals.to_string();
                assert!(
                    refusals
                        .refusals
                        .iter()
                        .any(|r| r.message.starts_with(&format!("{construct} '")) && r.line > 0),
                    "{file}: no refusal names {construct} with a line:\n{text}"
                );
                assert!(text.starts_with(&format!("{file}:")), "{text}");
            }
        }
    }
}

#[test]
fn the_opennebula_template_gets_two_sized_ubuntu_nodes() {
    let request = translate("radl/grycap-ec3__templates_ubuntu-opennebula.radl").unwrap();
    let names: Vec<&str> = request.nodes.iter().map(|n| n.client_id.as_str()).collect();
    assert_eq!(names, ["front", "wn"]);
    // memory.size>=3096m and cpu.count>=1: the smallest size that satisfies.
    assert_eq!(
        request.nodes[0].size,
        Some(Size {
            cores: 1,
            ram_mb: 3096,
            disk_gb: None
        })
    );
    assert_eq!(request.nodes[1].size.map(|s| s.ram_mb), Some(1024));
    assert_eq!(request.nodes[0].sliver_type.as_deref(), Some("default-vm"));
    // one://opennebula-host/vm-id is another cloud's image: the offered
    // Linux Ubuntu image stands for it.
    assert_eq!(
        request.nodes[0].image.as_deref(),
        Some("urn:publicid:IDN+am.example.org+image+ubuntu-22.04")
    );
    assert!(request.links.is_empty());
}

#[test]
fn instance_types_become_the_sliver_types_of_their_name() {
    let request = translate("radl/grycap-ec3__templates_ubuntu-openstack.radl").unwrap();
    let types: Vec<_> = request
        .nodes
        .iter()
        .map(|n| n.sliver_type.as_deref().unwrap())
        .collect();
    assert_eq!(types, ["Medium", "XLarge"]);
    let request = translate("radl/grycap-ec3__templates_ubuntu-ec2.radl").unwrap();
    assert!(
        request
            .nodes
            .iter()
            .all(|n| n.sliver_type.as_deref() == Some("t1.micro"))
    );
}

#[test]
fn the_gce_template_sizes_its_worker_at_512_mib() {
    let request = translate("radl/grycap-ec3__templates_ubuntu-gce.radl").unwrap();
    assert_eq!(
        request.nodes[1].size.map(|s| (s.cores, s.ram_mb)),
        Some((1, 512))
    );
}

#[test]
fn an_instance_type_not_offered_is_refused_listing_the_offered_types() {
    let text = std::fs::read_to_string(corpus().join("radl/grycap-ec3__templates_ubuntu-ec2.radl"))
        .unwrap();
    let mut offer = offer();
    offer.sliver_types.retain(|t| t.name == "default-vm");
    let refusals = radl::translate("ec2.radl", &text, &Inputs::new(), &offer).unwrap_err();
    let first = &refusals.refusals[0];
    assert_eq!(first.line, 8, "{refusals}");
    assert!(
        first
            .message
            .contains("instance_type 't1.micro' is not offered; offered sliver types: default-vm"),
        "{refusals}"
    );
}

#[test]
fn the_slurm_cluster_is_refused_for_its_ansible_recipes_and_its_include() {
    let refusals = translate("radl/grycap-ec3__templates_slurm.radl").unwrap_err();
    let text = refusals.to_string();
    assert!(
        text.contains(
            "grycap-ec3__templates_slurm.radl:39:1: configure 'front': an Ansible recipe needs a configuration manager"
        ),
        "{text}"
    );
    assert!(text.contains(":83:1: include 'slurm_misc'"), "{text}");
    assert!(text.contains("net_interface.0.dns_name"), "{text}");
}
