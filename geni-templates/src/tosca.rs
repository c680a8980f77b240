//! TOSCA Simple Profile in YAML 1.0 service templates into a [`Request`].
//!
//! `tosca.nodes.Compute` nodes (and types derived from it) become VMs,
//! sized by their `host` capability and booting the offered image their
//! `os` capability describes; `tosca.nodes.network.Network` nodes become
//! links and `tosca.nodes.network.Port` nodes the interfaces joining
//! them; `tosca.nodes.BlockStorage` attached to a VM adds its size to the
//! VM's disk. Inputs, outputs and plain boot scripts are kept. Everything
//! else is refused with its line: docs/languages/tosca.md has the table.

mod compute;
mod eval;
mod network;
mod scripts;
mod topology;
mod types;

use crate::yaml::params::{Dialect, Params};
use crate::yaml::{self, Problems, Yaml};
use crate::{Inputs, Offer, Refusals, Request};
use topology::Topology;
use types::{Category, Declared};

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
                node_keys(&name, template, &category, problems);
                // Messages about the node point at its name.
                let mut template = template.clone();
                template.line = key.line;
                t.nodes.0.push((name, template, category));
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

/// Refuses what a node template says that its category does not read:
/// directives, node filters and copies, and operations or artifacts of
/// anything but a Compute node.
fn node_keys(name: &str, template: &Yaml, category: &Category, problems: &mut Problems) {
    for (key, value) in template.entries() {
        let k = key.as_str().unwrap_or("");
        let read = match k {
            "type" | "description" | "metadata" | "properties" | "attributes" | "requirements"
            | "capabilities" => true,
            "interfaces" | "artifacts" => *category == Category::Compute,
            _ => false,
        };
        if !read {
            problems.refuse(
                value.line,
                format!("node '{name}': {k}: not supported by this aggregate"),
            );
        }
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

#[cfg(test)]
mod tests;
