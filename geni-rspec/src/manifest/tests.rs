//! Unit tests of the manifest builder on small hand-written requests.

use super::*;

const CM: &str = "urn:publicid:IDN+a.example+authority+cm";
const OTHER: &str = "urn:publicid:IDN+b.example+authority+cm";

fn request(body: &str) -> Document {
    let text = format!(
        "<rspec xmlns=\"http://www.geni.net/resources/rspec/3\" type=\"request\">\n{body}\n</rspec>"
    );
    Document::parse(text.as_bytes()).unwrap()
}

fn node_annotation(sliver: &str) -> NodeAnnotation {
    NodeAnnotation {
        sliver_id: sliver.to_owned(),
        ..NodeAnnotation::default()
    }
}

#[test]
fn advertisements_and_manifests_are_not_requests() {
    for kind in ["advertisement", "manifest"] {
        let text =
            format!("<rspec xmlns=\"http://www.geni.net/resources/rspec/3\"\n type=\"{kind}\"/>");
        let doc = Document::parse(text.as_bytes()).unwrap();
        match build(&doc, CM, &Annotations::default()).unwrap_err() {
            ManifestError::NotARequest { line, found } => {
                assert_eq!((line, found.as_str()), (1, kind));
            }
            other => panic!("unexpected {other}"),
        }
    }
}

#[test]
fn a_request_without_type_is_accepted_and_gets_type_manifest() {
    let doc = Document::parse(b"<rspec xmlns=\"http://www.geni.net/resources/rspec/3\"/>").unwrap();
    let manifest = build(&doc, CM, &Annotations::default()).unwrap();
    let rspec = RSpec::new(&manifest).unwrap();
    assert_eq!(rspec.rspec_type(), Some(RspecKind::Manifest));
    assert_eq!(
        rspec.schema_location().as_deref(),
        Some(
            "http://www.geni.net/resources/rspec/3 http://www.geni.net/resources/rspec/3/manifest.xsd"
        )
    );
}

#[test]
fn annotations_for_foreign_or_missing_elements_are_refused() {
    let doc = request(&format!(
        "<node client_id=\"theirs\" component_manager_id=\"{OTHER}\"/>"
    ));
    let mut annotations = Annotations::default();
    annotations.nodes.insert(
        "theirs".into(),
        node_annotation("urn:publicid:IDN+a.example+sliver+1"),
    );
    let error = build(&doc, CM, &annotations).unwrap_err();
    assert!(
        matches!(&error, ManifestError::UnknownClientId { kind: "node", client_id } if client_id == "theirs"),
        "{error}"
    );
    annotations.nodes.clear();
    annotations
        .links
        .insert("nolink".into(), LinkAnnotation::default());
    assert!(matches!(
        build(&doc, CM, &annotations).unwrap_err(),
        ManifestError::UnknownClientId { kind: "link", .. }
    ));
}

#[test]
fn an_annotated_client_id_used_twice_is_refused_with_both_lines() {
    let doc = request("<node client_id=\"n\"/>\n<node client_id=\"n\"/>");
    let mut annotations = Annotations::default();
    annotations.nodes.insert(
        "n".into(),
        node_annotation("urn:publicid:IDN+a.example+sliver+1"),
    );
    match build(&doc, CM, &annotations).unwrap_err() {
        ManifestError::DuplicateClientId {
            first_line, line, ..
        } => assert_eq!((first_line, line), (2, 3)),
        other => panic!("unexpected {other}"),
    }
}

#[test]
fn an_invalid_component_manager_is_refused() {
    let doc = request("");
    assert!(matches!(
        build(&doc, "a.example", &Annotations::default()).unwrap_err(),
        ManifestError::InvalidComponentManager(_)
    ));
}

