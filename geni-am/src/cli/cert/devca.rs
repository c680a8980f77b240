//! `geni-am cert devca --out DIR --authority NAME [--host H]... [--user U]...`:
//! writes a development PKI — `ca-cert.pem`/`ca-key.pem` (the self-signed
//! `…+authority+sa` root), `am-cert.pem`/`am-key.pem` (the aggregate's TLS
//! certificate for the hosts), and `<user>-cert.pem`/`<user>-key.pem` (chain
//! and key, as GENI clients expect). Refuses to overwrite an existing root.

use clap::Args;
use geni_credentials::devca::Authority;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `geni-am cert devca`.
#[derive(Debug, Args)]
pub struct DevcaArgs {
    /// Directory to write the PEM files to (created if missing).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// The authority (top-level GENI namespace), e.g. `geni-am.test`.
    #[arg(long, value_name = "NAME", default_value = "geni-am.test")]
    pub authority: String,
    /// Host names and addresses of the aggregate's TLS certificate.
    #[arg(long = "host", value_name = "HOST", default_values_t = ["localhost".to_owned(), "127.0.0.1".to_owned()])]
    pub hosts: Vec<String>,
    /// User certificates to issue.
    #[arg(long = "user", value_name = "NAME")]
    pub users: Vec<String>,
}

/// Creates the PKI and prints what was written.
pub fn run(args: &DevcaArgs) -> ExitCode {
    match create(args) {
        Ok(written) => {
            for line in written {
                println!("{line}");
            }
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("geni-am: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn create(args: &DevcaArgs) -> anyhow::Result<Vec<String>> {
    let ca_cert = args.out.join("ca-cert.pem");
    anyhow::ensure!(
        !ca_cert.exists(),
        "{} exists; refusing to replace a root authority",
        ca_cert.display()
    );
    std::fs::create_dir_all(&args.out)?;
    let root = Authority::root(&args.authority, "sa")?;
    let mut written = Vec::new();
    let mut write =
        |identity: &geni_credentials::devca::Identity, stem: &str| -> anyhow::Result<()> {
            let (cert, _) = identity.write_pem(&args.out, stem)?;
            written.push(format!("{}: {}", cert.display(), identity.urn()));
            Ok(())
        };
    write(root.identity(), "ca")?;
    let hosts: Vec<&str> = args.hosts.iter().map(String::as_str).collect();
    write(&root.server("am", &hosts)?, "am")?;
    for user in &args.users {
        write(&root.user(user)?, user)?;
    }
    Ok(written)
}
