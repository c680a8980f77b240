//! `geni-am rspec …`: validate RSpec files and preview manifests.

use clap::Subcommand;
use std::process::ExitCode;

/// RSpec tools for operators and client authors.
#[derive(Debug, Subcommand)]
pub enum RspecCommand {}

impl RspecCommand {
    /// Runs the subcommand.
    pub fn run(self) -> ExitCode {
        match self {}
    }
}
