//! The backend's inventory as the aggregate offers it: one component per
//! host, with the sliver types that fit on it. The aggregate seeds its
//! capacity rows from these at start and rewrites them on every inventory
//! refresh, so it allocates against what the cloud really offers now, and
//! does not offer hosts the cloud reports full.

use super::{Host, Inventory, SliverType};

/// One host of the inventory as an allocatable component: shared (not
/// exclusive), available when the cloud says the host can take a VM.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Component<'a> {
    /// The host.
    pub host: &'a Host,
    /// The sliver types that fit on it, in the inventory's order (the
    /// first image of each type is its default).
    pub sliver_types: Vec<&'a SliverType>,
}

/// One component per host of `inventory`, offering every sliver type that
/// fits on it.
pub fn components(inventory: &Inventory) -> Vec<Component<'_>> {
    inventory
        .hosts
        .iter()
        .map(|host| Component {
            host,
            sliver_types: inventory
                .sliver_types
                .iter()
                .filter(|kind| fits(kind, host))
                .collect(),
        })
        .collect()
}

/// Whether one VM of `kind` fits on an empty `host`.
fn fits(kind: &SliverType, host: &Host) -> bool {
    kind.cpus <= host.cpus && kind.memory_mb <= host.memory_mb
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Compute;
    use crate::sim::SimulatedCloud;
    use crate::sim::config::{SAMPLE_SECTION, SimConfig};

    #[test]
    fn every_host_is_a_component_with_the_types_that_fit_it() {
        let mut config: SimConfig = toml::from_str(SAMPLE_SECTION).unwrap();
        config.sliver_types.push(config.sliver_types[0].clone());
        config.sliver_types[1].name = "large".into();
        config.sliver_types[1].cpus = 2;
        let cloud = SimulatedCloud::new(&config, "am.example").unwrap();
        let inventory = cloud.inventory().unwrap();
        let components = components(&inventory);
        assert_eq!(components.len(), 2);
        assert_eq!(
            components[0].host.component_id,
            "urn:publicid:IDN+am.example+node+host1"
        );
        let types = |component: &Component| -> Vec<String> {
            component
                .sliver_types
                .iter()
                .map(|t| t.name.clone())
                .collect()
        };
        assert_eq!(types(&components[0]), ["small", "large"]);
        assert_eq!(types(&components[1]), ["small"], "host2 has one cpu");
    }
}
