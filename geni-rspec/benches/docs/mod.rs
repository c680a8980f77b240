//! Generators of realistic RSpecs for benches: an InstaGENI-style
//! advertisement and a jFed-style request, shaped like the corpus documents
//! (the GENI portal's InstaGENI advertisements and the iof-tools two-node
//! request of the shared corpus), of any size.

use std::fmt::Write;

/// Number of `<node>` elements in the benchmark advertisement.
pub const AD_NODES: usize = 10_000;

/// Number of `<node>` elements in the benchmark request.
pub const REQUEST_NODES: usize = 1_000;

const SITE: &str = "instageni.example.edu";

/// An advertisement with `nodes` nodes (hardware types, sliver types with
/// disk images, location, interfaces, availability, emulab extensions) and
/// one link per two nodes.
pub fn advertisement(nodes: usize) -> String {
    let mut out = String::with_capacity(nodes * 2200 + 4096);
    out.push_str(concat!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n",
        "<!-- Resources at AM:\n\tURN: urn:publicid:IDN+instageni.example.edu+authority+cm\n -->\n",
        "<rspec xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" ",
        "xmlns=\"http://www.geni.net/resources/rspec/3\" ",
        "xmlns:emulab=\"http://www.protogeni.net/resources/rspec/ext/emulab/1\" ",
        "xsi:schemaLocation=\"http://www.geni.net/resources/rspec/3 ",
        "http://www.geni.net/resources/rspec/3/ad.xsd\" type=\"advertisement\" ",
        "generated=\"2026-11-21T12:00:00Z\" expires=\"2026-11-21T12:00:00Z\">\n",
    ));
    for i in 0..nodes {
        ad_node(&mut out, i);
    }
    for i in (0..nodes.saturating_sub(1)).step_by(2) {
        ad_link(&mut out, i, i + 1);
    }
    out.push_str("</rspec>\n");
    out
}

fn ad_node(out: &mut String, i: usize) {
    let cm = format!("urn:publicid:IDN+{SITE}+authority+cm");
    let _ = writeln!(
        out,
        "<node component_manager_id=\"{cm}\" component_name=\"pc{i}\"  component_id=\"urn:publicid:IDN+{SITE}+node+pc{i}\"  exclusive=\"{}\" >",
        !i.is_multiple_of(3)
    );
    for (name, slots) in [("pc", "1"), ("dl360", "1"), ("pcvm", "71")] {
        let _ = writeln!(
            out,
            "  <hardware_type name=\"{name}\">\n    <emulab:node_type type_slots=\"{slots}\" />\n  </hardware_type>"
        );
    }
    for sliver in ["raw-pc", "emulab-xen"] {
        let _ = writeln!(out, "  <sliver_type name=\"{sliver}\">");
        for (image, os, version, description) in [
            ("UBUNTU18-64-STD", "Linux", "18.04", "Ubuntu 18.04 LTS"),
            ("CENTOS7-64-STD", "Linux", "7", "CentOS 7 &amp; tools"),
            ("FBSD112-64-STD", "FreeBSD", "11.2", "FreeBSD 11.2 64-bit"),
        ] {
            let _ = writeln!(
                out,
                "<disk_image name=\"urn:publicid:IDN+{SITE}+image+emulab-ops:{image}\" os=\"{os}\" version=\"{version}\" description=\"{description}\" />"
            );
        }
        out.push_str("  </sliver_type>\n");
    }
    let _ = writeln!(
        out,
        "  <available now=\"{}\" />\n  <location country=\"US\" longitude=\"-89.41\" latitude=\"43.075\" />\n  <emulab:trivial_bandwidth value=\"1000000\" />",
        !i.is_multiple_of(4)
    );
    for (eth, role) in [(0, "control"), (1, "experimental"), (2, "experimental")] {
        let _ = writeln!(
            out,
            "  <interface component_id=\"urn:publicid:IDN+{SITE}+interface+pc{i}:eth{eth}\" role=\"{role}\" >\n    <emulab:interface name=\"eth{eth}\"/>\n  </interface>"
        );
    }
    out.push_str(concat!(
        "  <emulab:fd name=\"pcshared\" weight=\"1.0\"  violatable=\"true\" />\n",
        "  <emulab:fd name=\"cpu\" weight=\"2094\"  violatable=\"true\"  local_operator=\"+\" />\n",
        "</node>\n",
    ));
}

