//! [`Request::to_rspec`]: a request written as a GENI v3 request RSpec —
//! nodes with `client_id`, `exclusive="false"`, `sliver_type` with its
//! `disk_image` and Emulab `<emulab:xen cores ram disk>` size (as the
//! aggregate reads it), interfaces with IPv4 addresses, LAN links by
//! `interface_ref`, `install`/`execute` services — and the template's
//! outputs in this project's extension namespace [`OUTPUTS_NS`]:
//!
//! ```xml
//! <tmpl:outputs xmlns:tmpl="http://geni-am.org/resources/rspec/ext/templates/1">
//!   <tmpl:output name="server_ip" node="server" interface="server:if0">
//!     <tmpl:description>…</tmpl:description>
//!   </tmpl:output>
//!   <tmpl:output name="greeting" value="hello"/>
//! </tmpl:outputs>
//! ```
//!
//! An output is a literal (`value`) or the address of a node (`node`,
//! and `interface` when one is meant; without it, the node's control
//! address). The manifest keeps the element like any extension.

use crate::{Node, OutputValue, Request};
use std::fmt::Write;

/// The namespace of the outputs extension element.
pub const OUTPUTS_NS: &str = "http://geni-am.org/resources/rspec/ext/templates/1";

const GENI_V3: &str = "http://www.geni.net/resources/rspec/3";
const EMULAB: &str = "http://www.protogeni.net/resources/rspec/ext/emulab/1";
const XSI: &str = "http://www.w3.org/2001/XMLSchema-instance";

impl Request {
    /// The request as a GENI v3 request RSpec document.
    pub fn to_rspec(&self) -> String {
        let mut out = String::new();
        out.push_str("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        let _ = writeln!(
            out,
            "<rspec xmlns=\"{GENI_V3}\" xmlns:emulab=\"{EMULAB}\" xmlns:tmpl=\"{OUTPUTS_NS}\" xmlns:xsi=\"{XSI}\" xsi:schemaLocation=\"{GENI_V3} {GENI_V3}/request.xsd\" type=\"request\">"
        );
        for node in &self.nodes {
            write_node(&mut out, node);
        }
        for link in &self.links {
            let _ = writeln!(out, "  <link client_id=\"{}\">", escape(&link.client_id));
            for interface in &link.interfaces {
                let _ = writeln!(
                    out,
                    "    <interface_ref client_id=\"{}\"/>",
                    escape(interface)
                );
            }
            out.push_str("  </link>\n");
        }
        if !self.outputs.is_empty() {
            out.push_str("  <tmpl:outputs>\n");
            for output in &self.outputs {
                let _ = write!(out, "    <tmpl:output name=\"{}\"", escape(&output.name));
                match &output.value {
                    OutputValue::Literal(value) => {
                        let _ = write!(out, " value=\"{}\"", escape(value));
                    }
                    OutputValue::Address { node, interface } => {
                        let _ = write!(out, " node=\"{}\"", escape(node));
                        if let Some(interface) = interface {
                            let _ = write!(out, " interface=\"{}\"", escape(interface));
                        }
                    }
                }
                match &output.description {
                    Some(description) => {
                        let _ = writeln!(
                            out,
                            ">\n      <tmpl:description>{}</tmpl:description>\n    </tmpl:output>",
                            escape(description)
                        );
                    }
                    None => out.push_str("/>\n"),
                }
            }
            out.push_str("  </tmpl:outputs>\n");
        }
        out.push_str("</rspec>\n");
        out
    }
}

