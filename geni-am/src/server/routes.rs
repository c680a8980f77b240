//! The HTTP routes: `POST /am/3` and `POST /am/2` (a trailing slash
//! allowed), and `POST /` answering GetVersion, whose reply lists both
//! endpoints, so a client given the bare host finds them. A thin actix
//! adapter over the one request handler ([`Handler`]): what only the
//! HTTP connection knows is decided here — 404 for other paths and 405
//! for other methods (both naming the endpoints), 503 beyond the
//! connection caps, 408/413/415/400 when the body is late, too large, in
//! an unknown encoding or unreadable, each an XML-RPC fault a client can
//! read — and the rest (403 for a client certificate that did not
//! verify, decoding, dispatching, encoding) is the handler's, run on the
//! blocking pool unless the handler answers the call from memory at once
//! (GetVersion).

use super::admission::{Connections, OverCapacity};
use super::body::{self, Bounds};
use super::handler::{Content, ENDPOINTS, Endpoint, Handler, Response};
use super::watchdog::Watch;
use super::{PeerIdentity, tls};
use crate::api::ApiVersion;
use actix_tls::accept::openssl::TlsStream;
use actix_web::dev::Extensions;
use actix_web::http::StatusCode;
use actix_web::http::header::ContentType;
use actix_web::rt::net::TcpStream;
use actix_web::{HttpRequest, HttpResponse, web};
use geni_credentials::TrustStore;
use geni_xmlrpc::fault_code;
use std::any::Any;
use std::cell::Cell;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What every handler shares.
pub(super) struct State {
    /// Answers the requests.
    pub(super) handler: Handler,
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
    http(Response::refusal(
        StatusCode::NOT_FOUND,
        &format!("there is nothing at {}: {ENDPOINTS}", request.path()),
    ))
}

async fn not_post(request: HttpRequest) -> HttpResponse {
    http(Response::refusal(
        StatusCode::METHOD_NOT_ALLOWED,
        &format!("{} is not answered: {ENDPOINTS}", request.method()),
    ))
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

/// Admits the connection, reads the body within its bounds, and has the
/// [`Handler`] answer it: at once when it can from memory, else on the
/// blocking pool.
async fn answer(
    endpoint: Endpoint,
    request: &HttpRequest,
    payload: web::Payload,
    state: &State,
) -> HttpResponse {
    let _call = request.conn_data::<Watch>().map(Watch::call);
    if let Some(OverCapacity(reason)) = request.conn_data::<OverCapacity>() {
        tracing::info!(reason, "connection over capacity");
        crate::telemetry::record_refusal("over_capacity");
        return http(Response::refusal(StatusCode::SERVICE_UNAVAILABLE, reason));
    }
    let peer = request.conn_data::<PeerIdentity>().cloned();
    if let Err(refused) = Handler::caller(peer.as_ref()) {
        return http(refused);
    }
    let bounds = Bounds {
        limit: state.handler.body_limit(),
        deadline: deadline(request, state.request_timeout),
        timeout_secs: state.request_timeout.as_secs(),
    };
    let body = match body::read(request.headers(), payload, &bounds).await {
        Ok(body) => body,
        Err(error) => return http(Response::unread(&error)),
    };
    if let Some(response) = state
        .handler
        .answer_from_memory(endpoint, peer.as_ref(), &body)
    {
        return http(response);
    }
    let handler = state.handler.clone();
    let answered = web::block(move || handler.answer(endpoint, peer.as_ref(), &body)).await;
    match answered {
        Ok(response) => http(response),
        Err(error) => http(Response::fault(
            fault_code::INTERNAL_ERROR,
            &format!("the aggregate could not run the call: {error}"),
        )),
    }
}

/// The handler's response as actix sends it.
fn http(response: Response) -> HttpResponse {
    let mut builder = HttpResponse::build(response.status);
    if response.close {
        builder.force_close();
    }
    let content = match response.content {
        Content::Xml => ContentType::xml(),
        Content::Text => ContentType::plaintext(),
    };
    builder.content_type(content).body(response.body)
}
