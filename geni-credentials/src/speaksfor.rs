//! Speaks-for (GENI AM API v3 specification, section "Speaks For"): a
//! hosted tool authenticates with its own certificate and presents an ABAC credential (`geni_abac` version 1) in
//! which a user states `USER.speaks_for_USER <- TOOL`, together with the
//! option `geni_speaking_for: <user URN>`. When the credential verifies, the
//! user becomes the caller whose SFA credentials are checked.
//!
//! Checks, in gcf's order: one signed `abac` credential (same wrapping
//! defence as SFA credentials, no delegation), not expired, signed by the
//! user named in the option, exactly one tail, head key id = the signer's,
//! head role = `speaks_for_<user key id>`, tail key id = the TLS client's,
//! and both the user's and the tool's certificates chain to the trust roots.

use crate::cert::GeniCert;
use crate::refusal::RefusalKind;
use crate::sfa::SfaError;
use crate::sfa::signed_elements;
use crate::sfa::time::parse_expiry;
use crate::trust::{TrustError, TrustStore};
use crate::urn::Urn;
use crate::xmldsig::{Document, Node};
use chrono::{DateTime, Utc};

/// Why a speaks-for credential was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SpeaksForError {
    /// The document, its structure or its signature was refused.
    #[error(transparent)]
    Credential(#[from] SfaError),
    /// The credential is not an ABAC credential.
    #[error("credential is of type {0:?}, not an ABAC speaks-for credential (\"abac\")")]
    NotAbac(String),
    /// ABAC credentials cannot be delegated.
    #[error("a speaks-for credential cannot carry a delegation <parent>")]
    Delegated,
    /// The ABAC statement does not have the speaks-for shape.
    #[error("line {line}: {message}")]
    Malformed {
        /// Line of the offending element.
        line: u32,
        /// What is wrong.
        message: String,
    },
    /// The credential has expired.
    #[error("speaks-for credential expired at {expires} (checked at {at})")]
    Expired {
        /// Its expiry.
        expires: DateTime<Utc>,
        /// The time of the check.
        at: DateTime<Utc>,
    },
    /// The credential was not signed by the user the tool speaks for.
    #[error(
        "speaks-for credential is signed by {signer}, not by {user} named in geni_speaking_for"
    )]
    SignerNotUser {
        /// Who signed it.
        signer: String,
        /// The user named by the option.
        user: String,
    },
    /// A key id or role of the statement does not match the certificates.
    #[error("{what} is {found:?}, expected {expected:?}")]
    KeyMismatch {
        /// Which part of the statement.
        what: &'static str,
        /// The value the certificates give.
        expected: String,
        /// The value in the credential.
        found: String,
    },
    /// The user's or tool's certificate is not trusted.
    #[error("{role} certificate: {source}")]
    Untrusted {
        /// `user` or `tool`.
        role: &'static str,
        /// Why.
        source: Box<TrustError>,
    },
    /// `geni_speaking_for` was given without any ABAC credential.
    #[error("geni_speaking_for names {0} but no geni_abac speaks-for credential was presented")]
    NoCredential(String),
}

impl SpeaksForError {
    /// The GENI outcome of this refusal.
    pub fn kind(&self) -> RefusalKind {
        match self {
            Self::Credential(e) => e.kind(),
            Self::Expired { .. } => RefusalKind::CredentialExpired,
            Self::SignerNotUser { .. } | Self::KeyMismatch { .. } => {
                RefusalKind::CredentialMismatch
            }
            Self::Untrusted { source, .. } => source.kind(),
            Self::NoCredential(_) => RefusalKind::Forbidden,
            Self::NotAbac(_) | Self::Delegated | Self::Malformed { .. } => {
                RefusalKind::CredentialInvalid
            }
        }
    }
}

/// A verified speaks-for statement.
#[derive(Debug, Clone)]
pub struct SpeaksFor {
    /// The user the tool acts for (the new caller).
    pub user: Urn,
    /// The tool (the TLS client).
    pub tool: Urn,
    /// When the statement expires.
    pub expires: DateTime<Utc>,
}

