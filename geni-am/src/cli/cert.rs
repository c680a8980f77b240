//! `geni-am cert …`: inspect GENI certificates, check them against trust
//! roots, and make a development PKI. Each subcommand lives in its own
//! module below.

mod devca;
mod show;
mod verify;

use clap::Subcommand;
use std::process::ExitCode;

/// Certificate tools for operators and federation members.
#[derive(Debug, Subcommand)]
pub enum CertCommand {
    /// Print the GENI identity of every certificate in PEM/DER files: URN,
    /// UUID, e-mail, CA flag, validity, algorithms and legacy features.
    Show(show::ShowArgs),
    /// Check certificate chains (leaf first) against a directory of trust
    /// roots, as the aggregate does for TLS callers; exits 1 if any is refused.
    Verify(verify::VerifyArgs),
    /// Create a development PKI: a root authority, an aggregate server
    /// certificate and user certificates, as PEM files.
    Devca(devca::DevcaArgs),
}

impl CertCommand {
    /// Runs the subcommand.
    pub fn run(self) -> ExitCode {
        match self {
            Self::Show(args) => show::run(&args),
            Self::Verify(args) => verify::run(&args),
            Self::Devca(args) => devca::run(&args),
        }
    }
}
