//! The `[backend.opennebula]` configuration section: how to reach oned
//! (endpoint, session or `ONE_AUTH` file, timeouts, retries, connections,
//! CA file), which OpenNebula templates the advertised sliver types
//! instantiate, which images are offered, how link networks are made, and
//! the label that marks this aggregate's VMs. Unknown keys are refused and
//! every problem names its dotted key.

use super::rpc::{ClientError, ClientSettings, OneClient, Session};
use serde::Deserialize;
use std::path::PathBuf;

/// The `[backend.opennebula]` section of the configuration file.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OneConfig {
    /// oned's XML-RPC endpoint, e.g. `http://one.example.org:2633/RPC2`
    /// (or an `https://` reverse proxy in front of it).
    pub endpoint: String,
    /// The session string `user:secret` (password or login token); exactly
    /// one of `session` and `one_auth` is set.
    #[serde(default)]
    pub session: Option<String>,
    /// A `ONE_AUTH` file holding `user:secret` on its first line.
    #[serde(default)]
    pub one_auth: Option<PathBuf>,
    /// Seconds one XML-RPC call may take.
    #[serde(default = "default_timeout_secs")]
    pub timeout_secs: u64,
    /// Times a call that failed transiently is tried again, with backoff.
    #[serde(default = "default_retries")]
    pub retries: u32,
    /// Most connections open to oned at once (oned serves 15 in all).
    #[serde(default = "default_max_connections")]
    pub max_connections: u32,
    /// PEM file of the CA that signed an HTTPS proxy's certificate; unset,
    /// the system roots are used.
    #[serde(default)]
    pub ca_file: Option<PathBuf>,
    /// The label that marks this aggregate's VMs and networks: each carries
    /// `LABELS = "<label>/<sliver URN>"`. Two aggregates on one OpenNebula
    /// account need different labels.
    #[serde(default = "default_label")]
    pub label: String,
    /// DNS domain of the VMs' host names (`<client_id>-<vm id>.<domain>`);
    /// unset, the VM's first IP address is its host name.
    #[serde(default)]
    pub domain: Option<String>,
    /// Seconds a VM may wait for placement (PENDING) before it is reported
    /// failed with the scheduler's message.
    #[serde(default = "default_placement_deadline_secs")]
    pub placement_deadline_secs: u64,
    /// The most VMs advertised per host.
    #[serde(default = "default_max_vms_per_host")]
    pub max_vms_per_host: u32,
    /// The hardware type advertised for every host (e.g. `pcvm`); unset,
    /// each host is advertised as `<hypervisor>-host` for the hypervisor
    /// oned reports for it (`kvm-host`, `lxc-host`, `dummy-host` …).
    #[serde(default)]
    pub hardware_type: Option<String>,
    /// Disk image names offered (by image NAME); empty offers every READY
    /// image of the image pool.
    #[serde(default)]
    pub images: Vec<String>,
    /// The VM flavours: each instantiates an OpenNebula template at an
    /// advertised size.
    pub sliver_types: Vec<OneSliverType>,
    /// How link networks are made; unset, requests with links are refused.
    #[serde(default)]
    pub links: Option<OneLinks>,
}

/// One `[[backend.opennebula.sliver_types]]` entry.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OneSliverType {
    /// The `sliver_type` name requests use.
    pub name: String,
    /// The OpenNebula VM template instantiated for it.
    pub template_id: i32,
    /// CPU share sent as `CPU` (e.g. `0.5`, `1`); the scheduler allocates
    /// it, and capacity is counted in it.
    pub cpu: f64,
    /// Virtual CPUs sent as `VCPU`, the cores the VM sees.
    pub vcpu: u32,
    /// Memory sent as `MEMORY`, in MiB.
    pub memory_mb: u64,
    /// The most virtual CPUs a request may ask for (`<emulab:xen
    /// cores>`; `CPU` grows in proportion); unset: `vcpu`.
    #[serde(default)]
    pub max_cores: Option<u32>,
    /// The most memory a request may ask for, in MiB (`ram`); unset:
    /// `memory_mb`.
    #[serde(default)]
    pub max_ram_mb: Option<u64>,
    /// The largest first disk a request may ask for, in GB (`disk`, sent
    /// as the DISK's `SIZE`); unset: a disk size asked for is not granted.
    #[serde(default)]
    pub max_disk_gb: Option<u64>,
}

