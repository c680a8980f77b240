//! `geni-am cred …`: verify SFA credentials by hand.

use clap::Subcommand;
use std::process::ExitCode;

/// Credential tools for operators and federation members.
#[derive(Debug, Subcommand)]
pub enum CredCommand {}

impl CredCommand {
    /// Runs the subcommand.
    pub fn run(self) -> ExitCode {
        match self {}
    }
}
