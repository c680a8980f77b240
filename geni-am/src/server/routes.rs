//! The HTTP routes: `POST /am/3` and `POST /am/2` (a trailing slash
//! allowed), and `POST /` answering GetVersion, whose reply lists both
//! endpoints, so a client given the bare host finds them. What the server
//! refuses is answered with an XML-RPC fault a client can read, under the
//! HTTP status that says why: 404 for other paths and 405 for other
//! methods (both naming the endpoints), 503 beyond the connection caps,
//! 408/413/415/400 when the body is late, too large, in an unknown
//! encoding or unreadable; 403, when the connection's client certificate
//! did not verify, carries the reason as plain text. A body that is not a method call gets a fault
//! with 200; the rest is handed to the dispatcher inside a `tracing` span
//! naming the API version, method and caller.

use super::admission::{Connections, OverCapacity};
use super::body::{self, Bounds};
use super::watchdog::Watch;
use super::{ApiVersion, Dispatch, PeerIdentity, tls};
use crate::xmlrpc::{self, fault_code};
use actix_tls::accept::openssl::TlsStream;
use actix_web::dev::Extensions;
use actix_web::http::StatusCode;
use actix_web::http::header::ContentType;
use actix_web::rt::net::TcpStream;
use actix_web::{HttpRequest, HttpResponse, web};
use geni_credentials::TrustStore;
use std::any::Any;
use std::cell::Cell;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tracing::Instrument;

/// What the endpoints are, for the messages of refused requests.
const ENDPOINTS: &str = "this aggregate answers XML-RPC POSTs at /am/3 (AM API v3) and /am/2 (AM API v2); POST GetVersion to / lists both";

/// What every handler shares.
pub(super) struct State {
    /// Answers the calls.
    pub(super) dispatch: Arc<dyn Dispatch>,
    /// Largest body decoded.
    pub(super) body_limit: usize,
    /// Time a client has to send a whole request.
    pub(super) request_timeout: Duration,
}

/// What the server knows of one connection, kept with it.
struct Connection {
    /// When the TLS handshake completed.
    accepted: Instant,
    /// Whether a request was already read on it (keep-alive).
    served: Cell<bool>,
}

/// Where a call was posted.
#[derive(Debug, Clone, Copy)]
enum Endpoint {
    /// An AM API endpoint.
    Api(ApiVersion),
    /// `/`, which answers GetVersion only.
    Root,
}

/// Registers the endpoints and the answer to every other request.
pub(super) fn configure(config: &mut web::ServiceConfig) {
    config
        .service(
            web::resource(["/am/3", "/am/3/"])
                .route(web::post().to(v3))
                .default_service(web::to(not_post)),
        )
        .service(
            web::resource(["/am/2", "/am/2/"])
                .route(web::post().to(v2))
                .default_service(web::to(not_post)),
        )
        .service(
            web::resource("/")
                .route(web::post().to(root))
                .default_service(web::to(not_post)),
        )
        .default_service(web::to(not_found));
}

/// What is checked of every new connection.
pub(super) struct Gate {
    /// The roots client certificates must chain to.
    pub(super) trust: Arc<TrustStore>,
    /// The open connections, against their caps.
    pub(super) connections: Arc<Connections>,
    /// Longest time a connection may go without a complete request.
    pub(super) between_requests: Duration,
}

impl Gate {
    /// Runs once per accepted connection: verifies the client chain, admits
    /// the connection against the caps, starts its watchdog, and keeps
    /// what it found with the connection.
    pub(super) fn on_connect(&self, connection: &dyn Any, data: &mut Extensions) {
        let Some(stream) = connection.downcast_ref::<TlsStream<TcpStream>>() else {
            data.insert(PeerIdentity::Refused("the connection is not TLS".into()));
            return;
        };
        let identity = tls::peer_identity(stream.ssl(), &self.trust);
        let client = match &identity {
            PeerIdentity::Verified(chain) => chain.leaf_urn().map(ToString::to_string),
            PeerIdentity::Refused(_) => None,
        };
        match self.connections.admit(client.as_deref()) {
            Ok(slot) => {
                data.insert(slot);
                // Only admitted connections are watched (the watch holds a
                // second descriptor); a refused one is answered 503 at its
                // first request, which the HTTP server's own deadline bounds.
                match Watch::start(stream.get_ref(), self.between_requests) {
                    Ok(watch) => {
                        data.insert(watch);
                    }
                    Err(error) => tracing::warn!(%error, "connection not watched"),
                }
            }
            Err(refusal) => {
                data.insert(refusal);
            }
        }
        data.insert(identity);
        data.insert(Connection {
            accepted: Instant::now(),
            served: Cell::new(false),
        });
    }
}

async fn v3(request: HttpRequest, payload: web::Payload, state: web::Data<State>) -> HttpResponse {
    answer(Endpoint::Api(ApiVersion::V3), &request, payload, &state).await
}

