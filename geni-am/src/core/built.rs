//! The manifest of each request as last built, kept with what it was
//! built from. The manifest of a slice is the merge of one manifest per
//! request its live slivers came from, and Provision answers with the
//! whole slice's: with a hundred slivers in a slice, every Provision
//! built a hundred of them again although only its own had changed. A
//! request's manifest is a function of the request (never changed once
//! stored), the nodes kept of it, their annotations and the slice's VLAN
//! tags ([`Inputs`]), so one kept is used again whenever those are equal.
//! Bounded: the least recently used are forgotten first.

use geni_credentials::BoundedCache;
use geni_rspec::Document;
use geni_rspec::manifest::Annotations;
use std::collections::HashMap;
use std::sync::Arc;

/// Most request manifests kept (one of a single node takes a few KB).
const MOST: usize = 256;

/// What a request's manifest is built from, besides the request itself
/// and the aggregate's configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Inputs {
    /// The annotations of its nodes and their interfaces, one node per
    /// sliver kept (the nodes without a sliver are removed).
    pub annotations: Annotations,
    /// The VLAN tags of the slice's networks, by link sliver URN.
    pub vlans: HashMap<String, i64>,
}

/// A kept manifest: the inputs it was built from, and the manifest.
type Entry = Arc<(Inputs, Arc<Document>)>;

/// The manifests kept, by request id.
pub(super) struct Built(BoundedCache<String, Entry>);

impl Default for Built {
    fn default() -> Self {
        Built(BoundedCache::new(MOST))
    }
}

impl Built {
    /// The manifest of request `id` built from `inputs`, if kept.
    pub(super) fn get(&self, id: &str, inputs: &Inputs) -> Option<Arc<Document>> {
        let entry = self.0.get(&id.to_owned())?;
        (entry.0 == *inputs).then(|| Arc::clone(&entry.1))
    }

    /// Keeps `manifest`, built from request `id` and `inputs`, in place of
    /// the one kept for `id` before.
    pub(super) fn keep(&self, id: &str, inputs: Inputs, manifest: Arc<Document>) {
        self.0.insert(id.to_owned(), Arc::new((inputs, manifest)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use geni_rspec::manifest::NodeAnnotation;

    fn inputs(sliver: &str) -> Inputs {
        let mut annotations = Annotations::default();
        annotations.nodes.insert(
            "node".into(),
            NodeAnnotation {
                sliver_id: sliver.into(),
                ..NodeAnnotation::default()
            },
        );
        Inputs {
            annotations,
            vlans: HashMap::new(),
        }
    }

    #[test]
    fn a_manifest_is_used_again_only_for_the_inputs_it_was_built_from() {
        let built = Built::default();
        let doc = Arc::new(Document::parse(b"<rspec/>").expect("parses"));
        built.keep("r1", inputs("a"), Arc::clone(&doc));
        assert!(built.get("r1", &inputs("a")).is_some());
        assert!(built.get("r1", &inputs("b")).is_none(), "other annotations");
        assert!(built.get("r2", &inputs("a")).is_none(), "another request");
        let mut tagged = inputs("a");
        tagged.vlans.insert("link".into(), 7);
        assert!(built.get("r1", &tagged).is_none(), "other VLAN tags");
        built.keep("r1", inputs("b"), doc);
        assert!(built.get("r1", &inputs("a")).is_none(), "replaced");
        assert!(built.get("r1", &inputs("b")).is_some());
    }
}
