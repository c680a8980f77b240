//! Who may make a call: the presented credentials (structs with a
//! case-insensitive `geni_type`, `geni_sfa` 2/3 and `geni_abac` 1, or bare
//! XML strings; unknown types ignored), speaks-for (`geni_speaking_for`),
//! and the SFA check of `credentials` against the caller, the slice and
//! the privilege `geni_credentials::privilege` names for the method. Yields the
//! [`Principal`] the core acts for, or the precise refusal.

use super::errors::{bad_argument, refused};
use crate::geni::AmError;
use crate::model::Principal;
use chrono::{DateTime, Utc};
use geni_credentials::RefusalKind;
use geni_credentials::Urn;
use geni_credentials::privilege::{CredentialTarget, Requirement};
use geni_credentials::sfa::{self, VerifiedCredential, wire, wire::CredentialKind};
use geni_credentials::speaksfor;
use geni_credentials::{TrustStore, VerifiedChain};
use geni_xmlrpc::{Value, as_str, member};

/// The credentials of a call, sorted by type.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Presented {
    /// SFA credential documents.
    pub sfa: Vec<String>,
    /// ABAC (speaks-for) credential documents.
    pub abac: Vec<String>,
    /// Entries that were ignored, and why.
    pub ignored: Vec<String>,
}

impl Presented {
    /// Reads the `credentials` argument of `method`: an array of structs
    /// or bare XML strings.
    pub fn read(method: &str, value: &Value) -> Result<Presented, AmError> {
        let Value::Array(entries) = value else {
            return Err(bad_argument(
                method,
                "credentials must be an array of credential structs or strings",
            ));
        };
        let mut presented = Presented::default();
        for (i, entry) in entries.iter().enumerate() {
            presented.add(i + 1, entry);
        }
        Ok(presented)
    }

    /// Files one entry (classified by `geni_credentials::sfa::wire`).
    fn add(&mut self, position: usize, entry: &Value) {
        let field = |name| member(entry, name).and_then(as_str);
        let (kind, xml) = match as_str(entry) {
            Some(xml) => (wire::classify_bare(xml), xml),
            None => match (field("geni_type"), field("geni_value")) {
                (Some(kind), Some(xml)) => (
                    wire::classify_wrapped(kind, field("geni_version").unwrap_or_default()),
                    xml,
                ),
                _ => {
                    self.ignored.push(format!(
                        "credential {position} is neither an XML string nor a struct with string geni_type and geni_value"
                    ));
                    return;
                }
            },
        };
        self.file(position, kind, xml);
    }

    /// The credentials of a call given as bare documents (as files are).
    pub fn from_documents<'a>(documents: impl IntoIterator<Item = &'a str>) -> Presented {
        let mut presented = Presented::default();
        for (i, xml) in documents.into_iter().enumerate() {
            presented.file(i + 1, wire::classify_bare(xml), xml);
        }
        presented
    }

    /// Files one document of `kind` (`None`: not accepted here).
    fn file(&mut self, position: usize, kind: Option<CredentialKind>, xml: &str) {
        match kind {
            Some(CredentialKind::Sfa) => self.sfa.push(xml.to_owned()),
            Some(CredentialKind::Abac) => self.abac.push(xml.to_owned()),
            None => self.ignored.push(format!(
                "credential {position} is of a type or version this aggregate does not accept ({})",
                describe_accepted()
            )),
        }
    }

    /// Whether nothing at all was presented.
    pub fn is_empty(&self) -> bool {
        self.sfa.is_empty() && self.abac.is_empty() && self.ignored.is_empty()
    }
}

