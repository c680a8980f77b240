//! Servers, networks, subnets, ports and volumes into VMs, links and
//! addressed interfaces.
//!
//! A port or `networks` entry on a net the template creates is an
//! interface on that net's link, addressed from its subnet (the fixed IP
//! given, else the next of the allocation pool). One on a network the
//! template does not create (named by a parameter, an existing network of
//! the cloud) is the VM's control interface, which every GENI VM has: no
//! interface is added, and a fixed IP there is refused.

use super::flavors;
use super::functions::{Val, show};
use super::network::{self, Iface, PortInfo};
use super::volumes;
use super::{Ctx, Kind, Resource};
use crate::yaml::Problems;
use crate::yaml::addressing::Pool;
use crate::yaml::choose::{ImageWanted, Wanted, choose};
use crate::{Execute, Interface, Link, Node, Offer};
use std::collections::HashMap;

/// What the servers became, and what outputs need to find addresses.
#[derive(Debug, Default)]
pub(crate) struct Built {
    /// The VMs.
    pub nodes: Vec<Node>,
    /// The links.
    pub links: Vec<Link>,
    /// Port → (server, interface `client_id` unless on the control network).
    pub ports: HashMap<String, (String, Option<String>)>,
    /// (server, net) → interface `client_id`.
    pub on_net: HashMap<(String, String), String>,
}

const SERVER_IGNORED: &[&str] = &[
    "name",
    "key_name",
    "admin_pass",
    "availability_zone",
    "metadata",
    "security_groups",
    "config_drive",
    "diskConfig",
    "user_data_update_policy",
    "software_config_transport",
];

/// Builds the VMs and links of the template.
pub(crate) fn build(ctx: &Ctx<'_>, offer: &Offer, problems: &mut Problems) -> Built {
    let of = |kind: Kind| ctx.resources.iter().filter(move |r| r.kind == kind);
    let mut pools: HashMap<String, Pool> = HashMap::new();
    let mut subnets_of: HashMap<String, Vec<String>> = HashMap::new();
    for subnet in of(Kind::Subnet) {
        let Some(net) = network::net_of(subnet, ctx, problems) else {
            continue;
        };
        subnets_of.entry(net).or_default().push(subnet.name.clone());
        if let Some(pool) = network::subnet_pool(subnet, ctx, problems) {
            pools.insert(subnet.name.clone(), pool);
        }
    }
    let mut ports = HashMap::new();
    for port in of(Kind::Port) {
        ports.insert(port.name.clone(), network::read_port(port, ctx, problems));
    }
    let mut extra_disk: HashMap<String, u64> = HashMap::new();
    volumes::attachments(ctx, &mut extra_disk, problems);
    let mut built = Built::default();
    let mut ifaces: Vec<Iface> = Vec::new();
    for server in of(Kind::Server) {
        let mut wanted = server_wanted(server, ctx, offer, problems);
        wanted.extra_disk_gb = extra_disk.get(&server.name).copied().unwrap_or(0);
        let executes = user_data(server, ctx, problems);
        for (key, value) in server.properties.entries() {
            let k = key.as_str().unwrap_or("");
            if !matches!(
                k,
                "flavor" | "image" | "networks" | "user_data" | "user_data_format"
            ) && !SERVER_IGNORED.contains(&k)
            {
                problems.refuse(
                    value.line,
                    format!(
                        "server '{}': property {k}: not supported by this aggregate",
                        server.name
                    ),
                );
            }
        }
        let count = ifaces.len();
        server_networks(server, ctx, &ports, &mut built, &mut ifaces, problems);
        let own: Vec<String> = ifaces[count..].iter().map(|i| i.id.clone()).collect();
        match choose(offer, &wanted) {
            Ok(chosen) => built.nodes.push(Node {
                client_id: server.name.clone(),
                sliver_type: chosen.sliver_type,
                size: chosen.size,
                image: chosen.image,
                interfaces: own
                    .into_iter()
                    .map(|client_id| Interface {
                        client_id,
                        ipv4: None,
                    })
                    .collect(),
                installs: Vec::new(),
                executes,
            }),
            Err(why) => problems.refuse(server.line, format!("server '{}': {why}", server.name)),
        }
    }
    for name in ports.keys() {
        if !built.ports.contains_key(name) {
            let line = ctx.resource(name).map_or(0, |r| r.line);
            problems.refuse(line, format!("port '{name}' is used by no server"));
        }
    }
    let addresses = network::address(&ifaces, &subnets_of, &mut pools, problems);
    for node in &mut built.nodes {
        for iface in &mut node.interfaces {
            iface.ipv4 = addresses.get(&iface.client_id).copied();
        }
    }
    for net in of(Kind::Net) {
        let members: Vec<String> = ifaces
            .iter()
            .filter(|i| i.net == net.name)
            .map(|i| i.id.clone())
            .collect();
        if !members.is_empty() {
            built.links.push(Link {
                client_id: net.name.clone(),
                interfaces: members,
            });
        }
    }
    built
}

