//! Validation of a parsed configuration: every value is checked as the
//! service will use it (addresses parsed, URNs checked against the
//! authority, TLS files and trust roots read), and the first problem is
//! reported with the dotted key that holds it.

use super::{BackendKind, Config, ServerConfig, TlsIdentity};
use geni_credentials::TrustStore;
use geni_credentials::{Urn, UrnType};
use std::net::SocketAddr;
use std::path::Path;

/// A problem: the dotted key and what is wrong with its value.
type Problem = (String, String);

/// Longest duration accepted for a lease or timeout (10 years).
const MAX_DURATION_SECS: u64 = 10 * 365 * 86_400;

/// Largest body limit accepted (1 GiB): beyond that a typo is likelier than intent.
const MAX_BODY_LIMIT: usize = 1 << 30;

fn problem(key: &str, text: impl Into<String>) -> Problem {
    (key.to_owned(), text.into())
}

/// The longest retention accepted, in days; far longer periods could not
/// be subtracted from the clock.
const MAX_RETENTION_DAYS: u32 = 36_500;

fn at_least_one(key: &str, value: u64) -> Result<(), Problem> {
    if value == 0 {
        return Err(problem(key, "must be at least 1"));
    }
    Ok(())
}

impl Config {
    /// Checks every value; the first problem found is returned.
    pub(super) fn validate(&self) -> Result<(), Problem> {
        validate_server(&self.server)?;
        self.validate_aggregate()?;
        self.validate_store()?;
        self.validate_backend()?;
        self.validate_default_sliver_type()?;
        self.validate_logins()?;
        self.operator.validate()?;
        self.log.validate()?;
        self.jobs
            .validate()
            .map_err(|e| (format!("jobs.{}", e.key), "must be at least 1".to_owned()))
    }

    fn validate_aggregate(&self) -> Result<(), Problem> {
        let aggregate = &self.aggregate;
        let authority = Urn::from_parts(&aggregate.authority, "authority", "am").map_err(|e| {
            problem(
                "aggregate.authority",
                format!("`{}` is not a GENI authority: {e}", aggregate.authority),
            )
        })?;
        for (key, text) in [
            ("aggregate.urn", &aggregate.urn),
            ("aggregate.cm_urn", &aggregate.cm_urn),
        ] {
            let urn = Urn::parse(text).map_err(|e| problem(key, format!("`{text}`: {e}")))?;
            if urn.urn_type() != &UrnType::Authority {
                return Err(problem(
                    key,
                    format!(
                        "`{text}` must be an authority URN (urn:publicid:IDN+<authority>+authority+<name>)"
                    ),
                ));
            }
            if !urn.authority().eq_ignore_ascii_case(authority.authority()) {
                return Err(problem(
                    key,
                    format!(
                        "`{text}` is not in the aggregate's authority `{}`",
                        aggregate.authority
                    ),
                ));
            }
        }
        for (key, secs) in [
            (
                "aggregate.allocation_timeout_secs",
                aggregate.allocation_timeout_secs,
            ),
            ("aggregate.default_lease_secs", aggregate.default_lease_secs),
            ("aggregate.max_lease_secs", aggregate.max_lease_secs),
        ] {
            at_least_one(key, secs)?;
            if secs > MAX_DURATION_SECS {
                return Err(problem(
                    key,
                    format!("{secs} seconds is more than the 10 years allowed"),
                ));
            }
        }
        at_least_one(
            "aggregate.max_slivers_per_slice",
            u64::from(aggregate.max_slivers_per_slice),
        )?;
        if aggregate.max_lease_secs < aggregate.default_lease_secs {
            return Err(problem(
                "aggregate.max_lease_secs",
                format!(
                    "{} is shorter than aggregate.default_lease_secs ({})",
                    aggregate.max_lease_secs, aggregate.default_lease_secs
                ),
            ));
        }
        Ok(())
    }

    /// The default sliver type must be one the backend offers (checked
    /// after the backend, whose sliver types it names).
    fn validate_default_sliver_type(&self) -> Result<(), Problem> {
        let Some(name) = &self.aggregate.default_sliver_type else {
            return Ok(());
        };
        let offered = self.backend.sliver_type_names();
        if offered.contains(&name.as_str()) {
            return Ok(());
        }
        Err(problem(
            "aggregate.default_sliver_type",
            format!(
                "`{name}` is not an advertised sliver type; name one of the backend's sliver_types ({}) or leave the key out to use the first",
                offered.join(", ")
            ),
        ))
    }

