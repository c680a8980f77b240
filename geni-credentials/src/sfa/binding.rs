//! The signature-wrapping defence: binds each signature to exactly the
//! credential element whose fields are read. The chain is the single
//! `/signed-credential/credential` and each `parent/credential` below it;
//! every `<Signature>` of the document must sit in `/signed-credential/
//! signatures`, reference (by a unique ID) one credential of that chain —
//! the very node, compared by identity — and each credential must be covered
//! by exactly one signature. Only then are digests and RSA values checked,
//! and only the fields of verified credentials are read.

use super::SfaError;
use super::model::{CredentialElement, chain_nodes, malformed, read_credential};
use crate::xmldsig::{DSIG_NS, Document, Node, Signature, VerifiedSignature};

/// A credential element with the verified signature that covers it.
pub type SignedElement<'d> = (Node<'d>, VerifiedSignature<'d>);

/// One credential of the chain with the signature that covers it.
#[derive(Debug)]
pub struct SignedLink<'d> {
    /// The credential's fields.
    pub credential: CredentialElement,
    /// Its verified signature.
    pub signature: VerifiedSignature<'d>,
}

/// Reads the chain of `doc` (top credential first), verifies the signature
/// covering each credential and then reads its fields.
pub fn signed_chain(doc: &Document) -> Result<Vec<SignedLink<'_>>, SfaError> {
    signed_elements(doc)?
        .into_iter()
        .map(|(node, signature)| {
            Ok(SignedLink {
                credential: read_credential(node)?,
                signature,
            })
        })
        .collect()
}

/// The `<credential>` elements of the chain of `doc` (top first), each with
/// the verified signature that covers exactly it; their fields are not read.
pub fn signed_elements(doc: &Document) -> Result<Vec<SignedElement<'_>>, SfaError> {
    let root = doc.root().ok_or_else(|| SfaError::Malformed {
        line: 0,
        message: "the document has no root element".into(),
    })?;
    if !root.is(None, "signed-credential") {
        return Err(malformed(
            root,
            format!(
                "the document element must be <signed-credential> in no namespace, but it is {}",
                describe_element(root)
            ),
        ));
    }
    let top = only_child(root, "credential")?;
    let chain = chain_nodes(top)?;
    let container = match root.children_named(None, "signatures").count() {
        0 => None,
        1 => root.children_named(None, "signatures").next(),
        _ => {
            return Err(malformed(
                root,
                "<signed-credential> holds two <signatures>".into(),
            ));
        }
    };
    let signature_nodes = signature_elements(doc, container)?;
    let mut assigned: Vec<Option<Signature<'_>>> = chain.iter().map(|_| None).collect();
    for node in signature_nodes {
        let signature = Signature::parse(node).map_err(|source| SfaError::Signature {
            credential: String::new(),
            source,
        })?;
        let covered = doc.element_by_id(signature.reference_id());
        let index = covered
            .and_then(|c| chain.iter().position(|node| node.same(c)))
            .ok_or_else(|| wrapping_outside_chain(node, signature.reference_id(), covered))?;
        if assigned[index].replace(signature).is_some() {
            return Err(SfaError::Wrapping {
                line: node.line(),
                message: format!(
                    "a second signature covers the credential at line {}",
                    chain[index].line()
                ),
            });
        }
    }
    chain
        .into_iter()
        .zip(assigned)
        .map(|(node, signature)| {
            let id = node.ids().next().unwrap_or_default();
            let signature = signature.ok_or_else(|| SfaError::MissingSignature {
                credential: id.clone(),
                line: node.line(),
            })?;
            let signature = signature
                .verify(doc)
                .map_err(|source| SfaError::Signature {
                    credential: id,
                    source,
                })?;
            Ok((node, signature))
        })
        .collect()
}

/// Every XML-DSig `Signature` of the document, which must all be children
/// of the `<signatures>` container.
fn signature_elements<'d>(
    doc: &'d Document,
    container: Option<Node<'d>>,
) -> Result<Vec<Node<'d>>, SfaError> {
    let signatures: Vec<Node<'d>> = doc
        .elements()
        .into_iter()
        .filter(|n| n.is(Some(DSIG_NS), "Signature"))
        .collect();
    for signature in &signatures {
        let inside = signature
            .parent()
            .zip(container)
            .is_some_and(|(parent, container)| parent.same(container));
        if !inside {
            return Err(SfaError::Wrapping {
                line: signature.line(),
                message: "a <Signature> lies outside /signed-credential/signatures".into(),
            });
        }
    }
    if let Some(other) = container
        .into_iter()
        .flat_map(|c| c.children())
        .find(|c| !c.is(Some(DSIG_NS), "Signature"))
    {
        return Err(malformed(
            other,
            format!("<{}> is not allowed in <signatures>", other.name()),
        ));
    }
    Ok(signatures)
}

fn wrapping_outside_chain(signature: Node<'_>, id: &str, covered: Option<Node<'_>>) -> SfaError {
    let message = match covered {
        Some(node) => format!(
            "signature covers ID {id:?}, the <{}> at line {}, which is not a credential of the chain that is read",
            node.name(),
            node.line()
        ),
        None => format!("signature covers ID {id:?}, which no element carries"),
    };
    SfaError::Wrapping {
        line: signature.line(),
        message,
    }
}

/// An element as a message names it: `<name>`, with its namespace when it
/// has one, so that a misplaced element never reads like the expected one.
fn describe_element(node: Node<'_>) -> String {
    match node.namespace() {
        Some(ns) => format!("<{}> in namespace {ns:?}", node.name()),
        None => format!("<{}> in no namespace", node.name()),
    }
}

/// The only child `name` of the root: a second one is a wrapping attempt.
fn only_child<'d>(root: Node<'d>, name: &str) -> Result<Node<'d>, SfaError> {
    let mut found = root.children_named(None, name);
    let first = found.next().ok_or_else(|| {
        let message = match root.children().find(|child| child.name() == name) {
            Some(misplaced) => format!(
                "<signed-credential> must hold <{name}> in no namespace, but holds {}",
                describe_element(misplaced)
            ),
            None => format!("<signed-credential> has no <{name}>"),
        };
        malformed(root, message)
    })?;
    match found.next() {
        Some(second) => Err(SfaError::Wrapping {
            line: second.line(),
            message: format!("a second <{name}> beside the one at line {}", first.line()),
        }),
        None => Ok(first),
    }
}
