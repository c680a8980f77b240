//! `geni-am cert show FILE...`: one block per certificate with its GENI
//! identity. Exit status 0, or 2 when a file cannot be read or parsed.

use clap::Args;
use geni_credentials::{GeniCert, parse_chain};
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `geni-am cert show`.
#[derive(Debug, Args)]
pub struct ShowArgs {
    /// Certificate files (PEM with one or more certificates, or DER).
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
}

/// Prints every certificate of every file.
pub fn run(args: &ShowArgs) -> ExitCode {
    let mut status = 0;
    for file in &args.files {
        let shown = file.display();
        let parsed = std::fs::read(file)
            .map_err(|e| format!("cannot read: {e}"))
            .and_then(|bytes| parse_chain(&bytes).map_err(|e| e.to_string()));
        match parsed {
            Ok(chain) => {
                for (index, cert) in chain.iter().enumerate() {
                    println!("{shown} #{}:\n{}", index + 1, describe(cert));
                }
            }
            Err(error) => {
                eprintln!("{shown}: {error}");
                status = 2;
            }
        }
    }
    ExitCode::from(status)
}

/// The indented description of one certificate.
pub fn describe(cert: &GeniCert) -> String {
    let or_none = |v: Option<String>| v.unwrap_or_else(|| "(none)".to_owned());
    let urn = match cert.require_urn() {
        Ok(urn) => urn.to_string(),
        Err(e) => format!("(none: {e})"),
    };
    let algorithms = cert.algorithms();
    let legacy: Vec<String> = cert.legacy().iter().map(ToString::to_string).collect();
    let mut lines = vec![
        format!("  urn: {urn}"),
        format!("  uuid: {}", or_none(cert.uuid().map(|u| u.to_string()))),
        format!("  email: {}", or_none(cert.email().map(str::to_owned))),
        format!("  subject: {}", cert.subject()),
        format!("  issuer: {}", cert.issuer()),
        format!("  ca: {}", if cert.is_ca() { "yes" } else { "no" }),
        format!(
            "  valid: {} .. {}",
            cert.not_before().format("%Y-%m-%dT%H:%M:%SZ"),
            cert.not_after().format("%Y-%m-%dT%H:%M:%SZ")
        ),
        format!(
            "  algorithms: {}, {} {} bits",
            algorithms.signature, algorithms.key, algorithms.key_bits
        ),
        format!(
            "  legacy: {}",
            if legacy.is_empty() {
                "none".to_owned()
            } else {
                legacy.join(", ")
            }
        ),
    ];
    if !cert.dns_names().is_empty() || !cert.ip_addresses().is_empty() {
        let ips = cert.ip_addresses().iter().map(ToString::to_string);
        let hosts: Vec<String> = cert.dns_names().iter().cloned().chain(ips).collect();
        lines.push(format!("  hosts: {}", hosts.join(", ")));
    }
    lines.join("\n")
}
