//! How the negative suite (`sfa_negative.rs`) builds each invalid
//! credential from a freshly signed good one, and verifies it.

use crate::sfa_fixture::{all_delegatable, days, pki};
use chrono::{DateTime, Utc};
use geni_credentials::devca::{Authority, Defect, Identity};
use geni_credentials::privilege::Privilege;
use geni_credentials::sfa::{self, Request, SfaError, VerifiedCredential};
use geni_credentials::sign::{self, Algorithms, CredentialSpec};
use std::sync::OnceLock;

/// Certificates beyond the shared PKI that only refusals need.
pub struct Extra {
    /// A root nobody trusts, `urn:publicid:IDN+evil.test+authority+sa`.
    pub evil: Authority,
    /// A user of the untrusted root.
    pub mallory: Identity,
    /// A trusted sub-authority `sfa.test:other` (not over `sfa.test`).
    pub other: Authority,
    /// A second slice of the trusted root.
    pub s2: Identity,
    /// Users with defective certificates.
    pub expired: Identity,
    pub not_yet_valid: Identity,
    pub wrong_namespace: Identity,
}

pub fn extra() -> &'static Extra {
    static EXTRA: OnceLock<Extra> = OnceLock::new();
    EXTRA.get_or_init(|| {
        let root = &pki().root;
        let evil = Authority::root("evil.test", "sa").unwrap();
        Extra {
            mallory: evil.user("mallory").unwrap(),
            evil,
            other: root.intermediate("other", "sa").unwrap(),
            s2: root.slice("s2").unwrap(),
            expired: root.defective("old", Defect::Expired).unwrap(),
            not_yet_valid: root.defective("early", Defect::NotYetValid).unwrap(),
            wrong_namespace: root.defective("stranger", Defect::WrongNamespace).unwrap(),
        }
    })
}

pub type Outcome = Result<VerifiedCredential, SfaError>;

/// Verifies `xml` for alice's `createsliver` on s1, now.
pub fn check(xml: &str) -> Outcome {
    let pki = pki();
    check_with(xml, pki.request(&pki.alice))
}

pub fn check_with(xml: &str, request: Request<'_>) -> Outcome {
    sfa::verify(xml.as_bytes(), &pki().trust, &request)
}

/// `xml` with the first `from` replaced by `to` (which must be present).
pub fn swap(xml: &str, from: &str, to: &str) -> String {
    assert!(xml.contains(from), "{from:?} not in the credential");
    xml.replacen(from, to, 1)
}

/// The text from the first `open` up to and including the next `close`.
pub fn span<'a>(xml: &'a str, open: &str, close: &str) -> &'a str {
    let start = xml.find(open).unwrap();
    let end = xml[start..].find(close).unwrap() + start + close.len();
    &xml[start..end]
}

pub fn good() -> String {
    pki().slice_credential()
}

/// The top credential element of an undelegated credential.
pub fn credential_of(xml: &str) -> &str {
    span(xml, "<credential ", "</credential>")
}

/// The only `Signature` element of an undelegated credential.
pub fn signature_of(xml: &str) -> &str {
    span(xml, "<Signature ", "</Signature>")
}

/// A credential on s1 signed by `signer` for `owner`.
pub fn signed_by(
    signer: &Identity,
    owner: &Identity,
    privileges: &[Privilege],
    expires: DateTime<Utc>,
) -> String {
    let pki = pki();
    pki.credential(
        signer,
        owner,
        &pki.slice,
        privileges,
        expires,
        Algorithms::default(),
    )
}

/// `from` delegates `parent` to `to` on `target`.
pub fn delegation(
    parent: &str,
    from: &Identity,
    to: &Identity,
    target: &Identity,
    privileges: &[Privilege],
    expires: DateTime<Utc>,
) -> String {
    let (owner, target) = (to.chain(), target.chain());
    let spec = CredentialSpec {
        owner: &owner,
        target: &target,
        expires,
        privileges,
    };
    sign::delegate(parent, &spec, &from.signing_key(), Algorithms::default()).unwrap()
}

/// Alice's credential delegated to bob (`*`, delegatable, 20 days).
pub fn delegated() -> String {
    let pki = pki();
    pki.delegate(
        &good(),
        &pki.alice,
        &pki.bob,
        &all_delegatable(),
        days(20),
        Algorithms::default(),
    )
}

pub fn as_bob(xml: &str) -> Outcome {
    let pki = pki();
    check_with(xml, pki.request(&pki.bob))
}

