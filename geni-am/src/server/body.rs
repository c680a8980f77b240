//! Reading a request body, bounded in size and time: the body must arrive
//! before the request's deadline (`[server] request_timeout_secs`), and
//! neither the bytes received nor, for a `gzip` or `deflate`
//! `Content-Encoding`, the bytes they inflate to may exceed
//! `[server] body_limit`. Compressed bodies are inflated as they arrive,
//! a chunk at a time, and the inflation stops at the limit, so a small
//! compression bomb costs at most `body_limit` bytes of memory.

use actix_web::http::StatusCode;
use actix_web::http::header::{CONTENT_ENCODING, CONTENT_LENGTH, HeaderMap};
use actix_web::web;
use flate2::write::{GzDecoder, ZlibDecoder};
use futures_core::Stream;
use std::io::Write;
use std::pin::Pin;
use std::time::Instant;

/// Why a body was not read.
#[derive(Debug, thiserror::Error)]
pub(super) enum BodyError {
    /// More bytes than the limit, sent or inflated.
    #[error(
        "the request body is larger than the {limit} bytes this aggregate accepts (server.body_limit), once inflated when compressed"
    )]
    TooLarge {
        /// The configured limit.
        limit: usize,
    },
    /// The body did not arrive in time.
    #[error(
        "the request was not received within {secs} seconds (server.request_timeout_secs); send it at once"
    )]
    TimedOut {
        /// The configured deadline, in seconds.
        secs: u64,
    },
    /// A `Content-Encoding` other than gzip, deflate or identity.
    #[error(
        "Content-Encoding `{0}` is not supported; send the body as is, or with gzip or deflate"
    )]
    Encoding(String),
    /// The compressed bytes do not inflate, or the connection broke.
    #[error("the request body cannot be read: {0}")]
    Unreadable(String),
}

impl BodyError {
    /// The reason counted in `geni_am_refusals_total`.
    pub(super) fn reason(&self) -> &'static str {
        match self {
            BodyError::TooLarge { .. } => "body_too_large",
            BodyError::TimedOut { .. } => "body_timeout",
            BodyError::Encoding(_) => "body_encoding",
            BodyError::Unreadable(_) => "body_unreadable",
        }
    }

    /// The HTTP status the client gets.
    pub(super) fn status(&self) -> StatusCode {
        match self {
            BodyError::TooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            BodyError::TimedOut { .. } => StatusCode::REQUEST_TIMEOUT,
            BodyError::Encoding(_) => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            BodyError::Unreadable(_) => StatusCode::BAD_REQUEST,
        }
    }
}

/// How the body is bounded.
pub(super) struct Bounds {
    /// Largest body, before and after inflation.
    pub(super) limit: usize,
    /// When the whole request must have been received.
    pub(super) deadline: Instant,
    /// The deadline's length as configured, for the message.
    pub(super) timeout_secs: u64,
}

/// Reads the body of a request with `headers` from `payload` within `bounds`.
pub(super) async fn read(
    headers: &HeaderMap,
    mut payload: web::Payload,
    bounds: &Bounds,
) -> Result<Vec<u8>, BodyError> {
    let too_large = BodyError::TooLarge {
        limit: bounds.limit,
    };
    let announced = headers
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if announced.is_some_and(|length| length > bounds.limit as u64) {
        return Err(too_large);
    }
    let mut sink = Sink::for_encoding(headers, bounds.limit)?;
    let receive = async {
        let mut received = 0usize;
        while let Some(chunk) =
            std::future::poll_fn(|cx| Pin::new(&mut payload).poll_next(cx)).await
        {
            let chunk = chunk.map_err(|e| BodyError::Unreadable(e.to_string()))?;
            received = received.saturating_add(chunk.len());
            if received > bounds.limit {
                return Err(BodyError::TooLarge {
                    limit: bounds.limit,
                });
            }
            sink.write(&chunk)?;
        }
        sink.finish()
    };
    tokio::time::timeout_at(bounds.deadline.into(), receive)
        .await
        .map_err(|_| BodyError::TimedOut {
            secs: bounds.timeout_secs,
        })?
}

/// Where received bytes go: kept as they are, or inflated.
enum Sink {
    Identity(Limited),
    Gzip(GzDecoder<Limited>),
    Zlib(ZlibDecoder<Limited>),
}

