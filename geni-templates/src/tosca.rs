//! TOSCA Simple Profile in YAML 1.0 service templates into a [`Request`].
//!
//! `tosca.nodes.Compute` nodes (and types derived from it) become VMs,
//! sized by their `host` capability and booting the offered image their
//! `os` capability describes; `tosca.nodes.network.Network` nodes become
//! links and `tosca.nodes.network.Port` nodes the interfaces joining
//! them; `tosca.nodes.BlockStorage` attached to a VM adds its size to the
//! VM's disk. Inputs, outputs and plain boot scripts are kept. Everything
//! else is refused with its line: docs/languages/tosca.md has the table.

mod eval;
mod scripts;
mod types;

use crate::yaml::choose::{ImageWanted, Wanted, choose};
use crate::yaml::params::{Dialect, Params};
use crate::yaml::values::{bytes, gb, mib};
use crate::yaml::{self, Problems, Yaml};
use crate::{Inputs, Interface, Link, Node, Offer, Refusals, Request};
use eval::{Target, value};
use std::collections::HashMap;
use types::{Category, Declared};

/// Translates `text` (named `source` in messages) against `offer`.
pub fn translate(
    source: &str,
    text: &str,
    inputs: &Inputs,
    offer: &Offer,
) -> Result<Request, Refusals> {
    let doc = yaml::load(source, text)?;
    let mut problems = Problems::default();
    let request = read(&doc, inputs, offer, &mut problems);
    problems.finish(source, request)
}

/// Sections read for what they say elsewhere or carrying nothing to do.
const QUIET_SECTIONS: &[&str] = &[
    "tosca_definitions_version",
    "description",
    "metadata",
    "dsl_definitions",
    "repositories",
    "template_name",
    "template_author",
    "template_version",
    "imports",
    "node_types",
    "relationship_types",
    "capability_types",
    "data_types",
    "artifact_types",
    "interface_types",
    "policy_types",
    "group_types",
    "topology_template",
];

/// The INDIGO-DataCloud profile, known by URL without fetching it.
const INDIGO_PROFILE: &str = "https://raw.githubusercontent.com/indigo-dc/tosca-types/";

fn read(doc: &Yaml, inputs: &Inputs, offer: &Offer, problems: &mut Problems) -> Request {
    if !doc.is_map() {
        problems.refuse(doc.line, "a TOSCA service template is a YAML mapping");
        return Request::default();
    }
    match doc.get("tosca_definitions_version") {
        Some(v) if v.as_str() == Some("tosca_simple_yaml_1_0") => {}
        Some(v) => problems.refuse(
            v.line,
            format!(
                "tosca_definitions_version {}: this aggregate reads tosca_simple_yaml_1_0",
                v.describe()
            ),
        ),
        None => problems.refuse(doc.line, "tosca_definitions_version is missing"),
    }
    for (key, _) in doc.entries() {
        let name = key.as_str().unwrap_or("");
        if !QUIET_SECTIONS.contains(&name) {
            problems.refuse(
                key.line,
                format!("section {name}: not part of a TOSCA Simple Profile 1.0 template"),
            );
        }
    }
    let indigo = imports(doc.get("imports"), problems);
    let declared = Declared::new(doc.get("node_types"), indigo);
    let Some(topology) = doc.get("topology_template").filter(|t| t.is_map()) else {
        problems.refuse(doc.line, "topology_template with node_templates is missing");
        return Request::default();
    };
    for (key, section) in topology.entries() {
        match key.as_str().unwrap_or("") {
            "description" | "inputs" | "node_templates" | "outputs" => {}
            "policies" => policies(section, problems),
            other => problems.refuse(
                key.line,
                format!("topology_template {other}: not supported by this aggregate"),
            ),
        }
    }
    let params = Params::new(topology.get("inputs"), inputs, Dialect::Tosca, problems);
    let templates = topology
        .get("node_templates")
        .map(Yaml::entries)
        .unwrap_or_default();
    if templates.is_empty() {
        problems.refuse(topology.line, "topology_template has no node_templates");
    }
    let mut t = Topology::default();
    for (key, template) in templates {
        let name = key.as_str().unwrap_or("").to_owned();
        let type_node = template.get("type");
        let type_name = type_node.and_then(Yaml::as_str).unwrap_or("");
        let line = type_node.map_or(key.line, |n| n.line);
        match declared.category(type_name) {
            Some(Category::Refused(what)) => problems.refuse(
                line,
                format!("node '{name}' of type {type_name}: {what}: not supported by this aggregate"),
            ),
            None => problems.refuse(
                line,
                format!("node '{name}' of type {type_name}: an unknown node type: not supported by this aggregate"),
            ),
            Some(category) => {
                // Messages about the node point at its name.
                let mut template = template.clone();
                template.line = key.line;
                t.nodes.push((name, template, category));
            }
        }
    }
    t.translate(&params, offer, problems);
    let targets = t.targets();
    let outputs = yaml::outputs(topology.get("outputs"), |v| {
        eval::output(v, &params, &targets, problems)
    });
    Request {
        nodes: t.vms,
        links: t.links,
        outputs,
    }
}

