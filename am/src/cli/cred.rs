//! `geni-am cred …`: verify SFA credentials by hand, exactly as the
//! aggregate would for a call by the given caller.

use anyhow::{Context, anyhow};
use chrono::{DateTime, Utc};
use clap::{Args, Subcommand};
use credentials::cert::parse_chain;
use credentials::sfa::time::{format_expiry, parse_expiry};
use credentials::sfa::{self, Request, VerifiedCredential};
use credentials::trust::TrustStore;
use credentials::urn::Urn;
use std::path::PathBuf;
use std::process::ExitCode;

/// Credential tools for operators and federation members.
#[derive(Debug, Subcommand)]
pub enum CredCommand {
    /// Verify SFA credential files: signatures, delegation chain, trust,
    /// owner, target and privilege. Prints what each grants or why it is
    /// refused; exits 1 if any is refused.
    Verify(VerifyArgs),
}

/// Arguments of `geni-am cred verify`.
#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// Directory of trusted root certificates (`*.pem`, `*.crt`, `*.gid`).
    #[arg(long, value_name = "DIR")]
    pub roots: PathBuf,
    /// The caller's certificate (PEM, possibly with its issuers); its URN
    /// must own the credential.
    #[arg(long, value_name = "CERT")]
    pub caller: PathBuf,
    /// The URN the call is about (normally a slice); checked when given.
    #[arg(long, value_name = "URN")]
    pub target: Option<String>,
    /// The operation the call needs (`createsliver`, `getsliceresources`,
    /// `renewsliver`, `deleteslice`, `shutdown`…) or a privilege name.
    #[arg(long, value_name = "NAME")]
    pub privilege: Option<String>,
    /// Judge validity at this time (RFC 3339; no zone means UTC) instead
    /// of now.
    #[arg(long, value_name = "TIME")]
    pub at: Option<String>,
    /// Credential files (signed-credential XML).
    #[arg(required = true, value_name = "CREDENTIAL")]
    pub credentials: Vec<PathBuf>,
}

impl CredCommand {
    /// Runs the subcommand.
    pub fn run(self) -> ExitCode {
        match self {
            Self::Verify(args) => verify(&args),
        }
    }
}

/// What every credential is checked against.
struct Setup {
    trust: TrustStore,
    caller: Urn,
    target: Option<Urn>,
    at: DateTime<Utc>,
}

impl Setup {
    fn load(args: &VerifyArgs) -> anyhow::Result<Self> {
        let trust = TrustStore::from_dir(&args.roots)
            .with_context(|| format!("trust roots {}", args.roots.display()))?;
        let pem = std::fs::read(&args.caller)
            .with_context(|| format!("caller certificate {}", args.caller.display()))?;
        let chain = parse_chain(&pem)
            .with_context(|| format!("caller certificate {}", args.caller.display()))?;
        let caller = chain
            .first()
            .ok_or_else(|| anyhow!("{}: no certificate", args.caller.display()))?
            .require_urn()?
            .clone();
        let target = args
            .target
            .as_deref()
            .map(Urn::parse)
            .transpose()
            .context("--target")?;
        let at = match &args.at {
            Some(text) => {
                parse_expiry(text).ok_or_else(|| anyhow!("--at {text:?} is not a date and time"))?
            }
            None => Utc::now(),
        };
        Ok(Self {
            trust,
            caller,
            target,
            at,
        })
    }
}

fn verify(args: &VerifyArgs) -> ExitCode {
    let setup = match Setup::load(args) {
        Ok(setup) => setup,
        Err(e) => {
            eprintln!("error: {e:#}");
            return ExitCode::FAILURE;
        }
    };
    let request = Request {
        caller: &setup.caller,
        target: setup.target.as_ref(),
        operation: args.privilege.as_deref(),
        at: setup.at,
    };
    let mut all_ok = true;
    for path in &args.credentials {
        let outcome = std::fs::read(path)
            .map_err(|e| format!("cannot read: {e}"))
            .and_then(|xml| {
                sfa::verify(&xml, &setup.trust, &request)
                    .map_err(|e| format!("refused ({}): {e}", e.kind()))
            });
        match outcome {
            Ok(verified) => print!("{}: verified\n{}", path.display(), describe(&verified)),
            Err(reason) => {
                all_ok = false;
                println!("{}: {reason}", path.display());
            }
        }
    }
    if all_ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// The human-readable summary of a verified credential.
fn describe(v: &VerifiedCredential) -> String {
    let mut out = format!(
        "  owner:      {}\n  target:     {}\n  privileges: {}\n  expires:    {}\n  chain:\n",
        v.owner,
        v.target,
        v.privileges,
        format_expiry(v.expires)
    );
    for (level, link) in v.chain.iter().enumerate() {
        out.push_str(&format!(
            "    [{level}] {:?} owner {} signed by {} expires {}\n",
            link.id,
            link.owner,
            link.signer,
            format_expiry(link.expires)
        ));
    }
    out
}
