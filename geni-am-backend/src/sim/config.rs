//! The `[backend.sim]` configuration section: the simulated cloud's
//! inventory, timings and failure rate, with validation that names the key
//! at fault.

use serde::Deserialize;
use std::net::Ipv4Addr;
use thiserror::Error;

/// The `[backend.sim]` section of the configuration file.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SimConfig {
    /// Milliseconds a new VM stays pending before it is defined (powered off).
    #[serde(default = "default_create_delay_ms")]
    pub create_delay_ms: u64,
    /// Milliseconds a VM boots (after start or restart) before it runs.
    #[serde(default = "default_boot_delay_ms")]
    pub boot_delay_ms: u64,
    /// Milliseconds a VM takes to power off.
    #[serde(default = "default_stop_delay_ms")]
    pub stop_delay_ms: u64,
    /// Probability in `[0, 1]` that a boot fails.
    #[serde(default)]
    pub failure_rate: f64,
    /// Seed of the failure draws: one seed, one tag and one boot number
    /// always give the same outcome.
    #[serde(default)]
    pub seed: u64,
    /// DNS domain of the simulated VMs' host names.
    #[serde(default = "default_domain")]
    pub domain: String,
    /// IPv4 subnet of the control network (`a.b.c.d/n`, `n` at most 30).
    #[serde(default = "default_control_subnet")]
    pub control_subnet: String,
    /// The simulated hosts.
    pub hosts: Vec<SimHostConfig>,
    /// The VM flavours.
    pub sliver_types: Vec<SimSliverTypeConfig>,
    /// JSON file the simulated VMs and networks are saved to on every
    /// change and reloaded from at start, so they outlive a restart of
    /// the aggregate; unset, they live in the process only.
    #[serde(default)]
    pub state_file: Option<std::path::PathBuf>,
}

/// One `[[backend.sim.hosts]]` entry.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SimHostConfig {
    /// Short host name; the component URN is built from it.
    pub name: String,
    /// CPU cores available to VMs.
    pub cpus: u32,
    /// Memory available to VMs, in MiB.
    pub memory_mb: u64,
    /// The most VMs the host runs at once.
    pub max_vms: u32,
}

/// One `[[backend.sim.sliver_types]]` entry.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SimSliverTypeConfig {
    /// The `sliver_type` name requests use.
    pub name: String,
    /// CPU cores one VM takes.
    pub cpus: u32,
    /// Memory one VM takes, in MiB.
    pub memory_mb: u64,
    /// The most cores a request may ask for (`<emulab:xen cores>`);
    /// unset: `cpus`.
    #[serde(default)]
    pub max_cores: Option<u32>,
    /// The most memory a request may ask for, in MiB (`ram`); unset:
    /// `memory_mb`.
    #[serde(default)]
    pub max_ram_mb: Option<u64>,
    /// The largest disk a request may ask for, in GB (`disk`); unset: a
    /// disk size asked for is not granted.
    #[serde(default)]
    pub max_disk_gb: Option<u64>,
    /// Bootable images; the first is the default.
    pub disk_images: Vec<SimDiskImageConfig>,
}

/// One `[[backend.sim.sliver_types.disk_images]]` entry.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SimDiskImageConfig {
    /// Image name or URN.
    pub name: String,
    /// Operating system family.
    #[serde(default)]
    pub os: String,
    /// Operating system version.
    #[serde(default)]
    pub version: String,
    /// Description shown in the advertisement.
    #[serde(default)]
    pub description: String,
}

/// A `[backend.sim]` value that cannot work, with the key that holds it.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{key}: {problem}")]
pub struct SimConfigError {
    /// Dotted path of the key, e.g. `backend.sim.hosts[1].cpus`.
    pub key: String,
    /// What is wrong and what is expected.
    pub problem: String,
}

fn default_create_delay_ms() -> u64 {
    200
}

fn default_boot_delay_ms() -> u64 {
    2000
}

fn default_stop_delay_ms() -> u64 {
    500
}

fn default_domain() -> String {
    "sim.geni-am.test".to_owned()
}

fn default_control_subnet() -> String {
    "10.10.0.0/16".to_owned()
}

