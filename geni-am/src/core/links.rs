//! What a provisioned node needs besides its VM, read from the stored
//! request: the link networks it is attached to (one NIC per interface on
//! a LAN link of this aggregate, in interface order, with the address the
//! request asks for) and its `<install>` and `<execute>` services. Also the
//! sliver URNs of links and interfaces, shared with the manifest, and the
//! check at Allocate that a link's requested addresses can be had.

use super::manifest::urn_name;
use crate::core::types::AddressRange;
use crate::geni::AmError;
use geni_am_backend::{ExecuteSpec, InstallSpec};
use geni_rspec::manifest::ownership::same_urn;
use geni_rspec::manifest::urn_authority;
use geni_rspec::tree::Document;
use geni_rspec::view::{Interface, Ip, Link, Node, RSpec};
use std::collections::HashMap;
use std::net::Ipv4Addr;

/// The shell an `<execute>` without `shell` runs in.
const DEFAULT_SHELL: &str = "sh";

/// Link types that are point-to-point tunnels between aggregates, not LANs
/// this aggregate can build with a network of its own.
const TUNNEL_LINK_TYPES: [&str; 2] = ["gre-tunnel", "egre-tunnel"];

/// One link sliver: the network of one link of a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkSliver {
    /// The link's sliver URN, the tag its network is created with.
    pub urn: String,
    /// The link's `client_id`, the network's name.
    pub client_id: String,
    /// The IPv4 addresses the request asks for on the link's interfaces
    /// (of every node), in the order of its `interface_ref`s: the link's
    /// network must hold them.
    pub addresses: Vec<String>,
}

/// One interface of a node on a link network.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedNic {
    /// The interface's `client_id`.
    pub interface: String,
    /// The link it is on.
    pub link: LinkSliver,
    /// The IPv4 address the request asks for.
    pub ip: Option<String>,
    /// The netmask the request gives with it.
    pub netmask: Option<String>,
}

/// What one node of a request asks for besides its VM.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NodePlan {
    /// Its NICs on link networks, in interface order.
    pub nics: Vec<PlannedNic>,
    /// Its `<install>` services, in order.
    pub install: Vec<InstallSpec>,
    /// Its `<execute>` services, in order.
    pub execute: Vec<ExecuteSpec>,
}

/// The plan of node `client_id` of the stored request `document` (id
/// `request_id`), at the aggregate of `authority`. A node the request does
/// not hold gets an empty plan.
pub fn plan_node(
    document: &str,
    authority: &str,
    request_id: &str,
    client_id: &str,
) -> Result<NodePlan, String> {
    let doc = Document::parse(document.as_bytes())
        .map_err(|e| format!("stored request {request_id} does not parse: {e}"))?;
    let root = RSpec::new(&doc).map_err(|e| e.to_string())?;
    let Some(node) = root
        .nodes()
        .find(|n| n.client_id().as_deref() == Some(client_id))
    else {
        return Ok(NodePlan::default());
    };
    let links: Vec<Link<'_>> = root
        .links()
        .filter(|l| is_local_lan(l, authority))
        .collect();
    let requested = interface_addresses(&root);
    let mut plan = services_of(&node);
    for interface in node.interfaces() {
        let Some(interface_id) = interface.client_id() else {
            continue;
        };
        let on_link = links.iter().find(|l| {
            l.interface_refs()
                .any(|r| r.client_id().as_deref() == Some(interface_id.as_ref()))
        });
        let Some(link_id) = on_link.and_then(Link::client_id) else {
            continue;
        };
        let ip = ipv4(&interface);
        let addresses = on_link
            .map(|l| link_addresses(&requested, l))
            .unwrap_or_default();
        plan.nics.push(PlannedNic {
            interface: interface_id.into_owned(),
            link: LinkSliver {
                urn: link_sliver_urn(authority, request_id, &link_id),
                client_id: link_id.into_owned(),
                addresses,
            },
            ip: ip
                .as_ref()
                .and_then(|ip| ip.address())
                .map(|a| a.trim().to_owned()),
            netmask: ip
                .as_ref()
                .and_then(|ip| ip.netmask())
                .map(|m| m.trim().to_owned()),
        });
    }
    Ok(plan)
}

/// What one LAN of this aggregate asks for: its `client_id`, the line it
/// is on and the IPv4 addresses requested on its interfaces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkRequest {
    /// The link's `client_id`.
    pub client_id: String,
    /// The line of its `<link>`.
    pub line: u32,
    /// The addresses requested on its interfaces, in the order of its
    /// `interface_ref`s.
    pub addresses: Vec<String>,
}

