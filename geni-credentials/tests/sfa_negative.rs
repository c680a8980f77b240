//! The negative suite: every variant is derived from a freshly signed good
//! credential (development CA + signing) and must be refused with the
//! expected refusal kind and the expected precise reason. Signature
//! wrapping, tampering, time, trust, authority, ownership, privilege,
//! delegation, algorithm and document-hardening cases; the builders live in
//! `sfa_negative_builders`.

mod sfa_fixture;
mod sfa_negative_builders;

use geni_credentials::RefusalKind::{self, *};
use geni_credentials::sfa::SfaError;
use sfa_fixture::{all_delegatable, days, pki};
use sfa_negative_builders::*;

/// How a case builds its credential and verifies it.
#[derive(Clone, Copy)]
enum Build {
    /// The good credential with the first `.0` replaced by `.1`, for alice.
    Swap(&'static str, &'static str),
    /// Anything else.
    Run(fn() -> Outcome),
}

use Build::{Run, Swap};

const RSA_SHA1: &str = "http://www.w3.org/2000/09/xmldsig#rsa-sha1\"";
const SHA1: &str = "http://www.w3.org/2000/09/xmldsig#sha1\"";
const C14N: &str = "REC-xml-c14n-20010315\"/>";
const DIGEST: &str = "Signature/DigestMismatch";
const UNSUPPORTED: &str = "Signature/UnsupportedAlgorithm";

