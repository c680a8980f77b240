//! The `[operator]` section (the operator's HTTP endpoint: metrics,
//! health, dashboard) and the `[log]` section (format and level of the
//! log on standard error), with their checks: the address parses, TLS
//! files come in pairs and load, client roots and the token file are
//! readable, and a token is never sent in clear text beyond loopback.

use super::TlsIdentity;
use serde::Deserialize;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

/// The `[operator]` section.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct OperatorConfig {
    /// Whether the endpoint runs.
    pub enabled: bool,
    /// Socket address it listens on (plain HTTP unless `tls_cert` is set).
    pub listen: String,
    /// PEM certificate chain: the endpoint speaks HTTPS with it.
    pub tls_cert: Option<PathBuf>,
    /// The private key of `tls_cert`.
    pub tls_key: Option<PathBuf>,
    /// Directory of CA certificates (`*.pem`, `*.crt`): clients must
    /// present a certificate issued by one of them (needs `tls_cert`).
    pub client_roots: Option<PathBuf>,
    /// File holding a bearer token: requests without
    /// `Authorization: Bearer <token>` are answered 401.
    pub token_file: Option<PathBuf>,
}

impl Default for OperatorConfig {
    fn default() -> Self {
        OperatorConfig {
            enabled: true,
            listen: "127.0.0.1:9464".to_owned(),
            tls_cert: None,
            tls_key: None,
            client_roots: None,
            token_file: None,
        }
    }
}

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    /// One human-readable line per event.
    #[default]
    Text,
    /// One JSON object per line.
    Json,
}

/// The `[log]` section.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LogConfig {
    /// `text` or `json`.
    pub format: LogFormat,
    /// The filter when `RUST_LOG` is not set: a level (`info`) or
    /// directives (`info,geni_am::jobs=debug`).
    pub level: String,
}

impl Default for LogConfig {
    fn default() -> Self {
        LogConfig {
            format: LogFormat::Text,
            level: "info".to_owned(),
        }
    }
}

/// A problem: the dotted key and what is wrong.
type Problem = (String, String);

fn problem(key: &str, text: impl Into<String>) -> Problem {
    (format!("operator.{key}"), text.into())
}

/// The token in `path`: its first line, trimmed.
pub fn read_token(path: &Path) -> Result<String, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let token = text.lines().next().unwrap_or_default().trim();
    if token.len() < 16 {
        return Err(format!(
            "{} must hold a token of at least 16 characters on its first line",
            path.display()
        ));
    }
    Ok(token.to_owned())
}

/// The certificates of the PEM files in `dir` (`*.pem`, `*.crt`).
pub fn read_client_roots(dir: &Path) -> Result<Vec<openssl::x509::X509>, String> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    let mut roots = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        let pem = path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("pem") || e.eq_ignore_ascii_case("crt"));
        if !pem {
            continue;
        }
        let bytes =
            std::fs::read(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let certs = openssl::x509::X509::stack_from_pem(&bytes)
            .map_err(|e| format!("{} holds no PEM certificate: {e}", path.display()))?;
        roots.extend(certs);
    }
    if roots.is_empty() {
        return Err(format!(
            "{} holds no *.pem or *.crt certificate",
            dir.display()
        ));
    }
    Ok(roots)
}

impl OperatorConfig {
    /// Makes the section's file paths relative to `base`; an empty path
    /// is no path (TOML has no null, and the example sets every key).
    pub(super) fn resolve_paths(&mut self, base: &Path) {
        for path in [
            &mut self.tls_cert,
            &mut self.tls_key,
            &mut self.client_roots,
            &mut self.token_file,
        ] {
            if path.as_ref().is_some_and(|p| p.as_os_str().is_empty()) {
                *path = None;
            }
        }
        for path in [
            &mut self.tls_cert,
            &mut self.tls_key,
            &mut self.client_roots,
            &mut self.token_file,
        ]
        .into_iter()
        .flatten()
        {
            if path.is_relative() {
                *path = base.join(&*path);
            }
        }
    }

