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
}

impl Dispatch for Api {
    fn dispatch(&self, version: ApiVersion, caller: &VerifiedChain, call: &Call) -> Reply {
        self.answer(version, caller, call)
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
        let version = match endpoint {
            Endpoint::Api(version) => version,
            Endpoint::Root => ApiVersion::V3,
        };
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
