//! The endpoint's routes, in one function so that the token check comes
//! first for every path: `GET /healthz` (200 while the process answers),
//! `GET /readyz` (200 when the store answers a query and no backend
//! outage is recorded, else 503 with the reason), `GET /metrics`, the
//! dashboard (`/`, `/slices/<urlencoded URN>`); other paths 404, other
//! methods 405. Store reads run on the blocking pool.

use super::{Content, Page, Sources, dashboard, gauges};
use crate::telemetry;
use actix_web::http::header::{self, ContentType};
use actix_web::http::{Method, StatusCode};
use actix_web::{HttpRequest, HttpResponse, web};
use percent_encoding::percent_decode_str;

/// What every request shares.
pub(super) struct State {
    /// What is shown.
    pub(super) sources: Sources,
    /// The bearer token required, if any.
    pub(super) token: Option<String>,
}

/// Answers one request.
pub(super) async fn route(request: HttpRequest, state: web::Data<State>) -> HttpResponse {
    if request.method() != Method::GET && request.method() != Method::HEAD {
        return text(
            StatusCode::METHOD_NOT_ALLOWED,
            "the operator endpoint is read-only: use GET\n".into(),
        );
    }
    if let Some(token) = &state.token
        && !presents(&request, token)
    {
        return HttpResponse::Unauthorized()
            .insert_header((
                header::WWW_AUTHENTICATE,
                "Bearer realm=\"geni-am operator\"",
            ))
            .content_type(ContentType::plaintext())
            .body("send the token of operator.token_file as Authorization: Bearer <token>\n");
    }
    let path = request.path().to_owned();
    let sources = state.sources.clone();
    match path.as_str() {
        "/healthz" => text(StatusCode::OK, "alive\n".into()),
        "/readyz" => blocking(move || readiness(&sources)).await,
        "/metrics" => blocking(move || metrics(&sources)).await,
        "/" => blocking(move || dashboard::front(&sources)).await,
        _ => match path.strip_prefix("/slices/") {
            Some(encoded) if !encoded.is_empty() => {
                let urn = percent_decode_str(encoded).decode_utf8_lossy().into_owned();
                blocking(move || dashboard::slice(&sources, &urn)).await
            }
            _ => text(
                StatusCode::NOT_FOUND,
                format!(
                    "there is nothing at {path}: see / (dashboard), /metrics, /healthz, /readyz\n"
                ),
            ),
        },
    }
}

/// Whether `request` carries `Authorization: Bearer <token>` (compared in
/// constant time).
fn presents(request: &HttpRequest, token: &str) -> bool {
    let Some(sent) = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "))
    else {
        return false;
    };
    let sent = sent.trim().as_bytes();
    sent.len() == token.len() && openssl::memcmp::eq(sent, token.as_bytes())
}

/// Runs `answer` on the blocking pool.
async fn blocking(answer: impl FnOnce() -> Page + Send + 'static) -> HttpResponse {
    match web::block(answer).await {
        Ok(page) => respond(page),
        Err(error) => text(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("the operator endpoint could not answer: {error}\n"),
        ),
    }
}

/// A plain-text answer.
fn text(status: StatusCode, body: String) -> HttpResponse {
    HttpResponse::build(status)
        .content_type(ContentType::plaintext())
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .body(body)
}

/// `page` as an HTTP response: HTML pages with a policy that lets them
/// load nothing and run nothing.
fn respond(page: Page) -> HttpResponse {
    match page.content {
        Content::Text => return text(page.status, page.body),
        Content::Metrics => {
            return HttpResponse::build(page.status)
                .content_type(telemetry::CONTENT_TYPE)
                .insert_header((header::CACHE_CONTROL, "no-store"))
                .body(page.body);
        }
        Content::Html => {}
    }
    HttpResponse::build(page.status)
        .content_type(ContentType::html())
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .insert_header((
            header::CONTENT_SECURITY_POLICY,
            "default-src 'none'; style-src 'unsafe-inline'; img-src 'none'; form-action 'none'; frame-ancestors 'none'",
        ))
        .insert_header((header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
        .insert_header((header::REFERRER_POLICY, "no-referrer"))
        .body(page.body)
}

/// `/readyz`: the store answers and the backend is not in an outage.
fn readiness(sources: &Sources) -> Page {
    match sources.store().outage() {
        Ok(None) => Page::text(StatusCode::OK, "ready\n".into()),
        Ok(Some(outage)) => Page::text(
            StatusCode::SERVICE_UNAVAILABLE,
            format!(
                "the backend does not answer (since {}): {}\n",
                outage.since.to_rfc3339(),
                outage.detail
            ),
        ),
        Err(error) => Page::text(
            StatusCode::SERVICE_UNAVAILABLE,
            format!("the store does not answer: {error}\n"),
        ),
    }
}

/// `/metrics`: what was recorded, and the gauges read now.
fn metrics(sources: &Sources) -> Page {
    match gauges::read(sources) {
        Ok(gauges) => Page {
            status: StatusCode::OK,
            content: Content::Metrics,
            body: telemetry::render(&gauges),
        },
        Err(error) => Page::text(
            StatusCode::SERVICE_UNAVAILABLE,
            format!("the store does not answer: {error}\n"),
        ),
    }
}