    /// Checks the section as the endpoint will use it.
    pub(super) fn validate(&self) -> Result<(), Problem> {
        if !self.enabled {
            return Ok(());
        }
        let addr = self.listen.parse::<SocketAddr>().map_err(|_| {
            problem(
                "listen",
                format!(
                    "`{}` is not a socket address (expected IP:PORT such as 127.0.0.1:9464)",
                    self.listen
                ),
            )
        })?;
        match (&self.tls_cert, &self.tls_key) {
            (Some(cert), Some(key)) => {
                TlsIdentity::load(cert, key).map_err(|e| problem("tls_cert", e.to_string()))?;
            }
            (Some(_), None) => return Err(problem("tls_key", "tls_cert needs tls_key")),
            (None, Some(_)) => return Err(problem("tls_cert", "tls_key needs tls_cert")),
            (None, None) => {}
        }
        if let Some(dir) = &self.client_roots {
            if self.tls_cert.is_none() {
                return Err(problem(
                    "client_roots",
                    "client certificates need TLS: set tls_cert and tls_key too",
                ));
            }
            read_client_roots(dir).map_err(|e| problem("client_roots", e))?;
        }
        if let Some(file) = &self.token_file {
            read_token(file).map_err(|e| problem("token_file", e))?;
            if self.tls_cert.is_none() && !addr.ip().is_loopback() {
                return Err(problem(
                    "token_file",
                    format!(
                        "a token would cross the network in clear text to {}: set tls_cert and tls_key, or listen on loopback",
                        self.listen
                    ),
                ));
            }
        }
        Ok(())
    }
}

impl LogConfig {
    /// Checks the level is a filter `tracing` understands.
    pub(super) fn validate(&self) -> Result<(), Problem> {
        tracing_subscriber::EnvFilter::try_new(&self.level)
            .map(|_| ())
            .map_err(|e| {
                (
                    "log.level".to_owned(),
                    format!(
                        "`{}` is not a level or filter (error, warn, info, debug, trace): {e}",
                        self.level
                    ),
                )
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key_of(config: &OperatorConfig) -> Option<String> {
        config.validate().err().map(|(key, _)| key)
    }

    #[test]
    fn the_default_listens_on_loopback_in_plain_http() {
        let config = OperatorConfig::default();
        assert_eq!(config.listen, "127.0.0.1:9464");
        assert!(config.enabled);
        assert_eq!(key_of(&config), None);
    }

    #[test]
    fn a_bad_operator_value_names_its_key() {
        let bad_listen = OperatorConfig {
            listen: "localhost".into(),
            ..OperatorConfig::default()
        };
        assert_eq!(key_of(&bad_listen).as_deref(), Some("operator.listen"));
        let half_tls = OperatorConfig {
            tls_cert: Some("cert.pem".into()),
            ..OperatorConfig::default()
        };
        assert_eq!(key_of(&half_tls).as_deref(), Some("operator.tls_key"));
        let roots_without_tls = OperatorConfig {
            client_roots: Some("/nonexistent".into()),
            ..OperatorConfig::default()
        };
        assert_eq!(
            key_of(&roots_without_tls).as_deref(),
            Some("operator.client_roots")
        );
        let missing_token = OperatorConfig {
            token_file: Some("/nonexistent/token".into()),
            ..OperatorConfig::default()
        };
        assert_eq!(
            key_of(&missing_token).as_deref(),
            Some("operator.token_file")
        );
    }

    #[test]
    fn a_token_in_clear_text_stays_on_loopback() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("token");
        std::fs::write(&file, "0123456789abcdef0123\n").unwrap();
        let local = OperatorConfig {
            token_file: Some(file.clone()),
            ..OperatorConfig::default()
        };
        assert_eq!(key_of(&local), None);
        let open = OperatorConfig {
            listen: "0.0.0.0:9464".into(),
            ..local.clone()
        };
        assert_eq!(key_of(&open).as_deref(), Some("operator.token_file"));
        std::fs::write(&file, "short\n").unwrap();
        assert_eq!(key_of(&local).as_deref(), Some("operator.token_file"));
    }

    #[test]
    fn a_disabled_endpoint_is_not_checked() {
        let off = OperatorConfig {
            enabled: false,
            listen: "nowhere".into(),
            ..OperatorConfig::default()
        };
        assert_eq!(key_of(&off), None);
    }

    #[test]
    fn the_log_level_must_be_a_filter() {
        let bad = LogConfig {
            level: "loud=[".into(),
            ..LogConfig::default()
        };
        assert!(bad.validate().is_err());
        assert!(LogConfig::default().validate().is_ok());
    }
}