/// The `[backend.opennebula.links]` section: exactly one of
/// `parent_network` (a reservation per link) and `template` (a new VNET
/// per link).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OneLinks {
    /// The network each link reserves a block of addresses from (`one.vn.reserve`).
    #[serde(default)]
    pub parent_network: Option<i32>,
    /// Addresses reserved per link from `parent_network`.
    #[serde(default = "default_link_size")]
    pub size: u32,
    /// A VNET template (OpenNebula attr=value syntax) allocated per link
    /// (`one.vn.allocate`); the driver sets its NAME.
    #[serde(default)]
    pub template: Option<String>,
    /// The cluster new VNETs join (`-1`: the default cluster).
    #[serde(default = "default_cluster")]
    pub cluster: i32,
}

/// A `[backend.opennebula]` value that cannot work, with the key that holds it.
pub type OneConfigError = geni_am_backend::BackendConfigError;

fn default_timeout_secs() -> u64 {
    30
}

fn default_retries() -> u32 {
    3
}

fn default_max_connections() -> u32 {
    4
}

fn default_label() -> String {
    "geni-am".to_owned()
}

fn default_placement_deadline_secs() -> u64 {
    600
}

fn default_max_vms_per_host() -> u32 {
    32
}

fn default_link_size() -> u32 {
    32
}

fn default_cluster() -> i32 {
    -1
}

/// Largest timeout accepted: a call stuck longer is lost anyway.
const MAX_TIMEOUT_SECS: u64 = 3600;

/// oned serves `MAX_CONN` 15 connections in all; the aggregate keeps room
/// for the CLI and Sunstone.
const MAX_CONNECTIONS: u32 = 12;

impl OneConfig {
    /// Checks every value, returning the first problem found.
    pub fn validate(&self) -> Result<(), OneConfigError> {
        let fail = |key: &str, problem: String| {
            Err(OneConfigError {
                key: format!("backend.opennebula.{key}"),
                problem,
            })
        };
        if !(self.endpoint.starts_with("http://") || self.endpoint.starts_with("https://"))
            || self.endpoint.contains(char::is_whitespace)
        {
            return fail(
                "endpoint",
                format!(
                    "`{}` is not an http:// or https:// URL (e.g. http://one.example.org:2633/RPC2)",
                    self.endpoint
                ),
            );
        }
        match (&self.session, &self.one_auth) {
            (Some(_), Some(_)) => {
                return fail("session", "set either session or one_auth, not both".into());
            }
            (None, None) => {
                return fail(
                    "session",
                    "set session = \"user:secret\" or one_auth = FILE".into(),
                );
            }
            (Some(session), None) if Session::parse(session).is_err() => {
                return fail(
                    "session",
                    "must be user:secret with a user name free of blanks".into(),
                );
            }
            _ => {}
        }
        if !(1..=MAX_TIMEOUT_SECS).contains(&self.timeout_secs) {
            return fail(
                "timeout_secs",
                format!("must be from 1 to {MAX_TIMEOUT_SECS}"),
            );
        }
        if !(1..=MAX_CONNECTIONS).contains(&self.max_connections) {
            return fail(
                "max_connections",
                format!("must be from 1 to {MAX_CONNECTIONS} (oned serves 15 connections in all)"),
            );
        }
        if let Some(kind) = self.hardware_type.as_deref().filter(|k| !safe_word(k)) {
            return fail(
                "hardware_type",
                format!("`{kind}` must be letters, digits, `.`, `-` or `_`"),
            );
        }
        if !safe_word(&self.label) {
            return fail(
                "label",
                format!("`{}` must be letters, digits, `.`, `-` or `_`", self.label),
            );
        }
        if let Some(domain) = &self.domain
            && (domain.is_empty() || !domain.split('.').all(dns_label))
        {
            return fail("domain", format!("`{domain}` is not a DNS domain"));
        }
        if self.placement_deadline_secs == 0 {
            return fail("placement_deadline_secs", "must be at least 1".into());
        }
        if self.max_vms_per_host == 0 {
            return fail("max_vms_per_host", "must be at least 1".into());
        }
        for (i, image) in self.images.iter().enumerate() {
            if image.trim().is_empty() {
                return fail(&format!("images[{i}]"), "must not be empty".into());
            }
        }
        self.validate_sliver_types()?;
        if let Some(links) = &self.links {
            links.validate()?;
        }
        Ok(())
    }

