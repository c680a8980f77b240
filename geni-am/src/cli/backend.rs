//! `geni-am backend check --config FILE`: connects with the configured
//! backend and prints one line per finding (`✓`/`✗`, what was checked,
//! what was found and what to do), see [`crate::service::backend::check`]. Exit
//! status 0 when every check passed, 1 when one failed, 2 when the
//! configuration cannot be read.

use crate::config::Config;
use crate::service::backend::check;
use clap::{Args, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

/// Backend tools.
#[derive(Debug, Subcommand)]
pub enum BackendCommand {
    /// Check that the configured backend is reachable and usable: for
    /// OpenNebula the endpoint, session, version, templates, images, link
    /// network, hosts and quotas; for the simulated cloud its inventory.
    Check(CheckArgs),
}

/// Arguments of `geni-am backend check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The configuration file (see deploy/geni-am.example.toml).
    #[arg(long, value_name = "FILE")]
    pub config: PathBuf,
}

impl BackendCommand {
    /// Runs the subcommand.
    pub fn run(self) -> ExitCode {
        match self {
            BackendCommand::Check(args) => args.run(),
        }
    }
}

impl CheckArgs {
    /// Prints the findings; exit status 1 when any failed.
    pub fn run(self) -> ExitCode {
        let config = match Config::load(&self.config) {
            Ok(config) => config,
            Err(error) => {
                eprintln!("geni-am backend check: {error:#}");
                return ExitCode::from(2);
            }
        };
        let findings = check(&config.backend, &config.aggregate.authority);
        for finding in &findings {
            println!("{}", finding.line());
        }
        if findings.iter().all(|f| f.ok) {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        }
    }
}
