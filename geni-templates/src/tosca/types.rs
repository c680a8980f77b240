//! What a TOSCA node type is, as far as a VM aggregate is concerned: the
//! normative types (full names, `tosca:` names and short names), the
//! types a template declares in `node_types` (followed through
//! `derived_from` to a normative one), and the few types of the INDIGO
//! profile that templates name by URL (`tosca.nodes.indigo.Compute` and
//! its kin), known without fetching the profile.

use crate::yaml::Yaml;
use std::collections::HashMap;

/// What the aggregate does with nodes of a type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Category {
    /// A VM.
    Compute,
    /// A disk attached to a VM.
    BlockStorage,
    /// A link.
    Network,
    /// An interface of a VM on a link.
    Port,
    /// Refused: what the type is, for the message.
    Refused(String),
}

/// The node templates the aggregate reads: name, template (its line that
/// of its name) and category, in document order.
#[derive(Debug, Default)]
pub(crate) struct Nodes(pub Vec<(String, Yaml, Category)>);

impl Nodes {
    /// The category of the node template called `name`.
    pub fn category(&self, name: &str) -> Option<&Category> {
        self.0.iter().find(|(n, ..)| n == name).map(|(_, _, c)| c)
    }
}

/// The node types a template declares: name → (`derived_from`, whether
/// it adds operations or artifacts of its own).
#[derive(Debug, Default)]
pub(crate) struct Declared {
    types: HashMap<String, (String, bool)>,
    /// Whether the INDIGO profile is imported.
    pub indigo: bool,
}

const SOFTWARE: &str = "a software component, which needs a configuration manager to install it";

impl Declared {
    /// Reads `node_types`.
    pub fn new(section: Option<&Yaml>, indigo: bool) -> Declared {
        let mut types = HashMap::new();
        for (name, definition) in section.map(Yaml::entries).unwrap_or_default() {
            let (Some(name), Some(parent)) = (
                name.as_str(),
                definition.get("derived_from").and_then(Yaml::as_str),
            ) else {
                continue;
            };
            let adds_operations =
                definition.get("interfaces").is_some() || definition.get("artifacts").is_some();
            types.insert(name.to_owned(), (parent.to_owned(), adds_operations));
        }
        Declared { types, indigo }
    }

    /// The category of type `name`, or `None` when it is unknown.
    pub fn category(&self, name: &str) -> Option<Category> {
        let mut current = name.to_owned();
        let mut adds_operations = false;
        for _ in 0..32 {
            if let Some(category) = normative(&current).or_else(|| self.indigo_type(&current)) {
                return Some(match category {
                    Category::Compute | Category::BlockStorage if adds_operations => {
                        Category::Refused(format!(
                            "a type derived from {current} that adds operations or artifacts of its own"
                        ))
                    }
                    c => c,
                });
            }
            let (parent, adds) = self.types.get(&current)?;
            adds_operations |= adds;
            current.clone_from(parent);
        }
        None
    }

    fn indigo_type(&self, name: &str) -> Option<Category> {
        let rest = name.strip_prefix("tosca.nodes.indigo.")?;
        if !self.indigo {
            return None;
        }
        Some(match rest {
            "Compute" | "MonitoredCompute" => Category::Compute,
            _ if rest.contains("Kubernetes") => Category::Refused(
                "Kubernetes, a container orchestrator installed as a software component".to_owned(),
            ),
            _ if rest.starts_with("Container.") || rest == "DEEPaaScont" => {
                Category::Refused("a container".to_owned())
            }
            _ if rest.starts_with("LRMS.") => Category::Refused(SOFTWARE.to_owned()),
            _ => return None,
        })
    }
}

/// The category of a normative type, by any of its names.
fn normative(name: &str) -> Option<Category> {
    let full = match name.strip_prefix("tosca:") {
        Some(short) => format!("tosca.nodes.{short}"),
        None if !name.contains('.') || name.starts_with("network.") => {
            format!("tosca.nodes.{name}")
        }
        None => name.to_owned(),
    };
    let full = match full.as_str() {
        "tosca.nodes.Network" => "tosca.nodes.network.Network".to_owned(),
        "tosca.nodes.Port" => "tosca.nodes.network.Port".to_owned(),
        _ => full,
    };
    let refused = |what: &str| Some(Category::Refused(what.to_owned()));
    let is = |base: &str| full == base || full.starts_with(&format!("{base}."));
    match full.as_str() {
        "tosca.nodes.Compute" => Some(Category::Compute),
        "tosca.nodes.BlockStorage" => Some(Category::BlockStorage),
        "tosca.nodes.network.Network" => Some(Category::Network),
        "tosca.nodes.network.Port" => Some(Category::Port),
        "tosca.nodes.Root" => refused("an abstract node"),
        _ if is("tosca.nodes.SoftwareComponent") => refused(SOFTWARE),
        _ if is("tosca.nodes.WebServer") => refused("a web server, a software component"),
        _ if is("tosca.nodes.WebApplication") => refused("a web application, a software component"),
        _ if is("tosca.nodes.DBMS") => {
            refused("a database management system (DBMS), a software component")
        }
        _ if is("tosca.nodes.Database") => refused("a database, a software component"),
        _ if is("tosca.nodes.Container") => refused("a container"),
        _ if is("tosca.nodes.LoadBalancer") => refused("a load balancer"),
        _ if is("tosca.nodes.ObjectStorage") => refused("object storage"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::tree::load;

    #[test]
    fn normative_types_are_known_by_every_name() {
        let d = Declared::default();
        assert_eq!(d.category("Compute"), Some(Category::Compute));
        assert_eq!(d.category("tosca:Compute"), Some(Category::Compute));
        assert_eq!(d.category("tosca.nodes.network.Port"), Some(Category::Port));
        assert_eq!(d.category("BlockStorage"), Some(Category::BlockStorage));
        assert!(
            matches!(d.category("tosca.nodes.WebApplication.WordPress"), Some(Category::Refused(w)) if w.contains("web application"))
        );
        assert_eq!(d.category("tosca.nodes.Frobnicator"), None);
    }

    #[test]
    fn declared_types_are_followed_to_a_normative_one() {
        let doc = load("my.Big:\n  derived_from: my.Base\nmy.Base:\n  derived_from: tosca.nodes.Compute\nmy.Scripted:\n  derived_from: Compute\n  interfaces: {}\nmy.Loop:\n  derived_from: my.Loop\n").unwrap();
        let d = Declared::new(Some(&doc), false);
        assert_eq!(d.category("my.Big"), Some(Category::Compute));
        assert!(matches!(
            d.category("my.Scripted"),
            Some(Category::Refused(_))
        ));
        assert_eq!(d.category("my.Loop"), None);
    }

    #[test]
    fn indigo_types_are_known_only_when_the_profile_is_imported() {
        assert_eq!(
            Declared::default().category("tosca.nodes.indigo.Compute"),
            None
        );
        let d = Declared {
            indigo: true,
            ..Declared::default()
        };
        assert_eq!(
            d.category("tosca.nodes.indigo.Compute"),
            Some(Category::Compute)
        );
        assert!(
            matches!(d.category("tosca.nodes.indigo.LRMS.FrontEnd.Kubernetes"), Some(Category::Refused(w)) if w.contains("Kubernetes"))
        );
        assert!(
            matches!(d.category("tosca.nodes.indigo.DEEPaaScont"), Some(Category::Refused(w)) if w.contains("container"))
        );
    }
}