/// An IPv4 subnet, parsed from `a.b.c.d/n`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, Deserialize)]
pub struct Subnet {
    /// The network address (host bits cleared).
    pub base: Ipv4Addr,
    /// Prefix length.
    pub prefix: u8,
}

impl Subnet {
    /// Parses `a.b.c.d/n` with `8 <= n <= 30`.
    pub fn parse(text: &str) -> Result<Subnet, String> {
        let (addr, prefix) = text
            .split_once('/')
            .ok_or_else(|| format!("`{text}` is not a subnet; expected a.b.c.d/n"))?;
        let addr: Ipv4Addr = addr
            .parse()
            .map_err(|_| format!("`{addr}` is not an IPv4 address"))?;
        let prefix: u8 = prefix
            .parse()
            .ok()
            .filter(|p| (8..=30).contains(p))
            .ok_or_else(|| format!("prefix `/{prefix}` must be a number from 8 to 30"))?;
        let mask = u32::MAX << (32 - prefix);
        Ok(Subnet {
            base: Ipv4Addr::from(u32::from(addr) & mask),
            prefix,
        })
    }

    /// Number of host offsets usable for VMs (network, gateway and
    /// broadcast addresses excluded).
    pub fn capacity(&self) -> u32 {
        (1u32 << (32 - self.prefix)) - 3
    }

    /// The address of VM number `index` (0-based), after the gateway.
    pub fn address(&self, index: u32) -> Ipv4Addr {
        Ipv4Addr::from(u32::from(self.base) + 2 + index)
    }
}

impl SimConfig {
    /// Checks every value, returning the first problem found.
    pub fn validate(&self) -> Result<(), SimConfigError> {
        let fail = |key: String, problem: &str| {
            Err(SimConfigError {
                key,
                problem: problem.to_owned(),
            })
        };
        if !(0.0..=1.0).contains(&self.failure_rate) {
            return fail(
                "backend.sim.failure_rate".into(),
                "must be a probability from 0.0 to 1.0",
            );
        }
        if self.domain.trim().is_empty() {
            return fail("backend.sim.domain".into(), "must not be empty");
        }
        if let Err(problem) = Subnet::parse(&self.control_subnet) {
            return fail("backend.sim.control_subnet".into(), &problem);
        }
        if self.hosts.is_empty() {
            return fail("backend.sim.hosts".into(), "at least one host is needed");
        }
        for (i, host) in self.hosts.iter().enumerate() {
            let key = |field: &str| format!("backend.sim.hosts[{i}].{field}");
            check_name(&host.name, key("name"))?;
            if self.hosts[..i].iter().any(|h| h.name == host.name) {
                return fail(key("name"), "is used by an earlier host");
            }
            if host.cpus == 0 {
                return fail(key("cpus"), "must be at least 1");
            }
            if host.memory_mb == 0 {
                return fail(key("memory_mb"), "must be at least 1");
            }
            if host.max_vms == 0 {
                return fail(key("max_vms"), "must be at least 1");
            }
        }
        if self.sliver_types.is_empty() {
            return fail(
                "backend.sim.sliver_types".into(),
                "at least one sliver type is needed",
            );
        }
        for (i, kind) in self.sliver_types.iter().enumerate() {
            let key = |field: &str| format!("backend.sim.sliver_types[{i}].{field}");
            check_name(&kind.name, key("name"))?;
            if self.sliver_types[..i].iter().any(|k| k.name == kind.name) {
                return fail(key("name"), "is used by an earlier sliver type");
            }
            if kind.cpus == 0 {
                return fail(key("cpus"), "must be at least 1");
            }
            if kind.memory_mb == 0 {
                return fail(key("memory_mb"), "must be at least 1");
            }
            if kind.max_cores.is_some_and(|m| m < kind.cpus) {
                return fail(key("max_cores"), "must be at least cpus");
            }
            if kind.max_ram_mb.is_some_and(|m| m < kind.memory_mb) {
                return fail(key("max_ram_mb"), "must be at least memory_mb");
            }
            if kind.max_disk_gb == Some(0) {
                return fail(key("max_disk_gb"), "must be at least 1");
            }
            if !self
                .hosts
                .iter()
                .any(|h| h.cpus >= kind.cpus && h.memory_mb >= kind.memory_mb)
            {
                return fail(key("cpus"), "no host has enough cpus and memory for it");
            }
            if kind.disk_images.is_empty() {
                return fail(key("disk_images"), "at least one disk image is needed");
            }
            for (j, image) in kind.disk_images.iter().enumerate() {
                if image.name.trim().is_empty() {
                    return fail(key(&format!("disk_images[{j}].name")), "must not be empty");
                }
            }
        }
        Ok(())
    }
}