/// Name, how to build it, expected kind, expected reason ("Variant" or
/// "Variant/Inner").
#[rustfmt::skip]
const CASES: &[(&str, Build, RefusalKind, &str)] = &[
    // Signature wrapping.
    ("signed credential moved into an unsigned one", Run(moved_into_extensions), CredentialInvalid, "Wrapping"),
    ("signed credential nested as parent of an unsigned one", Run(nested_as_parent), CredentialInvalid, "MissingSignature"),
    ("second credential beside the signed one", Run(second_credential), CredentialInvalid, "Wrapping"),
    ("duplicated credential with the same id", Run(duplicated_credential), CredentialInvalid, "Document/DuplicateId"),
    ("colliding id on another element", Swap("</signed-credential>", "<n id=\"ref0\"/></signed-credential>"),
    CredentialInvalid, "Document/DuplicateId"),
    ("second signature over a different id", Run(signature_over_other_id), CredentialInvalid, "Wrapping"),
    ("second signature over the same credential", Run(second_signature), CredentialInvalid, "Wrapping"),
    ("signature moved inside the credential", Run(signature_inside), CredentialInvalid, "Wrapping"),
    ("reference to an id nobody carries", Swap("URI=\"#ref0\"", "URI=\"#nowhere\""), CredentialInvalid, "Wrapping"),
    ("xpointer reference", Swap("URI=\"#ref0\"", "URI=\"#xpointer(id('ref0'))\""), CredentialInvalid, "Signature/ReferenceUri"),
    ("whole-document reference", Swap("URI=\"#ref0\"", "URI=\"\""), CredentialInvalid, "Signature/ReferenceUri"),
    // Fields altered after signing.
    ("expiry extended", Swap("<expires>20", "<expires>21"), CredentialInvalid, DIGEST),
    ("owner_urn changed", Swap("+user+alice</owner_urn>", "+user+bob</owner_urn>"), CredentialInvalid, DIGEST),
    ("owner certificate replaced", Run(owner_replaced), CredentialInvalid, DIGEST),
    ("target_urn changed", Swap("+slice+s1</target_urn>", "+slice+s2</target_urn>"), CredentialInvalid, DIGEST),
    ("privilege renamed", Swap("<name>*</name>", "<name>authority</name>"), CredentialInvalid, DIGEST),
    ("can_delegate flipped", Swap("<can_delegate>true", "<can_delegate>false"), CredentialInvalid, DIGEST),
    ("privilege added", Swap("</privileges>", "<privilege><name>sa</name></privilege></privileges>"),
    CredentialInvalid, DIGEST),
    ("privilege removed", Run(privilege_removed), CredentialInvalid, DIGEST),
    ("type changed", Swap("<type>privilege</type>", "<type>abac</type>"), CredentialInvalid, DIGEST),
    ("serial changed", Swap("<serial>", "<serial>1"), CredentialInvalid, DIGEST),
    ("element injected", Swap("<privileges>", "<foo/><privileges>"), CredentialInvalid, DIGEST),
    ("attribute added to the credential", Swap("xml:id=\"ref0\">", "xml:id=\"ref0\" a=\"1\">"), CredentialInvalid, DIGEST),
    ("whitespace added inside the credential", Swap("</type>", "</type>\n"), CredentialInvalid, DIGEST),
    ("parent field altered inside a delegation", Run(parent_altered), CredentialInvalid, DIGEST),
    ("signature value altered", Run(signature_value_altered), CredentialInvalid, "Signature/BadSignatureValue"),
    ("signature method switched to rsa-sha256", Swap(RSA_SHA1, "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256\""),
    CredentialInvalid, "Signature/BadSignatureValue"),
    ("signer certificate replaced", Run(signer_replaced), CredentialInvalid, "Signature/BadSignatureValue"),
    ("certificate that is not base64", Swap("<X509Certificate>", "<X509Certificate>!!"), CredentialInvalid, "Signature/Base64"),
    // Unsupported algorithms.
    ("dsa-sha1 signature method", Swap(RSA_SHA1, "http://www.w3.org/2000/09/xmldsig#dsa-sha1\""), CredentialInvalid, UNSUPPORTED),
    ("hmac-sha1 signature method", Swap(RSA_SHA1, "http://www.w3.org/2000/09/xmldsig#hmac-sha1\""), CredentialInvalid, UNSUPPORTED),
    ("md5 digest", Swap(SHA1, "http://www.w3.org/2001/04/xmldsig-more#md5\""), CredentialInvalid, UNSUPPORTED),
    ("canonical XML 1.1", Swap(C14N, "xml-c14n11\"/>"), CredentialInvalid, UNSUPPORTED),
    ("XPath transform", Swap("<Transforms>", "<Transforms><Transform Algorithm=\"http://www.w3.org/TR/1999/REC-xpath-19991116\"/>"),
    CredentialInvalid, UNSUPPORTED),
    // Missing signatures.
    ("no signatures element", Run(no_signatures), CredentialInvalid, "MissingSignature"),
    ("empty signatures element", Run(empty_signatures), CredentialInvalid, "MissingSignature"),
    ("delegated credential without its own signature", Run(|| without_signature("Sig_ref1")), CredentialInvalid, "MissingSignature"),
    ("delegation whose parent signature is missing", Run(|| without_signature("Sig_ref0")), CredentialInvalid, "MissingSignature"),
    // Time.
    ("expired credential", Run(expired), CredentialExpired, "Expired"),
    ("expired parent of a valid delegation", Run(expired_parent), CredentialExpired, "Expired"),
    ("owner certificate expired", Run(|| owned_by(&extra().expired)), CredentialExpired, "Untrusted/Expired"),
    ("owner certificate not yet valid", Run(|| owned_by(&extra().not_yet_valid)), CredentialInvalid, "Untrusted/NotYetValid"),
    // Trust and authority.
    ("signed by an untrusted root", Run(|| root_signed_by(extra().evil.identity())), CredentialSignerUntrusted, "Untrusted/UntrustedRoot"),
    ("owner from an untrusted root", Run(|| owned_by(&extra().mallory)), CredentialSignerUntrusted, "Untrusted/UntrustedRoot"),
    ("owner outside its issuer's namespace", Run(|| owned_by(&extra().wrong_namespace)), CredentialSignerUntrusted, "Untrusted/NamespaceViolation"),
    ("root signed by an authority of another namespace", Run(|| root_signed_by(extra().other.identity())), CredentialSignerUntrusted, "RootNotAuthority"),
    ("root signed by a user, not an authority", Run(|| root_signed_by(&pki().alice)), CredentialSignerUntrusted, "RootNotAuthority"),
    // Caller, target, privilege.
    ("owner is not the caller", Run(owner_not_caller), CredentialMismatch, "OwnerNotCaller"),
    ("target is another slice", Run(other_slice), CredentialMismatch, "TargetMismatch"),
    ("user credential presented as slice credential", Run(user_credential), CredentialMismatch, "TargetMismatch"),
    ("privilege the call needs is not granted", Run(only_info), Forbidden, "PrivilegeMissing"),
    ("shutdown with only control", Run(shutdown_with_control), Forbidden, "PrivilegeMissing"),
    // Delegation rules.
    ("privilege not delegatable", Run(|| delegate_privileges(("*", false), ("control", false))), CredentialInvalid, "Delegation"),
    ("privilege escalated by the child", Run(|| delegate_privileges(("info", true), ("control", false))), CredentialInvalid, "Delegation"),
    ("star escalated from control", Run(|| delegate_privileges(("control", true), ("*", false))), CredentialInvalid, "Delegation"),
    ("child outlives its parent", Run(child_outlives_parent), CredentialInvalid, "Delegation"),
    ("child signed by someone other than the parent's owner", Run(signed_by_stranger), CredentialInvalid, "Delegation"),
    ("child changes the target", Run(target_changed), CredentialInvalid, "Delegation"),
    // Document hardening.
    ("DOCTYPE declaration", Swap("<signed-credential ", "<!DOCTYPE s>\n<signed-credential "), CredentialInvalid, "Document/Doctype"),
    ("internal entity declaration", Run(|| entity("<!ENTITY e \"sa\">", "&e;")), CredentialInvalid, "Document/Doctype"),
    ("external entity declaration", Run(|| entity("<!ENTITY e SYSTEM \"file:///etc/passwd\">", "&e;")), CredentialInvalid, "Document/Doctype"),
    ("oversized document", Run(oversized), CredentialInvalid, "Document/TooLarge"),
    ("elements nested too deep", Run(too_deep), CredentialInvalid, "Document/TooDeep"),
    ("not well-formed (first character missing)", Run(|| check(&good()[1..])), CredentialInvalid, "Document/NotWellFormed"),
    ("wrong root element", Swap("<signed-credential ", "<credential-set "), CredentialInvalid, "Document/NotWellFormed"),
    ("foreign element among the signatures", Swap("<signatures>", "<signatures><note/>"), CredentialInvalid, "Malformed"),
    ("root element renamed consistently", Run(renamed_root), CredentialInvalid, "Malformed"),
];

