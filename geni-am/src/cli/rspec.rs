//! `geni-am rspec …`: validate RSpec files and preview manifests. Each
//! subcommand lives in its own module below.

mod manifest;
mod validate;

use clap::Subcommand;
use std::process::ExitCode;

/// RSpec tools for operators and client authors.
#[derive(Debug, Subcommand)]
pub enum RspecCommand {
    /// Check RSpec files against the aggregate's schemas and request rules.
    Validate(validate::ValidateArgs),
    /// Print the manifest an AM would build for a request: its own and
    /// unbound nodes and links get placeholder sliver URNs, the rest passes
    /// through unchanged.
    Manifest(manifest::ManifestArgs),
}

impl RspecCommand {
    /// Runs the subcommand.
    pub fn run(self) -> ExitCode {
        match self {
            Self::Validate(args) => validate::run(&args),
            Self::Manifest(args) => manifest::run(&args),
        }
    }
}
