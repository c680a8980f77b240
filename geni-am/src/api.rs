//! The AM API handlers (the GENI AM API v3 and v2 specifications): a
//! decoded call and the caller's verified certificate chain in, a GENI
//! envelope out.
//!
//! [`Api::answer`] is synchronous, because credential checks and the core
//! are; the server runs it on its blocking pool, behind the one request
//! handler (`server::handler`) that also decodes and encodes the XML-RPC.
//! [`Api::answer_from_memory`] answers the calls that need nothing but
//! memory (GetVersion while the drain state read is fresh) without
//! blocking, so the server can answer them on the connection's worker.
//! An unknown method is an XML-RPC fault; everything else is an envelope
//! `{code: {geni_code}, value, output}` whose code comes from the one
//! mapping in [`errors`].

pub mod args;
pub mod auth;
pub mod envelope;
pub mod errors;
mod v2;
mod v3;
pub mod version;

pub use version::Endpoints;

use crate::core::Aggregate;
use crate::geni::AmError;
use crate::model::{Principal, Selector};
use crate::store::drain::Drain;
use args::{Options, Params};
use auth::{Check, Presented};
use chrono::{DateTime, Utc};
use errors::bad_argument;
use geni_credentials::Urn;
use geni_credentials::privilege;
use geni_credentials::{TrustStore, VerifiedChain};
use geni_xmlrpc::{Call, Fault, Reply, Value, fault_code};
use std::sync::Arc;

/// Which AM API an endpoint serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApiVersion {
    /// AM API v2 (`/am/2`).
    V2,
    /// AM API v3 (`/am/3`).
    V3,
}

impl ApiVersion {
    /// The version number (`2` or `3`).
    pub fn number(self) -> u32 {
        match self {
            ApiVersion::V2 => 2,
            ApiVersion::V3 => 3,
        }
    }
}

/// What a handler returns: the value and the `output` text, or the error.
type Outcome = Result<(Value, String), AmError>;

/// The AM API: the aggregate, the trust roots credentials are checked
/// against, and the endpoint URLs GetVersion advertises.
#[derive(Clone)]
pub struct Api {
    inner: Arc<Inner>,
}

struct Inner {
    aggregate: Aggregate,
    trust: Arc<TrustStore>,
    endpoints: Endpoints,
}

impl Api {
    /// The API over `aggregate`, checking credentials against `trust`.
    pub fn new(aggregate: Aggregate, trust: Arc<TrustStore>, endpoints: Endpoints) -> Api {
        Api {
            inner: Arc::new(Inner {
                aggregate,
                trust,
                endpoints,
            }),
        }
    }

    /// Answers `call` on the `version` endpoint from the client whose
    /// verified chain is `caller` (synchronously; may block on the store).
    pub fn answer(&self, version: ApiVersion, caller: &VerifiedChain, call: &Call) -> Reply {
        let context = Context {
            inner: &self.inner,
            caller,
            version,
            at: Utc::now(),
        };
        let outcome = match version {
            ApiVersion::V3 => v3::call(&context, &call.method, &call.params),
            ApiVersion::V2 => v2::call(&context, &call.method, &call.params),
        };
        let Some(outcome) = outcome else {
            return Err(Fault::new(
                fault_code::METHOD_NOT_FOUND,
                format!(
                    "method {:?} is not part of AM API v{}",
                    call.method,
                    version.number()
                ),
            ));
        };
        Ok(sealed(version, &call.method, outcome))
    }

    /// Answers `call` at once when it needs nothing but memory: GetVersion
    /// while the drain state read from the store is at most a second old.
    /// `None` for every other call, and for GetVersion when the store must
    /// be read again: [`Api::answer`] answers those. Never waits for the
    /// store.
    pub fn answer_from_memory(&self, version: ApiVersion, call: &Call) -> Option<Reply> {
        if call.method != "GetVersion" {
            return None;
        }
        let drain = self.inner.aggregate.draining_seen()?;
        let value = self.inner.version_value(version, Some(drain.as_ref()));
        Some(Ok(sealed(
            version,
            &call.method,
            Ok((value, String::new())),
        )))
    }
}