    fn validate_store(&self) -> Result<(), Problem> {
        let store = &self.store;
        at_least_one("store.pool_size", u64::from(store.pool_size))?;
        for (key, days) in [
            ("store.retention_days", store.retention_days),
            ("store.event_retention_days", store.event_retention_days),
        ] {
            at_least_one(key, u64::from(days))?;
            if days > MAX_RETENTION_DAYS {
                return Err(problem(
                    key,
                    format!("must be at most {MAX_RETENTION_DAYS} (a hundred years)"),
                ));
            }
        }
        at_least_one("store.purge_interval_secs", store.purge_interval_secs)?;
        if store.url.trim().is_empty() {
            return Err(problem(
                "store.url",
                "must name a SQLite file or a postgres:// URL",
            ));
        }
        if !store.is_postgres() {
            let parent = Path::new(&store.url).parent().unwrap_or(Path::new("."));
            if !parent.as_os_str().is_empty() && !parent.is_dir() {
                return Err(problem(
                    "store.url",
                    format!(
                        "the directory {} of the SQLite file does not exist",
                        parent.display()
                    ),
                ));
            }
        }
        Ok(())
    }

    fn validate_logins(&self) -> Result<(), Problem> {
        let logins = &self.logins;
        at_least_one("logins.port", logins.port.into())?;
        at_least_one("logins.gateway_port", logins.gateway_port.into())?;
        match &logins.gateway {
            Some(host) if !is_host_name(host.trim()) => Err(problem(
                "logins.gateway",
                format!("`{host}` is not a host name or address"),
            )),
            _ => Ok(()),
        }
    }

    fn validate_backend(&self) -> Result<(), Problem> {
        match self.backend.kind {
            BackendKind::Sim => {
                let sim = self.backend.sim.as_ref().ok_or_else(|| {
                    problem(
                        "backend.sim",
                        "kind = \"sim\" needs a [backend.sim] section with hosts and sliver_types",
                    )
                })?;
                sim.validate().map_err(|e| (e.key, e.problem))
            }
            BackendKind::OpenNebula => {
                let one = self.backend.opennebula.as_ref().ok_or_else(|| {
                    problem(
                        "backend.opennebula",
                        "kind = \"opennebula\" needs a [backend.opennebula] section with endpoint, session and sliver_types",
                    )
                })?;
                one.validate().map_err(|e| (e.key, e.problem))?;
                one.check_files().map_err(|e| (e.key, e.problem))
            }
        }
    }
}

/// True when `host` is a DNS name or an IP address.
fn is_host_name(host: &str) -> bool {
    let label = |l: &str| {
        !l.is_empty()
            && l.len() <= 63
            && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
            && !l.starts_with('-')
            && !l.ends_with('-')
    };
    host.parse::<std::net::IpAddr>().is_ok()
        || (!host.is_empty() && host.len() <= 253 && host.split('.').all(label))
}

fn validate_server(server: &ServerConfig) -> Result<(), Problem> {
    server.listen.parse::<SocketAddr>().map_err(|_| {
        problem(
            "server.listen",
            format!(
                "`{}` is not a socket address (expected IP:PORT such as 0.0.0.0:8443 or [::]:8443)",
                server.listen
            ),
        )
    })?;
    check_public_url(&server.public_url)?;
    TlsIdentity::load(&server.cert, &server.key)
        .map_err(|e| problem("server.cert / server.key", e.to_string()))?;
    TrustStore::from_dir(&server.trust_roots)
        .map_err(|e| problem("server.trust_roots", e.to_string()))?;
    at_least_one("server.body_limit", server.body_limit as u64)?;
    if server.body_limit > MAX_BODY_LIMIT {
        return Err(problem(
            "server.body_limit",
            format!("{} bytes is more than the 1 GiB allowed", server.body_limit),
        ));
    }
    at_least_one("server.call_threads", server.call_threads as u64)?;
    at_least_one("server.keep_alive_secs", server.keep_alive_secs)?;
    at_least_one("server.request_timeout_secs", server.request_timeout_secs)?;
    if server.request_timeout_secs > MAX_DURATION_SECS {
        return Err(problem(
            "server.request_timeout_secs",
            format!(
                "{} seconds is more than the 10 years allowed",
                server.request_timeout_secs
            ),
        ));
    }
    at_least_one("server.max_connections", server.max_connections as u64)?;
    at_least_one(
        "server.max_connections_per_client",
        server.max_connections_per_client as u64,
    )?;
    if server.max_connections_per_client > server.max_connections {
        return Err(problem(
            "server.max_connections_per_client",
            format!(
                "{} is more than server.max_connections ({})",
                server.max_connections_per_client, server.max_connections
            ),
        ));
    }
    Ok(())
}

/// An absolute `https://` (or `http://`, behind a TLS proxy) URL with a
/// host, no query and no fragment.
fn check_public_url(url: &str) -> Result<(), Problem> {
    let key = "server.public_url";
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))
        .ok_or_else(|| {
            problem(
                key,
                format!("`{url}` is not an absolute URL (expected https://HOST[:PORT][/PATH])"),
            )
        })?;
    let host = rest.split('/').next().unwrap_or_default();
    if host.is_empty() || host.starts_with(':') {
        return Err(problem(key, format!("`{url}` names no host")));
    }
    if url.contains(['?', '#']) || url.contains(char::is_whitespace) {
        return Err(problem(
            key,
            format!("`{url}` must not contain a query, a fragment or blanks"),
        ));
    }
    Ok(())
}