/// The LANs of this aggregate (`authority`) in `root` that ask for
/// addresses, in document order.
pub fn requested_addresses(root: &RSpec<'_>, authority: &str) -> Vec<LinkRequest> {
    let requested = interface_addresses(root);
    root.links()
        .filter(|l| is_local_lan(l, authority))
        .map(|l| LinkRequest {
            client_id: l.client_id().unwrap_or_default().into_owned(),
            line: l.line(),
            addresses: link_addresses(&requested, &l),
        })
        .filter(|l| !l.addresses.is_empty())
        .collect()
}

/// Refuses (BADARGS) a link whose requested address lies outside every
/// range of `ranges`, those of the network links are reserved from: no
/// reservation could hold it, and a VM never gets another address than
/// the one asked for. `None` (a backend that gives any address): nothing
/// is refused.
pub fn check_addresses(
    links: &[LinkRequest],
    ranges: Option<&[AddressRange]>,
) -> Result<(), AmError> {
    let Some(ranges) = ranges else {
        return Ok(());
    };
    for link in links {
        for text in &link.addresses {
            let inside = text
                .parse::<Ipv4Addr>()
                .is_ok_and(|ip| ranges.iter().any(|r| r.contains(ip)));
            if inside {
                continue;
            }
            let offered = match ranges {
                [] => "none".to_owned(),
                _ => ranges
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(", "),
            };
            return Err(AmError::bad_args(format!(
                "line {}: link `{}` asks for address {text}, which is outside every address range this aggregate reserves links from ({offered}); ask for addresses in these ranges, or for none to have addresses chosen",
                link.line, link.client_id
            )));
        }
    }
    Ok(())
}

/// The first IPv4 `<ip>` of an interface.
fn ipv4<'a>(interface: &Interface<'a>) -> Option<Ip<'a>> {
    interface
        .ips()
        .find(|ip| ip.kind().is_none_or(|k| k.eq_ignore_ascii_case("ipv4")))
}

/// The IPv4 address each interface of the request asks for, by the
/// interface's `client_id` (the first interface of a `client_id` wins),
/// read once per request so that resolving every link costs one lookup per
/// `interface_ref`, however many nodes and links a request holds.
fn interface_addresses(root: &RSpec<'_>) -> HashMap<String, String> {
    let mut addresses = HashMap::new();
    for interface in root
        .nodes()
        .flat_map(|node| node.interfaces().collect::<Vec<_>>())
    {
        let (Some(id), Some(address)) = (
            interface.client_id(),
            ipv4(&interface).and_then(|ip| ip.address()),
        ) else {
            continue;
        };
        addresses
            .entry(id.into_owned())
            .or_insert_with(|| address.trim().to_owned());
    }
    addresses
}

/// The IPv4 addresses requested on the interfaces `link` refers to, in
/// the order of its `interface_ref`s, from the request's `requested`.
fn link_addresses(requested: &HashMap<String, String>, link: &Link<'_>) -> Vec<String> {
    link.interface_refs()
        .filter_map(|r| requested.get(r.client_id()?.as_ref()).cloned())
        .collect()
}

/// True when `link` is a LAN of this aggregate: it names no component
/// manager or one of `authority`, and is not a tunnel.
fn is_local_lan(link: &Link<'_>, authority: &str) -> bool {
    let mut managers = link.component_managers().peekable();
    let ours = managers.peek().is_none()
        || managers.any(|cm| urn_authority(&cm).is_some_and(|a| same_urn(a, authority)));
    let tunnel = link.link_types().any(|t| {
        t.name()
            .is_some_and(|name| TUNNEL_LINK_TYPES.contains(&name.trim()))
    });
    ours && !tunnel
}

/// The `<install>` and `<execute>` services of `node`; entries missing
/// their required attribute (`url` and `install_path`, `command`) are
/// left out.
fn services_of(node: &Node<'_>) -> NodePlan {
    let mut plan = NodePlan::default();
    let Some(services) = node.services() else {
        return plan;
    };
    plan.install = services
        .installs()
        .filter_map(|i| {
            Some(InstallSpec {
                url: i.url()?.into_owned(),
                install_path: i.install_path()?.into_owned(),
            })
        })
        .collect();
    plan.execute = services
        .executes()
        .filter_map(|e| {
            Some(ExecuteSpec {
                shell: e
                    .shell()
                    .map_or_else(|| DEFAULT_SHELL.to_owned(), |s| s.into_owned()),
                command: e.command()?.into_owned(),
            })
        })
        .collect();
    plan
}

