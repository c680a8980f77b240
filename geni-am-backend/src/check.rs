//! The findings of `geni-am backend check`: whether a backend can serve,
//! as one finding per aspect, each passed or failed with a message an
//! operator can act on. A backend that needs no connection (the simulated
//! cloud) is checked by listing its [`inventory`]; a backend behind a
//! network adds findings of its own (the OpenNebula crate has them).

use super::{BackendConfigError, Compute};

/// One finding of a check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// Whether the aspect is fine.
    pub ok: bool,
    /// What was checked (`endpoint`, `sliver type vm-small`, …).
    pub subject: String,
    /// What was found and, on failure, what to do about it.
    pub message: String,
}

impl Finding {
    /// A passed check.
    pub fn pass(subject: impl Into<String>, message: impl Into<String>) -> Finding {
        Finding {
            ok: true,
            subject: subject.into(),
            message: message.into(),
        }
    }

    /// A failed check.
    pub fn fail(subject: impl Into<String>, message: impl Into<String>) -> Finding {
        Finding {
            ok: false,
            subject: subject.into(),
            message: message.into(),
        }
    }

    /// The finding as one line: `✓ subject: message` or `✗ subject: message`.
    pub fn line(&self) -> String {
        let mark = if self.ok { '✓' } else { '✗' };
        format!("{mark} {}: {}", self.subject, self.message)
    }
}

/// A section the backend cannot be built from.
pub fn configuration(err: BackendConfigError) -> Finding {
    Finding::fail(err.key, err.problem)
}

/// The inventory of a backend that needs no connection: one finding for
/// the backend, one per host and one per sliver type.
pub fn inventory(cloud: &dyn Compute) -> Vec<Finding> {
    let inventory = match cloud.inventory() {
        Ok(inventory) => inventory,
        Err(err) => return vec![Finding::fail(cloud.name(), err.to_string())],
    };
    let mut findings = vec![Finding::pass(
        cloud.name(),
        format!(
            "{} hosts, {} sliver types (nothing to connect to)",
            inventory.hosts.len(),
            inventory.sliver_types.len()
        ),
    )];
    findings.extend(inventory.hosts.iter().map(|host| {
        Finding::pass(
            format!("host {}", host.name),
            format!(
                "{} CPUs, {} MiB, at most {} VMs ({})",
                host.cpus, host.memory_mb, host.max_vms, host.component_id
            ),
        )
    }));
    findings.extend(inventory.sliver_types.iter().map(|kind| {
        let images: Vec<&str> = kind.disk_images.iter().map(|i| i.name.as_str()).collect();
        Finding::pass(
            format!("sliver type {}", kind.name),
            format!(
                "{} CPUs, {} MiB, images: {}",
                kind.cpus,
                kind.memory_mb,
                if images.is_empty() {
                    "none".to_owned()
                } else {
                    images.join(", ")
                }
            ),
        )
    }));
    findings
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim;

    #[test]
    fn the_simulated_cloud_lists_its_inventory() {
        let config = toml::from_str(sim::config::SAMPLE_SECTION).unwrap();
        let cloud = sim::SimulatedCloud::new(&config, "am.example").unwrap();
        let findings = inventory(&cloud);
        assert!(findings.iter().all(|f| f.ok), "{findings:?}");
        assert!(findings[0].line().starts_with("✓ simulated cloud: 2 hosts"));
        assert!(
            findings.iter().any(|f| f.subject.starts_with("host ")
                && f.message.contains("urn:publicid:IDN+am.example+node+")),
            "{findings:?}"
        );
    }

    #[test]
    fn a_section_that_cannot_be_used_is_a_failed_finding_on_its_key() {
        let finding = configuration(BackendConfigError {
            key: "backend.sim.hosts".into(),
            problem: "no hosts".into(),
        });
        assert_eq!(finding.line(), "✗ backend.sim.hosts: no hosts");
    }
}
