//! `geni-am backend check`: whether the configured backend can serve, as
//! one finding per aspect, each passed or failed with a message an operator
//! can act on. The simulated cloud always passes and lists its inventory;
//! the OpenNebula checks are in [`crate::backend::opennebula::check`].

use super::{BackendConfigError, Compute, sim};
use crate::config::{BackendConfig, BackendKind};

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

/// Checks the backend of a validated `[backend]` section (host URNs under
/// `authority`).
pub fn check(config: &BackendConfig, authority: &str) -> Vec<Finding> {
    let missing = |key: &str| {
        vec![Finding::fail(
            format!("backend.{key}"),
            format!("the section [backend.{key}] is missing"),
        )]
    };
    match config.kind {
        BackendKind::Sim => match &config.sim {
            Some(section) => match sim::SimulatedCloud::new(section, authority) {
                Ok(cloud) => inventory(&cloud),
                Err(err) => vec![configuration(err.into())],
            },
            None => missing("sim"),
        },
        BackendKind::OpenNebula => match &config.opennebula {
            Some(section) => super::opennebula::check::check(section),
            None => missing("opennebula"),
        },
    }
}

/// A section the backend cannot be built from.
pub fn configuration(err: BackendConfigError) -> Finding {
    Finding::fail(err.key, err.problem)
}

/// The inventory of a backend that needs no connection: one finding for
/// the backend, one per host and one per sliver type.
fn inventory(cloud: &dyn Compute) -> Vec<Finding> {
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

    #[test]
    fn the_simulated_cloud_lists_its_inventory() {
        let config = BackendConfig {
            kind: BackendKind::Sim,
            sim: Some(toml::from_str(sim::config::SAMPLE_SECTION).unwrap()),
            opennebula: None,
        };
        let findings = check(&config, "am.example");
        assert!(findings.iter().all(|f| f.ok), "{findings:?}");
        assert!(findings[0].line().starts_with("✓ simulated cloud: 2 hosts"));
        assert!(
            findings.iter().any(|f| f.subject.starts_with("host ")
                && f.message.contains("urn:publicid:IDN+am.example+node+")),
            "{findings:?}"
        );
        let missing = check(
            &BackendConfig {
                sim: None,
                ..config
            },
            "am.example",
        );
        assert_eq!(
            missing[0].line(),
            "✗ backend.sim: the section [backend.sim] is missing"
        );
    }
}
