//! Turning a [`CertSpec`] into a signed X.509 v3 certificate with OpenSSL.

use super::spec::{CertSpec, KeyType, SignatureDigest};
use openssl::asn1::{Asn1Integer, Asn1Time};
use openssl::bn::{BigNum, MsbOption};
use openssl::ec::{EcGroup, EcKey};
use openssl::error::ErrorStack;
use openssl::hash::MessageDigest;
use openssl::nid::Nid;
use openssl::pkey::{PKey, PKeyRef, Private};
use openssl::rsa::Rsa;
use openssl::x509::extension::{
    AuthorityKeyIdentifier, BasicConstraints, KeyUsage, SubjectAlternativeName,
    SubjectKeyIdentifier,
};
use openssl::x509::{X509, X509NameBuilder, X509Ref};

/// Generates a fresh key as `spec` says.
pub(super) fn new_key(spec: &CertSpec) -> Result<PKey<Private>, ErrorStack> {
    match spec.key_type {
        KeyType::Rsa => PKey::from_rsa(Rsa::generate(spec.key_bits)?),
        KeyType::EcdsaP256 => {
            let group = EcGroup::from_curve_name(Nid::X9_62_PRIME256V1)?;
            PKey::from_ec_key(EcKey::generate(&group)?)
        }
    }
}

/// Signs a certificate for `key` as described by `spec`, issued by
/// `issuer` (certificate and key), or self-signed when `issuer` is `None`.
pub(super) fn sign_cert(
    spec: &CertSpec,
    key: &PKeyRef<Private>,
    issuer: Option<(&X509Ref, &PKeyRef<Private>)>,
) -> Result<X509, ErrorStack> {
    let mut name = X509NameBuilder::new()?;
    name.append_entry_by_text("CN", &spec.common_name)?;
    let name = name.build();

    let mut builder = X509::builder()?;
    builder.set_version(2)?;
    let serial = random_serial()?;
    builder.set_serial_number(&serial)?;
    builder.set_subject_name(&name)?;
    builder.set_issuer_name(issuer.map_or(name.as_ref(), |(cert, _)| cert.subject_name()))?;
    builder.set_pubkey(key)?;
    let not_before = Asn1Time::from_unix(spec.not_before.timestamp())?;
    let not_after = Asn1Time::from_unix(spec.not_after.timestamp())?;
    builder.set_not_before(&not_before)?;
    builder.set_not_after(&not_after)?;

    let mut constraints = BasicConstraints::new();
    constraints.critical();
    if spec.is_ca {
        constraints.ca();
    }
    builder.append_extension(constraints.build()?)?;
    let mut usage = KeyUsage::new();
    usage.digital_signature();
    if spec.key_type == KeyType::Rsa {
        // RSA key transport; an ECDSA key only signs.
        usage.key_encipherment();
    }
    if spec.is_ca {
        usage.key_cert_sign().crl_sign();
    }
    builder.append_extension(usage.build()?)?;
    let subject_key_id = SubjectKeyIdentifier::new().build(&builder.x509v3_context(None, None))?;
    builder.append_extension(subject_key_id)?;
    if let Some((issuer_cert, _)) = issuer {
        let ctx = builder.x509v3_context(Some(issuer_cert), None);
        let authority_key_id = AuthorityKeyIdentifier::new().keyid(false).build(&ctx)?;
        builder.append_extension(authority_key_id)?;
    }
    let alt_names = alt_names(spec).build(&builder.x509v3_context(issuer.map(|(c, _)| c), None))?;
    builder.append_extension(alt_names)?;

    let signing_key = issuer.map_or(key, |(_, issuer_key)| issuer_key);
    builder.sign(signing_key, digest(spec.digest))?;
    Ok(builder.build())
}

/// The subjectAltName: URN, UUID, e-mail, DNS names and IP addresses.
fn alt_names(spec: &CertSpec) -> SubjectAlternativeName {
    let mut alt = SubjectAlternativeName::new();
    alt.uri(spec.urn.as_str());
    if let Some(uuid) = spec.uuid {
        alt.uri(&format!("urn:uuid:{uuid}"));
    }
    if let Some(email) = &spec.email {
        alt.email(email);
    }
    for dns in &spec.dns_names {
        alt.dns(dns);
    }
    for ip in &spec.ip_addresses {
        alt.ip(&ip.to_string());
    }
    alt
}

fn digest(digest: SignatureDigest) -> MessageDigest {
    match digest {
        SignatureDigest::Sha256 => MessageDigest::sha256(),
        SignatureDigest::Sha1 => MessageDigest::sha1(),
        SignatureDigest::Md5 => MessageDigest::md5(),
    }
}

/// A positive random 63-bit serial number.
fn random_serial() -> Result<Asn1Integer, ErrorStack> {
    let mut serial = BigNum::new()?;
    serial.rand(63, MsbOption::MAYBE_ZERO, false)?;
    serial.to_asn1_integer()
}