impl Sink {
    /// The sink for the request's `Content-Encoding`.
    fn for_encoding(headers: &HeaderMap, limit: usize) -> Result<Sink, BodyError> {
        let limited = Limited {
            bytes: Vec::new(),
            limit,
        };
        let Some(encoding) = headers.get(CONTENT_ENCODING) else {
            return Ok(Sink::Identity(limited));
        };
        let encoding = encoding.to_str().unwrap_or("(not text)").trim();
        match encoding.to_ascii_lowercase().as_str() {
            "" | "identity" => Ok(Sink::Identity(limited)),
            "gzip" | "x-gzip" => Ok(Sink::Gzip(GzDecoder::new(limited))),
            "deflate" => Ok(Sink::Zlib(ZlibDecoder::new(limited))),
            _ => Err(BodyError::Encoding(encoding.to_owned())),
        }
    }

    fn write(&mut self, chunk: &[u8]) -> Result<(), BodyError> {
        let written = match self {
            Sink::Identity(limited) => limited.write_all(chunk),
            Sink::Gzip(decoder) => decoder.write_all(chunk),
            Sink::Zlib(decoder) => decoder.write_all(chunk),
        };
        written.map_err(|e| self.error(e))
    }

    fn finish(self) -> Result<Vec<u8>, BodyError> {
        let limit = self.limit();
        let finished = match self {
            Sink::Identity(limited) => Ok(limited),
            Sink::Gzip(decoder) => decoder.finish(),
            Sink::Zlib(decoder) => decoder.finish(),
        };
        match finished {
            Ok(limited) => Ok(limited.bytes),
            Err(e) => Err(classify(e, limit)),
        }
    }

    fn limit(&self) -> usize {
        match self {
            Sink::Identity(limited) => limited.limit,
            Sink::Gzip(decoder) => decoder.get_ref().limit,
            Sink::Zlib(decoder) => decoder.get_ref().limit,
        }
    }

    fn error(&self, error: std::io::Error) -> BodyError {
        classify(error, self.limit())
    }
}

/// The body error an I/O error of the sink stands for.
fn classify(error: std::io::Error, limit: usize) -> BodyError {
    if error.kind() == std::io::ErrorKind::FileTooLarge {
        BodyError::TooLarge { limit }
    } else {
        BodyError::Unreadable(format!("the compressed body does not inflate: {error}"))
    }
}

/// The body as read so far, refusing to grow beyond its limit.
struct Limited {
    bytes: Vec<u8>,
    limit: usize,
}

impl Write for Limited {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.bytes.len().saturating_add(buf.len()) > self.limit {
            return Err(std::io::ErrorKind::FileTooLarge.into());
        }
        self.bytes.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::Compression;
    use flate2::write::GzEncoder;

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        let mut encoder = GzEncoder::new(Vec::new(), Compression::best());
        encoder.write_all(bytes).unwrap();
        encoder.finish().unwrap()
    }

    fn gzip_headers() -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_ENCODING, "gzip".parse().unwrap());
        headers
    }

    #[test]
    fn a_gzip_body_within_the_limit_is_inflated() {
        let body = b"<methodCall><methodName>GetVersion</methodName></methodCall>";
        let mut sink = Sink::for_encoding(&gzip_headers(), 1024).unwrap();
        for chunk in gzip(body).chunks(7) {
            sink.write(chunk).unwrap();
        }
        assert_eq!(sink.finish().unwrap(), body);
    }

    #[test]
    fn a_bomb_stops_inflating_at_the_limit() {
        let bomb = gzip(&vec![0u8; 64 << 20]);
        let mut sink = Sink::for_encoding(&gzip_headers(), 1 << 20).unwrap();
        let outcome = bomb
            .chunks(16 << 10)
            .try_for_each(|chunk| sink.write(chunk));
        assert!(
            matches!(outcome, Err(BodyError::TooLarge { limit }) if limit == 1 << 20),
            "{outcome:?}"
        );
        assert!(sink.limit() == 1 << 20);
        let Sink::Gzip(decoder) = &sink else {
            panic!("not a gzip sink")
        };
        assert!(decoder.get_ref().bytes.len() <= 1 << 20);
    }

    #[test]
    fn bytes_that_do_not_inflate_are_unreadable_and_unknown_encodings_refused() {
        let mut sink = Sink::for_encoding(&gzip_headers(), 1024).unwrap();
        let outcome = sink.write(b"this is not gzip at all");
        assert!(
            matches!(outcome, Err(BodyError::Unreadable(_))),
            "{outcome:?}"
        );
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_ENCODING, "br".parse().unwrap());
        let refused = Sink::for_encoding(&headers, 1024).err();
        assert!(
            matches!(&refused, Some(BodyError::Encoding(e)) if e == "br"),
            "{refused:?}"
        );
    }
}