/// The interfaces of a server from its `networks`.
fn server_networks(
    server: &Resource,
    ctx: &Ctx<'_>,
    ports: &HashMap<String, PortInfo>,
    built: &mut Built,
    ifaces: &mut Vec<Iface>,
    problems: &mut Problems,
) {
    let entries = server
        .properties
        .get("networks")
        .map(|n| n.items().to_vec())
        .unwrap_or_default();
    for entry in &entries {
        let port = entry
            .get("port")
            .map(|p| super::functions::eval(p, ctx.params, &ctx.names, problems));
        let (id, net, subnet, ip) = match port {
            Some(Val::Resource(p)) => {
                let Some(info) = ports.get(&p) else {
                    problems.refuse(
                        entry.line,
                        format!(
                            "server '{}': '{p}' is not an OS::Neutron::Port",
                            server.name
                        ),
                    );
                    continue;
                };
                if built.ports.contains_key(&p) {
                    problems.refuse(
                        entry.line,
                        format!(
                            "server '{}': port '{p}' is used by two servers",
                            server.name
                        ),
                    );
                    continue;
                }
                built.ports.insert(
                    p.clone(),
                    (server.name.clone(), info.net.as_ref().map(|_| p.clone())),
                );
                (p, info.net.clone(), info.subnet.clone(), info.ip)
            }
            Some(other) => {
                problems.refuse(entry.line, format!("server '{}': port {}: an existing port of another cloud: not supported by this aggregate", server.name, show(&other)));
                continue;
            }
            None => {
                let net = match entry.get("network").or_else(|| entry.get("uuid")) {
                    Some(n) => match super::functions::eval(n, ctx.params, &ctx.names, problems) {
                        Val::Resource(r)
                            if ctx.resource(&r).is_some_and(|x| x.kind == Kind::Net) =>
                        {
                            Some(r)
                        }
                        _ => None,
                    },
                    None => None,
                };
                let (subnet, ip) = network::fixed_ip(entry, ctx, &server.name, problems);
                let n = ifaces.iter().filter(|i| i.server == server.name).count();
                (format!("{}:if{n}", server.name), net, subnet, ip)
            }
        };
        for (key, value) in entry.entries() {
            let k = key.as_str().unwrap_or("");
            if !matches!(
                k,
                "port" | "network" | "uuid" | "fixed_ip" | "subnet" | "floating_ip" | "tag"
            ) {
                problems.refuse(
                    value.line,
                    format!(
                        "server '{}': networks {k}: not supported by this aggregate",
                        server.name
                    ),
                );
            }
        }
        match net {
            Some(net) => {
                built.on_net.insert((server.name.clone(), net.clone()), id.clone());
                ifaces.push(Iface {
                    server: server.name.clone(),
                    id,
                    net,
                    subnet,
                    ip,
                    line: entry.line,
                });
            }
            None if ip.is_some() => problems.refuse(
                entry.line,
                format!("server '{}': a fixed IP on a network the template does not create: the aggregate chooses control addresses", server.name),
            ),
            None => {}
        }
    }
}

/// What a server's flavour and image ask for.
fn server_wanted(
    server: &Resource,
    ctx: &Ctx<'_>,
    offer: &Offer,
    problems: &mut Problems,
) -> Wanted {
    let mut wanted = Wanted::default();
    match server.prop("flavor", ctx, problems) {
        Val::Unset => {}
        v => match v.text() {
            Some(name) if offer.sliver_types.iter().any(|t| t.name == name) => {
                wanted.sliver_type = Some(name.to_owned())
            }
            Some(name) => match flavors::size(name) {
                Some((cores, ram, disk)) => {
                    wanted.cores = Some(cores);
                    wanted.ram_mb = Some(ram);
                    wanted.disk_gb = Some(disk);
                }
                None => {
                    let types: Vec<&str> =
                        offer.sliver_types.iter().map(|t| t.name.as_str()).collect();
                    problems.refuse(
                        server.properties.get("flavor").map_or(server.line, |f| f.line),
                        format!(
                            "server '{}': flavor '{name}' is neither an offered sliver type ({}) nor a known flavour ({})",
                            server.name,
                            types.join(", "),
                            flavors::names()
                        ),
                    );
                }
            },
            None => problems.refuse(
                server.line,
                format!(
                    "server '{}': flavor {} is not a name",
                    server.name,
                    show(&v)
                ),
            ),
        },
    }
    match server.prop("image", ctx, problems) {
        Val::Unset => {}
        v => match v.text() {
            Some(name) => wanted.image = ImageWanted::Name(name.to_owned()),
            None => problems.refuse(
                server.line,
                format!("server '{}': image {} is not a name", server.name, show(&v)),
            ),
        },
    }
    wanted
}

/// A server's `user_data` as an execute service, when it is a shell
/// script (`#!/bin/sh` or `#!/bin/bash`).
fn user_data(server: &Resource, ctx: &Ctx<'_>, problems: &mut Problems) -> Vec<Execute> {
    let line = server
        .properties
        .get("user_data")
        .map_or(server.line, |u| u.line);
    if let Some(format) = server.prop("user_data_format", ctx, problems).text()
        && format == "SOFTWARE_CONFIG"
    {
        problems.refuse(line, format!("server '{}': user_data_format SOFTWARE_CONFIG: software configuration, which needs a configuration agent on the VM: not supported by this aggregate", server.name));
        return Vec::new();
    }
    let data = server.prop("user_data", ctx, problems);
    let Some(script) = data.text() else {
        if data != Val::Unset {
            problems.refuse(
                line,
                format!(
                    "server '{}': user_data {} is not text",
                    server.name,
                    show(&data)
                ),
            );
        }
        return Vec::new();
    };
    let first = script.lines().next().unwrap_or("").trim();
    let shell = first
        .strip_prefix("#!")
        .map(|s| s.trim().rsplit('/').next().unwrap_or("").trim())
        .map(|s| s.strip_prefix("env ").unwrap_or(s).trim());
    match shell {
        Some(shell @ ("sh" | "bash")) => vec![Execute {
            shell: shell.to_owned(),
            command: script.to_owned(),
        }],
        _ => {
            problems.refuse(
                line,
                format!("server '{}': user_data that is not a sh or bash script ('{first}'): only shell scripts are run by this aggregate", server.name),
            );
            Vec::new()
        }
    }
}
