//! One `<ds:Signature>` element: strict parsing of the profile used for GENI
//! credentials (one same-document `Reference` by ID, enveloped-signature and
//! C14N transforms only, RSA with SHA-1 or SHA-256, signer certificates in
//! `KeyInfo/X509Data`) and in-process verification: reference digest, then
//! the RSA signature over the canonical `SignedInfo` with the key of one of
//! the attached certificates. The result names the exact element the
//! reference resolved to, so callers can bind what they read to what was
//! signed.

use super::DsigError;
use super::algorithm::{
    C14nMethod, DSIG_NS, DigestMethod, ENVELOPED, EXC_C14N_NS, SignatureMethod,
};
use super::c14n::canonicalize;
use super::document::Document;
use crate::parse_cache::ParseCache;
use base64::Engine;
use geni_xml::Node;
use openssl::pkey::Id;
use openssl::sign::Verifier;
use openssl::x509::X509;

/// A parsed, not yet verified signature.
#[derive(Debug)]
pub struct Signature<'d> {
    node: Node<'d>,
    signed_info: Node<'d>,
    c14n: C14nMethod,
    c14n_prefixes: Vec<String>,
    method: SignatureMethod,
    reference: Reference,
    value: Vec<u8>,
    certificates: Vec<X509>,
}

/// The single `Reference` of a signature.
#[derive(Debug)]
struct Reference {
    line: u32,
    id: String,
    enveloped: bool,
    c14n: C14nMethod,
    c14n_prefixes: Vec<String>,
    digest: DigestMethod,
    digest_value: Vec<u8>,
}

/// A signature whose digest and RSA value verified.
#[derive(Debug)]
pub struct VerifiedSignature<'d> {
    /// The `<Signature>` element.
    pub node: Node<'d>,
    /// The element the reference resolved to (what the signature covers).
    pub referenced: Node<'d>,
    /// The certificate whose key verified the signature value.
    pub signer: X509,
    /// Every certificate of `X509Data` in document order (signer included);
    /// all but the signer are untrusted candidates for chain building.
    pub certificates: Vec<X509>,
    /// The signature algorithm.
    pub method: SignatureMethod,
}

impl<'d> Signature<'d> {
    /// Parses `node`, which must be a `Signature` in the XML-DSig namespace.
    pub fn parse(node: Node<'d>) -> Result<Self, DsigError> {
        if !node.is(Some(DSIG_NS), "Signature") {
            return Err(structure(node, "is not an XML-DSig <Signature>"));
        }
        let mut signed_info = None;
        let mut value = None;
        let mut key_info = None;
        for child in node.children() {
            let slot = match (child.namespace(), child.name()) {
                (Some(DSIG_NS), "SignedInfo") => &mut signed_info,
                (Some(DSIG_NS), "SignatureValue") => &mut value,
                (Some(DSIG_NS), "KeyInfo") => &mut key_info,
                _ => return Err(structure(child, "is not allowed in <Signature>")),
            };
            if slot.replace(child).is_some() {
                return Err(structure(child, "appears twice in <Signature>"));
            }
        }
        let signed_info = signed_info.ok_or_else(|| structure(node, "has no <SignedInfo>"))?;
        let value = value.ok_or_else(|| structure(node, "has no <SignatureValue>"))?;
        let key_info = key_info.ok_or_else(|| structure(node, "has no <KeyInfo>"))?;
        let (c14n, c14n_prefixes, method, reference) = parse_signed_info(signed_info)?;
        Ok(Self {
            node,
            signed_info,
            c14n,
            c14n_prefixes,
            method,
            reference,
            value: base64_of(value)?,
            certificates: certificates(key_info)?,
        })
    }