#[test]
fn unbound_nodes_get_our_cm_and_links_between_them_name_it() {
    let doc = request(
        "<node client_id=\"a\"><interface client_id=\"a:if0\"/></node>\n\
         <node client_id=\"b\"><interface client_id=\"b:if0\"/></node>\n\
         <link client_id=\"l\"><interface_ref client_id=\"a:if0\"/><interface_ref client_id=\"b:if0\"/></link>",
    );
    let annotations = placeholder_annotations(&doc, CM).unwrap();
    let manifest = build(&doc, CM, &annotations).unwrap();
    let rspec = RSpec::new(&manifest).unwrap();
    for node in rspec.nodes() {
        assert_eq!(node.component_manager_id().as_deref(), Some(CM));
    }
    let link = rspec.link("l").unwrap();
    assert_eq!(link.component_managers().collect::<Vec<_>>(), [CM]);
    assert_eq!(link.vlantag().as_deref(), Some("0"));
    let end = link.interface_refs().next().unwrap();
    assert_eq!(
        end.sliver_id().as_deref(),
        Some("urn:publicid:IDN+a.example+sliver+a-if0")
    );
}

#[test]
fn ssh_user_prefix_is_declared_once_on_the_root() {
    let doc = request("<node client_id=\"a\"/>");
    let mut annotations = Annotations::default();
    let mut node = node_annotation("urn:publicid:IDN+a.example+sliver+a");
    node.users = vec![SshUser {
        login: "alice".into(),
        user_urn: None,
        public_keys: vec!["ssh-ed25519 AAAA".into()],
    }];
    annotations.nodes.insert("a".into(), node);
    let manifest = build(&doc, CM, &annotations).unwrap();
    let text = String::from_utf8(manifest.to_bytes()).unwrap();
    assert_eq!(text.matches("xmlns:ssh-user=").count(), 1, "{text}");
    assert!(text.contains("http://www.geni.net/resources/rspec/ext/user/1 http://www.geni.net/resources/rspec/ext/user/1/manifest.xsd"));
    assert!(
        text.contains("<ssh-user:public_key>ssh-ed25519 AAAA</ssh-user:public_key>"),
        "{text}"
    );
}

#[test]
fn the_chosen_sliver_type_is_written_only_where_the_request_named_none() {
    let doc = request(
        "<node client_id=\"free\"/>\n<node client_id=\"asked\"><sliver_type name=\"big\"/></node>",
    );
    let mut annotations = Annotations::default();
    for client_id in ["free", "asked"] {
        let mut node = node_annotation(&format!("urn:publicid:IDN+a.example+sliver+{client_id}"));
        node.sliver_type = Some("small".into());
        annotations.nodes.insert(client_id.into(), node);
    }
    let manifest = build(&doc, CM, &annotations).unwrap();
    let rspec = RSpec::new(&manifest).unwrap();
    let names = |client_id: &str| -> Vec<String> {
        rspec
            .node(client_id)
            .unwrap()
            .sliver_types()
            .filter_map(|t| t.name().map(|n| n.into_owned()))
            .collect()
    };
    assert_eq!(names("free"), ["small"]);
    assert_eq!(names("asked"), ["big"]);
    let validator = crate::validate::Validator::new().unwrap();
    let checked = validator.validate_as(&manifest.to_bytes(), RspecKind::Manifest);
    assert!(checked.is_ok(), "{checked:?}");
}

