//! Signing SFA credentials: slice and user credentials issued by an
//! authority, and delegations of an existing credential, in the shape of the
//! gcf template (GENI credentials specification, "SFA credentials":
//! signatures): one `<Signature xml:id="Sig_<id>">` per
//! credential of the chain inside `<signatures>`, each with a single
//! enveloped reference to its credential and the signer's certificate chain
//! in `X509Data`. The documents verify with `xmlsec1 --verify` as well as in
//! process.

use crate::cert::{GeniCert, chain_to_pem};
use crate::privilege::Privilege;
use crate::sfa::time::format_expiry;
use crate::xmldsig::{
    C14nMethod, DigestMethod, Document, DsigError, ENVELOPED, SignatureMethod, XmlError,
    canonicalize,
};
use base64::Engine;
use chrono::{DateTime, Utc};
use openssl::pkey::{PKey, Private};
use openssl::x509::X509;
use std::fmt::Write as _;

/// The root element attributes of credentials this crate issues.
const ROOT_ATTRIBUTES: &str = concat!(
    r#"xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" "#,
    r#"xsi:noNamespaceSchemaLocation="http://www.geni.net/resources/credential/2/credential.xsd" "#,
    r#"xsi:schemaLocation="http://www.protogeni.net/resources/credential/ext/policy/1 "#,
    r#"http://www.protogeni.net/resources/credential/ext/policy/1/policy.xsd""#,
);

