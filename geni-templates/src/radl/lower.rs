//! What a RADL document means for this aggregate: its `deploy`ed
//! systems become nodes (sized, typed and imaged from the [`Offer`] by
//! [`super::offer`]), its networks links (outbound ones are the control
//! network every VM has), its shell-script `configure` blocks execute
//! services; everything a VM aggregate cannot honour is refused at the
//! offset of its construct. docs/languages/radl.md is the table.

use super::ast::{Block, Count, CtxItem, Document, Feature, Kind, Op, Recipe, Value};
use super::offer::{Bound, Wants};
use crate::{Execute, Inputs, Interface, Ipv4Address, Link, Node, Offer, Request, Scalar};
use std::collections::BTreeMap;
use std::net::Ipv4Addr;

/// The most VMs one document may deploy.
pub(super) const MAX_NODES: u64 = 1000;

/// A refusal at a byte offset.
pub(super) type Refused = (usize, String);

/// A `network`.
#[derive(Debug, Default)]
struct Network {
    outbound: bool,
    /// The subnet addresses are given from: network address and prefix.
    cidr: Option<(Ipv4Addr, u8)>,
}

/// One `net_interface.N` of a system.
#[derive(Debug, Default, Clone)]
struct NetInterface {
    at: usize,
    connection: Option<String>,
    ip: Option<Ipv4Addr>,
}

/// A system as its features describe it.
#[derive(Debug, Default)]
struct System {
    at: usize,
    features: Vec<Feature>,
}

/// What a system lowers to, before it is replicated by `deploy`.
#[derive(Debug, Default)]
struct Shape {
    node: Node,
    /// `(index, network, address)` of each interface, by index.
    interfaces: Vec<(u32, String, Option<Ipv4Addr>, usize)>,
}

/// Translates a parsed document into a request, or every refusal.
pub(super) fn lower(
    doc: &Document,
    inputs: &Inputs,
    offer: &Offer,
) -> Result<Request, Vec<Refused>> {
    let mut lowering = Lowering {
        inputs,
        offer,
        refused: Vec::new(),
    };
    let request = lowering.request(doc);
    if lowering.refused.is_empty() {
        Ok(request)
    } else {
        lowering.refused.sort_by_key(|(at, _)| *at);
        Err(lowering.refused)
    }
}

struct Lowering<'a> {
    inputs: &'a Inputs,
    offer: &'a Offer,
    refused: Vec<Refused>,
}

