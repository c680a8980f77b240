//! Canonicalization of one element's subtree in its document context with
//! the algorithm a signature names (geni-xml does the work): the
//! enveloped-signature transform is the excluded subtree.

use super::algorithm::C14nMethod;
use geni_xml::{C14n, C14nMode, Node, XmlError};

/// Canonicalizes `apex` and its subtree (minus `excluded` and its subtree)
/// with `method`; `inclusive_prefixes` is the exclusive C14N
/// `InclusiveNamespaces PrefixList` (ignored by inclusive C14N).
pub fn canonicalize(
    apex: Node<'_>,
    excluded: Option<Node<'_>>,
    method: C14nMethod,
    inclusive_prefixes: &[String],
) -> Result<Vec<u8>, XmlError> {
    let mode = if method.exclusive() {
        C14nMode::Exclusive
    } else {
        C14nMode::Inclusive
    };
    apex.c14n(
        excluded,
        &C14n {
            mode,
            with_comments: method.with_comments(),
            inclusive_prefixes,
        },
    )
}