    /// The `<Signature>` element.
    pub fn node(&self) -> Node<'d> {
        self.node
    }

    /// The ID the reference points at (without `#`).
    pub fn reference_id(&self) -> &str {
        &self.reference.id
    }

    /// The signature algorithm.
    pub fn method(&self) -> SignatureMethod {
        self.method
    }

    /// The decoded `SignatureValue`.
    pub fn value(&self) -> &[u8] {
        &self.value
    }

    /// The certificates of `KeyInfo/X509Data`, in document order.
    pub fn certificates(&self) -> &[X509] {
        &self.certificates
    }

    /// The canonical `SignedInfo`: the bytes the RSA signature covers.
    pub fn signed_bytes(&self) -> Result<Vec<u8>, DsigError> {
        Ok(canonicalize(
            self.signed_info,
            None,
            self.c14n,
            &self.c14n_prefixes,
        )?)
    }

    /// Checks the reference digest and the signature value.
    pub fn verify(self, doc: &'d Document) -> Result<VerifiedSignature<'d>, DsigError> {
        let reference = &self.reference;
        let referenced = doc
            .element_by_id(&reference.id)
            .ok_or_else(|| DsigError::UnknownId {
                line: reference.line,
                id: reference.id.clone(),
            })?;
        let excluded = reference.enveloped.then_some(self.node);
        let bytes = canonicalize(
            referenced,
            excluded,
            reference.c14n.without_comments(),
            &reference.c14n_prefixes,
        )?;
        let digest = openssl::hash::hash(reference.digest.message_digest(), &bytes)
            .map_err(|_| DsigError::Crypto)?;
        if reference.digest_value.len() != digest.len()
            || !openssl::memcmp::eq(&reference.digest_value, &digest)
        {
            return Err(DsigError::DigestMismatch {
                line: reference.line,
                id: reference.id.clone(),
            });
        }
        let signed = self.signed_bytes()?;
        let signer = self
            .certificates
            .iter()
            .position(|cert| key_verifies(cert, self.method, &signed, &self.value))
            .ok_or(DsigError::BadSignatureValue {
                line: self.node.line(),
            })?;
        Ok(VerifiedSignature {
            node: self.node,
            referenced,
            signer: self.certificates[signer].clone(),
            certificates: self.certificates,
            method: self.method,
        })
    }
}

/// Whether `cert`'s RSA key verifies `value` over `data` with `method`.
pub fn key_verifies(cert: &X509, method: SignatureMethod, data: &[u8], value: &[u8]) -> bool {
    let Ok(key) = cert.public_key() else {
        return false;
    };
    if key.id() != Id::RSA {
        return false;
    }
    Verifier::new(method.digest().message_digest(), &key)
        .and_then(|mut v| v.verify_oneshot(value, data))
        .unwrap_or(false)
}

type SignedInfo = (C14nMethod, Vec<String>, SignatureMethod, Reference);

fn parse_signed_info(signed_info: Node<'_>) -> Result<SignedInfo, DsigError> {
    let mut children = signed_info.children();
    let c14n_node = expect_child(signed_info, children.next(), "CanonicalizationMethod")?;
    let method_node = expect_child(signed_info, children.next(), "SignatureMethod")?;
    let reference_node = expect_child(signed_info, children.next(), "Reference")?;
    if let Some(extra) = children.next() {
        return Err(structure(
            extra,
            "is not allowed here: <SignedInfo> must hold exactly one <Reference>",
        ));
    }
    let (c14n, c14n_prefixes) = c14n_of(c14n_node)?;
    let method = algorithm(
        method_node,
        "signature algorithm",
        SignatureMethod::from_uri,
    )?;
    Ok((
        c14n,
        c14n_prefixes,
        method,
        parse_reference(reference_node)?,
    ))
}

