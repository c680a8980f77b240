//! The backend's components as the store's capacity rows: `serve` seeds
//! the components table with [`component_rows`], and the jobs' inventory
//! refresh rewrites it periodically.

use super::{ComponentDetails, ComponentRow, DiskImageSpec, SliverTypeSpec};
use geni_am_backend::components::components;
use geni_am_backend::{Inventory, SliverType};

/// One row per component of `inventory` (see
/// [`geni_am_backend::components::components`]): shared, available when the
/// cloud says the host can take a VM, offering the sliver types that fit on
/// it; the first image of each type is its default.
pub fn component_rows(inventory: &Inventory) -> Vec<ComponentRow> {
    components(inventory)
        .into_iter()
        .map(|component| {
            let host = component.host;
            ComponentRow {
                id: host.component_id.clone(),
                name: host.name.clone(),
                cpus: i64::from(host.cpus),
                memory_mb: i64::try_from(host.memory_mb).unwrap_or(i64::MAX),
                max_vms: i64::from(host.max_vms),
                exclusive: false,
                available: host.available,
                details: ComponentDetails {
                    hardware_types: vec![host.hardware_type.clone()],
                    sliver_types: component
                        .sliver_types
                        .into_iter()
                        .map(sliver_type_spec)
                        .collect(),
                    location: None,
                },
            }
        })
        .collect()
}

fn sliver_type_spec(kind: &SliverType) -> SliverTypeSpec {
    SliverTypeSpec {
        name: kind.name.clone(),
        cpus: i64::from(kind.cpus),
        cores: Some(i64::from(kind.cores)),
        memory_mb: i64::try_from(kind.memory_mb).unwrap_or(i64::MAX),
        max_cores: Some(i64::from(kind.max_size.cores)),
        max_ram_mb: Some(i64::try_from(kind.max_size.ram_mb).unwrap_or(i64::MAX)),
        max_disk_gb: kind
            .max_size
            .disk_gb
            .map(|gb| i64::try_from(gb).unwrap_or(i64::MAX)),
        disk_images: kind
            .disk_images
            .iter()
            .enumerate()
            .map(|(i, image)| DiskImageSpec {
                name: image.name.clone(),
                os: non_empty(&image.os),
                version: non_empty(&image.version),
                description: non_empty(&image.description),
                default: i == 0,
            })
            .collect(),
    }
}

fn non_empty(text: &str) -> Option<String> {
    (!text.is_empty()).then(|| text.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use geni_am_backend::Compute;
    use geni_am_backend::sim::SimulatedCloud;
    use geni_am_backend::sim::config::{SAMPLE_SECTION, SimConfig};

    #[test]
    fn every_host_becomes_a_row_with_the_types_that_fit_it() {
        let mut config: SimConfig = toml::from_str(SAMPLE_SECTION).unwrap();
        config.sliver_types.push(config.sliver_types[0].clone());
        config.sliver_types[1].name = "large".into();
        config.sliver_types[1].cpus = 2;
        let cloud = SimulatedCloud::new(&config, "am.example").unwrap();
        let mut inventory = cloud.inventory().unwrap();
        inventory.hosts[1].available = false;
        let rows = component_rows(&inventory);
        assert_eq!(rows.len(), 2);
        assert!(rows[0].available);
        assert!(!rows[1].available, "a host the cloud reports full");
        assert_eq!(rows[0].id, "urn:publicid:IDN+am.example+node+host1");
        assert_eq!(
            (rows[0].cpus, rows[0].memory_mb, rows[0].max_vms),
            (2, 4096, 2)
        );
        let types = |row: &ComponentRow| -> Vec<String> {
            row.details
                .sliver_types
                .iter()
                .map(|t| t.name.clone())
                .collect()
        };
        assert_eq!(types(&rows[0]), ["small", "large"]);
        assert_eq!(types(&rows[1]), ["small"], "host2 has one cpu");
        let image = &rows[0].details.sliver_types[0].disk_images[0];
        assert!(image.default);
        assert_eq!(image.os.as_deref(), Some("Linux"));
        assert_eq!(image.version, None);
    }
}
