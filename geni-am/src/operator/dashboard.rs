//! The dashboard.

use super::{Page, Sources};
use actix_web::http::StatusCode;

/// The front page.
pub(super) fn front(_sources: &Sources) -> Page {
    Page::html(StatusCode::OK, String::new())
}

/// The page of one slice.
pub(super) fn slice(_sources: &Sources, _urn: &str) -> Page {
    Page::html(StatusCode::OK, String::new())
}
