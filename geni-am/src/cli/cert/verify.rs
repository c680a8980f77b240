//! `geni-am cert verify --roots DIR [--at TIME] FILE...`: prints
//! `FILE: trusted: <leaf> <- <issuer> … (root <root>)` or
//! `FILE: <GENI outcome>: <reason>`. Exit status: 0 when every chain is
//! trusted, 1 when one is refused, 2 when the roots or a file cannot be read.

use chrono::Utc;
use clap::Args;
use geni_credentials::sfa::time::parse_expiry;
use geni_credentials::{GeniCert, parse_chain};
use geni_credentials::{TrustStore, VerifiedChain};
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `geni-am cert verify`.
#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// Directory of trusted root certificates (`*.pem`, `*.crt`, `*.cert`, `*.gid`).
    #[arg(long, value_name = "DIR")]
    pub roots: PathBuf,
    /// Judge validity at this time (RFC 3339; no zone means UTC) instead of now.
    #[arg(long, value_name = "TIME")]
    pub at: Option<String>,
    /// Certificate chain files, leaf first (as a GENI user's PEM file).
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
}

const REFUSED: u8 = 1;
const UNREADABLE: u8 = 2;

/// Verifies every chain and returns the exit status.
pub fn run(args: &VerifyArgs) -> ExitCode {
    let roots = match TrustStore::from_dir(&args.roots) {
        Ok(roots) => roots,
        Err(error) => {
            eprintln!("geni-am: {error}");
            return ExitCode::from(UNREADABLE);
        }
    };
    let at = match args.at.as_deref().map(|text| (text, parse_expiry(text))) {
        None => Utc::now(),
        Some((_, Some(at))) => at,
        Some((text, None)) => {
            eprintln!("geni-am: --at {text:?} is not a date and time (RFC 3339)");
            return ExitCode::from(UNREADABLE);
        }
    };
    let mut status = 0;
    for file in &args.files {
        let shown = file.display();
        let chain = match read_chain(file) {
            Ok(chain) => chain,
            Err(error) => {
                eprintln!("{shown}: {error}");
                status = UNREADABLE;
                continue;
            }
        };
        match roots.verify_chain(&chain, at) {
            Ok(verified) => println!("{shown}: trusted: {}", summary(&verified)),
            Err(error) => {
                println!("{shown}: {}: {error}", error.kind());
                status = status.max(REFUSED);
            }
        }
    }
    ExitCode::from(status)
}

fn read_chain(file: &std::path::Path) -> Result<Vec<GeniCert>, String> {
    let bytes = std::fs::read(file).map_err(|e| format!("cannot read: {e}"))?;
    parse_chain(&bytes).map_err(|e| e.to_string())
}

/// `<leaf> <- <issuer> … (root <root>)`, by URN.
fn summary(verified: &VerifiedChain) -> String {
    let names: Vec<String> = verified
        .certificates()
        .iter()
        .map(GeniCert::display_name)
        .collect();
    format!(
        "{} (root {})",
        names.join(" <- "),
        verified.root().display_name()
    )
}
