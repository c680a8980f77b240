//! `geni-am rspec manifest --cm URN REQUEST`: prints the manifest the AM of
//! component manager URN would build for a request, with placeholder sliver
//! URNs for its own and unbound nodes, interfaces and links.

use clap::Args;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `geni-am rspec manifest`.
#[derive(Debug, Args)]
pub struct ManifestArgs {
    /// URN of the AM's component manager, e.g. urn:publicid:IDN+example.org+authority+cm.
    #[arg(long, value_name = "URN")]
    pub cm: String,
    /// The request RSpec file.
    #[arg(value_name = "REQUEST")]
    pub request: PathBuf,
}

/// Prints the manifest on standard output; exit code 1 with a message naming
/// the file (and line) when it cannot be read, does not parse or is not a
/// request.
pub fn run(args: &ManifestArgs) -> ExitCode {
    let result = preview(args).map_err(|message| format!("{}: {message}", args.request.display()));
    let result = result.and_then(|bytes| {
        std::io::stdout()
            .lock()
            .write_all(&bytes)
            .map_err(|e| format!("cannot write the manifest: {e}"))
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

/// Reads the request and builds its manifest with placeholder annotations.
fn preview(args: &ManifestArgs) -> Result<Vec<u8>, String> {
    let limit = geni_rspec::Limits::default().max_bytes;
    let size = std::fs::metadata(&args.request)
        .map_err(|e| format!("cannot read: {e}"))?
        .len();
    if size > limit as u64 {
        return Err(format!(
            "{size} bytes is larger than the {limit}-byte limit for an RSpec"
        ));
    }
    let bytes = std::fs::read(&args.request).map_err(|e| format!("cannot read: {e}"))?;
    let request = geni_rspec::Document::parse(&bytes).map_err(|e| e.to_string())?;
    geni_rspec::manifest::check_request(&request).map_err(|e| e.to_string())?;
    let annotations = geni_rspec::manifest::placeholder_annotations(&request, &args.cm)
        .map_err(|e| e.to_string())?;
    let manifest =
        geni_rspec::manifest::build(&request, &args.cm, &annotations).map_err(|e| e.to_string())?;
    Ok(manifest.to_bytes())
}