/// Checks `imports`; true when the INDIGO profile is among them.
fn imports(section: Option<&Yaml>, problems: &mut Problems) -> bool {
    let mut indigo = false;
    for import in section.map(Yaml::items).unwrap_or_default() {
        let target = import
            .as_str()
            .or_else(|| import.get("file").and_then(Yaml::as_str))
            .or_else(|| {
                import
                    .single_entry()
                    .and_then(|(_, v)| v.as_str().or_else(|| v.get("file").and_then(Yaml::as_str)))
            })
            .unwrap_or("");
        if target.starts_with(INDIGO_PROFILE) && target.ends_with("/custom_types.yaml") {
            indigo = true;
        } else {
            problems.refuse(
                import.line,
                format!("imports '{target}': the aggregate fetches nothing and knows no such profile; declare the types the template needs in node_types"),
            );
        }
    }
    indigo
}

fn policies(section: &Yaml, problems: &mut Problems) {
    for policy in section.items() {
        let Some((name, definition)) = policy.single_entry() else {
            continue;
        };
        let kind = definition.get("type").and_then(Yaml::as_str).unwrap_or("");
        let what = if kind.contains("Scaling") {
            "scaling (autoscaling) policies"
        } else {
            "policies"
        };
        problems.refuse(
            policy.line,
            format!("policy '{name}' of type {kind}: {what}: not supported by this aggregate"),
        );
    }
}

/// A port, read.
struct PortInfo {
    name: String,
    node: String,
    network: String,
    address: Option<std::net::Ipv4Addr>,
    order: i64,
}

/// The node templates and what they become.
#[derive(Default)]
struct Topology {
    nodes: Vec<(String, Yaml, Category)>,
    vms: Vec<Node>,
    replicas: HashMap<String, Vec<String>>,
    ports: Vec<PortInfo>,
    links: Vec<Link>,
}

impl Topology {
    fn category(&self, name: &str) -> Option<&Category> {
        self.nodes
            .iter()
            .find(|(n, ..)| n == name)
            .map(|(_, _, c)| c)
    }

    fn translate(&mut self, params: &Params, offer: &Offer, problems: &mut Problems) {
        let mut storage = HashMap::new();
        for (name, template, category) in &self.nodes {
            if *category == Category::BlockStorage
                && let Some(gb) = storage_size(name, template, params, problems)
            {
                storage.insert(name.clone(), (gb, template.line, false));
            }
        }
        let mut interfaces = self.read_ports(params, problems);
        let nodes = self.nodes.clone();
        for (name, template, category) in &nodes {
            if *category != Category::Compute {
                continue;
            }
            let mut wanted = compute_wanted(name, template, params, problems);
            for (requirement, target) in requirements(template) {
                match (requirement.as_str(), self.category(&target.0)) {
                    (_, Some(Category::BlockStorage)) => match storage.get_mut(&target.0) {
                        Some((gb, _, attached)) if !*attached => {
                            *attached = true;
                            wanted.extra_disk_gb += *gb;
                        }
                        Some(_) => problems.refuse(target.1, format!("node '{name}': block storage '{}' is attached to two VMs", target.0)),
                        None => {}
                    },
                    ("dependency", _) => {}
                    (r, _) => problems.refuse(
                        target.1,
                        format!("node '{name}': requirement {r} on '{}': not supported by this aggregate", target.0),
                    ),
                }
            }
            let count = scale_count(name, template, params, problems);
            let chosen = match choose(offer, &wanted) {
                Ok(c) => c,
                Err(why) => {
                    problems.refuse(template.line, format!("node '{name}': {why}"));
                    continue;
                }
            };
            let (installs, executes) = scripts::services(name, template, params, problems);
            let own = interfaces.remove(name).unwrap_or_default();
            if count > 1 && !own.is_empty() {
                problems.refuse(template.line, format!("node '{name}': {count} VMs (scalable count) with ports: not supported by this aggregate"));
            }
            let ids: Vec<String> = if count == 1 {
                vec![name.clone()]
            } else {
                (1..=count).map(|i| format!("{name}-{i}")).collect()
            };
            for id in &ids {
                self.vms.push(Node {
                    client_id: id.clone(),
                    sliver_type: chosen.sliver_type.clone(),
                    size: chosen.size,
                    image: chosen.image.clone(),
                    interfaces: own.clone(),
                    installs: installs.clone(),
                    executes: executes.clone(),
                });
            }
            self.replicas.insert(name.clone(), ids);
        }
        for (name, (_, line, attached)) in storage {
            if !attached {
                problems.refuse(line, format!("block storage '{name}' is attached to no Compute node (AttachesTo): the aggregate gives disks only to VMs"));
            }
        }
    }

