//! The record of one call, kept in one place: the `tracing` span every
//! log line of the call is written in (request id, API version, method,
//! caller URN, and the slice URN once the API knows it), the one line
//! that ends it (GENI code or fault, the output of a refusal, duration),
//! and the call's metrics (`geni_am_calls_total`,
//! `geni_am_call_duration_seconds`, credential refusals in
//! `geni_am_refusals_total`).

use crate::api::ApiVersion;
use crate::geni::GeniCode;
use crate::telemetry::{self, CallCode};
use geni_credentials::VerifiedChain;
use geni_xmlrpc::{Value, fault_code};
use std::time::Instant;
use tracing::Span;

/// The method label of calls whose method is not one the API answers
/// (so the metrics' labels stay bounded).
const UNKNOWN_METHOD: &str = "unknown";

/// How a call was answered.
pub(super) enum Answer<'a> {
    /// A GENI envelope (`{code, value, output}`).
    Envelope(&'a Value),
    /// An XML-RPC fault.
    Fault {
        /// The fault code.
        code: i32,
        /// The fault string.
        message: &'a str,
    },
}

/// One call being answered, from its decoding to its answer.
pub(super) struct CallLog {
    span: Span,
    method: String,
    started: Instant,
}

impl CallLog {
    /// Begins the record of `method` (`None`: the body was not a method
    /// call) posted to `version` by `caller`; the span is entered by
    /// [`CallLog::span`].
    pub(super) fn begin(
        version: ApiVersion,
        method: Option<&str>,
        caller: &VerifiedChain,
        started: Instant,
    ) -> CallLog {
        let request_id = uuid::Uuid::new_v4().simple().to_string();
        let method = method.filter(|m| is_method_name(m));
        let span = tracing::info_span!(
            "call",
            request_id = %request_id,
            api = version.number(),
            method = %method.unwrap_or(UNKNOWN_METHOD),
            caller = %caller.leaf_urn().map(ToString::to_string).unwrap_or_default(),
            slice = tracing::field::Empty,
        );
        CallLog {
            span,
            method: method.unwrap_or(UNKNOWN_METHOD).to_owned(),
            started,
        }
    }

    /// The call's span (the API records `slice` on it).
    pub(super) fn span(&self) -> &Span {
        &self.span
    }

    /// Ends the call answered with `answer`: writes its one line and
    /// counts it.
    pub(super) fn end(self, answer: &Answer<'_>) {
        let elapsed = self.started.elapsed();
        let duration_ms = (elapsed.as_secs_f64() * 1e6).round() / 1e3;
        let _entered = self.span.enter();
        let code = match answer {
            Answer::Envelope(envelope) => {
                let (code, output) = envelope_code(envelope);
                if code == GeniCode::Success.as_i32() {
                    tracing::info!(code, duration_ms, "answered");
                } else {
                    tracing::info!(code, output, duration_ms, "answered");
                }
                if let Some(reason) = credential_refusal(code) {
                    telemetry::record_refusal(reason);
                }
                CallCode::Geni(code)
            }
            Answer::Fault { code, message } => {
                tracing::info!(fault = code, output = message, duration_ms, "answered");
                CallCode::Fault
            }
        };
        let method = match answer {
            Answer::Fault { code, .. } if *code == fault_code::METHOD_NOT_FOUND => UNKNOWN_METHOD,
            _ => self.method.as_str(),
        };
        telemetry::record_call(method, code, elapsed.as_secs_f64());
    }
}

/// Whether `text` can be a method name of the API (what else a client
/// sends is logged as `unknown`: it may hold line breaks or be long).
fn is_method_name(text: &str) -> bool {
    !text.is_empty()
        && text.len() <= 64
        && text.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The `geni_code` and `output` of an envelope (`-1` when it has none,
/// which the API never answers).
fn envelope_code(envelope: &Value) -> (i32, &str) {
    let code = geni_xmlrpc::member(envelope, "code")
        .and_then(|code| geni_xmlrpc::member(code, "geni_code"))
        .and_then(geni_xmlrpc::as_int)
        .and_then(|code| i32::try_from(code).ok())
        .unwrap_or(-1);
    let output = geni_xmlrpc::member(envelope, "output")
        .and_then(geni_xmlrpc::as_str)
        .unwrap_or_default();
    (code, output)
}

/// The refusal reason of a credential refusal answered with `code`.
fn credential_refusal(code: i32) -> Option<&'static str> {
    match GeniCode::from_i32(code)? {
        GeniCode::Forbidden => Some("forbidden"),
        GeniCode::CredentialInvalid => Some("credential_invalid"),
        GeniCode::CredentialExpired => Some("credential_expired"),
        GeniCode::CredentialMismatch => Some("credential_mismatch"),
        GeniCode::CredentialSignerUntrusted => Some("credential_signer_untrusted"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_words_are_logged_as_methods() {
        assert!(is_method_name("ListResources"));
        assert!(!is_method_name("Allocate\nforged line"));
        assert!(!is_method_name(&"A".repeat(65)));
        assert!(!is_method_name(""));
    }

    #[test]
    fn credential_codes_are_refusals_and_others_are_not() {
        assert_eq!(credential_refusal(3), Some("forbidden"));
        assert_eq!(credential_refusal(23), Some("credential_signer_untrusted"));
        assert_eq!(credential_refusal(0), None);
        assert_eq!(credential_refusal(12), None);
    }

    #[test]
    fn the_code_and_output_come_from_the_envelope() {
        let envelope = crate::api::envelope::envelope(Err(crate::geni::AmError::new(
            GeniCode::SearchFailed,
            "no such slice",
        )));
        assert_eq!(envelope_code(&envelope), (12, "no such slice"));
    }
}