    fn validate_sliver_types(&self) -> Result<(), OneConfigError> {
        if self.sliver_types.is_empty() {
            return Err(OneConfigError {
                key: "backend.opennebula.sliver_types".into(),
                problem: "at least one sliver type is needed".into(),
            });
        }
        for (i, kind) in self.sliver_types.iter().enumerate() {
            let fail = |field: &str, problem: &str| {
                Err(OneConfigError {
                    key: format!("backend.opennebula.sliver_types[{i}].{field}"),
                    problem: problem.to_owned(),
                })
            };
            if !safe_word(&kind.name) {
                return fail("name", "must be letters, digits, `.`, `-` or `_`");
            }
            if self.sliver_types[..i].iter().any(|k| k.name == kind.name) {
                return fail("name", "is used by an earlier sliver type");
            }
            if kind.template_id < 0 {
                return fail("template_id", "must be a template id (0 or more)");
            }
            if !(kind.cpu.is_finite() && kind.cpu > 0.0) {
                return fail("cpu", "must be a positive number (e.g. 0.5 or 1)");
            }
            if kind.vcpu == 0 {
                return fail("vcpu", "must be at least 1");
            }
            if kind.memory_mb == 0 {
                return fail("memory_mb", "must be at least 1");
            }
            if kind.max_cores.is_some_and(|m| m < kind.vcpu) {
                return fail("max_cores", "must be at least vcpu");
            }
            if kind.max_ram_mb.is_some_and(|m| m < kind.memory_mb) {
                return fail("max_ram_mb", "must be at least memory_mb");
            }
            if kind.max_disk_gb == Some(0) {
                return fail("max_disk_gb", "must be at least 1");
            }
        }
        Ok(())
    }
}

impl OneConfig {
    /// Checks the files the section names: the `ONE_AUTH` file holds a
    /// usable session, the CA file exists.
    pub fn check_files(&self) -> Result<(), OneConfigError> {
        self.session()?;
        if let Some(path) = &self.ca_file
            && !path.is_file()
        {
            return Err(OneConfigError {
                key: "backend.opennebula.ca_file".into(),
                problem: format!("{} is not a readable file", path.display()),
            });
        }
        Ok(())
    }

    /// The session: the configured string or the `ONE_AUTH` file's.
    pub fn session(&self) -> Result<Session, OneConfigError> {
        let (key, parsed) = match (&self.session, &self.one_auth) {
            (Some(text), _) => ("session", Session::parse(text)),
            (None, Some(path)) => ("one_auth", Session::from_one_auth(path)),
            (None, None) => {
                return Err(OneConfigError {
                    key: "backend.opennebula.session".into(),
                    problem: "set session = \"user:secret\" or one_auth = FILE".into(),
                });
            }
        };
        parsed.map_err(|e| OneConfigError {
            key: format!("backend.opennebula.{key}"),
            problem: e.to_string(),
        })
    }
}

impl OneConfig {
    /// The HTTP client of the oned this section names (connecting lazily,
    /// on the first call).
    pub fn client(&self) -> Result<OneClient, OneConfigError> {
        let settings = ClientSettings {
            endpoint: self.endpoint.clone(),
            session: self.session()?,
            timeout: std::time::Duration::from_secs(self.timeout_secs),
            retries: self.retries,
            max_connections: self.max_connections as usize,
            ca_file: self.ca_file.clone(),
        };
        OneClient::new(settings).map_err(|e| OneConfigError {
            key: match &e {
                ClientError::Tls(_) => "backend.opennebula.ca_file",
                _ => "backend.opennebula.endpoint",
            }
            .into(),
            problem: e.to_string(),
        })
    }
}

impl OneLinks {
    fn validate(&self) -> Result<(), OneConfigError> {
        let fail = |field: &str, problem: &str| {
            Err(OneConfigError {
                key: format!("backend.opennebula.links.{field}"),
                problem: problem.to_owned(),
            })
        };
        match (&self.parent_network, &self.template) {
            (Some(_), Some(_)) => fail("template", "set parent_network or template, not both"),
            (None, None) => fail(
                "parent_network",
                "set parent_network (reserve from it) or template (allocate a VNET)",
            ),
            (Some(parent), None) if *parent < 0 => {
                fail("parent_network", "must be a network id (0 or more)")
            }
            (Some(_), None) if self.size == 0 => fail("size", "must be at least 1"),
            (None, Some(template)) if template.contains("]]>") || template.trim().is_empty() => {
                fail("template", "must be a VNET template without `]]>`")
            }
            _ if self.cluster < -1 => fail("cluster", "must be a cluster id or -1"),
            _ => Ok(()),
        }
    }
}