impl Inner {
    /// The GetVersion value of the `version` endpoint, with the drain
    /// state when it is known.
    fn version_value(&self, version: ApiVersion, drain: Option<Option<&Drain>>) -> Value {
        let value = version::value(
            version.number(),
            &self.endpoints,
            &self.aggregate.config().am_urn,
        );
        match drain {
            Some(drain) => version::with_drain(value, drain.map(|d| &d.since)),
            None => value,
        }
    }
}

/// The envelope of `method`'s `outcome` on the `version` endpoint
/// (GetVersion's with the top-level `geni_api` member).
fn sealed(version: ApiVersion, method: &str, outcome: Outcome) -> Value {
    let envelope = envelope::envelope(outcome);
    if method == "GetVersion" {
        envelope::with_api(envelope, version.number())
    } else {
        envelope
    }
}

/// One call being answered.
struct Context<'a> {
    inner: &'a Inner,
    caller: &'a VerifiedChain,
    version: ApiVersion,
    at: DateTime<Utc>,
}

impl Context<'_> {
    /// The aggregate.
    fn aggregate(&self) -> &Aggregate {
        &self.inner.aggregate
    }

    /// The GetVersion value of this endpoint, with the drain state (left
    /// out, with a log line, when the store does not answer: GetVersion
    /// does not depend on the store).
    fn get_version(&self) -> Outcome {
        let drain = self
            .aggregate()
            .draining()
            .inspect_err(|error| tracing::warn!(%error, "GetVersion without the drain state"))
            .ok();
        let value = self
            .inner
            .version_value(self.version, drain.as_ref().map(Option::as_ref));
        Ok((value, String::new()))
    }

    /// Checks the credentials at parameter `credentials` for the call,
    /// which names `slice` (if known).
    fn authorize(
        &self,
        params: &Params<'_>,
        credentials: usize,
        options: &Options<'_>,
        slice: Option<&Urn>,
    ) -> Result<Principal, AmError> {
        let method = params.method();
        let version = match self.version {
            ApiVersion::V2 => privilege::ApiVersion::V2,
            ApiVersion::V3 => privilege::ApiVersion::V3,
        };
        if let Some(slice) = slice {
            // The call's one log line (server::call_log) names the slice.
            tracing::Span::current().record("slice", slice.to_string());
        }
        let requirement = privilege::requirement(version, method, slice.is_some())
            .ok_or_else(|| AmError::error(format!("{method} has no privilege rule")))?;
        let presented = Presented::read(method, params.get(credentials, "credentials")?)?;
        let check = Check {
            method,
            requirement,
            slice,
            speaking_for: options.string("geni_speaking_for")?,
            at: self.at,
            anonymous_allowed: self.aggregate().config().policy.public_advertisement,
        };
        auth::authorize(&self.inner.trust, self.caller, &presented, &check)
    }

    /// Parameter `index` as a slice URN.
    fn slice_arg(&self, params: &Params<'_>, index: usize) -> Result<Urn, AmError> {
        slice_urn(params.method(), params.string(index, "slice_urn")?)
    }

    /// The `urns` argument at `index` (one slice URN, or slivers of one
    /// slice) checked and authorised: the selection and who acts.
    fn scope(
        &self,
        params: &Params<'_>,
        index: usize,
        options: &Options<'_>,
    ) -> Result<(Selector, Principal), AmError> {
        let method = params.method();
        let urns = params.strings(index, "urns")?;
        let (slices, slivers) = sort_urns(method, &urns)?;
        if let Some(slice) = slices.first() {
            let principal = self.authorize(params, index + 1, options, Some(slice))?;
            return Ok((Selector::Slice(slice.to_string()), principal));
        }
        let sliver_urns: Vec<&str> = slivers.iter().map(|urn| urn.as_str()).collect();
        let owners = self.aggregate().slices_of_slivers(&sliver_urns)?;
        if owners.len() > 1 {
            return Err(bad_argument(
                method,
                format!(
                    "the slivers belong to several slices ({}); name slivers of one slice",
                    owners.join(", ")
                ),
            ));
        }
        let known = owners.first().map(|s| slice_urn(method, s)).transpose()?;
        let principal = self.authorize(params, index + 1, options, known.as_ref())?;
        let slice = match known {
            Some(slice) => slice.to_string(),
            None => {
                let slice = credential_slice(method, &principal)?;
                tracing::Span::current().record("slice", slice.as_str());
                slice
            }
        };
        Ok((
            Selector::Slivers {
                slice_urn: slice,
                urns: slivers.iter().map(|u| u.to_string()).collect(),
            },
            principal,
        ))
    }
}