/// Alice's credential granting `parent` (name, can_delegate) delegated to
/// bob with `child`.
pub fn delegate_privileges(parent: (&str, bool), child: (&str, bool)) -> Outcome {
    let pki = pki();
    let parent = [Privilege::new(parent.0, parent.1)];
    let root = signed_by(pki.root.identity(), &pki.alice, &parent, days(30));
    let child = [Privilege::new(child.0, child.1)];
    as_bob(&pki.delegate(
        &root,
        &pki.alice,
        &pki.bob,
        &child,
        days(5),
        Algorithms::default(),
    ))
}

pub fn moved_into_extensions() -> Outcome {
    let xml = good();
    let signed = credential_of(&xml);
    let evil = unsigned_copy(signed).replacen(
        "</credential>",
        &format!("<extensions>{signed}</extensions></credential>"),
        1,
    );
    check(&swap(&xml, signed, &evil))
}

pub fn nested_as_parent() -> Outcome {
    let xml = good();
    let signed = credential_of(&xml);
    let evil = unsigned_copy(signed).replacen(
        "</credential>",
        &format!("<parent>{signed}</parent></credential>"),
        1,
    );
    check(&swap(&xml, signed, &evil))
}

/// `credential` under another ID, as an attacker would forge it.
pub fn unsigned_copy(credential: &str) -> String {
    credential.replacen("xml:id=\"ref0\"", "xml:id=\"evil\"", 1)
}

pub fn second_credential() -> Outcome {
    let xml = good();
    let signed = credential_of(&xml);
    check(&swap(
        &xml,
        signed,
        &format!("{}{signed}", unsigned_copy(signed)),
    ))
}

pub fn duplicated_credential() -> Outcome {
    let xml = good();
    let signed = credential_of(&xml);
    check(&swap(&xml, signed, &format!("{signed}{signed}")))
}

pub fn signature_over_other_id() -> Outcome {
    let xml = swap(
        &good(),
        "<signed-credential ",
        "<signed-credential xml:id=\"whole\" ",
    );
    let second = signature_of(&xml)
        .replacen("Sig_ref0", "Sig_whole", 1)
        .replacen("#ref0", "#whole", 1);
    check(&swap(
        &xml,
        "</signatures>",
        &format!("{second}</signatures>"),
    ))
}

pub fn second_signature() -> Outcome {
    let xml = good();
    let second = signature_of(&xml).replacen("Sig_ref0", "Sig_copy", 1);
    check(&swap(
        &xml,
        "</signatures>",
        &format!("{second}</signatures>"),
    ))
}

pub fn signature_inside() -> Outcome {
    let xml = good();
    let signature = signature_of(&xml).to_owned();
    let xml = swap(&xml, &signature, "");
    check(&swap(
        &xml,
        "</credential>",
        &format!("{signature}</credential>"),
    ))
}

pub fn owner_replaced() -> Outcome {
    let xml = good();
    let owner = span(&xml, "<owner_gid>", "</owner_gid>").to_owned();
    check(&swap(
        &xml,
        &owner,
        &format!("<owner_gid>{}</owner_gid>", pki().bob.chain_pem()),
    ))
}

pub fn privilege_removed() -> Outcome {
    let xml = good();
    let privilege = span(&xml, "<privilege>", "</privilege>").to_owned();
    check(&swap(&xml, &privilege, ""))
}

pub fn parent_altered() -> Outcome {
    let mut xml = delegated();
    let parent_expiry = xml.rfind("<expires>20").unwrap();
    xml.replace_range(parent_expiry..parent_expiry + 11, "<expires>21");
    as_bob(&xml)
}

pub fn signature_value_altered() -> Outcome {
    let mut xml = good();
    let start = xml.find("<SignatureValue>").unwrap() + "<SignatureValue>".len();
    let replacement = if &xml[start..start + 4] == "AAAA" {
        "BBBB"
    } else {
        "AAAA"
    };
    xml.replace_range(start..start + 4, replacement);
    check(&xml)
}

pub fn signer_replaced() -> Outcome {
    let xml = good();
    let data = span(&xml, "<X509Data>", "</X509Data>").to_owned();
    let bob = pki().bob.cert().to_pem();
    let der: String = bob.lines().filter(|l| !l.starts_with("-----")).collect();
    check(&swap(
        &xml,
        &data,
        &format!("<X509Data><X509Certificate>{der}</X509Certificate></X509Data>"),
    ))
}

pub fn no_signatures() -> Outcome {
    let xml = good();
    let signatures = span(&xml, "<signatures>", "</signatures>").to_owned();
    check(&swap(&xml, &signatures, ""))
}

pub fn empty_signatures() -> Outcome {
    let xml = good();
    let signature = signature_of(&xml).to_owned();
    check(&swap(&xml, &signature, ""))
}