/// Letters, digits, `.`, `-`, `_`: safe in URNs, labels and names.
fn safe_word(text: &str) -> bool {
    !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
}

fn dns_label(label: &str) -> bool {
    !label.is_empty()
        && label.len() <= 63
        && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
        && !label.starts_with('-')
        && !label.ends_with('-')
}

/// A small `[backend.opennebula]` section for tests: one `small` type on
/// template 0, links reserved from network 0.
pub const SAMPLE_SECTION: &str = r#"
    endpoint = "http://127.0.0.1:2633/RPC2"
    session = "oneadmin:onetest"
    [[sliver_types]]
    name = "small"
    template_id = 0
    cpu = 0.5
    vcpu = 1
    memory_mb = 256
    [links]
    parent_network = 0
    size = 16
"#;

#[cfg(test)]
mod tests {
    use super::*;

    fn example() -> OneConfig {
        toml::from_str(SAMPLE_SECTION).unwrap()
    }

    #[test]
    fn a_small_section_is_valid_with_defaults() {
        let config = example();
        config.validate().unwrap();
        assert_eq!(config.label, "geni-am");
        assert_eq!(config.timeout_secs, 30);
        assert_eq!(config.links.as_ref().unwrap().cluster, -1);
        assert!(config.images.is_empty());
    }

    #[test]
    fn the_session_comes_from_the_string_or_the_one_auth_file() {
        let mut config = example();
        assert_eq!(config.session().unwrap().user(), "oneadmin");
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("one_auth");
        std::fs::write(&file, "amsvc:token\n").unwrap();
        config.session = None;
        config.one_auth = Some(file.clone());
        config.validate().unwrap();
        config.check_files().unwrap();
        assert_eq!(config.session().unwrap().user(), "amsvc");
        std::fs::write(&file, "no colon\n").unwrap();
        assert_eq!(
            config.check_files().unwrap_err().key,
            "backend.opennebula.one_auth"
        );
        config.ca_file = Some(dir.path().join("missing.pem"));
        std::fs::write(&file, "amsvc:token\n").unwrap();
        assert_eq!(
            config.check_files().unwrap_err().key,
            "backend.opennebula.ca_file"
        );
    }

    #[test]
    fn unknown_keys_are_refused() {
        let text = format!("password = \"x\"\n{SAMPLE_SECTION}");
        let err = toml::from_str::<OneConfig>(&text).unwrap_err();
        assert!(err.to_string().contains("password"), "{err}");
        let text = SAMPLE_SECTION.replace("vcpu = 1", "vcpu = 1\ncores = 2");
        assert!(toml::from_str::<OneConfig>(&text).is_err());
    }

    #[test]
    fn errors_name_the_dotted_key() {
        let key = |edit: fn(&mut OneConfig)| {
            let mut config = example();
            edit(&mut config);
            config.validate().unwrap_err().key
        };
        assert_eq!(
            key(|c| c.one_auth = Some("one_auth".into())),
            "backend.opennebula.session"
        );
        assert_eq!(key(|c| c.session = None), "backend.opennebula.session");
        assert_eq!(
            key(|c| c.session = Some("no-colon".into())),
            "backend.opennebula.session"
        );
        assert_eq!(
            key(|c| c.endpoint = "one:2633".into()),
            "backend.opennebula.endpoint"
        );
        assert_eq!(
            key(|c| c.max_connections = 15),
            "backend.opennebula.max_connections"
        );
        assert_eq!(key(|c| c.label = "a/b".into()), "backend.opennebula.label");
        assert_eq!(
            key(|c| c.hardware_type = Some("kvm host".into())),
            "backend.opennebula.hardware_type"
        );
        assert_eq!(
            key(|c| c.sliver_types[0].cpu = 0.0),
            "backend.opennebula.sliver_types[0].cpu"
        );
        assert_eq!(
            key(|c| c.sliver_types.push(c.sliver_types[0].clone())),
            "backend.opennebula.sliver_types[1].name"
        );
        assert_eq!(
            key(|c| c.links.as_mut().unwrap().template = Some("VN_MAD=bridge".into())),
            "backend.opennebula.links.template"
        );
        assert_eq!(
            key(|c| c.links.as_mut().unwrap().parent_network = None),
            "backend.opennebula.links.parent_network"
        );
        assert_eq!(
            key(|c| c.domain = Some("bad domain".into())),
            "backend.opennebula.domain"
        );
    }
}