/// `text` as a slice URN; anything else is BADARGS.
fn slice_urn(method: &str, text: &str) -> Result<Urn, AmError> {
    let urn = Urn::parse(text.trim())
        .map_err(|e| bad_argument(method, format!("`{text}` is not a URN: {e}")))?;
    if !urn.type_text().eq_ignore_ascii_case("slice") {
        return Err(bad_argument(
            method,
            format!("`{text}` is a {} URN, not a slice URN", urn.type_text()),
        ));
    }
    Ok(urn)
}

/// Splits `urns` into slice and sliver URNs, refusing (BADARGS) an empty
/// list, other URN types, several slices, and slices mixed with slivers.
fn sort_urns(method: &str, urns: &[&str]) -> Result<(Vec<Urn>, Vec<Urn>), AmError> {
    if urns.is_empty() {
        return Err(bad_argument(
            method,
            "urns is empty; name one slice or slivers of one slice",
        ));
    }
    let (mut slices, mut slivers) = (Vec::new(), Vec::new());
    for text in urns {
        let urn = Urn::parse(text.trim())
            .map_err(|e| bad_argument(method, format!("`{text}` is not a URN: {e}")))?;
        match urn.type_text().to_ascii_lowercase().as_str() {
            "slice" => slices.push(urn),
            "sliver" => slivers.push(urn),
            other => {
                return Err(bad_argument(
                    method,
                    format!("`{text}` is a {other} URN; name one slice or slivers of one slice"),
                ));
            }
        }
    }
    if slices.len() > 1 {
        return Err(bad_argument(method, "urns names several slices; name one"));
    }
    if !slices.is_empty() && !slivers.is_empty() {
        return Err(bad_argument(
            method,
            "urns mixes a slice with slivers; name the slice or its slivers",
        ));
    }
    Ok((slices, slivers))
}

/// The slice of the credential that authorised a call naming only
/// slivers unknown here (the core then reports them as not found).
fn credential_slice(method: &str, principal: &Principal) -> Result<String, AmError> {
    principal
        .slice_urn
        .clone()
        .filter(|target| slice_urn(method, target).is_ok())
        .ok_or_else(|| {
            errors::refused(
                geni_credentials::RefusalKind::CredentialMismatch,
                format!("{method}: the credential does not target a slice"),
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urns_are_one_slice_or_slivers_of_one_kind() {
        let slice = "urn:publicid:IDN+ch.example+slice+s1";
        let other = "urn:publicid:IDN+ch.example+slice+s2";
        let sliver = "urn:publicid:IDN+am.example+sliver+abc";
        let code = |urns: &[&str]| sort_urns("Status", urns).err().map(|e| e.code.as_i32());
        assert_eq!(code(&[slice]), None);
        assert_eq!(code(&[sliver, sliver]), None);
        assert_eq!(code(&[]), Some(1));
        assert_eq!(code(&[slice, other]), Some(1));
        assert_eq!(code(&[slice, sliver]), Some(1));
        assert_eq!(code(&["urn:publicid:IDN+am.example+node+pc1"]), Some(1));
        assert_eq!(code(&["not a urn"]), Some(1));
    }

    #[test]
    fn slice_arguments_must_be_slice_urns() {
        assert!(slice_urn("Allocate", "urn:publicid:IDN+ch.example+slice+s1").is_ok());
        let e = slice_urn("Allocate", "urn:publicid:IDN+ch.example+user+alice").unwrap_err();
        assert_eq!(e.code.as_i32(), 1);
        assert!(e.message.contains("user URN"), "{}", e.message);
    }
}