impl Lowering<'_> {
    fn refuse(&mut self, at: usize, message: impl Into<String>) {
        self.refused.push((at, message.into()));
    }

    fn request(&mut self, doc: &Document) -> Request {
        let mut networks: BTreeMap<String, Network> = BTreeMap::new();
        let mut systems: Vec<(String, System)> = Vec::new();
        let mut configures: BTreeMap<String, (usize, Option<Recipe>)> = BTreeMap::new();
        let mut deploys: Vec<(String, u64, usize)> = Vec::new();
        let mut context: Option<Option<Vec<CtxItem>>> = None;
        for Block { at, kind } in &doc.blocks {
            let at = *at;
            match kind {
                Kind::Description { .. } => {}
                Kind::Ansible { name } => self.refuse(
                    at,
                    format!("ansible '{name}': an external Ansible master is not supported by this aggregate"),
                ),
                Kind::Include { name } => self.refuse(
                    at,
                    format!("include '{name}': template inclusion (an EC3 extension) is not supported; write the included sentences into the document"),
                ),
                Kind::Network { name, features } => {
                    let network = self.network(name, at, features.as_deref().unwrap_or_default());
                    networks.entry(name.clone()).or_insert(network);
                }
                Kind::System { name, features } => {
                    let features = features.clone().unwrap_or_default();
                    match systems.iter_mut().find(|(n, _)| n == name) {
                        Some((_, system)) => system.features.extend(features),
                        None => systems.push((name.clone(), System { at, features })),
                    }
                }
                Kind::Configure { name, recipe } => {
                    if let Some(recipe) = recipe {
                        self.check_recipe(name, at, recipe);
                    }
                    let entry = configures.entry(name.clone()).or_insert((at, None));
                    if recipe.is_some() {
                        entry.1 = recipe.clone();
                    }
                }
                Kind::Deploy {
                    system,
                    count,
                    cloud,
                } => {
                    if let Some(cloud) = cloud {
                        self.refuse(
                            at,
                            format!("deploy '{system}' to cloud '{cloud}': this aggregate is one cloud; leave the cloud out"),
                        );
                    }
                    if let Some(count) = self.count(count, at) {
                        deploys.push((system.clone(), count, at));
                    }
                }
                Kind::Contextualize { items, .. } => {
                    if let Some(items) = items {
                        for item in items {
                            if let Some(tool) = &item.tool
                                && !tool.eq_ignore_ascii_case("ansible")
                            {
                                self.refuse(
                                    item.at,
                                    format!("contextualize: system '{}' configure '{}' with {tool}: only shell-script configure blocks run here", item.system, item.configure),
                                );
                            }
                        }
                    }
                    context = Some(items.clone());
                }
            }
        }
        if deploys.is_empty() {
            // No deploy: one VM of every system.
            deploys = systems.iter().map(|(n, s)| (n.clone(), 1, s.at)).collect();
        }
        let total: u64 = deploys.iter().map(|(_, n, _)| *n).sum();
        if total > MAX_NODES {
            let at = deploys.first().map_or(0, |d| d.2);
            self.refuse(
                at,
                format!("deploy: {total} VMs asked; one document may deploy at most {MAX_NODES}"),
            );
            return Request::default();
        }
        // How many of each system, in order of first deploy.
        let mut counts: Vec<(String, u64, usize)> = Vec::new();
        for (system, count, at) in deploys {
            match counts.iter_mut().find(|(n, _, _)| *n == system) {
                Some(entry) => entry.1 += count,
                None => counts.push((system, count, at)),
            }
        }
        let mut request = Request::default();
        let mut members: BTreeMap<String, Vec<(String, Option<Ipv4Addr>, usize)>> = BTreeMap::new();
        for (name, count, at) in counts {
            let Some((_, system)) = systems.iter().find(|(n, _)| *n == name) else {
                self.refuse(
                    at,
                    format!("deploy '{name}': no system '{name}' is defined"),
                );
                continue;
            };
            if count == 0 {
                continue;
            }
            let Some(mut shape) = self.system(&name, system, &networks) else {
                continue;
            };
            shape.node.executes = self.executes(&name, &configures, context.as_ref());
            for (_, _, ip, at) in &shape.interfaces {
                if ip.is_some() && count > 1 {
                    self.refuse(
                        *at,
                        format!("system '{name}': a fixed net_interface ip cannot serve the {count} VMs deploy asks for"),
                    );
                }
            }
            for i in 1..=count {
                let client_id = if count == 1 {
                    name.clone()
                } else {
                    format!("{name}-{i}")
                };
                let mut node = shape.node.clone();
                node.client_id = client_id.clone();
                for (index, network, ip, at) in &shape.interfaces {
                    if networks.get(network).is_some_and(|n| n.outbound) {
                        continue;
                    }
                    let interface = format!("{client_id}:if{index}");
                    node.interfaces.push(Interface {
                        client_id: interface.clone(),
                        ipv4: None,
                    });
                    members
                        .entry(network.clone())
                        .or_default()
                        .push((interface, *ip, *at));
                }
                request.nodes.push(node);
            }
        }
        self.links(&mut request, &networks, members);
        request
    }

    /// A `deploy` count.
    fn count(&mut self, count: &Count, at: usize) -> Option<u64> {
        match count {
            Count::Number(n) => Some(*n),
            Count::Input(name) => {
                match self.inputs.get(name) {
                    Some(Scalar::Int(n)) if *n >= 0 => Some(*n as u64),
                    Some(Scalar::Str(s)) if s.trim().parse::<u64>().is_ok() => {
                        s.trim().parse().ok()
                    }
                    Some(other) => {
                        self.refuse(
                            at,
                            format!("deploy: input '{name}' is {other:?}, not a number of VMs"),
                        );
                        None
                    }
                    None => {
                        self.refuse(at, format!("deploy: input '{name}' has no value; pass it in geni_template_inputs"));
                        None
                    }
                }
            }
        }
    }

    /// `@input.NAME@` replaced by its value.
    fn resolve(&mut self, value: &Value, at: usize) -> Option<Value> {
        let Value::Input(name) = value else {
            return Some(value.clone());
        };
        match self.inputs.get(name) {
            Some(Scalar::Str(s)) => Some(Value::Str(s.clone())),
            Some(Scalar::Int(n)) => Some(Value::Number {
                value: *n as f64,
                unit: None,
            }),
            Some(Scalar::Float(f)) => Some(Value::Number {
                value: *f,
                unit: None,
            }),
            Some(Scalar::Bool(b)) => Some(Value::Str(if *b { "yes" } else { "no" }.into())),
            None => {
                self.refuse(
                    at,
                    format!("input '{name}' has no value; pass it in geni_template_inputs"),
                );
                None
            }
        }
    }

    /// The string a feature holds, or a refusal.
    fn text(&mut self, owner: &str, feature: &Feature) -> Option<String> {
        match self.resolve(&feature.value, feature.at)? {
            Value::Str(s) => Some(s),
            Value::Number { value, unit } => Some(format!("{value}{}", unit.unwrap_or_default())),
            _ => {
                self.refuse(
                    feature.at,
                    format!("{owner}: {} needs a single value", feature.name),
                );
                None
            }
        }
    }

    fn network(&mut self, name: &str, at: usize, features: &[Feature]) -> Network {
        let owner = format!("network '{name}'");
        let mut network = Network::default();
        let mut cidr_at = at;
        for feature in features {
            match feature.name.as_str() {
                "outbound" => {
                    network.outbound = self
                        .text(&owner, feature)
                        .is_some_and(|v| v.eq_ignore_ascii_case("yes") || v == "true")
                }
                "cidr" => {
                    cidr_at = feature.at;
                    let Some(text) = self.text(&owner, feature) else {
                        continue;
                    };
                    if text.contains('*') {
                        // A wildcard lets the cloud choose: the aggregate does.
                        continue;
                    }
                    match parse_cidr(&text) {
                        Some(cidr) => network.cidr = Some(cidr),
                        None => self.refuse(
                            feature.at,
                            format!(
                                "{owner}: cidr '{text}' is not an IPv4 a.b.c.d/n with n at most 30"
                            ),
                        ),
                    }
                }
                // No security groups: every port of a VM is reachable.
                "outports" | "create" => {}
                other => self.refuse(
                    feature.at,
                    format!("{owner}: feature {other} is not supported by this aggregate"),
                ),
            }
        }
        if network.outbound && network.cidr.is_some() {
            self.refuse(
                cidr_at,
                format!("{owner}: an outbound network is the aggregate's control network, whose addresses the aggregate assigns; leave cidr out"),
            );
        }
        network
    }

    /// Refuses a recipe that is not a shell script.
    fn check_recipe(&mut self, name: &str, at: usize, recipe: &Recipe) {
        if shell_of(&recipe.text).is_some() {
            return;
        }
        let kind = if recipe.text.trim_start().starts_with("#cloud-config") {
            "a cloud-init recipe"
        } else {
            "an Ansible recipe"
        };
        self.refuse(
            at,
            format!("configure '{name}': {kind} needs a configuration manager; not supported by this aggregate (a recipe that is a shell script, starting with #!/bin/sh or #!/bin/bash, runs at boot)"),
        );
    }

    /// The execute services of system `name`: the configure blocks the
    /// contextualize section applies to it, by step, or else the one of
    /// its name.
    fn executes(
        &mut self,
        name: &str,
        configures: &BTreeMap<String, (usize, Option<Recipe>)>,
        context: Option<&Option<Vec<CtxItem>>>,
    ) -> Vec<Execute> {
        let mut applied: Vec<(u64, String, usize)> = match context {
            Some(Some(items)) => items
                .iter()
                .filter(|i| i.system == name)
                .map(|i| (i.step.unwrap_or(0), i.configure.clone(), i.at))
                .collect(),
            Some(None) | None => configures
                .get(name)
                .map(|(at, _)| vec![(0, name.to_owned(), *at)])
                .unwrap_or_default(),
        };
        applied.sort_by_key(|(step, _, _)| *step);
        let mut executes = Vec::new();
        for (_, configure, at) in applied {
            match configures.get(&configure) {
                Some((_, Some(recipe))) => {
                    if let Some(shell) = shell_of(&recipe.text) {
                        executes.push(Execute {
                            shell,
                            command: recipe.text.trim().to_owned(),
                        });
                    }
                }
                Some((_, None)) => {}
                None => self.refuse(
                    at,
                    format!("contextualize: system '{name}' configure '{configure}': no configure '{configure}' is defined"),
                ),
            }
        }
        executes
    }

    /// What system `name` asks for.
    fn system(
        &mut self,
        name: &str,
        system: &System,
        networks: &BTreeMap<String, Network>,
    ) -> Option<Shape> {
        let owner = format!("system '{name}'");
        let mut wants = Wants::default();
        let mut interfaces: BTreeMap<u32, NetInterface> = BTreeMap::new();
        let before = self.refused.len();
        for feature in &system.features {
            let at = feature.at;
            let fname = feature.name.as_str();
            match fname {
                "cpu.count" => wants.cores = self.bound(&owner, feature, 1),
                "memory.size" => wants.ram_mb = self.bound(&owner, feature, MIB),
                "disk.0.size" | "disk.0.free_size" => {
                    wants.disk_gb = self.bound(&owner, feature, GB)
                }
                "cpu.arch" => {
                    if let Some(arch) = self.text(&owner, feature)
                        && !matches!(arch.as_str(), "x86_64" | "amd64" | "i686" | "i386")
                    {
                        self.refuse(
                            at,
                            format!("{owner}: cpu.arch '{arch}': the VMs of this aggregate are x86_64 (i686 systems run on them too)"),
                        );
                    }
                }
                "instance_type" => wants.instance_type = self.text(&owner, feature),
                "disk.0.image.url" | "disk.0.image.name" => {
                    if let Some(urls) = self.text(&owner, feature) {
                        wants.image_urls.extend(
                            urls.split(',')
                                .map(|u| u.trim().to_owned())
                                .filter(|u| !u.is_empty()),
                        );
                    }
                }
                "disk.0.os.name" => wants.os_name = self.text(&owner, feature),
                "disk.0.os.flavour" => wants.os_flavour = self.text(&owner, feature),
                "disk.0.os.version" => {
                    wants.os_version = self.text(&owner, feature).map(|v| (feature.op, v))
                }
                _ if fname.starts_with("disk.0.os.credentials.") => {
                    // Logins are the slice's users' keys (Provision's
                    // geni_users): template credentials are not used.
                }
                _ if fname.starts_with("ec3_") => {
                    // Instructions to the EC3 cluster tool, not the VM.
                }
                _ if fname.starts_with("net_interface.") => {
                    self.interface_feature(&owner, feature, &mut interfaces);
                }
                _ if fname.ends_with(".applications") => self.refuse(
                    at,
                    format!("{owner}: {fname} contains …: installing applications needs a configuration manager; not supported by this aggregate"),
                ),
                _ if fname.starts_with("disk.") => self.refuse(
                    at,
                    format!("{owner}: {fname}: data disks besides the boot disk are not supported by this aggregate"),
                ),
                _ => self.refuse(
                    at,
                    format!("{owner}: feature {fname} is not supported by this aggregate"),
                ),
            }
        }
        let choice = match wants.choose(self.offer) {
            Ok(choice) => Some(choice),
            Err(why) => {
                self.refuse(system.at, format!("{owner}: {why}"));
                None
            }
        };
        let mut shape = Shape::default();
        for (index, interface) in interfaces {
            let Some(network) = interface.connection else {
                self.refuse(
                    interface.at,
                    format!("{owner}: net_interface.{index} has no connection"),
                );
                continue;
            };
            match networks.get(&network) {
                None => self.refuse(
                    interface.at,
                    format!("{owner}: net_interface.{index}.connection names no network '{network}'"),
                ),
                Some(n) if n.outbound && interface.ip.is_some() => self.refuse(
                    interface.at,
                    format!("{owner}: net_interface.{index}.ip on outbound network '{network}': the control network's addresses are assigned by the aggregate"),
                ),
                Some(n) => {
                    if let (Some(ip), Some((base, prefix))) = (interface.ip, n.cidr)
                        && !in_subnet(ip, base, prefix)
                    {
                        self.refuse(
                            interface.at,
                            format!("{owner}: net_interface.{index}.ip {ip} is outside network '{network}' ({base}/{prefix})"),
                        );
                    }
                    shape.interfaces.push((index, network, interface.ip, interface.at));
                }
            }
        }
        if self.refused.len() > before {
            return None;
        }
        let choice = choice?;
        shape.node = Node {
            sliver_type: Some(choice.sliver_type),
            size: choice.size,
            image: choice.image,
            ..Node::default()
        };
        Some(shape)
    }

    /// `net_interface.N.connection`, `.ip`; `.dns_name` is refused.
    fn interface_feature(
        &mut self,
        owner: &str,
        feature: &Feature,
        interfaces: &mut BTreeMap<u32, NetInterface>,
    ) {
        let rest = &feature.name["net_interface.".len()..];
        let (index, key) = rest.split_once('.').unwrap_or((rest, ""));
        let Ok(index) = index.parse::<u32>() else {
            self.refuse(
                feature.at,
                format!("{owner}: {} is not net_interface.N.…", feature.name),
            );
            return;
        };
        let entry = interfaces.entry(index).or_insert_with(|| NetInterface {
            at: feature.at,
            ..NetInterface::default()
        });
        match key {
            "connection" => entry.connection = self.text(owner, feature),
            "ip" => {
                let Some(text) = self.text(owner, feature) else {
                    return;
                };
                match text.parse::<Ipv4Addr>() {
                    Ok(ip) => entry.ip = Some(ip),
                    Err(_) => self.refuse(
                        feature.at,
                        format!("{owner}: {} '{text}' is not an IPv4 address", feature.name),
                    ),
                }
            }
            "dns_name" => self.refuse(
                feature.at,
                format!("{owner}: {}: host names are given by the aggregate (the manifest's <host name>), not chosen by the request", feature.name),
            ),
            _ => self.refuse(
                feature.at,
                format!("{owner}: feature {} is not supported by this aggregate", feature.name),
            ),
        }
    }

    /// A numeric comparison in `unit`s (1 for counts, [`MIB`] or [`GB`]).
    fn bound(&mut self, owner: &str, feature: &Feature, unit: u64) -> Option<Bound> {
        let value = self.resolve(&feature.value, feature.at)?;
        let amount = match (&value, unit) {
            (Value::Number { value, unit: None }, 1) => Some(*value),
            (Value::Number { value, unit: u }, _) if unit != 1 => scale(*value, u.as_deref(), unit),
            (Value::Str(s), _) => s.trim().parse::<f64>().ok().and_then(|v| {
                if unit == 1 {
                    Some(v)
                } else {
                    scale(v, None, unit)
                }
            }),
            _ => None,
        };
        let Some(amount) = amount.filter(|a| a.is_finite() && *a >= 0.0) else {
            self.refuse(
                feature.at,
                format!(
                    "{owner}: {} needs a number{}",
                    feature.name,
                    if unit == 1 {
                        ""
                    } else {
                        " with a unit (B, K, M, G, T)"
                    }
                ),
            );
            return None;
        };
        if feature.op == Op::Contains {
            self.refuse(
                feature.at,
                format!("{owner}: {} takes =, >= or <=", feature.name),
            );
            return None;
        }
        Some(Bound {
            op: feature.op,
            value: amount.ceil() as u64,
        })
    }

    /// One link per network that is not outbound, with the addresses asked
    /// for, and from its cidr for the interfaces that ask none.
    fn links(
        &mut self,
        request: &mut Request,
        networks: &BTreeMap<String, Network>,
        members: BTreeMap<String, Vec<(String, Option<Ipv4Addr>, usize)>>,
    ) {
        for (name, interfaces) in members {
            let Some(network) = networks.get(&name) else {
                continue;
            };
            let netmask = network
                .cidr
                .map_or(Ipv4Addr::new(255, 255, 255, 0), |(_, p)| mask(p));
            let taken: Vec<Ipv4Addr> = interfaces.iter().filter_map(|(_, ip, _)| *ip).collect();
            let mut free = network
                .cidr
                .map(|(base, prefix)| hosts(base, prefix).filter(move |a| !taken.contains(a)));
            let mut link = Link {
                client_id: name.clone(),
                interfaces: Vec::new(),
            };
            for (interface, ip, at) in interfaces {
                let address = match (ip, free.as_mut()) {
                    (Some(ip), _) => Some(ip),
                    (None, Some(free)) => {
                        match free.next() {
                            Some(ip) => Some(ip),
                            None => {
                                self.refuse(at, format!("network '{name}': its cidr has no address left for {interface}"));
                                None
                            }
                        }
                    }
                    (None, None) => None,
                };
                if let Some(address) = address
                    && let Some(i) = request
                        .nodes
                        .iter_mut()
                        .flat_map(|n| n.interfaces.iter_mut())
                        .find(|i| i.client_id == interface)
                {
                    i.ipv4 = Some(Ipv4Address { address, netmask });
                }
                link.interfaces.push(interface);
            }
            request.links.push(link);
        }
    }
}