/// The sliver URN of link `client_id` of request `request_id`: stable for
/// the request, `urn:publicid:IDN+<authority>+sliver+<request id>.<client_id>`
/// with the `client_id` reduced to URN-safe characters.
pub fn link_sliver_urn(authority: &str, request_id: &str, client_id: &str) -> String {
    let name = urn_name(client_id);
    format!("urn:publicid:IDN+{authority}+sliver+{request_id}.{name}")
}

/// The sliver URN of interface `client_id` of the node whose sliver is
/// `node_sliver`: the node's URN followed by `:` and the `client_id`
/// reduced to URN-safe characters.
pub fn interface_sliver_urn(node_sliver: &str, client_id: &str) -> String {
    let name = urn_name(client_id);
    format!("{node_sliver}:{name}")
}

#[cfg(test)]
mod tests {
    use super::*;

    const REQUEST: &str = r#"<rspec xmlns="http://www.geni.net/resources/rspec/3" type="request">
<node client_id="a"><sliver_type name="vm"/>
<services><install url="http://x.example/a.tgz" install_path="/local"/><install url="http://x.example/b.tgz"/>
<execute command="sudo /local/run.sh"/><execute shell="bash" command="echo $HOME"/></services>
<interface client_id="a:if0"><ip address="10.1.1.1" netmask="255.255.255.0" type="ipv4"/></interface>
<interface client_id="a:if1"/><interface client_id="a:if2"/></node>
<node client_id="b"><sliver_type name="vm"/><interface client_id="b:if0"/><interface client_id="b:if1"/></node>
<link client_id="lan 0"><interface_ref client_id="a:if1"/><interface_ref client_id="b:if0"/></link>
<link client_id="link-1"><interface_ref client_id="a:if0"/><interface_ref client_id="b:if1"/></link>
<link client_id="tun"><link_type name="gre-tunnel"/><interface_ref client_id="a:if2"/></link>
<link client_id="far"><component_manager name="urn:publicid:IDN+other.net+authority+cm"/><interface_ref client_id="b:if1"/></link>
</rspec>"#;

    #[test]
    fn nics_follow_interface_order_on_local_lans_only() {
        let plan = plan_node(REQUEST, "am.test", "r1", "a").unwrap();
        let links: Vec<&str> = plan
            .nics
            .iter()
            .map(|n| n.link.client_id.as_str())
            .collect();
        assert_eq!(links, ["link-1", "lan 0"], "no NIC on the tunnel");
        assert_eq!(plan.nics[0].interface, "a:if0");
        assert_eq!(plan.nics[0].ip.as_deref(), Some("10.1.1.1"));
        assert_eq!(plan.nics[0].netmask.as_deref(), Some("255.255.255.0"));
        assert_eq!(plan.nics[1].ip, None);
        assert_eq!(
            plan.nics[1].link.urn,
            "urn:publicid:IDN+am.test+sliver+r1.lan-0"
        );
        let b = plan_node(REQUEST, "am.test", "r1", "b").unwrap();
        assert_eq!(b.nics.len(), 2, "`far` belongs to another aggregate");
        assert_eq!(b.nics[1].link.urn, plan.nics[0].link.urn);
        assert_eq!(
            b.nics[1].link.addresses,
            ["10.1.1.1"],
            "b's link holds the address a asks for"
        );
        assert!(b.nics[0].link.addresses.is_empty());
    }

    #[test]
    fn services_become_install_and_execute_specs() {
        let plan = plan_node(REQUEST, "am.test", "r1", "a").unwrap();
        assert_eq!(
            plan.install,
            [InstallSpec {
                url: "http://x.example/a.tgz".into(),
                install_path: "/local".into()
            }],
            "an install without install_path is left out"
        );
        assert_eq!(plan.execute.len(), 2);
        assert_eq!(plan.execute[0].shell, "sh");
        assert_eq!(plan.execute[1].command, "echo $HOME");
        assert_eq!(
            plan_node(REQUEST, "am.test", "r1", "zz").unwrap(),
            NodePlan::default()
        );
        assert!(plan_node("<rspec", "am.test", "r1", "a").is_err());
    }

    #[test]
    fn interface_urns_extend_the_node_urn() {
        assert_eq!(
            interface_sliver_urn("urn:publicid:IDN+am.test+sliver+abc", "a:if 0"),
            "urn:publicid:IDN+am.test+sliver+abc:a-if-0"
        );
    }
}