fn write_node(out: &mut String, node: &Node) {
    let _ = writeln!(
        out,
        "  <node client_id=\"{}\" exclusive=\"false\">",
        escape(&node.client_id)
    );
    if node.sliver_type.is_some() || node.image.is_some() || node.size.is_some() {
        let name = node
            .sliver_type
            .as_deref()
            .map(|t| format!(" name=\"{}\"", escape(t)))
            .unwrap_or_default();
        let _ = writeln!(out, "    <sliver_type{name}>");
        if let Some(image) = &node.image {
            let _ = writeln!(out, "      <disk_image name=\"{}\"/>", escape(image));
        }
        if let Some(size) = &node.size {
            let disk = size
                .disk_gb
                .map(|d| format!(" disk=\"{d}\""))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "      <emulab:xen cores=\"{}\" ram=\"{}\"{disk}/>",
                size.cores, size.ram_mb
            );
        }
        out.push_str("    </sliver_type>\n");
    }
    for interface in &node.interfaces {
        match &interface.ipv4 {
            Some(ip) => {
                let _ = writeln!(
                    out,
                    "    <interface client_id=\"{}\">\n      <ip address=\"{}\" netmask=\"{}\" type=\"ipv4\"/>\n    </interface>",
                    escape(&interface.client_id),
                    ip.address,
                    ip.netmask
                );
            }
            None => {
                let _ = writeln!(
                    out,
                    "    <interface client_id=\"{}\"/>",
                    escape(&interface.client_id)
                );
            }
        }
    }
    if !node.installs.is_empty() || !node.executes.is_empty() {
        out.push_str("    <services>\n");
        for install in &node.installs {
            let _ = writeln!(
                out,
                "      <install url=\"{}\" install_path=\"{}\"/>",
                escape(&install.url),
                escape(&install.install_path)
            );
        }
        for execute in &node.executes {
            let _ = writeln!(
                out,
                "      <execute shell=\"{}\" command=\"{}\"/>",
                escape(&execute.shell),
                escape(&execute.command)
            );
        }
        out.push_str("    </services>\n");
    }
    out.push_str("  </node>\n");
}

/// Text escaped for an attribute or element, line ends kept as
/// character references so attribute values keep them.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            '\t' => out.push_str("&#9;"),
            c if (c as u32) < 0x20 => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::{Execute, Interface, Ipv4Address, Link, Node, Output, OutputValue, Request, Size};
    use geni_rspec::{RSpec, RspecKind, Validator};

    fn sample() -> Request {
        let ip = |last| Ipv4Address {
            address: std::net::Ipv4Addr::new(10, 0, 0, last),
            netmask: std::net::Ipv4Addr::new(255, 255, 255, 0),
        };
        let node = |name: &str, last| Node {
            client_id: name.into(),
            sliver_type: Some("default-vm".into()),
            size: Some(Size {
                cores: 2,
                ram_mb: 3072,
                disk_gb: Some(10),
            }),
            image: Some("urn:publicid:IDN+am.example+image+ubuntu-22.04".into()),
            interfaces: vec![Interface {
                client_id: format!("{name}:if0"),
                ipv4: Some(ip(last)),
            }],
            installs: Vec::new(),
            executes: vec![Execute {
                shell: "bash".into(),
                command: "#!/bin/bash\necho \"<hi>\" & true".into(),
            }],
        };
        Request {
            nodes: vec![node("front", 1), node("wn-1", 2)],
            links: vec![Link {
                client_id: "private".into(),
                interfaces: vec!["front:if0".into(), "wn-1:if0".into()],
            }],
            outputs: vec![Output {
                name: "front_ip".into(),
                description: Some("the front's address".into()),
                value: OutputValue::Address {
                    node: "front".into(),
                    interface: Some("front:if0".into()),
                },
            }],
        }
    }

    #[test]
    fn a_request_is_a_valid_geni_v3_request_rspec() {
        let text = sample().to_rspec();
        let validator = Validator::new().unwrap();
        let (_, doc) = validator
            .validate_and_parse(text.as_bytes(), RspecKind::Request)
            .unwrap_or_else(|e| panic!("{e}\n{text}"));
        let root = RSpec::new(&doc).unwrap();
        let nodes: Vec<_> = root.nodes().collect();
        assert_eq!(nodes.len(), 2);
        assert_eq!(nodes[0].client_id().as_deref(), Some("front"));
        assert!(text.contains("<emulab:xen cores=\"2\" ram=\"3072\" disk=\"10\"/>"));
        assert!(
            text.contains("<ip address=\"10.0.0.2\" netmask=\"255.255.255.0\" type=\"ipv4\"/>")
        );
        assert!(
            text.contains("command=\"#!/bin/bash&#10;echo &quot;&lt;hi&gt;&quot; &amp; true\"")
        );
        assert!(
            text.contains("<tmpl:output name=\"front_ip\" node=\"front\" interface=\"front:if0\">")
        );
    }

    #[test]
    fn an_empty_request_is_still_a_valid_rspec() {
        let text = Request::default().to_rspec();
        Validator::new()
            .unwrap()
            .validate_as(text.as_bytes(), RspecKind::Request)
            .unwrap_or_else(|e| panic!("{e}\n{text}"));
    }
}