async fn v2(request: HttpRequest, payload: web::Payload, state: web::Data<State>) -> HttpResponse {
    answer(Endpoint::Api(ApiVersion::V2), &request, payload, &state).await
}

async fn root(
    request: HttpRequest,
    payload: web::Payload,
    state: web::Data<State>,
) -> HttpResponse {
    answer(Endpoint::Root, &request, payload, &state).await
}

async fn not_found(request: HttpRequest) -> HttpResponse {
    refusal(
        StatusCode::NOT_FOUND,
        &format!("there is nothing at {}: {ENDPOINTS}", request.path()),
    )
}

async fn not_post(request: HttpRequest) -> HttpResponse {
    refusal(
        StatusCode::METHOD_NOT_ALLOWED,
        &format!("{} is not answered: {ENDPOINTS}", request.method()),
    )
}

/// When the request now being read must have been received: the first
/// request of a connection counts from the handshake, later ones (on a
/// kept-alive connection) from their headers.
fn deadline(request: &HttpRequest, timeout: Duration) -> Instant {
    let now = Instant::now();
    match request.conn_data::<Connection>() {
        Some(connection) if !connection.served.replace(true) => connection.accepted + timeout,
        _ => now + timeout,
    }
}

/// Admits, authenticates, reads, decodes, dispatches and encodes one call.
async fn answer(
    endpoint: Endpoint,
    request: &HttpRequest,
    payload: web::Payload,
    state: &State,
) -> HttpResponse {
    let _call = request.conn_data::<Watch>().map(Watch::call);
    if let Some(OverCapacity(reason)) = request.conn_data::<OverCapacity>() {
        tracing::info!(reason, "connection over capacity");
        return refusal(StatusCode::SERVICE_UNAVAILABLE, reason);
    }
    let caller = match request.conn_data::<PeerIdentity>() {
        Some(PeerIdentity::Verified(chain)) => Arc::clone(chain),
        Some(PeerIdentity::Refused(reason)) => return forbidden(reason),
        None => return forbidden("no client certificate was presented"),
    };
    let bounds = Bounds {
        limit: state.body_limit,
        deadline: deadline(request, state.request_timeout),
        timeout_secs: state.request_timeout.as_secs(),
    };
    let body = match body::read(request.headers(), payload, &bounds).await {
        Ok(body) => body,
        Err(error) => {
            tracing::info!(%error, "request body refused");
            return refusal(error.status(), &error.to_string());
        }
    };
    let (version, call) = match (endpoint, xmlrpc::decode_call(&body, state.body_limit)) {
        (_, Err(error)) => {
            tracing::info!(%error, "malformed call");
            return xml(xmlrpc::encode_fault(error.fault_code(), &error.to_string()));
        }
        (Endpoint::Api(version), Ok(call)) => (version, call),
        (Endpoint::Root, Ok(call)) if call.method == "GetVersion" => (ApiVersion::V3, call),
        (Endpoint::Root, Ok(call)) => {
            return xml(xmlrpc::encode_fault(
                fault_code::METHOD_NOT_FOUND,
                &format!("{} is not answered at /: {ENDPOINTS}", call.method),
            ));
        }
    };
    let caller_urn = caller
        .leaf_urn()
        .map(ToString::to_string)
        .unwrap_or_default();
    let span = tracing::info_span!("call", api = version.number(), method = %call.method, caller = %caller_urn);
    let reply = state
        .dispatch
        .dispatch(version, caller, call)
        .instrument(span.clone())
        .await;
    let _entered = span.enter();
    match reply {
        Ok(value) => match xmlrpc::encode_response(&value) {
            Ok(body) => xml(body),
            Err(error) => {
                tracing::error!(%error, "unencodable response");
                xml(xmlrpc::encode_fault(
                    fault_code::INTERNAL_ERROR,
                    &format!("the aggregate failed to encode its answer: {error}"),
                ))
            }
        },
        Err(fault) => {
            tracing::info!(code = fault.code(), message = fault.string(), "fault");
            xml(xmlrpc::encode_fault(fault.code(), fault.string()))
        }
    }
}

/// A `text/xml` answer.
fn xml(body: String) -> HttpResponse {
    HttpResponse::Ok()
        .content_type(ContentType::xml())
        .body(body)
}

/// A request refused before it reached the dispatcher: `status`, and an
/// XML-RPC fault saying why. The connection is closed after it, since
/// what is left of the request's body was not read.
fn refusal(status: StatusCode, message: &str) -> HttpResponse {
    HttpResponse::build(status)
        .force_close()
        .content_type(ContentType::xml())
        .body(xmlrpc::encode_fault(fault_code::TRANSPORT_ERROR, message))
}

/// A 403 naming why the client certificate was not accepted.
fn forbidden(reason: &str) -> HttpResponse {
    tracing::info!(reason, "client refused");
    HttpResponse::Forbidden()
        .content_type(ContentType::plaintext())
        .body(format!("{reason}\n"))
}
