//! The `geni-am` binary: parses the command line and runs it, with
//! certificate keys read without OpenSSL 3.0's provider decoders
//! (`geni_credentials::key_methods`): the server and the load client each
//! read certificates on every new connection.

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    geni_credentials::key_methods::use_builtin_key_methods();
    geni_am::cli::Cli::parse().run()
}