/// MiB, the unit of memory sizes.
const MIB: u64 = 1 << 20;
/// GB (GiB), the unit of disk sizes.
const GB: u64 = 1 << 30;

/// `value` with RADL `unit` (B, K, M, G, T, with an optional trailing B;
/// none: MiB for memory, GB for disk) in `target` bytes, rounded up.
fn scale(value: f64, unit: Option<&str>, target: u64) -> Option<f64> {
    let bytes_per: f64 = match unit.map(|u| u.to_ascii_uppercase()) {
        None => return Some(value),
        Some(u) => match u.trim_end_matches('B') {
            "" => 1.0,
            "K" | "KI" => 1024.0,
            "M" | "MI" => MIB as f64,
            "G" | "GI" => GB as f64,
            "T" | "TI" => (GB as f64) * 1024.0,
            _ => return None,
        },
    };
    Some((value * bytes_per / target as f64).ceil())
}

/// The shell of a recipe that is a script: the program its `#!` line runs.
fn shell_of(text: &str) -> Option<String> {
    let first = text.trim_start().lines().next()?;
    let interpreter = first.strip_prefix("#!")?.split_whitespace();
    let mut words = interpreter;
    let program = words.next()?;
    let program = program.rsplit('/').next().unwrap_or(program);
    let program = if program == "env" {
        words.next()?
    } else {
        program
    };
    matches!(program, "sh" | "bash" | "dash" | "ksh" | "zsh").then(|| program.to_owned())
}