/// The delegation to bob without the signature with ID `id`.
pub fn without_signature(id: &str) -> Outcome {
    let xml = delegated();
    let open = format!("<Signature xmlns=\"http://www.w3.org/2000/09/xmldsig#\" xml:id=\"{id}\"");
    let signature = span(&xml, &open, "</Signature>").to_owned();
    as_bob(&swap(&xml, &signature, ""))
}

pub fn expired() -> Outcome {
    let pki = pki();
    check(&signed_by(
        pki.root.identity(),
        &pki.alice,
        &all_delegatable(),
        days(-1),
    ))
}

pub fn expired_parent() -> Outcome {
    let pki = pki();
    let parent = signed_by(
        pki.root.identity(),
        &pki.alice,
        &all_delegatable(),
        days(-1),
    );
    as_bob(&pki.delegate(
        &parent,
        &pki.alice,
        &pki.bob,
        &all_delegatable(),
        days(5),
        Algorithms::default(),
    ))
}

/// A good credential owned by `owner`, presented by `owner`.
pub fn owned_by(owner: &Identity) -> Outcome {
    let pki = pki();
    check_with(
        &signed_by(pki.root.identity(), owner, &all_delegatable(), days(5)),
        pki.request(owner),
    )
}

/// Alice's credential signed by `signer` instead of the slice authority.
pub fn root_signed_by(signer: &Identity) -> Outcome {
    check(&signed_by(
        signer,
        &pki().alice,
        &all_delegatable(),
        days(5),
    ))
}

pub fn owner_not_caller() -> Outcome {
    let pki = pki();
    check_with(&good(), pki.request(&pki.bob))
}

pub fn other_slice() -> Outcome {
    let pki = pki();
    check_with(
        &good(),
        Request {
            target: Some(extra().s2.urn()),
            ..pki.request(&pki.alice)
        },
    )
}

pub fn user_credential() -> Outcome {
    let pki = pki();
    let (root, alice) = (pki.root.identity(), &pki.alice);
    check(&pki.credential(
        root,
        alice,
        alice,
        &all_delegatable(),
        days(5),
        Algorithms::default(),
    ))
}

pub fn only_info() -> Outcome {
    let pki = pki();
    check(&signed_by(
        pki.root.identity(),
        &pki.alice,
        &[Privilege::new("info", true)],
        days(5),
    ))
}

pub fn shutdown_with_control() -> Outcome {
    let pki = pki();
    let xml = signed_by(
        pki.root.identity(),
        &pki.alice,
        &[Privilege::new("control", true)],
        days(5),
    );
    check_with(
        &xml,
        Request {
            operation: Some("shutdown"),
            ..pki.request(&pki.alice)
        },
    )
}

pub fn child_outlives_parent() -> Outcome {
    let pki = pki();
    as_bob(&pki.delegate(
        &good(),
        &pki.alice,
        &pki.bob,
        &all_delegatable(),
        days(60),
        Algorithms::default(),
    ))
}

pub fn signed_by_stranger() -> Outcome {
    let pki = pki();
    as_bob(&pki.delegate(
        &good(),
        &pki.carol,
        &pki.bob,
        &all_delegatable(),
        days(5),
        Algorithms::default(),
    ))
}

pub fn target_changed() -> Outcome {
    let pki = pki();
    let xml = delegation(
        &good(),
        &pki.alice,
        &pki.bob,
        &extra().s2,
        &all_delegatable(),
        days(5),
    );
    check_with(
        &xml,
        Request {
            target: Some(extra().s2.urn()),
            ..pki.request(&pki.bob)
        },
    )
}

/// The good credential with a DOCTYPE declaring `declaration` and `reference` used in it.
pub fn entity(declaration: &str, reference: &str) -> Outcome {
    let doctype = format!("<!DOCTYPE s [{declaration}]>\n<signed-credential ");
    let xml = swap(&good(), "<signed-credential ", &doctype);
    check(&swap(&xml, "<serial>", &format!("<serial>{reference}")))
}

pub fn oversized() -> Outcome {
    let padding = format!("<!--{}-->", "x".repeat(1 << 20));
    check(&swap(
        &good(),
        "<signatures>",
        &format!("{padding}<signatures>"),
    ))
}

pub fn too_deep() -> Outcome {
    let deep = format!("{}{}", "<x>".repeat(80), "</x>".repeat(80));
    check(&swap(
        &good(),
        "<signatures>",
        &format!("{deep}<signatures>"),
    ))
}

pub fn renamed_root() -> Outcome {
    let xml = swap(&good(), "<signed-credential ", "<credential-set ");
    check(&swap(&xml, "</signed-credential>", "</credential-set>"))
}
