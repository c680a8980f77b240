//! HOT (Heat Orchestration Template) documents into a [`Request`].
//!
//! `OS::Nova::Server` resources become VMs (flavour → sliver type or
//! size, image → offered image, a shell-script `user_data` → an execute
//! service), `OS::Neutron::Net` resources links, their
//! `OS::Neutron::Subnet`s the addresses handed out on them, and
//! `OS::Neutron::Port`s or server `networks` entries the interfaces;
//! `OS::Cinder::Volume`s attached by `OS::Cinder::VolumeAttachment` add
//! their size to the VM's disk. Parameters, outputs with addresses and
//! `get_resource` references are resolved. Routers, floating IPs,
//! security groups and key pairs say how the VMs are reached from
//! outside, which the aggregate's control network provides: they are
//! accepted and create nothing. Everything else is refused with its
//! line: docs/languages/hot.md has the table.

mod flavors;
mod functions;
mod network;
mod outputs;
mod servers;
mod volumes;

use crate::yaml::params::{Dialect, Params};
use crate::yaml::{self, Problems, Yaml};
use crate::{Inputs, Offer, Refusals, Request};
use functions::{Val, eval};

/// Translates `text` (named `source` in messages) against `offer`.
pub fn translate(
    source: &str,
    text: &str,
    inputs: &Inputs,
    offer: &Offer,
) -> Result<Request, Refusals> {
    yaml::translate(source, text, |doc, problems| {
        read(doc, inputs, offer, problems)
    })
}

/// What the aggregate does with a resource type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A VM.
    Server,
    /// A link.
    Net,
    /// Addresses on a link.
    Subnet,
    /// An interface.
    Port,
    /// A disk.
    Volume,
    /// A disk attached to a VM.
    Attachment,
    /// An address reaching a VM from outside: its control address.
    FloatingIp,
    /// Accepted, creating nothing.
    Ignored,
}

/// One resource of the template.
#[derive(Debug, Clone)]
pub(crate) struct Resource {
    /// Its name.
    pub name: String,
    /// What it becomes.
    pub kind: Kind,
    /// Its `properties` (an empty mapping when it has none).
    pub properties: Yaml,
    /// The line of its name.
    pub line: usize,
}

impl Resource {
    /// The value of property `key`.
    pub fn prop(&self, key: &str, ctx: &Ctx<'_>, problems: &mut Problems) -> Val {
        match self.properties.get(key) {
            Some(v) => eval(v, ctx.params, &ctx.names, problems),
            None => Val::Unset,
        }
    }
}

/// What evaluating properties needs.
pub(crate) struct Ctx<'a> {
    /// The parameters.
    pub params: &'a Params,
    /// The names of all resources, for `get_resource`.
    pub names: Vec<String>,
    /// The resources the aggregate reads.
    pub resources: Vec<Resource>,
}

impl Ctx<'_> {
    /// The resource called `name`.
    pub fn resource(&self, name: &str) -> Option<&Resource> {
        self.resources.iter().find(|r| r.name == name)
    }
}