/// `a.b.c.d/n` as network address and prefix (n at most 30).
fn parse_cidr(text: &str) -> Option<(Ipv4Addr, u8)> {
    let (address, prefix) = text.trim().split_once('/')?;
    let address: Ipv4Addr = address.parse().ok()?;
    let prefix: u8 = prefix.parse().ok()?;
    (prefix <= 30).then(|| {
        (
            Ipv4Addr::from(u32::from(address) & u32::from(mask(prefix))),
            prefix,
        )
    })
}

fn mask(prefix: u8) -> Ipv4Addr {
    Ipv4Addr::from(u32::MAX.checked_shl(32 - u32::from(prefix)).unwrap_or(0))
}

fn in_subnet(ip: Ipv4Addr, base: Ipv4Addr, prefix: u8) -> bool {
    u32::from(ip) & u32::from(mask(prefix)) == u32::from(base)
}

/// The host addresses of a subnet, network and broadcast left out.
fn hosts(base: Ipv4Addr, prefix: u8) -> impl Iterator<Item = Ipv4Addr> {
    let first = u32::from(base) + 1;
    let size = 1u64 << (32 - u32::from(prefix));
    let last = (u64::from(u32::from(base)) + size - 2) as u32;
    (first..=last).map(Ipv4Addr::from)
}