fn parse_reference(node: Node<'_>) -> Result<Reference, DsigError> {
    let uri = node.attribute(None, "URI").unwrap_or_default();
    let id = uri
        .strip_prefix('#')
        .filter(|id| !id.is_empty() && !id.contains('('))
        .ok_or_else(|| DsigError::ReferenceUri {
            line: node.line(),
            uri: uri.clone(),
        })?
        .to_owned();
    let mut children = node.children().peekable();
    let mut enveloped = false;
    let mut c14n = (C14nMethod::Inclusive, Vec::new());
    if let Some(transforms) = children.next_if(|c| c.is(Some(DSIG_NS), "Transforms")) {
        for transform in transforms.children() {
            if !transform.is(Some(DSIG_NS), "Transform") {
                return Err(structure(transform, "is not allowed in <Transforms>"));
            }
            let uri = transform.attribute(None, "Algorithm").unwrap_or_default();
            if uri == ENVELOPED {
                enveloped = true;
            } else {
                c14n = c14n_of(transform)?;
            }
        }
    }
    let digest_node = expect_child(node, children.next(), "DigestMethod")?;
    let digest = algorithm(digest_node, "digest algorithm", DigestMethod::from_uri)?;
    let value_node = expect_child(node, children.next(), "DigestValue")?;
    if let Some(extra) = children.next() {
        return Err(structure(extra, "is not allowed in <Reference>"));
    }
    Ok(Reference {
        line: node.line(),
        id,
        enveloped,
        c14n: c14n.0,
        c14n_prefixes: c14n.1,
        digest,
        digest_value: base64_of(value_node)?,
    })
}

/// A C14N algorithm element (`CanonicalizationMethod` or `Transform`) with
/// its optional exclusive-C14N `InclusiveNamespaces PrefixList`.
fn c14n_of(node: Node<'_>) -> Result<(C14nMethod, Vec<String>), DsigError> {
    let method = algorithm(node, "canonicalization or transform", C14nMethod::from_uri)?;
    let mut prefixes = Vec::new();
    for child in node.children() {
        if !(method.exclusive() && child.is(Some(EXC_C14N_NS), "InclusiveNamespaces")) {
            return Err(structure(
                child,
                "is not allowed in a canonicalization method",
            ));
        }
        let list = child.attribute(None, "PrefixList").unwrap_or_default();
        prefixes.extend(list.split_whitespace().map(str::to_owned));
    }
    Ok((method, prefixes))
}

fn algorithm<T>(
    node: Node<'_>,
    what: &'static str,
    from_uri: impl Fn(&str) -> Option<T>,
) -> Result<T, DsigError> {
    let uri = node.attribute(None, "Algorithm").unwrap_or_default();
    from_uri(&uri).ok_or(DsigError::UnsupportedAlgorithm {
        line: node.line(),
        what,
        uri,
    })
}

fn expect_child<'d>(
    parent: Node<'d>,
    child: Option<Node<'d>>,
    name: &'static str,
) -> Result<Node<'d>, DsigError> {
    match child {
        Some(c) if c.is(Some(DSIG_NS), name) => Ok(c),
        Some(c) => Err(structure(c, &format!("found where <{name}> was expected"))),
        None => Err(structure(parent, &format!("lacks <{name}>"))),
    }
}

/// Signer certificates decoded so far (the same ones sign call after call).
static DECODED: ParseCache<X509> = ParseCache::new();

fn certificates(key_info: Node<'_>) -> Result<Vec<X509>, DsigError> {
    let mut out = Vec::new();
    for data in key_info.children_named(Some(DSIG_NS), "X509Data") {
        for cert in data.children_named(Some(DSIG_NS), "X509Certificate") {
            let der = base64_of(cert)?;
            let x509 = DECODED.get_or_parse(&der, X509::from_der);
            out.push(x509.map_err(|e| DsigError::Certificate {
                line: cert.line(),
                reason: e.to_string(),
            })?);
        }
    }
    if out.is_empty() {
        return Err(structure(key_info, "holds no <X509Data>/<X509Certificate>"));
    }
    Ok(out)
}

/// Decodes base64 text, ignoring the whitespace signers wrap it with.
fn base64_of(node: Node<'_>) -> Result<Vec<u8>, DsigError> {
    let text: Vec<u8> = node
        .text()
        .bytes()
        .filter(|b| !b.is_ascii_whitespace())
        .collect();
    base64::engine::general_purpose::STANDARD
        .decode(text)
        .map_err(|_| DsigError::Base64 {
            line: node.line(),
            element: node.name().to_owned(),
        })
}

fn structure(node: Node<'_>, message: &str) -> DsigError {
    DsigError::Structure {
        line: node.line(),
        element: node.name().to_owned(),
        message: message.to_owned(),
    }
}