    /// Reads networks and ports: links, and each VM's interfaces.
    fn read_ports(
        &mut self,
        params: &Params,
        problems: &mut Problems,
    ) -> HashMap<String, Vec<Interface>> {
        let mut pools = HashMap::new();
        for (name, template, category) in &self.nodes {
            match category {
                Category::Network => {
                    if let Some(pool) = network_pool(name, template, params, problems) {
                        pools.insert(name.clone(), pool);
                    }
                }
                Category::Port => {
                    if let Some(port) = self.read_port(name, template, params, problems) {
                        self.ports.push(port);
                    }
                }
                _ => {}
            }
        }
        let mut addresses = HashMap::new();
        for explicit in [true, false] {
            for port in self
                .ports
                .iter()
                .filter(|p| p.address.is_some() == explicit)
            {
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
        for (i, port) in self.ports.iter().enumerate() {
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
        for (name, _, category) in &self.nodes {
            if *category == Category::Network {
                let members: Vec<String> = self
                    .ports
                    .iter()
                    .filter(|p| &p.network == name)
                    .map(|p| p.name.clone())
                    .collect();
                if !members.is_empty() {
                    self.links.push(Link {
                        client_id: name.clone(),
                        interfaces: members,
                    });
                }
            }
        }
        by_node
            .into_iter()
            .map(|(node, mut list)| {
                list.sort_by_key(|(order, i, _)| (*order, *i));
                (node, list.into_iter().map(|(_, _, iface)| iface).collect())
            })
            .collect()
    }

    fn read_port(
        &self,
        name: &str,
        template: &Yaml,
        params: &Params,
        problems: &mut Problems,
    ) -> Option<PortInfo> {
        let mut node = None;
        let mut network = None;
        for (requirement, (target, line)) in requirements(template) {
            match (requirement.as_str(), self.category(&target)) {
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
                    format!(
                        "port '{name}' needs a binding to a Compute node and a link to a Network"
                    ),
                );
                None
            }
        }
    }

    fn targets(&self) -> HashMap<String, Target> {
        let mut targets: HashMap<String, Target> = self
            .nodes
            .iter()
            .map(|(name, template, _)| {
                (
                    name.clone(),
                    Target::Other(
                        template
                            .get("properties")
                            .cloned()
                            .unwrap_or_else(|| Yaml::scalar("", true, 0, 0)),
                    ),
                )
            })
            .collect();
        for (name, ids) in &self.replicas {
            targets.insert(name.clone(), Target::Compute(ids.clone()));
        }
        for port in &self.ports {
            targets.insert(
                port.name.clone(),
                Target::Port {
                    node: port.node.clone(),
                    interface: port.name.clone(),
                },
            );
        }
        targets
    }
}

/// A node template's requirements as (name, (target node, line)).
fn requirements(template: &Yaml) -> Vec<(String, (String, usize))> {
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

fn storage_size(
    name: &str,
    template: &Yaml,
    params: &Params,
    problems: &mut Problems,
) -> Option<u64> {
    let props = template.get("properties");
    let prop = |key: &str, problems: &mut Problems| {
        props
            .and_then(|p| p.get(key))
            .and_then(|v| value(params, v, problems))
    };
    for existing in ["volume_id", "snapshot_id"] {
        if let Some(v) = prop(existing, problems) {
            problems.refuse(v.line, format!("block storage '{name}': {existing}: an existing volume or snapshot of another cloud: not supported by this aggregate"));
        }
    }
    match prop("size", problems) {
        Some(size) => match size.as_str().map(bytes) {
            Some(Ok(b)) => Some(gb(b)),
            _ => {
                problems.refuse(
                    size.line,
                    format!(
                        "block storage '{name}': size {} is not a size such as '10 GB'",
                        size.describe()
                    ),
                );
                None
            }
        },
        None => {
            problems.refuse(template.line, format!("block storage '{name}' has no size"));
            None
        }
    }
}

fn network_pool(
    name: &str,
    template: &Yaml,
    params: &Params,
    problems: &mut Problems,
) -> Option<yaml::addressing::Pool> {
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
    let pool = crate::yaml::values::Cidr::parse(cidr.as_str().unwrap_or(""))
        .and_then(|c| yaml::addressing::Pool::new(c, start, end, gateway));
    match pool {
        Ok(p) => Some(p),
        Err(why) => {
            problems.refuse(line, format!("network '{name}': {why}"));
            None
        }
    }
}

/// What a Compute node asks for in its `host` and `os` capabilities.
fn compute_wanted(name: &str, template: &Yaml, params: &Params, problems: &mut Problems) -> Wanted {
    let mut wanted = Wanted::default();
    let mut os: HashMap<&str, String> = HashMap::new();
    for (key, capability) in template
        .get("capabilities")
        .map(Yaml::entries)
        .unwrap_or_default()
    {
        let cap = key.as_str().unwrap_or("");
        let props = capability
            .get("properties")
            .map(Yaml::entries)
            .unwrap_or_default();
        for (prop_key, raw) in props {
            let prop = prop_key.as_str().unwrap_or("");
            let Some(v) = value(params, raw, problems) else {
                continue;
            };
            let text = v.as_str().unwrap_or("").to_owned();
            let bad = |problems: &mut Problems, what: &str| {
                problems.refuse(
                    v.line,
                    format!("node '{name}': {cap} {prop} {} is not {what}", v.describe()),
                );
            };
            match (cap, prop) {
                ("host", "num_cpus") => match v.as_i64().and_then(|n| u32::try_from(n).ok()).filter(|n| *n >= 1) {
                    Some(n) => wanted.cores = Some(n),
                    None => bad(problems, "a whole number of at least 1"),
                },
                ("host", "mem_size" | "disk_size") => match bytes(&text) {
                    Ok(b) if prop == "mem_size" => wanted.ram_mb = Some(mib(b).max(1)),
                    Ok(b) => wanted.disk_gb = Some(gb(b).max(1)),
                    Err(why) => problems.refuse(v.line, format!("node '{name}': {cap} {prop}: {why}")),
                },
                ("host", "cpu_frequency") => {}
                ("os", "architecture") => {
                    if !matches!(text.to_ascii_lowercase().as_str(), "x86_64" | "amd64" | "x86-64") {
                        bad(problems, "x86_64, the architecture of this aggregate's VMs");
                    }
                }
                ("os", p @ ("type" | "distribution" | "version" | "image")) => {
                    os.insert(p, text);
                }
                ("os", "credential") | ("endpoint" | "scalable", _) => {}
                _ => problems.refuse(v.line, format!("node '{name}': capability {cap} property {prop}: not supported by this aggregate")),
            }
        }
        if !matches!(
            cap,
            "host" | "os" | "endpoint" | "scalable" | "binding" | "feature" | "attachment"
        ) {
            problems.refuse(
                key.line,
                format!("node '{name}': capability {cap}: not supported by this aggregate"),
            );
        }
    }
    wanted.image = match os.remove("image") {
        Some(image) => ImageWanted::Name(image),
        None if os.is_empty() => ImageWanted::Any,
        None => ImageWanted::Os {
            family: os.remove("type"),
            distribution: os.remove("distribution"),
            version: os.remove("version"),
        },
    };
    wanted
}

/// How many VMs the `scalable` capability asks for (`count`, else
/// `default_instances`, else 1).
fn scale_count(name: &str, template: &Yaml, params: &Params, problems: &mut Problems) -> u32 {
    let Some(props) = template
        .get("capabilities")
        .and_then(|c| c.get("scalable"))
        .and_then(|s| s.get("properties"))
    else {
        return 1;
    };
    let raw = props
        .get("count")
        .or_else(|| props.get("default_instances"));
    match raw.and_then(|r| value(params, r, problems)) {
        None => 1,
        Some(v) => match v
            .as_i64()
            .and_then(|n| u32::try_from(n).ok())
            .filter(|n| (1..=64).contains(n))
        {
            Some(n) => n,
            None => {
                problems.refuse(
                    v.line,
                    format!(
                        "node '{name}': scalable count {} is not a whole number from 1 to 64",
                        v.describe()
                    ),
                );
                1
            }
        },
    }
}

#[cfg(test)]
mod tests;
