//! `geni-am cred …`: verify SFA credentials by hand, exactly as the
//! aggregate does for a call by the given caller: the caller's certificate
//! chain at `--at` against `--roots` (what the TLS server checks on every
//! connection), speaks-for with `--speaking-for` and the ABAC statements
//! among the files (what `geni_speaking_for` does, through the same
//! [`auth::acting_caller`]), then every SFA credential for the caller it
//! acts for.

use crate::api::auth::{self, Presented};
use crate::api::errors::refused;
use crate::geni::AmError;
use anyhow::{Context, anyhow};
use chrono::{DateTime, Utc};
use clap::{Args, Subcommand};
use geni_credentials::Urn;
use geni_credentials::sfa::time::{format_expiry, parse_expiry};
use geni_credentials::sfa::wire::{self, CredentialKind};
use geni_credentials::sfa::{self, Request, VerifiedCredential};
use geni_credentials::{GeniCert, parse_chain};
use geni_credentials::{TrustStore, VerifiedChain};
use std::path::PathBuf;
use std::process::ExitCode;

/// Credential tools for operators and federation members.
#[derive(Debug, Subcommand)]
pub enum CredCommand {
    /// Verify SFA credential files: the caller's certificate, speaks-for,
    /// signatures, delegation chain, trust, owner, target and privilege.
    /// Prints what each grants or why it is refused, then the verdict of
    /// the call as the aggregate would give it; exits 0 when the call is
    /// authorised (one credential grants it), 1 otherwise.
    Verify(VerifyArgs),
}

/// Arguments of `geni-am cred verify`.
#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// Directory of trusted root certificates (`*.pem`, `*.crt`, `*.gid`).
    #[arg(long, value_name = "DIR")]
    pub roots: PathBuf,
    /// The caller's certificate (PEM, possibly with its issuers), as its
    /// client would present it over TLS; it must chain to the roots and be
    /// valid at `--at`, and its URN must own the credentials (unless
    /// `--speaking-for` names the owner).
    #[arg(long, value_name = "CERT")]
    pub caller: PathBuf,
    /// The URN the call is about (normally a slice); checked when given.
    #[arg(long, value_name = "URN")]
    pub target: Option<String>,
    /// The operation the call needs (`createsliver`, `getsliceresources`,
    /// `renewsliver`, `deleteslice`, `shutdown`…) or a privilege name.
    #[arg(long, value_name = "NAME")]
    pub privilege: Option<String>,
    /// The user the caller speaks for (`geni_speaking_for`); a speaks-for
    /// (ABAC) credential among the files must allow it.
    #[arg(long, value_name = "URN")]
    pub speaking_for: Option<String>,
    /// Judge validity at this time (RFC 3339; no zone means UTC) instead
    /// of now.
    #[arg(long, value_name = "TIME")]
    pub at: Option<String>,
    /// Credential files (signed-credential XML): SFA credentials, and
    /// speaks-for credentials used with `--speaking-for`.
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
    /// The caller's leaf certificate and the issuers sent with it.
    caller: (GeniCert, Vec<GeniCert>),
    target: Option<Urn>,
    at: DateTime<Utc>,
    /// The credential files read, with their text.
    files: Vec<(PathBuf, String)>,
}

impl Setup {
    fn load(args: &VerifyArgs) -> anyhow::Result<Self> {
        let trust = TrustStore::from_dir(&args.roots)
            .with_context(|| format!("trust roots {}", args.roots.display()))?;
        let pem = std::fs::read(&args.caller)
            .with_context(|| format!("caller certificate {}", args.caller.display()))?;
        let mut chain = parse_chain(&pem)
            .with_context(|| format!("caller certificate {}", args.caller.display()))?
            .into_iter();
        let leaf = chain
            .next()
            .ok_or_else(|| anyhow!("{}: no certificate", args.caller.display()))?;
        let caller = (leaf, chain.collect());
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
        let files = args
            .credentials
            .iter()
            .map(|path| {
                std::fs::read_to_string(path)
                    .map(|xml| (path.clone(), xml))
                    .with_context(|| format!("credential {}", path.display()))
            })
            .collect::<anyhow::Result<_>>()?;
        Ok(Self {
            trust,
            caller,
            target,
            at,
            files,
        })
    }

    /// The caller's chain verified against the roots at `--at`, as the
    /// server verifies a client's chain after the TLS handshake.
    fn verified_caller(&self) -> Result<VerifiedChain, AmError> {
        let (leaf, sent) = &self.caller;
        self.trust.verify(leaf, sent, self.at).map_err(|e| {
            refused(
                e.kind(),
                format!("the caller's certificate is not trusted: {e}"),
            )
        })
    }

    /// The files as the credentials of one call, sorted as the server sorts them.
    fn presented(&self) -> Presented {
        Presented::from_documents(self.files.iter().map(|(_, xml)| xml.as_str()))
    }
}

/// `refused (LABEL): message` of a refusal.
fn refusal(error: &AmError) -> String {
    format!("refused ({}): {}", error.code.label(), error.message)
}

fn verify(args: &VerifyArgs) -> ExitCode {
    let setup = match Setup::load(args) {
        Ok(setup) => setup,
        Err(e) => {
            eprintln!("error: {e:#}");
            return ExitCode::FAILURE;
        }
    };
    let presented = setup.presented();
    let acting = setup.verified_caller().and_then(|chain| {
        auth::acting_caller(
            &setup.trust,
            &chain,
            &presented.abac,
            args.speaking_for.as_deref(),
            "cred verify",
            setup.at,
        )
    });
    let acting = match acting {
        Ok(acting) => acting,
        Err(error) => {
            println!("{}: {}", args.caller.display(), refusal(&error));
            return ExitCode::FAILURE;
        }
    };
    if let Some(tool) = &acting.speaking_for {
        println!("{tool} speaks for {}", acting.effective);
    }
    let request = Request {
        caller: &acting.effective,
        target: setup.target.as_ref(),
        operation: args.privilege.as_deref(),
        at: setup.at,
    };
    for (path, xml) in &setup.files {
        if wire::classify_bare(xml) == Some(CredentialKind::Abac) {
            println!("{}: speaks-for credential", path.display());
            continue;
        }
        match sfa::verify(xml.as_bytes(), &setup.trust, &request) {
            Ok(verified) => print!("{}: verified\n{}", path.display(), describe(&verified)),
            Err(e) => println!("{}: refused ({}): {e}", path.display(), e.kind()),
        }
    }
    // The verdict is the server's: the call is authorised when one of the
    // credentials grants it.
    match auth::first_granting(&setup.trust, &presented, &request) {
        Ok(_) => {
            println!("call: authorised");
            ExitCode::SUCCESS
        }
        Err((kind, _)) => {
            println!("call: refused ({kind})");
            ExitCode::FAILURE
        }
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