#[test]
fn the_granted_size_replaces_the_requested_xen_and_reads_back() {
    let doc = request(
        "<node client_id=\"sized\"><sliver_type name=\"vm\"><emulab:xen xmlns:emulab=\"http://www.protogeni.net/resources/rspec/ext/emulab/1\" cores=\"2\" ram=\"999\"/></sliver_type></node>\n<node client_id=\"plain\"/>",
    );
    let mut annotations = Annotations::default();
    for (client_id, ram_mb) in [("sized", 2048), ("plain", 512)] {
        let mut node = node_annotation(&format!("urn:publicid:IDN+a.example+sliver+{client_id}"));
        node.sliver_type = Some("vm".into());
        node.size = Some(crate::view::VmSize {
            cores: 2,
            ram_mb,
            disk_gb: (client_id == "sized").then_some(20),
        });
        annotations.nodes.insert(client_id.into(), node);
    }
    let manifest = build(&doc, CM, &annotations).unwrap();
    let rspec = RSpec::new(&manifest).unwrap();
    let size = |client_id: &str| {
        let node = rspec.node(client_id).unwrap();
        let sliver_type = node.sliver_type().unwrap();
        let xen = sliver_type.xen().expect("an emulab:xen");
        let read = |v: Option<std::borrow::Cow<'_, str>>| v.map(|v| v.into_owned());
        (read(xen.cores()), read(xen.ram()), read(xen.disk()))
    };
    let text = |v: &str| Some(v.to_owned());
    assert_eq!(size("sized"), (text("2"), text("2048"), text("20")));
    assert_eq!(size("plain"), (text("2"), text("512"), None));
    let bytes = manifest.to_bytes();
    assert_eq!(
        String::from_utf8_lossy(&bytes).matches(":xen ").count(),
        2,
        "the requested xen replaced, not kept beside: {}",
        String::from_utf8_lossy(&bytes)
    );
    let validator = crate::validate::Validator::new().unwrap();
    let checked = validator.validate_as(&bytes, RspecKind::Manifest);
    assert!(checked.is_ok(), "{checked:?}");
}

#[test]
fn an_observed_address_replaces_the_requested_one_and_none_keeps_it() {
    let doc = request(
        "<node client_id=\"a\"><interface client_id=\"a:if0\"><ip address=\"10.1.1.1\" netmask=\"255.255.255.0\" type=\"ipv4\"/></interface></node>\n<node client_id=\"b\"><interface client_id=\"b:if0\"><ip address=\"10.1.1.2\" type=\"ipv4\"/></interface></node>",
    );
    let mut annotations = Annotations::default();
    for client_id in ["a", "b"] {
        let sliver = format!("urn:publicid:IDN+a.example+sliver+{client_id}");
        annotations
            .nodes
            .insert(client_id.into(), node_annotation(&sliver));
    }
    annotations.interfaces.insert(
        "a:if0".into(),
        InterfaceAnnotation {
            ips: vec![IpAddress::ipv4("10.20.1.34", "255.255.255.0")],
            ..InterfaceAnnotation::default()
        },
    );
    annotations
        .interfaces
        .insert("b:if0".into(), InterfaceAnnotation::default());
    let manifest = build(&doc, CM, &annotations).unwrap();
    let rspec = RSpec::new(&manifest).unwrap();
    let addresses = |client_id: &str| -> Vec<String> {
        let node = rspec.node(client_id).unwrap();
        let interface = node.interfaces().next().unwrap();
        interface
            .ips()
            .filter_map(|ip| ip.address().map(|a| a.into_owned()))
            .collect()
    };
    assert_eq!(
        addresses("a"),
        ["10.20.1.34"],
        "only the address the VM has, not the one asked for"
    );
    assert_eq!(
        addresses("b"),
        ["10.1.1.2"],
        "nothing observed yet: the requested address stays"
    );
}

#[test]
fn only_our_links_report_ends_that_no_node_declares() {
    let doc = request(&format!(
        "<node client_id=\"a\"><interface client_id=\"a:0\"/></node>\n\
         <link client_id=\"mine\"><interface_ref client_id=\"a:0\"/><interface_ref client_id=\"gone\"/></link>\n\
         <link client_id=\"named\"><component_manager name=\"{CM}\"/><interface_ref client_id=\"far\"/></link>\n\
         <link client_id=\"theirs\"><component_manager name=\"{OTHER}\"/><interface_ref client_id=\"stp1\"/></link>"
    ));
    let rspec = RSpec::new(&doc).unwrap();
    let ends: Vec<(String, String, u32)> = Ownership::of(&rspec, CM)
        .unknown_ends(&rspec)
        .into_iter()
        .map(|(link, end)| {
            (
                link.client_id().unwrap().into_owned(),
                end.client_id().unwrap().into_owned(),
                end.line(),
            )
        })
        .collect();
    assert_eq!(
        ends,
        [
            ("mine".to_owned(), "gone".to_owned(), 3),
            ("named".to_owned(), "far".to_owned(), 4)
        ]
    );
}