/// The accepted credential types, e.g. `geni_sfa 2, geni_sfa 3, geni_abac 1`.
fn describe_accepted() -> String {
    wire::CREDENTIAL_TYPES
        .iter()
        .map(|(kind, version)| format!("{kind} {version}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// What a call is checked against.
#[derive(Debug, Clone, Copy)]
pub struct Check<'a> {
    /// The method, for messages.
    pub method: &'a str,
    /// What the method needs (from `geni_credentials::privilege`).
    pub requirement: Requirement,
    /// The slice the call names, when known from its arguments.
    pub slice: Option<&'a Urn>,
    /// `geni_speaking_for`, if sent.
    pub speaking_for: Option<&'a str>,
    /// The time validity is judged at.
    pub at: DateTime<Utc>,
    /// Whether a call that needs any valid credential may present none
    /// (`[aggregate] public_advertisement`).
    pub anonymous_allowed: bool,
}

/// Who a call acts for: the TLS client, or the user it speaks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActingCaller {
    /// The URN credentials must be owned by (the user spoken for, or the client).
    pub effective: Urn,
    /// The client's own URN when it speaks for someone else.
    pub speaking_for: Option<String>,
}

/// Resolves who a call by the TLS client `caller` acts for: itself, or the
/// user named by `speaking_for` (`geni_speaking_for`) when one of the `abac`
/// speaks-for credentials says the client may speak for them at `at`.
pub fn acting_caller(
    trust: &TrustStore,
    caller: &VerifiedChain,
    abac: &[String],
    speaking_for: Option<&str>,
    method: &str,
    at: DateTime<Utc>,
) -> Result<ActingCaller, AmError> {
    let tool = caller.leaf_urn().ok_or_else(|| {
        refused(
            RefusalKind::CredentialMismatch,
            "the client certificate has no URN",
        )
    })?;
    let Some(text) = speaking_for else {
        return Ok(ActingCaller {
            effective: tool.clone(),
            speaking_for: None,
        });
    };
    let user = Urn::parse(text.trim())
        .map_err(|e| bad_argument(method, format!("geni_speaking_for {text:?}: {e}")))?;
    let abac: Vec<&[u8]> = abac.iter().map(|x| x.as_bytes()).collect();
    let effective =
        speaksfor::effective_caller(caller.certificates(), Some(&user), &abac, trust, at)
            .map_err(|e| refused(e.kind(), format!("{method}: speaks-for refused: {e}")))?;
    Ok(ActingCaller {
        effective,
        speaking_for: Some(tool.to_string()),
    })
}

/// Checks `presented` for a call by the TLS client `caller`.
pub fn authorize(
    trust: &TrustStore,
    caller: &VerifiedChain,
    presented: &Presented,
    check: &Check<'_>,
) -> Result<Principal, AmError> {
    let ActingCaller {
        effective,
        speaking_for,
    } = acting_caller(
        trust,
        caller,
        &presented.abac,
        check.speaking_for,
        check.method,
        check.at,
    )?;
    let principal = |slice_urn: Option<String>, expires| Principal {
        caller_urn: effective.to_string(),
        speaking_for: speaking_for.clone(),
        slice_urn,
        credential_expires: expires,
    };
    if check.requirement.target == CredentialTarget::None
        || (check.requirement.target == CredentialTarget::Any
            && presented.is_empty()
            && check.anonymous_allowed)
    {
        return Ok(principal(None, caller.leaf().not_after()));
    }
    if presented.is_empty() {
        let needed = match check.slice {
            Some(slice) => format!("a slice credential for {slice}"),
            None => {
                "a valid user or slice credential (this aggregate's advertisement is not public)"
                    .to_owned()
            }
        };
        return Err(refused(
            RefusalKind::Forbidden,
            format!(
                "{}: no credential was presented; the call needs {needed}",
                check.method
            ),
        ));
    }
    let request = sfa::Request {
        caller: &effective,
        target: check.slice,
        operation: check.requirement.operation,
        at: check.at,
    };
    let credential = first_granting(trust, presented, &request).map_err(|(kind, failures)| {
        refused(
            kind,
            format!(
                "{}: no credential authorises {} for {}: {}",
                check.method,
                check
                    .requirement
                    .operation
                    .map_or_else(|| "the call".to_owned(), |o| format!("operation {o}")),
                effective,
                summarize(&failures)
            ),
        )
    })?;
    let slice = (check.requirement.target == CredentialTarget::Slice)
        .then(|| credential.target.to_string());
    Ok(principal(slice, credential.expires))
}

/// The first of the presented SFA credentials that grants `request`, or
/// the refusal: the kind of the last failure (FORBIDDEN when nothing at all
/// was presented, CREDENTIAL_INVALID when only unusable entries were) and
/// every failure, in order.
pub fn first_granting(
    trust: &TrustStore,
    presented: &Presented,
    request: &sfa::Request<'_>,
) -> Result<VerifiedCredential, (RefusalKind, Vec<String>)> {
    let mut failures = presented.ignored.clone();
    let mut last = if presented.ignored.is_empty() {
        RefusalKind::Forbidden
    } else {
        RefusalKind::CredentialInvalid
    };
    for (i, xml) in presented.sfa.iter().enumerate() {
        match sfa::verify(xml.as_bytes(), trust, request) {
            Ok(credential) => return Ok(credential),
            Err(e) => {
                last = e.kind();
                failures.push(format!("SFA credential {}: {e}", i + 1));
            }
        }
    }
    if failures.is_empty() {
        failures.push("no SFA credential was presented".into());
    }
    Err((last, failures))
}

/// How many refused credentials a message names before it only counts.
const NAMED_FAILURES: usize = 3;

/// The first few failures, then how many more there were, so that a call
/// with thousands of bad credentials gets a message a person can read.
fn summarize(failures: &[String]) -> String {
    let named = failures[..failures.len().min(NAMED_FAILURES)].join("; ");
    match failures.len().saturating_sub(NAMED_FAILURES) {
        0 => named,
        more => format!(
            "{named}; and {more} more ({} credentials refused in all)",
            failures.len()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn wrapped(kind: &str, version: &str, xml: &str) -> Value {
        Value::Struct(BTreeMap::from([
            ("geni_type".to_owned(), Value::String(kind.into())),
            ("geni_version".to_owned(), Value::String(version.into())),
            ("geni_value".to_owned(), Value::String(xml.into())),
        ]))
    }

    #[test]
    fn credentials_are_sorted_by_case_insensitive_type() {
        let list = Value::Array(vec![
            wrapped("GENI_SFA", "3", "<signed-credential/>"),
            wrapped("geni_abac", "1", "<abac/>"),
            wrapped("geni_sfaBROKEN", "3", "<x/>"),
            Value::String("<credential><type>abac</type></credential>".into()),
            Value::String("<credential><type>privilege</type></credential>".into()),
            Value::String("not a credential".into()),
            Value::Integer(3),
        ]);
        let p = Presented::read("ListResources", &list).unwrap();
        assert_eq!(p.sfa.len(), 2);
        assert_eq!(p.abac.len(), 2);
        assert_eq!(p.ignored.len(), 3);
        assert!(p.ignored[0].contains("geni_sfa 3"), "{:?}", p.ignored);
        assert!(!p.is_empty());
    }

    #[test]
    fn a_refusal_names_the_first_few_failures_and_counts_the_rest() {
        let failures: Vec<String> = (1..=10_000)
            .map(|i| format!("credential {i}: bad"))
            .collect();
        let message = summarize(&failures);
        assert_eq!(
            message,
            "credential 1: bad; credential 2: bad; credential 3: bad; \
             and 9997 more (10000 credentials refused in all)"
        );
        assert_eq!(
            summarize(&failures[..2]),
            "credential 1: bad; credential 2: bad"
        );
    }

    #[test]
    fn credentials_must_be_an_array() {
        let e = Presented::read("Describe", &Value::String("x".into())).unwrap_err();
        assert_eq!(e.code.as_i32(), 1);
        assert!(
            Presented::read("Describe", &Value::Array(vec![]))
                .unwrap()
                .is_empty()
        );
    }
}
