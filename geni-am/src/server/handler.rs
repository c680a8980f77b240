//! The one request handler: the endpoint a call was posted to, the
//! connection's caller, the request body and the configured limit in; the
//! HTTP status and body out. The actix routes (`routes`) are a thin
//! adapter over it, and the API tests and benches drive it directly, so
//! every call takes the path production takes.
//!
//! In order: a client certificate that did not verify is refused with 403
//! and the reason as plain text; a body over the limit with 413; a body
//! that is not a method call gets an XML-RPC fault (with 200), as does a
//! method other than GetVersion posted to `/`; the rest is answered by the
//! [`Dispatch`] inside the call's `tracing` span (request id, API version,
//! method, caller, slice), and its reply encoded as an XML-RPC response or
//! fault. Every decoded call ends in its one log line and its metrics
//! (`call_log`); refusals before it are counted as refusals.
//!
//! The routes first offer the request to [`Handler::answer_from_memory`],
//! which answers a small GetVersion the dispatcher can answer from memory
//! (while the drain state read is fresh) on the connection's
//! own worker, sparing the hand-over to the blocking pool and back; the
//! answer is the one [`Handler::answer`] would give.

use super::PeerIdentity;
use super::body::BodyError;
use super::call_log::{Answer, CallLog};
use crate::api::{Api, ApiVersion};
use actix_web::http::StatusCode;
use geni_credentials::VerifiedChain;
use geni_xmlrpc::{Call, Reply, fault_code};
use std::sync::Arc;
use std::time::Instant;

/// What the endpoints are, for the messages of refused requests.
pub(super) const ENDPOINTS: &str = "this aggregate answers XML-RPC POSTs at /am/3 (AM API v3) and /am/2 (AM API v2); POST GetVersion to / lists both";

/// What answers the calls the server receives.
pub trait Dispatch: Send + Sync + 'static {
    /// Answers `call`, made on the `version` endpoint by the client whose
    /// certificate chain is `caller` (verified against the trust roots).
    /// Runs on the server's blocking pool, so it may block.
    fn dispatch(&self, version: ApiVersion, caller: &VerifiedChain, call: &Call) -> Reply;

    /// Answers `call`, made on the `version` endpoint, at once when its
    /// answer needs nothing but memory (no store, no backend), or `None`:
    /// then [`Dispatch::dispatch`] answers it on the blocking pool. Runs on
    /// the connection's own worker, so it must never wait for the store,
    /// the backend or another thread's work.
    fn answer_from_memory(&self, _version: ApiVersion, _call: &Call) -> Option<Reply> {
        None
    }
}

impl Dispatch for Api {
    fn dispatch(&self, version: ApiVersion, caller: &VerifiedChain, call: &Call) -> Reply {
        self.answer(version, caller, call)
    }

    fn answer_from_memory(&self, version: ApiVersion, call: &Call) -> Option<Reply> {
        Api::answer_from_memory(self, version, call)
    }
}

/// Where a call was posted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endpoint {
    /// An AM API endpoint (`/am/3`, `/am/2`).
    Api(ApiVersion),
    /// `/`, which answers GetVersion only (as v3, whose reply lists both
    /// endpoints).
    Root,
}

impl Endpoint {
    /// The API version calls posted here are answered in.
    fn api_version(self) -> ApiVersion {
        match self {
            Endpoint::Api(version) => version,
            Endpoint::Root => ApiVersion::V3,
        }
    }
}

/// Largest body [`Handler::answer_from_memory`] decodes to see whether it
/// is a GetVersion it can answer at once (one is a few hundred bytes).
const FROM_MEMORY_BODY: usize = 4 * 1024;

/// What a response body is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Content {
    /// An XML-RPC response or fault (`text/xml`).
    Xml,
    /// A line of plain text (`text/plain`).
    Text,
}

/// One HTTP response of the handler.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    /// The HTTP status.
    pub status: StatusCode,
    /// What the body is.
    pub content: Content,
    /// The body.
    pub body: String,
    /// Whether the connection is closed after it (what is left of the
    /// request's body was not read).
    pub close: bool,
}

impl Response {
    /// A `text/xml` answer with 200.
    fn xml(body: String) -> Response {
        Response {
            status: StatusCode::OK,
            content: Content::Xml,
            body,
            close: false,
        }
    }

    /// An XML-RPC fault with 200.
    pub(super) fn fault(code: i32, message: &str) -> Response {
        Response::xml(geni_xmlrpc::encode_fault(code, message))
    }

    /// A request refused before it reached the dispatcher: `status`, and
    /// an XML-RPC fault saying why; the connection is closed after it.
    pub(super) fn refusal(status: StatusCode, message: &str) -> Response {
        Response {
            status,
            content: Content::Xml,
            body: geni_xmlrpc::encode_fault(fault_code::TRANSPORT_ERROR, message),
            close: true,
        }
    }

    /// A request whose body was not read, for `error`.
    pub(super) fn unread(error: &BodyError) -> Response {
        tracing::info!(%error, "request body refused");
        crate::telemetry::record_refusal(error.reason());
        Response::refusal(error.status(), &error.to_string())
    }

