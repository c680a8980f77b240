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
//! address). The manifest keeps the element like any extension. The
//! document is built with geni-rspec's tree, which escapes and indents.

use crate::{Node, OutputValue, Request};
use geni_rspec::{Document, NodeId};

/// The namespace of the outputs extension element.
pub const OUTPUTS_NS: &str = "http://geni-am.org/resources/rspec/ext/templates/1";

const GENI_V3: &str = "http://www.geni.net/resources/rspec/3";
const EMULAB: &str = "http://www.protogeni.net/resources/rspec/ext/emulab/1";

/// The document element every request starts from, with the namespaces
/// its elements use.
const SKELETON: &str = concat!(
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n",
    "<rspec xmlns=\"http://www.geni.net/resources/rspec/3\"",
    " xmlns:emulab=\"http://www.protogeni.net/resources/rspec/ext/emulab/1\"",
    " xmlns:tmpl=\"http://geni-am.org/resources/rspec/ext/templates/1\"",
    " xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\"",
    " xsi:schemaLocation=\"http://www.geni.net/resources/rspec/3 http://www.geni.net/resources/rspec/3/request.xsd\"",
    " type=\"request\">\n</rspec>\n"
);

impl Request {
    /// The request as a GENI v3 request RSpec document.
    pub fn to_rspec(&self) -> String {
        let Ok(mut doc) = Document::parse(SKELETON.as_bytes()) else {
            // The skeleton is a constant that parses.
            return String::new();
        };
        let root = doc.root();
        let mut w = Writer { doc: &mut doc };
        for node in &self.nodes {
            write_node(&mut w, root, node);
        }
        for link in &self.links {
            let l = w.element(root, GENI_V3, "link", &[("client_id", &link.client_id)]);
            for interface in &link.interfaces {
                w.element(l, GENI_V3, "interface_ref", &[("client_id", interface)]);
            }
        }
        if !self.outputs.is_empty() {
            let outputs = w.element(root, OUTPUTS_NS, "outputs", &[]);
            for output in &self.outputs {
                let mut attributes = vec![("name", output.name.as_str())];
                match &output.value {
                    OutputValue::Literal(value) => attributes.push(("value", value)),
                    OutputValue::Address { node, interface } => {
                        attributes.push(("node", node));
                        if let Some(interface) = interface {
                            attributes.push(("interface", interface));
                        }
                    }
                }
                let o = w.element(outputs, OUTPUTS_NS, "output", &attributes);
                if let Some(description) = &output.description {
                    let d = w.element(o, OUTPUTS_NS, "description", &[]);
                    w.doc.append_text(d, &xml_chars(description));
                }
            }
        }
        String::from_utf8_lossy(&doc.to_bytes()).into_owned()
    }
}

/// Appends elements to a document, each on its own line.
struct Writer<'d> {
    doc: &'d mut Document,
}

impl Writer<'_> {
    /// A new last child `local` of `parent` in namespace `ns` with
    /// `attributes`.
    fn element(
        &mut self,
        parent: NodeId,
        ns: &str,
        local: &str,
        attributes: &[(&str, &str)],
    ) -> NodeId {
        let prefix = match ns {
            EMULAB => "emulab",
            OUTPUTS_NS => "tmpl",
            _ => "",
        };
        let id = self.doc.append_element(parent, ns, prefix, local);
        for (name, value) in attributes {
            self.doc.set_attribute(id, name, &xml_chars(value));
        }
        id
    }
}

fn write_node(w: &mut Writer<'_>, root: NodeId, node: &Node) {
    let n = w.element(
        root,
        GENI_V3,
        "node",
        &[("client_id", &node.client_id), ("exclusive", "false")],
    );
    if node.sliver_type.is_some() || node.image.is_some() || node.size.is_some() {
        let name: Vec<(&str, &str)> = node
            .sliver_type
            .as_deref()
            .map(|t| ("name", t))
            .into_iter()
            .collect();
        let sliver_type = w.element(n, GENI_V3, "sliver_type", &name);
        if let Some(image) = &node.image {
            w.element(sliver_type, GENI_V3, "disk_image", &[("name", image)]);
        }
        if let Some(size) = &node.size {
            let (cores, ram) = (size.cores.to_string(), size.ram_mb.to_string());
            let disk = size.disk_gb.map(|d| d.to_string());
            let mut attributes = vec![("cores", cores.as_str()), ("ram", ram.as_str())];
            if let Some(disk) = &disk {
                attributes.push(("disk", disk));
            }
            w.element(sliver_type, EMULAB, "xen", &attributes);
        }
    }
    for interface in &node.interfaces {
        let i = w.element(
            n,
            GENI_V3,
            "interface",
            &[("client_id", &interface.client_id)],
        );
        if let Some(ip) = &interface.ipv4 {
            let (address, netmask) = (ip.address.to_string(), ip.netmask.to_string());
            w.element(
                i,
                GENI_V3,
                "ip",
                &[
                    ("address", &address),
                    ("netmask", &netmask),
                    ("type", "ipv4"),
                ],
            );
        }
    }
    if !node.installs.is_empty() || !node.executes.is_empty() {
        let services = w.element(n, GENI_V3, "services", &[]);
        for install in &node.installs {
            w.element(
                services,
                GENI_V3,
                "install",
                &[
                    ("url", &install.url),
                    ("install_path", &install.install_path),
                ],
            );
        }
        for execute in &node.executes {
            w.element(
                services,
                GENI_V3,
                "execute",
                &[("shell", &execute.shell), ("command", &execute.command)],
            );
        }
    }
}

/// `text` without the control characters XML 1.0 cannot carry.
fn xml_chars(text: &str) -> std::borrow::Cow<'_, str> {
    if text
        .chars()
        .any(|c| (c as u32) < 0x20 && !matches!(c, '\n' | '\r' | '\t'))
    {
        text.chars()
            .filter(|c| (*c as u32) >= 0x20 || matches!(c, '\n' | '\r' | '\t'))
            .collect::<String>()
            .into()
    } else {
        text.into()
    }
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
        assert!(text.contains("command=\"#!/bin/bash&#10;echo &quot;&lt;hi>&quot; &amp; true\""));
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
