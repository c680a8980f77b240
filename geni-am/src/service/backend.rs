//! The backend the `[backend]` section names: the simulated cloud of the
//! `geni-am-backend` crate or the OpenNebula driver of `geni-am-opennebula`,
//! built for serving ([`from_config`]) or checked for an operator
//! ([`check`], what `geni-am backend check` prints).

use crate::config::{BackendConfig, BackendKind};
use geni_am_backend::check::{Finding, configuration, inventory};
use geni_am_backend::sim::SimulatedCloud;
use geni_am_backend::{BackendConfigError, Compute};
use geni_am_opennebula::OpenNebulaCloud;
use std::sync::Arc;

/// The backend the `[backend]` section names, with host URNs under
/// `authority`. The configuration is expected to be validated; a missing
/// or invalid section is still reported with its key.
pub fn from_config(
    config: &BackendConfig,
    authority: &str,
) -> Result<Arc<dyn Compute>, BackendConfigError> {
    let missing = |key: &str, kind: &str| BackendConfigError {
        key: format!("backend.{key}"),
        problem: format!("kind = \"{kind}\" needs a [backend.{key}] section"),
    };
    match config.kind {
        BackendKind::Sim => {
            let section = config.sim.as_ref().ok_or_else(|| missing("sim", "sim"))?;
            Ok(Arc::new(SimulatedCloud::new(section, authority)?))
        }
        BackendKind::OpenNebula => {
            let section = config
                .opennebula
                .as_ref()
                .ok_or_else(|| missing("opennebula", "opennebula"))?;
            Ok(Arc::new(OpenNebulaCloud::connect(section, authority)?))
        }
    }
}

/// Checks the backend of a validated `[backend]` section (host URNs under
/// `authority`): the simulated cloud lists its inventory, OpenNebula runs
/// the checks of `geni_am_opennebula::check`.
pub fn check(config: &BackendConfig, authority: &str) -> Vec<Finding> {
    let missing = |key: &str| {
        vec![Finding::fail(
            format!("backend.{key}"),
            format!("the section [backend.{key}] is missing"),
        )]
    };
    match config.kind {
        BackendKind::Sim => match &config.sim {
            Some(section) => match SimulatedCloud::new(section, authority) {
                Ok(cloud) => inventory(&cloud),
                Err(err) => vec![configuration(err.into())],
            },
            None => missing("sim"),
        },
        BackendKind::OpenNebula => match &config.opennebula {
            Some(section) => geni_am_opennebula::check::check(section),
            None => missing("opennebula"),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use geni_am_backend::sim::config::SAMPLE_SECTION as SIM_SECTION;
    use geni_am_opennebula::config::SAMPLE_SECTION as ONE_SECTION;

    #[test]
    fn the_configured_backend_is_built() {
        let sim = toml::from_str(SIM_SECTION).unwrap();
        let mut config = BackendConfig {
            kind: BackendKind::Sim,
            sim: Some(sim),
            opennebula: None,
        };
        let backend = from_config(&config, "am.example").unwrap();
        assert_eq!(backend.name(), "simulated cloud");
        assert_eq!(backend.inventory().unwrap().hosts.len(), 2);
        config.sim = None;
        let err = from_config(&config, "am.example").err().unwrap();
        assert_eq!(err.key, "backend.sim");
    }

    #[test]
    fn the_opennebula_backend_is_built_from_its_section() {
        let one = toml::from_str(ONE_SECTION).unwrap();
        let mut config = BackendConfig {
            kind: BackendKind::OpenNebula,
            sim: None,
            opennebula: Some(one),
        };
        let backend = from_config(&config, "am.example").unwrap();
        assert_eq!(backend.name(), "OpenNebula cloud");
        if let Some(one) = config.opennebula.as_mut() {
            one.endpoint = "ftp://one".into();
        }
        let err = from_config(&config, "am.example").err().unwrap();
        assert_eq!(err.key, "backend.opennebula.endpoint");
        config.opennebula = None;
        let err = from_config(&config, "am.example").err().unwrap();
        assert_eq!(err.key, "backend.opennebula");
    }

    #[test]
    fn the_simulated_cloud_is_checked_by_its_inventory() {
        let config = BackendConfig {
            kind: BackendKind::Sim,
            sim: Some(toml::from_str(SIM_SECTION).unwrap()),
            opennebula: None,
        };
        let findings = check(&config, "am.example");
        assert!(findings.iter().all(|f| f.ok), "{findings:?}");
        assert!(findings[0].line().starts_with("✓ simulated cloud: 2 hosts"));
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
