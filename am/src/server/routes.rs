//! The HTTP routes: `POST /am/3` and `POST /am/2` (other methods get 405,
//! other paths 404). Each call is refused with 403 when the connection's
//! client certificate did not verify, answered with an XML-RPC fault when
//! the body is not a method call, and otherwise handed to the dispatcher
//! inside a `tracing` span naming the API version, method and caller.

use super::{ApiVersion, Dispatch, PeerIdentity, tls};
use crate::xmlrpc::{self, fault_code};
use actix_tls::accept::openssl::TlsStream;
use actix_web::dev::Extensions;
use actix_web::http::header::ContentType;
use actix_web::rt::net::TcpStream;
use actix_web::{HttpRequest, HttpResponse, web};
use credentials::trust::TrustStore;
use std::any::Any;
use std::sync::Arc;
use tracing::Instrument;

/// What every handler shares.
pub(super) struct State {
    /// Answers the calls.
    pub(super) dispatch: Arc<dyn Dispatch>,
    /// Largest body decoded.
    pub(super) body_limit: usize,
}

/// Registers the two endpoints.
pub(super) fn configure(config: &mut web::ServiceConfig) {
    config
        .service(web::resource("/am/3").route(web::post().to(v3)))
        .service(web::resource("/am/2").route(web::post().to(v2)));
}

/// Runs once per accepted connection: verifies the client chain and keeps
/// the outcome with the connection.
pub(super) fn on_connect(connection: &dyn Any, data: &mut Extensions, trust: &TrustStore) {
    let identity = match connection.downcast_ref::<TlsStream<TcpStream>>() {
        Some(stream) => tls::peer_identity(stream.ssl(), trust),
        None => PeerIdentity::Refused("the connection is not TLS".into()),
    };
    data.insert(identity);
}

async fn v3(request: HttpRequest, body: web::Bytes, state: web::Data<State>) -> HttpResponse {
    answer(ApiVersion::V3, &request, &body, &state).await
}

async fn v2(request: HttpRequest, body: web::Bytes, state: web::Data<State>) -> HttpResponse {
    answer(ApiVersion::V2, &request, &body, &state).await
}

/// Authenticates, decodes, dispatches and encodes one call.
async fn answer(
    version: ApiVersion,
    request: &HttpRequest,
    body: &[u8],
    state: &State,
) -> HttpResponse {
    let caller = match request.conn_data::<PeerIdentity>() {
        Some(PeerIdentity::Verified(chain)) => Arc::clone(chain),
        Some(PeerIdentity::Refused(reason)) => return forbidden(reason),
        None => return forbidden("no client certificate was presented"),
    };
    let call = match xmlrpc::decode_call(body, state.body_limit) {
        Ok(call) => call,
        Err(error) => {
            tracing::info!(api = version.number(), %error, "malformed call");
            return xml(xmlrpc::encode_fault(error.fault_code(), &error.to_string()));
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

/// A 403 naming why the client certificate was not accepted.
fn forbidden(reason: &str) -> HttpResponse {
    tracing::info!(reason, "client refused");
    HttpResponse::Forbidden()
        .content_type(ContentType::plaintext())
        .body(format!("{reason}\n"))
}
