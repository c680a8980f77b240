//! The values of a template's outputs in a manifest: each `<tmpl:output>`
//! (namespace `geni_templates::OUTPUTS_NS`, kept from the request like
//! any extension) that refers to a node's address gets a `value` as soon
//! as the manifest knows it — the `<ip address>` of the named interface
//! (known at Allocate), or the node's control address (its address on
//! the control network, else its DNS name; known once the backend
//! reported it). Until then the reference alone is reported.

use geni_rspec::{Document, NodeId, ns};
use geni_templates::OUTPUTS_NS;
use std::collections::HashMap;

/// Fills the `value` of every address output of `doc` whose address is
/// known: interface addresses from the manifest, control addresses from
/// `control` (by node `client_id`).
pub(super) fn fill(doc: &mut Document, control: &HashMap<String, String>) {
    let root = doc.root();
    let outputs: Vec<NodeId> = doc
        .descendants(root)
        .filter(|&n| doc.is_element(n, OUTPUTS_NS, "output"))
        .collect();
    if outputs.is_empty() {
        return;
    }
    let mut addresses = interface_addresses(doc, root);
    for (node, address) in control {
        addresses.insert((node.clone(), None), address.clone());
    }
    for output in outputs {
        let Some(node) = doc.attribute(output, "node").map(|n| n.into_owned()) else {
            continue;
        };
        let interface = doc.attribute(output, "interface").map(|i| i.into_owned());
        let key = (node, interface);
        if let Some(value) = addresses.get(&key) {
            doc.set_attribute(output, "value", value);
        }
    }
}

/// The interface addresses the manifest holds: `(node, Some(interface))`
/// → its IP.
fn interface_addresses(doc: &Document, root: NodeId) -> HashMap<(String, Option<String>), String> {
    let mut out = HashMap::new();
    for node in doc.elements_named(root, ns::GENI_V3, "node") {
        let Some(client_id) = doc.attribute(node, "client_id").map(|c| c.into_owned()) else {
            continue;
        };
        for child in doc.elements(node) {
            if !doc.is_element(child, ns::GENI_V3, "interface") {
                continue;
            }
            let Some(interface) = doc.attribute(child, "client_id").map(|c| c.into_owned()) else {
                continue;
            };
            if let Some(address) = doc
                .elements_named(child, ns::GENI_V3, "ip")
                .find_map(|ip| doc.attribute(ip, "address"))
            {
                out.insert((client_id.clone(), Some(interface)), address.into_owned());
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const MANIFEST: &str = r#"<rspec xmlns="http://www.geni.net/resources/rspec/3" xmlns:tmpl="http://geni-am.org/resources/rspec/ext/templates/1" type="manifest">
  <node client_id="server" sliver_id="urn:x">
    <interface client_id="server:if0"><ip address="10.0.0.1" netmask="255.255.255.0" type="ipv4"/></interface>
  </node>
  <node client_id="other"/>
  <tmpl:outputs>
    <tmpl:output name="lan_ip" node="server" interface="server:if0"/>
    <tmpl:output name="public" node="server"/>
    <tmpl:output name="pending" node="other"/>
    <tmpl:output name="greeting" value="hello"/>
  </tmpl:outputs>
</rspec>"#;

    #[test]
    fn address_outputs_get_the_addresses_the_manifest_knows() {
        let mut doc = Document::parse(MANIFEST.as_bytes()).unwrap();
        let control = HashMap::from([("server".to_owned(), "192.0.2.7".to_owned())]);
        fill(&mut doc, &control);
        let text = String::from_utf8(doc.to_bytes()).unwrap();
        assert!(
            text.contains(r#"<tmpl:output name="lan_ip" node="server" interface="server:if0" value="10.0.0.1"/>"#),
            "{text}"
        );
        assert!(
            text.contains(r#"<tmpl:output name="public" node="server" value="192.0.2.7"/>"#),
            "{text}"
        );
        assert!(
            text.contains(r#"<tmpl:output name="pending" node="other"/>"#),
            "{text}"
        );
        assert!(
            text.contains(r#"<tmpl:output name="greeting" value="hello"/>"#),
            "{text}"
        );
    }
}
