//! `geni-am rspec validate FILE...`: validates RSpec files as the aggregate
//! would, printing `FILE: valid` or one `FILE:LINE: element: message` line
//! per problem. Exit status: 0 when every file is valid, 1 when one is
//! not, 2 when a file cannot be read (or the schemas cannot be loaded).

use clap::{Args, ValueEnum};
use geni_rspec::{Invalid, RspecKind, Validated, Validator};
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `geni-am rspec validate`.
#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// Require this kind of RSpec (by default, the kind each file declares
    /// in its `type` attribute is checked).
    #[arg(long = "as", value_enum, value_name = "KIND")]
    pub expect: Option<Kind>,
    /// The RSpec files to check.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
}

/// The RSpec kinds a file may be required to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Kind {
    /// `type="advertisement"`.
    Advertisement,
    /// `type="request"`.
    Request,
    /// `type="manifest"`.
    Manifest,
}

impl From<Kind> for RspecKind {
    fn from(kind: Kind) -> Self {
        match kind {
            Kind::Advertisement => Self::Advertisement,
            Kind::Request => Self::Request,
            Kind::Manifest => Self::Manifest,
        }
    }
}

const INVALID: u8 = 1;
const UNREADABLE: u8 = 2;

/// Validates every file and returns the exit status.
pub fn run(args: &ValidateArgs) -> ExitCode {
    let validator = match Validator::new() {
        Ok(validator) => validator,
        Err(error) => {
            eprintln!("geni-am: {error}");
            return ExitCode::from(UNREADABLE);
        }
    };
    let mut status = 0;
    for file in &args.files {
        let shown = file.display();
        let bytes = match std::fs::read(file) {
            Ok(bytes) => bytes,
            Err(error) => {
                eprintln!("{shown}: cannot read: {error}");
                status = UNREADABLE;
                continue;
            }
        };
        match check(&validator, &bytes, args.expect) {
            Ok(_) => println!("{shown}: valid"),
            Err(invalid) => {
                for issue in &invalid.issues {
                    println!("{shown}:{issue}");
                }
                status = status.max(INVALID);
            }
        }
    }
    ExitCode::from(status)
}

fn check(validator: &Validator, bytes: &[u8], expect: Option<Kind>) -> Result<Validated, Invalid> {
    match expect {
        Some(kind) => validator.validate_as(bytes, kind.into()),
        None => validator.validate(bytes),
    }
}
