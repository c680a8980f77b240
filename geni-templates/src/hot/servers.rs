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
use super::{Ctx, Kind, Resource};
use crate::yaml::Problems;
use crate::yaml::addressing::Pool;
use crate::yaml::choose::{ImageWanted, Wanted, choose};
use crate::yaml::values::Cidr;
use crate::{Execute, Interface, Ipv4Address, Link, Node, Offer};
use std::collections::HashMap;
use std::net::Ipv4Addr;

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

/// One interface being built.
struct Iface {
    server: String,
    id: String,
    net: String,
    subnet: Option<String>,
    ip: Option<Ipv4Addr>,
    line: usize,
}

/// A port, read.
struct PortInfo {
    net: Option<String>,
    subnet: Option<String>,
    ip: Option<Ipv4Addr>,
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
        let Some(net) = net_of(subnet, ctx, problems) else {
            continue;
        };
        subnets_of.entry(net).or_default().push(subnet.name.clone());
        if let Some(pool) = subnet_pool(subnet, ctx, problems) {
            pools.insert(subnet.name.clone(), pool);
        }
    }
    let mut ports = HashMap::new();
    for port in of(Kind::Port) {
        ports.insert(port.name.clone(), read_port(port, ctx, problems));
    }
    let mut extra_disk: HashMap<String, u64> = HashMap::new();
    attachments(ctx, &mut extra_disk, problems);
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
    address(&mut built, &ifaces, &subnets_of, &mut pools, problems);
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

/// The net a subnet or port is on, when the template creates it.
fn net_of(resource: &Resource, ctx: &Ctx<'_>, problems: &mut Problems) -> Option<String> {
    let v = match resource.prop("network", ctx, problems) {
        Val::Unset => resource.prop("network_id", ctx, problems),
        v => v,
    };
    match v {
        Val::Resource(net) if ctx.resource(&net).is_some_and(|r| r.kind == Kind::Net) => Some(net),
        Val::Resource(other) => {
            problems.refuse(
                resource.line,
                format!(
                    "'{}': network '{other}' is not an OS::Neutron::Net",
                    resource.name
                ),
            );
            None
        }
        _ => None,
    }
}

fn subnet_pool(subnet: &Resource, ctx: &Ctx<'_>, problems: &mut Problems) -> Option<Pool> {
    let name = &subnet.name;
    if let Val::Yaml(v) = subnet.prop("ip_version", ctx, problems)
        && v.as_i64() != Some(4)
    {
        problems.refuse(
            v.line,
            format!(
                "subnet '{name}': ip_version {}: this aggregate addresses IPv4 only",
                v.describe()
            ),
        );
    }
    let cidr = subnet.prop("cidr", ctx, problems);
    let cidr = cidr.text()?;
    let address = |v: Val| v.text().and_then(|t| t.parse::<Ipv4Addr>().ok());
    let gateway = address(subnet.prop("gateway_ip", ctx, problems));
    let pools = subnet
        .properties
        .get("allocation_pools")
        .map(|p| p.items().to_vec())
        .unwrap_or_default();
    if pools.len() > 1 {
        problems.refuse(
            pools[1].line,
            format!(
                "subnet '{name}': more than one allocation pool: not supported by this aggregate"
            ),
        );
    }
    let (start, end) = match pools.first() {
        Some(p) => {
            let get = |k: &str, problems: &mut Problems| {
                p.get(k)
                    .map(|v| super::functions::eval(v, ctx.params, &ctx.names, problems))
                    .and_then(address)
            };
            (get("start", problems), get("end", problems))
        }
        None => (None, None),
    };
    match Cidr::parse(cidr).and_then(|c| Pool::new(c, start, end, gateway)) {
        Ok(pool) => Some(pool),
        Err(why) => {
            problems.refuse(subnet.line, format!("subnet '{name}': {why}"));
            None
        }
    }
}

fn read_port(port: &Resource, ctx: &Ctx<'_>, problems: &mut Problems) -> PortInfo {
    let net = net_of(port, ctx, problems);
    let fixed = port
        .properties
        .get("fixed_ips")
        .map(|f| f.items().to_vec())
        .unwrap_or_default();
    if fixed.len() > 1 {
        problems.refuse(
            fixed[1].line,
            format!(
                "port '{}': more than one fixed IP: not supported by this aggregate",
                port.name
            ),
        );
    }
    let (subnet, ip) = fixed
        .first()
        .map(|f| fixed_ip(f, ctx, &port.name, problems))
        .unwrap_or((None, None));
    for (key, value) in port.properties.entries() {
        let k = key.as_str().unwrap_or("");
        if !matches!(
            k,
            "network"
                | "network_id"
                | "fixed_ips"
                | "name"
                | "security_groups"
                | "admin_state_up"
                | "port_security_enabled"
                | "description"
        ) {
            problems.refuse(
                value.line,
                format!(
                    "port '{}': property {k}: not supported by this aggregate",
                    port.name
                ),
            );
        }
    }
    PortInfo { net, subnet, ip }
}