/// "Variant" or "Variant/Inner" of a refusal.
fn reason_of(error: &SfaError) -> String {
    let head = |debug: String| {
        let end = debug
            .find(|c: char| !c.is_alphanumeric())
            .unwrap_or(debug.len());
        debug[..end].to_owned()
    };
    let inner = match error {
        SfaError::Document(e) => Some(head(format!("{e:?}"))),
        SfaError::Signature { source, .. } => Some(head(format!("{source:?}"))),
        SfaError::Untrusted { source, .. } => Some(head(format!("{source:?}"))),
        _ => None,
    };
    let outer = head(format!("{error:?}"));
    inner.map_or(outer.clone(), |inner| format!("{outer}/{inner}"))
}

#[test]
fn every_invalid_credential_is_refused_with_the_expected_reason() {
    assert!(CASES.len() >= 40, "only {} cases", CASES.len());
    let mut names: Vec<&str> = CASES.iter().map(|c| c.0).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), CASES.len(), "case names must be distinct");
    let mut failures = Vec::new();
    for &(name, build, kind, reason) in CASES {
        let outcome = match build {
            Swap(from, to) => check(&swap(&good(), from, to)),
            Run(run) => run(),
        };
        match outcome {
            Ok(_) => failures.push(format!("{name}: accepted")),
            Err(error) if error.kind() != kind || reason_of(&error) != reason => {
                failures.push(format!(
                    "{name}: expected {kind:?} {reason}, got {:?} {}: {error}",
                    error.kind(),
                    reason_of(&error)
                ));
            }
            Err(_) => {}
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_good_credentials_the_cases_start_from_verify() {
    let pki = pki();
    check(&good()).unwrap();
    as_bob(&delegated()).unwrap();
    let xml = delegation(
        &good(),
        &pki.alice,
        &pki.bob,
        &pki.slice,
        &all_delegatable(),
        days(5),
    );
    as_bob(&xml).unwrap();
}

#[test]
fn a_misplaced_element_is_named_with_its_namespace_and_what_was_expected() {
    let namespaced_root = swap(
        &good(),
        "<signed-credential ",
        "<signed-credential xmlns=\"urn:example:other\" ",
    );
    let error = check(&namespaced_root).unwrap_err();
    assert_eq!(reason_of(&error), "Malformed", "{error}");
    let message = error.to_string();
    assert!(
        message.contains("must be <signed-credential> in no namespace")
            && message.contains("<signed-credential> in namespace \"urn:example:other\""),
        "{message}"
    );
    assert!(!message.contains("<signed-credential>, not <signed-credential>"));

    let xml = good();
    let inner = credential_of(&xml);
    let namespaced_child = swap(
        &xml,
        inner,
        &inner.replacen(
            "<credential ",
            "<credential xmlns=\"urn:example:other\" ",
            1,
        ),
    );
    let message = check(&namespaced_child).unwrap_err().to_string();
    assert!(
        message.contains("must hold <credential> in no namespace")
            && message.contains("<credential> in namespace \"urn:example:other\""),
        "{message}"
    );
}