/// Why a credential could not be signed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SignError {
    /// The parent credential (for a delegation) is not usable.
    #[error("parent credential: {0}")]
    Parent(String),
    /// The produced document could not be re-read (a bug, or bad input text).
    #[error("produced document is unusable: {0}")]
    Document(#[from] XmlError),
    /// A signature element could not be processed.
    #[error(transparent)]
    Signature(#[from] DsigError),
    /// The owner or target certificate chain is empty or has no URN.
    #[error("{0} certificate: no certificate with a GENI URN given")]
    Identity(&'static str),
    /// OpenSSL refused to sign or encode.
    #[error("signing failed: {0}")]
    Crypto(#[from] openssl::error::ErrorStack),
}

/// A private key and its certificate chain (leaf first), attached to
/// signatures so verifiers can build the path to their trust roots.
pub struct SigningKey {
    /// The private key.
    pub key: PKey<Private>,
    /// The certificate of `key` followed by its issuers.
    pub chain: Vec<X509>,
}

/// What a new credential says. The owner and target URNs are taken from
/// their certificates.
pub struct CredentialSpec<'a> {
    /// The owner's certificate chain (leaf first).
    pub owner: &'a [GeniCert],
    /// The target's certificate chain (leaf first).
    pub target: &'a [GeniCert],
    /// When the credential expires.
    pub expires: DateTime<Utc>,
    /// What it grants.
    pub privileges: &'a [Privilege],
}

/// Which algorithms a signature uses (default: the gcf profile, inclusive
/// C14N with RSA-SHA1 and SHA-1, which every verifier accepts).
#[derive(Debug, Clone, Copy)]
pub struct Algorithms {
    /// `CanonicalizationMethod` and the reference's C14N transform.
    pub c14n: C14nMethod,
    /// `SignatureMethod`.
    pub signature: SignatureMethod,
    /// The reference's `DigestMethod`.
    pub digest: DigestMethod,
}

impl Default for Algorithms {
    fn default() -> Self {
        Self {
            c14n: C14nMethod::Inclusive,
            signature: SignatureMethod::RsaSha1,
            digest: DigestMethod::Sha1,
        }
    }
}

/// Issues a new (undelegated) credential signed by `signer`.
pub fn issue(
    spec: &CredentialSpec<'_>,
    signer: &SigningKey,
    algorithms: Algorithms,
) -> Result<String, SignError> {
    let parts = Parts::fresh();
    parts.sign(
        privilege_credential(&parts.id, spec, "")?,
        signer,
        algorithms,
    )
}

/// Signs an ABAC speaks-for credential (GENI AM API v3 specification,
/// section "Speaks For"): the user owning
/// `signer` states that `tool` may speak for them until `expires`
/// (`USER.speaks_for_USER <- TOOL`).
pub fn speaks_for(
    signer: &SigningKey,
    tool: &GeniCert,
    expires: DateTime<Utc>,
    algorithms: Algorithms,
) -> Result<String, SignError> {
    let user = signer
        .chain
        .first()
        .and_then(|c| GeniCert::from_x509(c.clone()).ok())
        .filter(|c| c.urn().is_some())
        .ok_or(SignError::Identity("user"))?;
    let tool_urn = tool.urn().ok_or(SignError::Identity("tool"))?;
    let principal = |cert: &GeniCert, urn: &str| {
        format!(
            "<ABACprincipal><keyid>{}</keyid><mnemonic>{}</mnemonic></ABACprincipal>",
            cert.key_id(),
            escape(urn, false)
        )
    };
    let user_urn = user.urn().map_or("", |u| u.as_str());
    let parts = Parts::fresh();
    let credential = format!(
        "<credential xml:id=\"{id}\">\n<type>abac</type>\n<serial/>\n<owner_gid/>\n<owner_urn/>\n\
         <target_gid/>\n<target_urn/>\n<uuid/>\n<expires>{expires}</expires>\n\
         <abac><rt0><version>1.1</version>\n<head>{head}<role>speaks_for_{keyid}</role></head>\n\
         <tail>{tail}</tail>\n</rt0></abac>\n</credential>",
        id = parts.id,
        expires = format_expiry(expires),
        head = principal(&user, user_urn),
        keyid = user.key_id(),
        tail = principal(tool, tool_urn.as_str()),
    );
    parts.sign(credential, signer, algorithms)
}

/// Delegates the credential `parent_xml` to `spec.owner`: the parent
/// credential and its signatures are copied verbatim, the new credential
/// embeds it under `<parent>` and is signed by `signer`, who must be the
/// parent's owner. The root element keeps the parent's attributes, so the
/// copied credentials canonicalize as they did when they were signed.
pub fn delegate(
    parent_xml: &str,
    spec: &CredentialSpec<'_>,
    signer: &SigningKey,
    algorithms: Algorithms,
) -> Result<String, SignError> {
    let doc = Document::parse(parent_xml.as_bytes())?;
    let root = doc
        .root()
        .filter(|r| r.is(None, "signed-credential"))
        .ok_or_else(|| SignError::Parent("root is not <signed-credential>".into()))?;
    let credential = root
        .children_named(None, "credential")
        .next()
        .ok_or_else(|| SignError::Parent("no <credential>".into()))?;
    let mut root_attributes = String::new();
    for (name, value) in root.source_attributes() {
        let _ = write!(root_attributes, r#"{name}="{}" "#, escape(&value, true));
    }
    let signatures = root
        .children_named(None, "signatures")
        .flat_map(|s| s.children())
        .map(|s| String::from_utf8_lossy(&s.dump()).into_owned())
        .collect();
    let id = (0..)
        .map(|n| format!("ref{n}"))
        .find(|id| {
            doc.element_by_id(id).is_none() && doc.element_by_id(&format!("Sig_{id}")).is_none()
        })
        .unwrap_or_default();
    let parts = Parts {
        root_attributes: root_attributes.trim_end().to_owned(),
        id,
        signatures,
    };
    let parent = format!(
        "<parent>{}</parent>",
        String::from_utf8_lossy(&credential.dump())
    );
    parts.sign(
        privilege_credential(&parts.id, spec, &parent)?,
        signer,
        algorithms,
    )
}

/// Everything of the document except the new credential and its
/// signature.
struct Parts {
    root_attributes: String,
    id: String,
    signatures: String,
}

impl Parts {
    /// A new document with one credential, `ref0`.
    fn fresh() -> Self {
        Self {
            root_attributes: ROOT_ATTRIBUTES.to_owned(),
            id: "ref0".to_owned(),
            signatures: String::new(),
        }
    }

    /// The document with `credential` (whose ID is `self.id`) signed by `signer`.
    fn sign(
        &self,
        credential: String,
        signer: &SigningKey,
        algorithms: Algorithms,
    ) -> Result<String, SignError> {
        let render = |digest: &str, value: &str| {
            let signature = signature_element(&self.id, algorithms, digest, value, &signer.chain);
            format!(
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<signed-credential {}>\n{credential}\n<signatures>{}{signature}</signatures>\n</signed-credential>\n",
                self.root_attributes, self.signatures
            )
        };
        let unsigned = Document::parse(render("", "").as_bytes())?;
        let digest = element_digest(&unsigned, &self.id, algorithms)?;
        let digested = render(&digest, "");
        let doc = Document::parse(digested.as_bytes())?;
        let signed_info = doc
            .element_by_id(&format!("Sig_{}", self.id))
            .and_then(|s| s.children().next())
            .ok_or_else(|| SignError::Parent("signature template lost".into()))?;
        let bytes = canonicalize(signed_info, None, algorithms.c14n, &[])?;
        let mut rsa = openssl::sign::Signer::new(
            algorithms.signature.digest().message_digest(),
            &signer.key,
        )?;
        let value = base64_text(&rsa.sign_oneshot_to_vec(&bytes)?);
        Ok(render(&digest, &value))
    }
}

/// A `privilege` credential element with ID `id` saying what `spec` says,
/// followed by `parent`.
fn privilege_credential(
    id: &str,
    spec: &CredentialSpec<'_>,
    parent: &str,
) -> Result<String, SignError> {
    let urn_of = |chain: &[GeniCert], role| {
        chain
            .first()
            .and_then(GeniCert::urn)
            .map(|u| escape(u.as_str(), false))
            .ok_or(SignError::Identity(role))
    };
    let mut privileges = String::new();
    for grant in spec.privileges {
        let _ = write!(
            privileges,
            "<privilege><name>{}</name><can_delegate>{}</can_delegate></privilege>",
            escape(&grant.name, false),
            grant.can_delegate
        );
    }
    Ok(format!(
        "<credential xml:id=\"{id}\">\n<type>privilege</type>\n<serial>{serial}</serial>\n\
         <owner_gid>{owner}</owner_gid>\n<owner_urn>{owner_urn}</owner_urn>\n\
         <target_gid>{target}</target_gid>\n<target_urn>{target_urn}</target_urn>\n\
         <uuid/>\n<expires>{expires}</expires>\n<privileges>{privileges}</privileges>\n{parent}</credential>",
        id = id,
        serial = uuid::Uuid::new_v4().simple(),
        owner = chain_to_pem(spec.owner),
        owner_urn = urn_of(spec.owner, "owner")?,
        target = chain_to_pem(spec.target),
        target_urn = urn_of(spec.target, "target")?,
        expires = format_expiry(spec.expires),
    ))
}

/// The base64 digest of the element with ID `id`, canonicalized as the
/// reference will say.
fn element_digest(doc: &Document, id: &str, algorithms: Algorithms) -> Result<String, SignError> {
    let element = doc
        .element_by_id(id)
        .ok_or_else(|| SignError::Parent(format!("credential {id} lost")))?;
    let bytes = canonicalize(element, None, algorithms.c14n.without_comments(), &[])?;
    let digest = openssl::hash::hash(algorithms.digest.message_digest(), &bytes)?;
    Ok(base64_text(&digest))
}

fn signature_element(
    id: &str,
    algorithms: Algorithms,
    digest: &str,
    value: &str,
    chain: &[X509],
) -> String {
    let certificates: String = chain
        .iter()
        .filter_map(|c| c.to_der().ok())
        .map(|der| format!("<X509Certificate>{}</X509Certificate>", base64_text(&der)))
        .collect();
    let c14n = algorithms.c14n.uri();
    format!(
        "\n<Signature xmlns=\"http://www.w3.org/2000/09/xmldsig#\" xml:id=\"Sig_{id}\">\n\
         <SignedInfo>\n<CanonicalizationMethod Algorithm=\"{c14n}\"/>\n\
         <SignatureMethod Algorithm=\"{method}\"/>\n<Reference URI=\"#{id}\">\n\
         <Transforms>\n<Transform Algorithm=\"{ENVELOPED}\"/>\n<Transform Algorithm=\"{c14n}\"/>\n</Transforms>\n\
         <DigestMethod Algorithm=\"{digest_method}\"/>\n<DigestValue>{digest}</DigestValue>\n\
         </Reference>\n</SignedInfo>\n<SignatureValue>{value}</SignatureValue>\n\
         <KeyInfo>\n<X509Data>{certificates}</X509Data>\n</KeyInfo>\n</Signature>\n",
        method = algorithms.signature.uri(),
        digest_method = algorithms.digest.uri(),
    )
}

fn base64_text(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Escapes text (and, with `attribute`, quotes) for XML.
fn escape(text: &str, attribute: bool) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' if attribute => out.push_str("&quot;"),
            '\n' | '\r' | '\t' if attribute => {
                let _ = write!(out, "&#{};", u32::from(c));
            }
            _ => out.push(c),
        }
    }
    out
}