    /// A 403 naming why the client certificate was not accepted.
    fn forbidden(reason: &str) -> Response {
        tracing::info!(reason, "client refused");
        crate::telemetry::record_refusal("client_certificate");
        Response {
            status: StatusCode::FORBIDDEN,
            content: Content::Text,
            body: format!("{reason}\n"),
            close: false,
        }
    }
}

/// The request handler: the dispatcher and the configured body limit.
#[derive(Clone)]
pub struct Handler {
    dispatch: Arc<dyn Dispatch>,
    body_limit: usize,
}

impl Handler {
    /// The handler answering through `dispatch`, refusing bodies larger
    /// than `body_limit` bytes (`[server] body_limit`).
    pub fn new(dispatch: Arc<dyn Dispatch>, body_limit: usize) -> Handler {
        Handler {
            dispatch,
            body_limit,
        }
    }

    /// The largest body accepted.
    pub fn body_limit(&self) -> usize {
        self.body_limit
    }

    /// The verified chain of the connection's caller, or the 403 refusing
    /// it. The route asks before it reads the body, so a refused client
    /// never has its body read.
    pub fn caller(peer: Option<&PeerIdentity>) -> Result<&VerifiedChain, Response> {
        match peer {
            Some(PeerIdentity::Verified(chain)) => Ok(chain),
            Some(PeerIdentity::Refused(reason)) => Err(Response::forbidden(reason)),
            None => Err(Response::forbidden("no client certificate was presented")),
        }
    }

    /// Answers the request with `body` posted to `endpoint` by `peer` at
    /// once when it is a small GetVersion the dispatcher answers from
    /// memory (omni calls it before most commands): on the connection's
    /// worker it spares the hand-over to the blocking pool and back.
    /// `None` for every other request, which [`Handler::answer`] answers
    /// on the blocking pool; only a body that names GetVersion is decoded
    /// here, so other calls are not decoded twice. Never waits for the
    /// store or the pool.
    pub fn answer_from_memory(
        &self,
        endpoint: Endpoint,
        peer: Option<&PeerIdentity>,
        body: &[u8],
    ) -> Option<Response> {
        let Some(PeerIdentity::Verified(caller)) = peer else {
            return None;
        };
        if body.len() > FROM_MEMORY_BODY.min(self.body_limit) || !names_get_version(body) {
            return None;
        }
        let started = Instant::now();
        let call = geni_xmlrpc::decode_call(body, self.body_limit).ok()?;
        if call.method != "GetVersion" {
            return None;
        }
        let version = endpoint.api_version();
        let reply = self.dispatch.answer_from_memory(version, &call)?;
        let log = CallLog::begin(version, Some(&call.method), caller, started);
        Some(answered(log, reply))
    }

    /// Answers the request with `body` posted to `endpoint` on a
    /// connection whose caller is `peer` (synchronously; may block on the
    /// store).
    pub fn answer(&self, endpoint: Endpoint, peer: Option<&PeerIdentity>, body: &[u8]) -> Response {
        let caller = match Handler::caller(peer) {
            Ok(caller) => caller,
            Err(refused) => return refused,
        };
        if body.len() > self.body_limit {
            return Response::unread(&BodyError::TooLarge {
                limit: self.body_limit,
            });
        }
        let started = Instant::now();
        let decoded = geni_xmlrpc::decode_call(body, self.body_limit);
        let version = endpoint.api_version();
        let method = decoded.as_ref().ok().map(|call| call.method.as_str());
        let log = CallLog::begin(version, method, caller, started);
        let (code, message) = match (endpoint, &decoded) {
            (_, Err(error)) => (error.fault_code(), error.to_string()),
            (Endpoint::Root, Ok(call)) if call.method != "GetVersion" => (
                fault_code::METHOD_NOT_FOUND,
                format!("{} is not answered at /: {ENDPOINTS}", call.method),
            ),
            (_, Ok(call)) => {
                let reply = log
                    .span()
                    .in_scope(|| self.dispatch.dispatch(version, caller, call));
                return answered(log, reply);
            }
        };
        log.end(&Answer::Fault {
            code,
            message: &message,
        });
        Response::fault(code, &message)
    }
}

/// Whether `body` holds the method name GetVersion anywhere.
fn names_get_version(body: &[u8]) -> bool {
    const NAME: &[u8] = b"GetVersion";
    body.windows(NAME.len()).any(|window| window == NAME)
}

/// Encodes `reply` and ends the call's `log`.
fn answered(log: CallLog, reply: geni_xmlrpc::Reply) -> Response {
    match reply {
        Ok(value) => {
            let response = match geni_xmlrpc::encode_response(&value) {
                Ok(body) => Response::xml(body),
                Err(error) => {
                    log.span()
                        .in_scope(|| tracing::error!(%error, "unencodable response"));
                    Response::fault(
                        fault_code::INTERNAL_ERROR,
                        &format!("the aggregate failed to encode its answer: {error}"),
                    )
                }
            };
            log.end(&Answer::Envelope(&value));
            response
        }
        Err(fault) => {
            log.end(&Answer::Fault {
                code: fault.code(),
                message: fault.string(),
            });
            Response::fault(fault.code(), fault.string())
        }
    }
}
