//! The node templates of a TOSCA topology and the VMs they become:
//! each Compute node one VM (or one per `scalable` count) with the
//! sliver type, size and image chosen from the offer, the disk of the
//! block storage attached to it, its ports' interfaces and its boot
//! services.

use super::compute::{compute_wanted, scale_count, storage_size};
use super::eval::Target;
use super::network::{self, PortInfo, requirements};
use super::scripts;
use super::types::{Category, Nodes};
use crate::yaml::choose::choose;
use crate::yaml::params::Params;
use crate::yaml::{Problems, Yaml};
use crate::{Link, Node, Offer};
use std::collections::HashMap;

/// The node templates and what they become.
#[derive(Default)]
pub(super) struct Topology {
    /// The node templates read.
    pub nodes: Nodes,
    /// The VMs.
    pub vms: Vec<Node>,
    /// Each Compute node's VMs.
    replicas: HashMap<String, Vec<String>>,
    /// The ports.
    ports: Vec<PortInfo>,
    /// The links.
    pub links: Vec<Link>,
}

impl Topology {
    /// Makes the VMs and links.
    pub fn translate(&mut self, params: &Params, offer: &Offer, problems: &mut Problems) {
        let mut storage = HashMap::new();
        for (name, template, category) in &self.nodes.0 {
            if *category == Category::BlockStorage
                && let Some(gb) = storage_size(name, template, params, problems)
            {
                storage.insert(name.clone(), (gb, template.line, false));
            }
        }
        let network = network::read(&self.nodes, params, problems);
        self.ports = network.ports;
        self.links = network.links;
        let mut interfaces = network.interfaces;
        let nodes = self.nodes.0.clone();
        for (name, template, category) in &nodes {
            if *category != Category::Compute {
                continue;
            }
            let mut wanted = compute_wanted(name, template, params, problems);
            for (requirement, target) in requirements(template) {
                match (requirement.as_str(), self.nodes.category(&target.0)) {
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

    /// What outputs can point at, by node name.
    pub fn targets(&self) -> HashMap<String, Target> {
        let mut targets: HashMap<String, Target> = self
            .nodes
            .0
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
