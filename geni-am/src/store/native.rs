//! Reads run on the connection of their own database rather than through
//! the `MultiConnection` ([`Conn`](super::Conn)).
//!
//! diesel's `MultiConnection` wraps every statement in one that renders
//! the statement's SQL text (and walks it for cacheability) in each of
//! diesel's passes over it — binding, cache lookup, debug — even when the
//! prepared statement is found by its type; for the one-row reads every
//! Status and Describe makes that rendering cost more than the read.
//! [`natively!`] runs a statement on the SQLite or PostgreSQL connection
//! itself, where a statement whose type determines its text is found in
//! the statement cache by that type alone. The statement is written once
//! and compiled for both databases, so both answer it alike.

/// Evaluates `$body` with `$c` bound to the SQLite or PostgreSQL
/// connection inside `$conn` (a `&mut Conn`).
macro_rules! natively {
    ($conn:expr, |$c:ident| $body:expr) => {
        match $conn {
            $crate::store::Conn::Sqlite($c) => $body,
            $crate::store::Conn::Postgres($c) => $body,
        }
    };
}

pub(super) use natively;
