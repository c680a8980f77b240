//! `geni-am dev …`: tools for a first run on a development machine.
//! `dev init` writes a development PKI and a configuration (see [`pki`])
//! and prints how to call the aggregate with curl, geni-lib and omni.

pub mod pki;

use clap::{Args, Subcommand};
use pki::{DevPki, InitOptions, ServerKey};
use std::path::PathBuf;
use std::process::ExitCode;

/// Development tools.
#[derive(Debug, Subcommand)]
pub enum DevCommand {
    /// Write a development PKI (CA, aggregate certificate, experimenter
    /// certificate and key, slice and user credentials) and a configuration
    /// using it (SQLite store, simulated cloud). Existing files are kept
    /// unless --force is given.
    Init(InitArgs),
}

/// Arguments of `geni-am dev init`.
#[derive(Debug, Args)]
pub struct InitArgs {
    /// Directory to write into (created if missing).
    #[arg(long, value_name = "DIR", default_value = "dev-pki")]
    pub dir: PathBuf,
    /// Host name or address clients use for the aggregate (put in the
    /// server certificate and the public URL).
    #[arg(long, value_name = "NAME", default_value = "localhost")]
    pub host: String,
    /// TCP port of the aggregate.
    #[arg(long, value_name = "N", default_value_t = 8443)]
    pub port: u16,
    /// Loopback TCP port of the operator's endpoint (metrics, health,
    /// dashboard).
    #[arg(long, value_name = "N", default_value_t = 9464)]
    pub operator_port: u16,
    /// Replace existing files.
    #[arg(long)]
    pub force: bool,
    /// Key of the aggregate's server certificate: ECDSA P-256 (cheaper
    /// handshakes, accepted by every GENI client) or RSA 2048.
    #[arg(long, value_enum, value_name = "KIND", default_value_t = ServerKey::Ecdsa)]
    pub server_key: ServerKey,
}

impl DevCommand {
    /// Runs the subcommand.
    pub fn run(self) -> ExitCode {
        match self {
            DevCommand::Init(args) => {
                let options = InitOptions {
                    dir: args.dir,
                    host: args.host,
                    port: args.port,
                    operator_port: args.operator_port,
                    force: args.force,
                    server_key: args.server_key,
                };
                match pki::init(&options) {
                    Ok(pki) => {
                        print!("{}", usage(&options, &pki));
                        ExitCode::SUCCESS
                    }
                    Err(error) => {
                        eprintln!("geni-am dev init: {error:#}");
                        ExitCode::FAILURE
                    }
                }
            }
        }
    }
}

/// What was written and how to call the aggregate.
fn usage(options: &InitOptions, pki: &DevPki) -> String {
    let written = if pki.written.is_empty() {
        format!(
            "All files already exist in {} and were kept (use --force to replace them).\n",
            options.dir.display()
        )
    } else {
        let files: Vec<String> = pki
            .written
            .iter()
            .map(|p| format!("  {}\n", p.display()))
            .collect();
        format!("Wrote:\n{}", files.concat())
    };
    let (ca, cert, key) = (
        pki.ca_cert.display(),
        pki.user_cert.display(),
        pki.user_key.display(),
    );
    let url = &pki.url;
    format!(
        r#"{written}
Start the aggregate:
  geni-am serve --config {config}

Its dashboard, metrics and health checks (operator endpoint):
  http://127.0.0.1:{operator_port}/

Call it with curl (GetVersion):
  curl --cacert {ca} --cert {cert} --key {key} -H 'Content-Type: text/xml' \
    --data '<?xml version="1.0"?><methodCall><methodName>GetVersion</methodName><params/></methodCall>' \
    {url}

With geni-lib (pip install geni-lib six):
  python3 -c 'from geni.minigcf import amapi3; print(amapi3.getversion("{url}", "{ca}", "{cert}", "{key}", ({{}},)))'

With omni: use {cert} and {key} as the user certificate and key, the slice
credential {slice_cred} (slice {slice}) and the user credential
{user_cred}, then:
  omni -V3 -a {url} getversion
"#,
        config = pki.config.display(),
        operator_port = options.operator_port,
        slice_cred = pki.slice_credential.display(),
        slice = pki.slice_urn,
        user_cred = pki.user_credential.display(),
    )
}
