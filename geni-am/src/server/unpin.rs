//! Request headers copied out of the connection's read buffer. actix
//! parses header values as slices of the buffer the request arrived in, and
//! keeps up to 128 finished requests per worker for reuse with their
//! headers still in place; each such request keeps its connection's whole
//! read buffer (8 KiB or more) allocated after the connection closed.
//! After a load of a hundred clients that was about 1.5 MB of buffers
//! spread through the allocator's arenas (docs/PERFORMANCE.md, "Memory
//! after a load, bounded"). Copying the few values of each request lets
//! the buffer go with its connection.

use actix_web::http::header::{HeaderMap, HeaderValue};

/// Replaces `headers` by a map of copies of its values, sized for them
/// (actix starts each request's map with room for sixteen names, about
/// 6 KiB, and keeps it with the request).
pub(super) fn unpin(headers: &mut HeaderMap) {
    let mut owned = HeaderMap::with_capacity(headers.len_keys());
    for (name, value) in headers.iter() {
        owned.append(name.clone(), own(value));
    }
    *headers = owned;
}

/// A value with the same bytes and sensitivity, in an allocation of its own.
fn own(value: &HeaderValue) -> HeaderValue {
    match HeaderValue::from_bytes(value.as_bytes()) {
        Ok(mut copy) => {
            copy.set_sensitive(value.is_sensitive());
            copy
        }
        // The parser admitted only valid values; should one not be, it is
        // kept as it was.
        Err(_) => value.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::http::header::HeaderName;
    use actix_web::web::Bytes;

    /// Whether `value`'s bytes lie inside `buffer`.
    fn inside(value: &HeaderValue, buffer: &Bytes) -> bool {
        let range = buffer.as_ptr_range();
        range.contains(&value.as_bytes().as_ptr())
    }

    #[test]
    fn values_no_longer_share_the_buffer_they_were_parsed_from_nor_a_map_sized_for_sixteen() {
        let buffer = Bytes::copy_from_slice(b"text/xml secret a b");
        let mut headers = HeaderMap::with_capacity(16);
        let slice = |from, to| HeaderValue::from_maybe_shared(buffer.slice(from..to)).unwrap();
        headers.insert(HeaderName::from_static("content-type"), slice(0, 8));
        let mut secret = slice(9, 15);
        secret.set_sensitive(true);
        headers.insert(HeaderName::from_static("authorization"), secret);
        headers.append(HeaderName::from_static("x-twice"), slice(16, 17));
        headers.append(HeaderName::from_static("x-twice"), slice(18, 19));
        assert!(headers.iter().all(|(_, v)| inside(v, &buffer)));

        unpin(&mut headers);

        assert!(headers.iter().all(|(_, v)| !inside(v, &buffer)));
        assert_eq!(headers.len(), 4);
        assert!(headers.capacity() < 16, "room for {}", headers.capacity());
        assert_eq!(headers.get("content-type").unwrap(), "text/xml");
        assert!(headers.get("authorization").unwrap().is_sensitive());
        let twice: Vec<_> = headers
            .get_all("x-twice")
            .map(|v| v.to_str().unwrap())
            .collect();
        assert_eq!(twice, ["a", "b"]);
    }
}