fn ad_link(out: &mut String, a: usize, b: usize) {
    let _ = writeln!(
        out,
        "<link component_name=\"link-pc{a}-pc{b}\" component_id=\"urn:publicid:IDN+{SITE}+link+link-pc{a}:eth1-pc{b}:eth1\" >\n<component_manager name=\"urn:publicid:IDN+{SITE}+authority+cm\" />\n  <interface_ref component_id=\"urn:publicid:IDN+{SITE}+interface+pc{a}:eth1\"/>\n  <interface_ref component_id=\"urn:publicid:IDN+{SITE}+interface+pc{b}:eth1\"/>\n<property source_id=\"urn:publicid:IDN+{SITE}+interface+pc{a}:eth1\" dest_id=\"urn:publicid:IDN+{SITE}+interface+pc{b}:eth1\"  capacity=\"1000000\" latency=\"0\" packet_loss=\"0\" />\n  <link_type name=\"lan\" />\n</link>"
    );
}

/// A jFed request with `nodes` nodes (sliver type with disk image, jFed
/// location, one interface with an IP) joined pairwise by links.
pub fn request(nodes: usize) -> String {
    let mut out = String::with_capacity(nodes * 700 + 2048);
    out.push_str(concat!(
        "<?xml version='1.0'?>\n",
        "<rspec xmlns=\"http://www.geni.net/resources/rspec/3\" type=\"request\" ",
        "generated_by=\"jFed RSpec Editor\" generated=\"2026-11-21T10:15:32.780+01:00\" ",
        "xmlns:emulab=\"http://www.protogeni.net/resources/rspec/ext/emulab/1\" ",
        "xmlns:jfed=\"http://jfed.iminds.be/rspec/ext/jfed/1\" ",
        "xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" ",
        "xsi:schemaLocation=\"http://www.geni.net/resources/rspec/3 ",
        "http://www.geni.net/resources/rspec/3/request.xsd \">\n",
    ));
    for i in 0..nodes {
        let _ = writeln!(
            out,
            "  <node client_id=\"node{i}\" exclusive=\"true\" component_manager_id=\"urn:publicid:IDN+{SITE}+authority+cm\">\n    <sliver_type name=\"raw-pc\">\n      <disk_image name=\"urn:publicid:IDN+{SITE}+image+emulab-ops:UBUNTU18-64-STD\"/>\n    </sliver_type>\n    <location xmlns=\"http://jfed.iminds.be/rspec/ext/jfed/1\" x=\"{}.0\" y=\"{}.0\"/>\n    <interface client_id=\"node{i}:if0\">\n      <ip address=\"10.{}.{}.{}\" netmask=\"255.255.255.0\" type=\"ipv4\"/>\n    </interface>\n  </node>",
            (i % 40) * 25,
            (i / 40) * 25,
            i / 65536 % 256,
            i / 256 % 256,
            i % 256 + 1,
        );
    }
    for i in (0..nodes.saturating_sub(1)).step_by(2) {
        let _ = writeln!(
            out,
            "  <link client_id=\"link{i}\">\n    <component_manager name=\"urn:publicid:IDN+{SITE}+authority+cm\"/>\n    <interface_ref client_id=\"node{i}:if0\"/>\n    <interface_ref client_id=\"node{}:if0\"/>\n    <link_type name=\"lan\"/>\n  </link>",
            i + 1
        );
    }
    out.push_str("</rspec>\n");
    out
}
