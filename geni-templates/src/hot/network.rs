//! Nets, subnets and ports: which net an interface is on, the
//! addresses a subnet hands out (its allocation pool, never its
//! gateway), and each interface's address: the fixed IP given, else the
//! next of its subnet's pool (the net's only subnet when the interface
//! names none).

use super::functions::{Val, eval, show};
use super::{Ctx, Kind, Resource};
use crate::Ipv4Address;
use crate::yaml::addressing::Pool;
use crate::yaml::values::Cidr;
use crate::yaml::{Problems, Yaml};
use std::collections::HashMap;
use std::net::Ipv4Addr;

/// One interface being built.
pub(crate) struct Iface {
    pub server: String,
    pub id: String,
    pub net: String,
    pub subnet: Option<String>,
    pub ip: Option<Ipv4Addr>,
    pub line: usize,
}

/// A port, read.
pub(crate) struct PortInfo {
    pub net: Option<String>,
    pub subnet: Option<String>,
    pub ip: Option<Ipv4Addr>,
}

/// The net a subnet or port is on, when the template creates it.
pub(crate) fn net_of(
    resource: &Resource,
    ctx: &Ctx<'_>,
    problems: &mut Problems,
) -> Option<String> {
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

pub(crate) fn subnet_pool(
    subnet: &Resource,
    ctx: &Ctx<'_>,
    problems: &mut Problems,
) -> Option<Pool> {
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
                    .map(|v| eval(v, ctx.params, &ctx.names, problems))
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

pub(crate) fn read_port(port: &Resource, ctx: &Ctx<'_>, problems: &mut Problems) -> PortInfo {
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
pub(crate) fn fixed_ip(
    entry: &Yaml,
    ctx: &Ctx<'_>,
    owner: &str,
    problems: &mut Problems,
) -> (Option<String>, Option<Ipv4Addr>) {
    let eval = |key: &str, problems: &mut Problems| {
        entry
            .get(key)
            .map(|v| eval(v, ctx.params, &ctx.names, problems))
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

/// Addresses every interface on a created net: fixed IPs first, then the
/// others from their subnet's pool.
pub(crate) fn address(
    ifaces: &[Iface],
    subnets_of: &HashMap<String, Vec<String>>,
    pools: &mut HashMap<String, Pool>,
    problems: &mut Problems,
) -> HashMap<String, Ipv4Address> {
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
    got
}
