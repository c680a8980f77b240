//! Merging manifests: the nodes and links of this AM in one manifest are
//! copied, element by element, to the end of another, so a slice
//! allocated in several steps is described by one document. Namespaces
//! are re-declared where the target needs them; comments inside copied
//! elements are not carried over.

use super::CoreError;
use geni_rspec::RSpec;
use geni_rspec::manifest::Ownership;
use geni_rspec::{Document, NodeId, NodeKind};

/// Appends this AM's (`cm`) nodes and links of `other` to `base`'s root.
pub(super) fn append_owned(
    base: &mut Document,
    other: &Document,
    cm: &str,
) -> Result<(), CoreError> {
    let root = RSpec::new(other).map_err(|e| CoreError::Internal(e.to_string()))?;
    let owned = Ownership::of(&root, cm);
    let target = base.root();
    for id in owned.nodes.iter().chain(owned.links.iter()) {
        copy(other, *id, base, target);
    }
    Ok(())
}

/// Copies the subtree `n` of `src` as the last child of `parent` in `dst`.
fn copy(src: &Document, n: NodeId, dst: &mut Document, parent: NodeId) {
    match src.kind(n) {
        NodeKind::Element => {
            let ns = src.namespace(n).unwrap_or("");
            let prefix = src.prefix(n).unwrap_or("");
            let id = dst.append_element(parent, ns, prefix, src.local_name(n));
            for a in src.attributes(n) {
                match a.namespace {
                    Some(ans) => {
                        dst.set_attribute_ns(id, ans, a.prefix.unwrap_or("ns"), a.local, &a.value)
                    }
                    None => dst.set_attribute(id, a.local, &a.value),
                }
            }
            for child in src.children(n) {
                copy(src, child, dst, id);
            }
        }
        NodeKind::Text | NodeKind::CData => {
            let text = src.text(n);
            if !text.trim().is_empty() {
                dst.append_text(parent, &text);
            }
        }
        NodeKind::Comment | NodeKind::ProcessingInstruction => {}
    }
}