/// Verifies that the tool with certificate chain `tool` (leaf first, as
/// presented in TLS) may speak for `user` according to credential `xml`.
pub fn verify(
    xml: &[u8],
    trust: &TrustStore,
    tool: &[GeniCert],
    user: &Urn,
    at: DateTime<Utc>,
) -> Result<SpeaksFor, SpeaksForError> {
    let doc = Document::parse(xml).map_err(SfaError::from)?;
    let mut elements = signed_elements(&doc)?;
    if elements.len() > 1 {
        return Err(SpeaksForError::Delegated);
    }
    let Some((credential, signature)) = elements.pop() else {
        return Err(SpeaksForError::Delegated);
    };
    let kind = child(credential, "type")?.text();
    if kind.trim() != "abac" {
        return Err(SpeaksForError::NotAbac(kind.trim().to_owned()));
    }
    let expires_node = child(credential, "expires")?;
    let expires = parse_expiry(&expires_node.text())
        .ok_or_else(|| malformed(expires_node, "<expires> is not a date and time"))?;
    if expires <= at {
        return Err(SpeaksForError::Expired { expires, at });
    }
    let signer = GeniCert::from_x509(signature.signer.clone())
        .map_err(|e| untrusted("user", TrustError::Certificate(e)))?;
    if !signer.urn().is_some_and(|u| u.same_as(user)) {
        return Err(SpeaksForError::SignerNotUser {
            signer: signer.display_name(),
            user: user.to_string(),
        });
    }
    let (tool_leaf, tool_rest) = tool
        .split_first()
        .ok_or_else(|| malformed(credential, "no tool certificate was presented"))?;
    Statement::read(credential)?.check(&signer, tool_leaf)?;
    let intermediates: Vec<GeniCert> = signature
        .certificates
        .iter()
        .filter_map(|c| GeniCert::from_x509(c.clone()).ok())
        .collect();
    trust
        .verify(&signer, &intermediates, at)
        .map_err(|e| untrusted("user", e))?;
    trust
        .verify(tool_leaf, tool_rest, at)
        .map_err(|e| untrusted("tool", e))?;
    Ok(SpeaksFor {
        user: user.clone(),
        tool: tool_leaf
            .require_urn()
            .map_err(|e| untrusted("tool", TrustError::Certificate(e)))?
            .clone(),
        expires,
    })
}

/// The caller a call acts for: without `speaking_for`, the TLS client
/// itself; with it, the user of the first of `abac_credentials` that
/// verifies (the last refusal otherwise).
pub fn effective_caller(
    tls_chain: &[GeniCert],
    speaking_for: Option<&Urn>,
    abac_credentials: &[&[u8]],
    trust: &TrustStore,
    at: DateTime<Utc>,
) -> Result<Urn, SpeaksForError> {
    let Some(user) = speaking_for else {
        let leaf = tls_chain.first().ok_or_else(|| {
            untrusted(
                "tool",
                TrustError::Certificate(crate::cert::CertError::NoCertificate),
            )
        })?;
        return leaf
            .require_urn()
            .cloned()
            .map_err(|e| untrusted("tool", TrustError::Certificate(e)));
    };
    let mut last = SpeaksForError::NoCredential(user.to_string());
    for xml in abac_credentials {
        match verify(xml, trust, tls_chain, user, at) {
            Ok(statement) => return Ok(statement.user),
            Err(e) => last = e,
        }
    }
    Err(last)
}

/// The RT0 statement `head.role <- tail`.
struct Statement<'d> {
    head_keyid: Node<'d>,
    head_role: Node<'d>,
    tail_keyid: Node<'d>,
}

impl<'d> Statement<'d> {
    fn read(credential: Node<'d>) -> Result<Self, SpeaksForError> {
        let rt0 = child(child(credential, "abac")?, "rt0")?;
        let head = child(rt0, "head")?;
        let tail = child(rt0, "tail")?;
        if tail.children_named(None, "role").next().is_some() {
            return Err(malformed(
                tail,
                "a speaks-for <tail> names a principal, not a role",
            ));
        }
        Ok(Self {
            head_keyid: child(child(head, "ABACprincipal")?, "keyid")?,
            head_role: child(head, "role")?,
            tail_keyid: child(child(tail, "ABACprincipal")?, "keyid")?,
        })
    }

    fn check(&self, user: &GeniCert, tool: &GeniCert) -> Result<(), SpeaksForError> {
        let user_key = user.key_id();
        let expectations = [
            ("head key id (the user)", self.head_keyid, user_key.clone()),
            (
                "head role",
                self.head_role,
                format!("speaks_for_{user_key}"),
            ),
            ("tail key id (the tool)", self.tail_keyid, tool.key_id()),
        ];
        for (what, node, expected) in expectations {
            let found = node.text().trim().to_owned();
            if !found.eq_ignore_ascii_case(&expected) {
                return Err(SpeaksForError::KeyMismatch {
                    what,
                    expected,
                    found,
                });
            }
        }
        Ok(())
    }
}

/// The only child `name` of `parent`.
fn child<'d>(parent: Node<'d>, name: &str) -> Result<Node<'d>, SpeaksForError> {
    let mut found = parent.children_named(None, name);
    match (found.next(), found.next()) {
        (Some(only), None) => Ok(only),
        (None, _) => Err(malformed(
            parent,
            &format!("<{}> has no <{name}>", parent.name()),
        )),
        (Some(_), Some(second)) => Err(malformed(
            second,
            &format!("<{}> holds a second <{name}>", parent.name()),
        )),
    }
}

fn malformed(node: Node<'_>, message: &str) -> SpeaksForError {
    SpeaksForError::Malformed {
        line: node.line(),
        message: message.to_owned(),
    }
}

fn untrusted(role: &'static str, source: TrustError) -> SpeaksForError {
    SpeaksForError::Untrusted {
        role,
        source: Box::new(source),
    }
}
