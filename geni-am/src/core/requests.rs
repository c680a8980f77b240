//! Request documents kept parsed, by id. A stored request never changes,
//! and the manifest of a slice is built from the request of every live
//! sliver in it (Provision answers with the whole slice's): without them,
//! each manifest read every such request's text from the store and
//! parsed it again. Bounded by the size of the texts
//! kept, and forgotten all at once when a new one would pass it; the
//! requests of deleted slivers are forgotten at once, so that what a load
//! kept does not outlive its slivers (docs/PERFORMANCE.md, "What a load
//! leaves behind").

use chrono::{DateTime, Utc};
use geni_rspec::Document;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

/// Most bytes of request text kept parsed (a parsed document takes a few
/// times its text).
const MOST_BYTES: usize = 256 * 1024;

/// A request as kept: when it was stored (manifests merge requests
/// oldest first) and its document.
pub(super) type Kept = (DateTime<Utc>, Arc<Document>);

/// The parsed requests.
#[derive(Debug, Default)]
pub(super) struct Requests(Mutex<Held>);

/// What [`Requests`] holds.
#[derive(Debug, Default)]
struct Held {
    /// Each request with the length of its text.
    by_id: HashMap<String, (Kept, usize)>,
    /// The length of the texts held.
    bytes: usize,
}

impl Requests {
    /// The request `id`, if kept.
    pub(super) fn get(&self, id: &str) -> Option<Kept> {
        let held = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        held.by_id.get(id).map(|(kept, _)| kept.clone())
    }

    /// Keeps request `id`, stored at `created`, parsed from `bytes` of
    /// text into `doc`; a text larger than the whole bound is not kept.
    pub(super) fn keep(&self, id: &str, created: DateTime<Utc>, doc: Arc<Document>, bytes: usize) {
        if bytes > MOST_BYTES {
            return;
        }
        let mut held = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if held.by_id.contains_key(id) {
            return;
        }
        if held.bytes + bytes > MOST_BYTES {
            held.by_id.clear();
            held.bytes = 0;
        }
        held.by_id.insert(id.to_owned(), ((created, doc), bytes));
        held.bytes += bytes;
    }

    /// Forgets the requests `ids` (their slivers were deleted); when none
    /// is left, the map gives its memory back too.
    pub(super) fn forget<'a>(&self, ids: impl IntoIterator<Item = &'a str>) {
        let mut held = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        for id in ids {
            if let Some((_, bytes)) = held.by_id.remove(id) {
                held.bytes -= bytes;
            }
        }
        if held.by_id.is_empty() {
            *held = Held::default();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_kept_within_the_bound_of_their_texts() {
        let text = "<rspec/>";
        let doc = Arc::new(Document::parse(text.as_bytes()).expect("parses"));
        let requests = Requests::default();
        let now = Utc::now();
        requests.keep("a", now, Arc::clone(&doc), MOST_BYTES / 2);
        requests.keep("b", now, Arc::clone(&doc), MOST_BYTES / 2);
        assert!(requests.get("a").is_some() && requests.get("b").is_some());
        requests.keep("c", now, Arc::clone(&doc), 1);
        assert!(requests.get("a").is_none(), "the bound was passed");
        assert!(requests.get("c").is_some());
        requests.keep("huge", now, doc, MOST_BYTES + 1);
        assert!(requests.get("huge").is_none());
    }

    #[test]
    fn forgotten_requests_give_back_their_share_of_the_bound() {
        let doc = Arc::new(Document::parse(b"<rspec/>").expect("parses"));
        let requests = Requests::default();
        let now = Utc::now();
        requests.keep("a", now, Arc::clone(&doc), MOST_BYTES / 2);
        requests.keep("b", now, Arc::clone(&doc), MOST_BYTES / 2);
        requests.forget(["a", "unknown"]);
        assert!(requests.get("a").is_none());
        requests.keep("c", now, Arc::clone(&doc), MOST_BYTES / 2);
        assert!(
            requests.get("b").is_some() && requests.get("c").is_some(),
            "a's bytes were given back, so c fits beside b"
        );
        requests.forget(["b", "c"]);
        requests.keep("d", now, doc, MOST_BYTES);
        assert!(requests.get("d").is_some(), "the whole bound is free again");
    }
}