/// The category of a resource type: what it becomes, or why it is refused.
fn kind(type_name: &str) -> Result<Kind, String> {
    let family = |prefix: &str| type_name.starts_with(prefix);
    Ok(match type_name {
        "OS::Nova::Server" => Kind::Server,
        "OS::Neutron::Net" => Kind::Net,
        "OS::Neutron::Subnet" => Kind::Subnet,
        "OS::Neutron::Port" => Kind::Port,
        "OS::Cinder::Volume" => Kind::Volume,
        "OS::Cinder::VolumeAttachment" => Kind::Attachment,
        "OS::Neutron::FloatingIP" | "OS::Neutron::FloatingIPAssociation" => Kind::FloatingIp,
        "OS::Neutron::Router"
        | "OS::Neutron::RouterInterface"
        | "OS::Neutron::RouterGateway"
        | "OS::Neutron::SecurityGroup"
        | "OS::Neutron::SecurityGroupRule"
        | "OS::Nova::KeyPair" => Kind::Ignored,
        "OS::Heat::AutoScalingGroup" | "OS::Heat::ScalingPolicy" | "OS::Heat::InstanceGroup" => {
            return Err("autoscaling (scaling groups and policies)".to_owned())
        }
        _ if family("AWS::AutoScaling::") || family("OS::Senlin::") => {
            return Err("autoscaling (scaling groups and policies)".to_owned())
        }
        "OS::Heat::ResourceGroup" => return Err("a group of resources made at run time".to_owned()),
        "OS::Swift::Container" => return Err("object storage (Swift containers)".to_owned()),
        _ if family("OS::Zun::") || family("DockerInc::") => return Err("a container".to_owned()),
        "OS::Heat::SoftwareConfig"
        | "OS::Heat::SoftwareDeployment"
        | "OS::Heat::SoftwareDeployments"
        | "OS::Heat::SoftwareDeploymentGroup"
        | "OS::Heat::SoftwareComponent"
        | "OS::Heat::StructuredConfig"
        | "OS::Heat::StructuredDeployment"
        | "OS::Heat::StructuredDeployments"
        | "OS::Heat::StructuredDeploymentGroup"
        | "OS::Heat::CloudConfig"
        | "OS::Heat::MultipartMime" => {
            return Err(
                "software configuration (SoftwareConfig and deployments), which needs a configuration agent on the VM"
                    .to_owned(),
            )
        }
        _ if family("OS::Octavia::") || family("OS::Neutron::LBaaS::") => {
            return Err("a load balancer".to_owned())
        }
        "OS::Neutron::LoadBalancer" | "OS::Neutron::Pool" | "OS::Neutron::PoolMember" | "OS::Neutron::HealthMonitor" => {
            return Err("a load balancer".to_owned())
        }
        _ if family("OS::Magnum::") => {
            return Err("a Magnum container orchestration engine (Kubernetes) cluster".to_owned())
        }
        "OS::Heat::WaitCondition" | "OS::Heat::WaitConditionHandle" | "OS::Heat::SwiftSignal" | "OS::Heat::SwiftSignalHandle" => {
            return Err("a wait condition, signalled by an agent on the VM".to_owned())
        }
        _ if type_name.ends_with(".yaml") || type_name.ends_with(".template") || type_name.contains("://") => {
            return Err("a nested template, which is never sent to the aggregate".to_owned())
        }
        _ => return Err("an unknown resource type".to_owned()),
    })
}

const SECTIONS: &[&str] = &[
    "heat_template_version",
    "description",
    "parameter_groups",
    "parameters",
    "resources",
    "outputs",
];

fn read(doc: &Yaml, inputs: &Inputs, offer: &Offer, problems: &mut Problems) -> Request {
    if !doc.is_map() || doc.get("heat_template_version").is_none() {
        problems.refuse(
            doc.line,
            "a HOT template is a YAML mapping with heat_template_version",
        );
        return Request::default();
    }
    for (key, _) in doc.entries() {
        let name = key.as_str().unwrap_or("");
        if !SECTIONS.contains(&name) {
            problems.refuse(
                key.line,
                format!("section {name}: not supported by this aggregate"),
            );
        }
    }
    let params = Params::new(doc.get("parameters"), inputs, Dialect::Hot, problems);
    let entries = doc.get("resources").map(Yaml::entries).unwrap_or_default();
    let names: Vec<String> = entries
        .iter()
        .filter_map(|(k, _)| k.as_str().map(str::to_owned))
        .collect();
    let mut resources = Vec::new();
    for (key, resource) in entries {
        let name = key.as_str().unwrap_or("").to_owned();
        let type_name = resource.get("type").and_then(Yaml::as_str).unwrap_or("");
        for (k, v) in resource.entries() {
            match k.as_str().unwrap_or("") {
                "type" | "properties" | "depends_on" | "metadata" | "deletion_policy"
                | "update_policy" | "external_id" => {}
                other => problems.refuse(
                    v.line,
                    format!("resource '{name}': {other}: not supported by this aggregate"),
                ),
            }
        }
        match kind(type_name) {
            Ok(kind) => resources.push(Resource {
                name,
                kind,
                properties: resource
                    .get("properties")
                    .cloned()
                    .unwrap_or_else(|| Yaml::scalar("", true, key.line, key.column)),
                line: key.line,
            }),
            Err(what) => problems.refuse(
                key.line,
                format!(
                    "resource '{name}' of type {type_name}: {what}: not supported by this aggregate"
                ),
            ),
        }
    }
    if !resources.iter().any(|r| r.kind == Kind::Server) && problems.is_empty() {
        problems.refuse(
            doc.line,
            "the template has no OS::Nova::Server: nothing for the aggregate to create",
        );
    }
    let ctx = Ctx {
        params: &params,
        names,
        resources,
    };
    let built = servers::build(&ctx, offer, problems);
    let outputs = yaml::outputs(doc.get("outputs"), |v| {
        outputs::value(v, &ctx, &built, problems)
    });
    Request {
        nodes: built.nodes,
        links: built.links,
        outputs,
    }
}

#[cfg(test)]
mod tests;