/// Names become URN parts and host names: letters, digits, `.`, `-`, `_`.
fn check_name(name: &str, key: String) -> Result<(), SimConfigError> {
    let valid = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'));
    if valid {
        Ok(())
    } else {
        Err(SimConfigError {
            key,
            problem: format!("`{name}` must be letters, digits, `.`, `-` or `_`"),
        })
    }
}

/// A small `[backend.sim]` section for development and tests: two hosts
/// (`host1`: 2 cpus, 4 GiB, 2 VMs; `host2`: 1 cpu, 1 GiB, 1 VM), one
/// `small` type booting `ubuntu-22.04`, short delays, no failures.
pub const SAMPLE_SECTION: &str = r#"
    create_delay_ms = 100
    boot_delay_ms = 1000
    [[hosts]]
    name = "host1"
    cpus = 2
    memory_mb = 4096
    max_vms = 2
    [[hosts]]
    name = "host2"
    cpus = 1
    memory_mb = 1024
    max_vms = 1
    [[sliver_types]]
    name = "small"
    cpus = 1
    memory_mb = 1024
    [[sliver_types.disk_images]]
    name = "ubuntu-22.04"
    os = "Linux"
"#;

#[cfg(test)]
mod tests {
    use super::*;

    fn example() -> SimConfig {
        toml::from_str(SAMPLE_SECTION).unwrap()
    }

    #[test]
    fn a_complete_section_parses_with_defaults() {
        let config = example();
        config.validate().unwrap();
        assert_eq!(config.boot_delay_ms, 1000);
        assert_eq!(config.stop_delay_ms, 500);
        assert_eq!(config.failure_rate, 0.0);
        assert_eq!(config.control_subnet, "10.10.0.0/16");
        assert_eq!(config.sliver_types[0].disk_images[0].os, "Linux");
    }

    #[test]
    fn unknown_keys_are_refused() {
        let text = format!("speed = 3\n{SAMPLE_SECTION}");
        let err = toml::from_str::<SimConfig>(&text).unwrap_err();
        assert!(err.to_string().contains("speed"), "{err}");
    }

    #[test]
    fn errors_name_the_key() {
        let mut config = example();
        config.hosts[0].cpus = 0;
        let err = config.validate().unwrap_err();
        assert_eq!(
            err.to_string(),
            "backend.sim.hosts[0].cpus: must be at least 1"
        );

        let mut config = example();
        config.failure_rate = 1.5;
        assert_eq!(
            config.validate().unwrap_err().key,
            "backend.sim.failure_rate"
        );

        let mut config = example();
        config.sliver_types[0].memory_mb = 1 << 20;
        assert_eq!(
            config.validate().unwrap_err().key,
            "backend.sim.sliver_types[0].cpus"
        );

        let mut config = example();
        config.hosts[0].name = "host 1".into();
        assert_eq!(
            config.validate().unwrap_err().key,
            "backend.sim.hosts[0].name"
        );

        let mut config = example();
        config.control_subnet = "10.0.0.0/31".into();
        let err = config.validate().unwrap_err();
        assert!(err.problem.contains("from 8 to 30"), "{err}");
    }

    #[test]
    fn subnets_clear_host_bits_and_skip_the_gateway() {
        let net = Subnet::parse("10.10.3.7/16").unwrap();
        assert_eq!(net.base, Ipv4Addr::new(10, 10, 0, 0));
        assert_eq!(net.address(0), Ipv4Addr::new(10, 10, 0, 2));
        assert_eq!(net.capacity(), 65533);
        assert!(Subnet::parse("10.10.0.0").is_err());
    }
}
