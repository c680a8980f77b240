//! TOSCA networks and ports into links and the VMs' addressed
//! interfaces: a `tosca.nodes.network.Network` is a link joining the
//! ports linked to it; a `tosca.nodes.network.Port` is an interface of
//! the Compute node it binds, ordered by `order`; addresses are the
//! ports' `ip_address`es, else the next of the network's pool (`cidr`,
//! `start_ip`…`end_ip`, never `gateway_ip`).

use super::eval::value;
use super::types::{Category, Nodes};
use crate::yaml::addressing::Pool;
use crate::yaml::params::Params;
use crate::yaml::values::Cidr;
use crate::yaml::{Problems, Yaml};
use crate::{Interface, Link};
use std::collections::HashMap;

/// A port, read.
pub(super) struct PortInfo {
    pub name: String,
    pub node: String,
    network: String,
    address: Option<std::net::Ipv4Addr>,
    order: i64,
}

/// The links, ports and each VM's interfaces.
pub(super) struct Network {
    /// The ports, in document order.
    pub ports: Vec<PortInfo>,
    /// The links, in document order.
    pub links: Vec<Link>,
    /// Each VM's interfaces, in order.
    pub interfaces: HashMap<String, Vec<Interface>>,
}

/// Reads networks and ports: links, and each VM's interfaces.
pub(super) fn read(nodes: &Nodes, params: &Params, problems: &mut Problems) -> Network {
    let mut ports = Vec::new();
    let mut links = Vec::new();
    let mut pools = HashMap::new();
    for (name, template, category) in &nodes.0 {
        match category {
            Category::Network => {
                if let Some(pool) = network_pool(name, template, params, problems) {
                    pools.insert(name.clone(), pool);
                }
            }
            Category::Port => {
                if let Some(port) = read_port(nodes, name, template, params, problems) {
                    ports.push(port);
                }
            }
            _ => {}
        }
    }
    let mut addresses = HashMap::new();
    for explicit in [true, false] {
        for port in ports.iter().filter(|p| p.address.is_some() == explicit) {
            let Some(pool) = pools.get_mut(&port.network) else {
                if let Some(a) = port.address {
                    addresses.insert(
                        port.name.clone(),
                        (a, std::net::Ipv4Addr::new(255, 255, 255, 0)),
                    );
                }
                continue;
            };
            let got = match port.address {
                Some(a) => pool.take(a).map(|()| a),
                None => pool.next(),
            };
            match got {
                Ok(a) => {
                    addresses.insert(port.name.clone(), (a, pool.cidr().netmask()));
                }
                Err(why) => problems.refuse(
                    0,
                    format!("port '{}' on network '{}': {why}", port.name, port.network),
                ),
            }
        }
    }
    let mut by_node: HashMap<String, Vec<(i64, usize, Interface)>> = HashMap::new();
    for (i, port) in ports.iter().enumerate() {
        let ipv4 = addresses
            .get(&port.name)
            .map(|(address, netmask)| crate::Ipv4Address {
                address: *address,
                netmask: *netmask,
            });
        by_node.entry(port.node.clone()).or_default().push((
            port.order,
            i,
            Interface {
                client_id: port.name.clone(),
                ipv4,
            },
        ));
    }
    for (name, _, category) in &nodes.0 {
        if *category == Category::Network {
            let members: Vec<String> = ports
                .iter()
                .filter(|p| &p.network == name)
                .map(|p| p.name.clone())
                .collect();
            if !members.is_empty() {
                links.push(Link {
                    client_id: name.clone(),
                    interfaces: members,
                });
            }
        }
    }
    let interfaces = by_node
        .into_iter()
        .map(|(node, mut list)| {
            list.sort_by_key(|(order, i, _)| (*order, *i));
            (node, list.into_iter().map(|(_, _, iface)| iface).collect())
        })
        .collect();
    Network {
        ports,
        links,
        interfaces,
    }
}

fn read_port(
    nodes: &Nodes,
    name: &str,
    template: &Yaml,
    params: &Params,
    problems: &mut Problems,
) -> Option<PortInfo> {
    let mut node = None;
    let mut network = None;
    for (requirement, (target, line)) in requirements(template) {
        match (requirement.as_str(), nodes.category(&target)) {
            ("binding", Some(Category::Compute)) => node = Some(target),
            ("link", Some(Category::Network)) => network = Some(target),
            (r, _) => problems.refuse(line, format!("port '{name}': requirement {r} on '{target}': a port binds a Compute node and links a Network")),
        }
    }
    let props = template.get("properties");
    let prop = |key: &str, problems: &mut Problems| {
        props
            .and_then(|p| p.get(key))
            .and_then(|v| value(params, v, problems))
    };
    let address = match prop("ip_address", problems) {
        Some(a) => match a.as_str().and_then(|s| s.parse().ok()) {
            Some(a) => Some(a),
            None => {
                problems.refuse(
                    a.line,
                    format!(
                        "port '{name}': ip_address {} is not an IPv4 address",
                        a.describe()
                    ),
                );
                None
            }
        },
        None => None,
    };
    let order = prop("order", problems)
        .and_then(|o| o.as_i64())
        .unwrap_or(0);
    match (node, network) {
        (Some(node), Some(network)) => Some(PortInfo {
            name: name.to_owned(),
            node,
            network,
            address,
            order,
        }),
        _ => {
            problems.refuse(
                template.line,
                format!("port '{name}' needs a binding to a Compute node and a link to a Network"),
            );
            None
        }
    }
}

/// A node template's requirements as (name, (target node, line)).
pub(super) fn requirements(template: &Yaml) -> Vec<(String, (String, usize))> {
    template
        .get("requirements")
        .map(Yaml::items)
        .unwrap_or_default()
        .iter()
        .filter_map(|r| {
            let (name, target) = r.single_entry()?;
            let node = target
                .as_str()
                .or_else(|| target.get("node").and_then(Yaml::as_str))?;
            Some((name.to_owned(), (node.to_owned(), r.line)))
        })
        .collect()
}

fn network_pool(
    name: &str,
    template: &Yaml,
    params: &Params,
    problems: &mut Problems,
) -> Option<Pool> {
    let props = template.get("properties");
    let prop = |key: &str, problems: &mut Problems| {
        props
            .and_then(|p| p.get(key))
            .and_then(|v| value(params, v, problems))
    };
    if let Some(v) = prop("ip_version", problems).filter(|v| v.as_i64() != Some(4)) {
        problems.refuse(
            v.line,
            format!(
                "network '{name}': ip_version {}: this aggregate addresses IPv4 only",
                v.describe()
            ),
        );
    }
    let cidr = prop("cidr", problems)?;
    let line = cidr.line;
    let address = |key: &str, problems: &mut Problems| {
        prop(key, problems).and_then(|v| v.as_str().and_then(|s| s.parse().ok()))
    };
    let start = address("start_ip", problems);
    let end = address("end_ip", problems);
    let gateway = address("gateway_ip", problems);
    let pool =
        Cidr::parse(cidr.as_str().unwrap_or("")).and_then(|c| Pool::new(c, start, end, gateway));
    match pool {
        Ok(p) => Some(p),
        Err(why) => {
            problems.refuse(line, format!("network '{name}': {why}"));
            None
        }
    }
}
