//! Command-line interface of the `geni-am` binary: one subcommand group per
//! area, each in its own module.

pub mod admin;
pub mod backend;
pub mod bench;
pub mod cert;
pub mod cred;
pub mod dev;
pub mod rspec;
pub mod serve;
pub mod translate;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// The `geni-am` command line.
#[derive(Debug, Parser)]
#[command(name = "geni-am", version, about = "A GENI aggregate manager")]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Top-level subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Check and build RSpec documents by hand.
    #[command(subcommand)]
    Rspec(rspec::RspecCommand),
    /// Verify SFA credentials by hand.
    #[command(subcommand)]
    Cred(cred::CredCommand),
    /// Inspect and verify GENI certificates; make a development PKI.
    #[command(subcommand)]
    Cert(cert::CertCommand),
    /// Run the aggregate.
    Serve(serve::ServeArgs),
    /// Development tools (a PKI and configuration for a first run).
    #[command(subcommand)]
    Dev(dev::DevCommand),
    /// Run concurrent AM API v3 lifecycles against a running aggregate
    /// and report latencies and throughput.
    Bench(bench::BenchArgs),
    /// Check the configured backend (connection, account, templates,
    /// images, networks, hosts, quotas).
    #[command(subcommand)]
    Backend(backend::BackendCommand),
    /// Operate the aggregate beside a running `serve`: list slices,
    /// slivers, jobs, events and capacity; shut slices down, delete
    /// slivers, drain; back the store up.
    Admin(admin::AdminArgs),
    /// Print the GENI v3 request RSpec a TOSCA, RADL or HOT template
    /// becomes.
    Translate(translate::TranslateArgs),
}

impl Cli {
    /// Runs the chosen subcommand and returns the process exit code.
    pub fn run(self) -> ExitCode {
        match self.command {
            Command::Rspec(cmd) => cmd.run(),
            Command::Cred(cmd) => cmd.run(),
            Command::Cert(cmd) => cmd.run(),
            Command::Serve(args) => args.run(),
            Command::Dev(cmd) => cmd.run(),
            Command::Bench(args) => args.run(),
            Command::Backend(cmd) => cmd.run(),
            Command::Admin(args) => args.run(),
            Command::Translate(args) => args.run(),
        }
    }
}