/// The subnet and address of one `fixed_ips` entry (or server network).
fn fixed_ip(
    entry: &crate::yaml::Yaml,
    ctx: &Ctx<'_>,
    owner: &str,
    problems: &mut Problems,
) -> (Option<String>, Option<Ipv4Addr>) {
    let eval = |key: &str, problems: &mut Problems| {
        entry
            .get(key)
            .map(|v| super::functions::eval(v, ctx.params, &ctx.names, problems))
            .unwrap_or(Val::Unset)
    };
    let subnet = match eval("subnet", problems) {
        Val::Unset => eval("subnet_id", problems),
        v => v,
    };
    let subnet = match subnet {
        Val::Resource(s) if ctx.resource(&s).is_some_and(|r| r.kind == Kind::Subnet) => Some(s),
        _ => None,
    };
    let ip_val = match eval("ip_address", problems) {
        Val::Unset => eval("fixed_ip", problems),
        v => v,
    };
    let ip = match &ip_val {
        Val::Unset => None,
        v => match v.text().and_then(|t| t.parse().ok()) {
            Some(ip) => Some(ip),
            None => {
                problems.refuse(
                    entry.line,
                    format!("'{owner}': fixed IP {} is not an IPv4 address", show(v)),
                );
                None
            }
        },
    };
    (subnet, ip)
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
                let (subnet, ip) = fixed_ip(entry, ctx, &server.name, problems);
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

/// Addresses every interface on a created net: fixed IPs first, then the
/// others from their subnet's pool.
fn address(
    built: &mut Built,
    ifaces: &[Iface],
    subnets_of: &HashMap<String, Vec<String>>,
    pools: &mut HashMap<String, Pool>,
    problems: &mut Problems,
) {
    let mut got: HashMap<String, Ipv4Address> = HashMap::new();
    for explicit in [true, false] {
        for iface in ifaces.iter().filter(|i| i.ip.is_some() == explicit) {
            let subnet = iface.subnet.clone().or_else(|| {
                match subnets_of.get(&iface.net).map(Vec::as_slice) {
                    Some([only]) => Some(only.clone()),
                    _ => None,
                }
            });
            let pool = subnet.and_then(|s| pools.get_mut(&s));
            let result = match (pool, iface.ip) {
                (Some(pool), Some(ip)) => pool.take(ip).map(|()| Some((ip, pool.cidr().netmask()))),
                (Some(pool), None) => pool.next().map(|ip| Some((ip, pool.cidr().netmask()))),
                (None, Some(ip)) => Ok(Some((ip, Ipv4Addr::new(255, 255, 255, 0)))),
                (None, None) => Ok(None),
            };
            match result {
                Ok(Some((address, netmask))) => {
                    got.insert(iface.id.clone(), Ipv4Address { address, netmask });
                }
                Ok(None) => {}
                Err(why) => problems.refuse(
                    iface.line,
                    format!("interface '{}' on '{}': {why}", iface.id, iface.net),
                ),
            }
        }
    }
    for node in &mut built.nodes {
        for iface in &mut node.interfaces {
            iface.ipv4 = got.get(&iface.client_id).copied();
        }
    }
}

/// Volume sizes attached to each server.
fn attachments(ctx: &Ctx<'_>, extra: &mut HashMap<String, u64>, problems: &mut Problems) {
    let mut sizes: HashMap<String, (u64, bool)> = HashMap::new();
    for volume in ctx.resources.iter().filter(|r| r.kind == Kind::Volume) {
        for existing in ["image", "snapshot_id", "source_volid", "backup_id"] {
            if volume.prop(existing, ctx, problems) != Val::Unset {
                problems.refuse(volume.line, format!("volume '{}': {existing}: a volume made from another cloud's data: not supported by this aggregate", volume.name));
            }
        }
        match volume.prop("size", ctx, problems) {
            Val::Yaml(v) if v.as_i64().is_some_and(|n| n >= 1) => {
                sizes.insert(volume.name.clone(), (v.as_i64().unwrap_or(1) as u64, false));
            }
            v => problems.refuse(
                volume.line,
                format!(
                    "volume '{}': size {} is not a whole number of GB",
                    volume.name,
                    show(&v)
                ),
            ),
        }
    }
    for attachment in ctx.resources.iter().filter(|r| r.kind == Kind::Attachment) {
        let server = match attachment.prop("instance_uuid", ctx, problems) {
            Val::Unset => attachment.prop("server", ctx, problems),
            v => v,
        };
        let volume = attachment.prop("volume_id", ctx, problems);
        match (server, volume) {
            (Val::Resource(s), Val::Resource(v)) if ctx.resource(&s).is_some_and(|r| r.kind == Kind::Server) => {
                match sizes.get_mut(&v) {
                    Some((gb, attached)) if !*attached => {
                        *attached = true;
                        *extra.entry(s).or_default() += *gb;
                    }
                    Some(_) => problems.refuse(attachment.line, format!("volume '{v}' is attached twice")),
                    None => problems.refuse(attachment.line, format!("attachment '{}': '{v}' is not a volume of the template", attachment.name)),
                }
            }
            _ => problems.refuse(
                attachment.line,
                format!("attachment '{}' must attach a volume of the template to a server of the template", attachment.name),
            ),
        }
    }
    for (name, (_, attached)) in sizes {
        if !attached {
            let line = ctx.resource(&name).map_or(0, |r| r.line);
            problems.refuse(line, format!("volume '{name}' is attached to no server: the aggregate gives disks only to VMs"));
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
