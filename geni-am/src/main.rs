//! The `geni-am` binary: parses the command line and runs it.

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    geni_am::cli::Cli::parse().run()
}
