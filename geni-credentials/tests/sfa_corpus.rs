//! The real credentials of the shared corpus: those whose issuing authority
//! is published in `creds/certs/` verify completely as of a time inside
//! their validity (and are refused as expired today); real OFELIA chains
//! (two and three levels) are refused for the one GENI delegation rule they
//! break; a credential from an authority that is not trusted is refused as
//! such.

mod common;

use chrono::{DateTime, TimeZone, Utc};
use geni_credentials::RefusalKind;
use geni_credentials::TrustStore;
use geni_credentials::Urn;
use geni_credentials::sfa::{self, Request, SfaError};
use geni_credentials::xmldsig::{DSIG_NS, Document, Signature};
use geni_credentials::{GeniCert, parse_chain};

fn credential(name: &str) -> Vec<u8> {
    std::fs::read(common::corpus().join("creds/credentials").join(name)).unwrap()
}

fn cert(name: &str) -> GeniCert {
    let path = common::corpus().join("creds/certs").join(name);
    parse_chain(&std::fs::read(path).unwrap())
        .unwrap()
        .remove(0)
}

fn at(y: i32, m: u32, d: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(y, m, d, 0, 0, 0).unwrap()
}

fn urn(text: &str) -> Urn {
    Urn::parse(text).unwrap()
}

/// A request by `caller` about `target` (no privilege needed) at `when`.
fn request<'a>(caller: &'a Urn, target: &'a Urn, when: DateTime<Utc>) -> Request<'a> {
    Request {
        caller,
        target: Some(target),
        operation: None,
        at: when,
    }
}

fn topdomain_roots() -> TrustStore {
    let mut trust = TrustStore::new();
    trust.add_root(cert("sfa-gids/topdomain.gid"));
    trust
}

#[test]
fn topdomain_authority_credential_verifies_as_of_its_validity() {
    let sa = urn("urn:publicid:IDN+topdomain+authority+sa");
    let xml = credential("ofelia-ocf__topdomain.cred");
    let v = sfa::verify(&xml, &topdomain_roots(), &request(&sa, &sa, at(2013, 7, 1))).unwrap();
    assert!(v.owner.same_as(&sa));
    assert_eq!(
        v.expires,
        at(2013, 7, 11) + chrono::Duration::seconds(8 * 3600 + 47 * 60 + 4)
    );
    assert_eq!(v.chain.len(), 1);
    let now = sfa::verify(&xml, &topdomain_roots(), &request(&sa, &sa, Utc::now()));
    assert_eq!(now.unwrap_err().kind(), RefusalKind::CredentialExpired);
}

#[test]
fn nitos_user_credential_verifies_for_its_user_with_an_intermediate_signer() {
    let caller = cert("sfa-gids/jfed.gid");
    let user = caller.urn().unwrap().clone();
    assert_eq!(user.as_str(), "urn:publicid:IDN+topdomain:nitos+user+pi");
    let xml = credential("ofelia-ocf__topdomain.nitos.pi.user.cred");
    let mut req = request(&user, &user, at(2013, 6, 1));
    req.operation = Some("resolve");
    let v = sfa::verify(&xml, &topdomain_roots(), &req).unwrap();
    assert!(
        v.chain[0].signer.contains("topdomain:nitos+authority+sa"),
        "{}",
        v.chain[0].signer
    );
    let other = urn("urn:publicid:IDN+topdomain:nitos+user+someone");
    let err = sfa::verify(
        &xml,
        &topdomain_roots(),
        &request(&other, &user, at(2013, 6, 1)),
    );
    assert!(matches!(err, Err(SfaError::OwnerNotCaller { .. })));
}

/// The self-signed certificate that signed the root credential of a corpus
/// chain (its authority's certificate is not published separately).
fn embedded_root(xml: &[u8]) -> GeniCert {
    let doc = Document::parse(xml).unwrap();
    let last = doc
        .elements()
        .into_iter()
        .filter(|n| n.is(Some(DSIG_NS), "Signature"))
        .find(|n| {
            n.attribute(Some("http://www.w3.org/XML/1998/namespace"), "id")
                .as_deref()
                == Some("Sig_ref0")
        })
        .unwrap();
    let signature = Signature::parse(last).unwrap();
    GeniCert::from_x509(signature.certificates()[0].clone()).unwrap()
}

/// OFELIA chains authority credentials by nesting the issuer's own
/// credential as `<parent>` although the child names another target; the
/// GENI rule (child target = parent target, gcf `verify_parent`) refuses
/// them after every signature, certificate and expiry check has passed.
#[test]
fn real_ofelia_chains_are_refused_for_changing_the_target() {
    for (file, owner) in [
        (
            "ofelia-ocf__ocf.i2cat.cred",
            "urn:publicid:IDN+ocf:i2cat+authority+sa",
        ),
        (
            "ofelia-ocf__ocf.i2cat.ofam.cred",
            "urn:publicid:IDN+ocf:i2cat:ofam+authority+sa",
        ),
    ] {
        let xml = credential(file);
        let mut trust = TrustStore::new();
        trust.add_root(embedded_root(&xml));
        let owner = urn(owner);
        let err = sfa::verify(&xml, &trust, &request(&owner, &owner, at(2013, 7, 1))).unwrap_err();
        match &err {
            SfaError::Delegation { message, .. } => {
                assert!(message.contains("targets"), "{file}: {err}")
            }
            other => panic!("{file}: unexpected {other}"),
        }
        assert_eq!(err.kind(), RefusalKind::CredentialInvalid);
    }
}

#[test]
fn credential_of_an_untrusted_authority_is_refused_as_untrusted() {
    let trust = TrustStore::from_dir(&common::corpus().join("creds/certs/gcf-test-ca")).unwrap();
    let alice = urn("urn:publicid:IDN+geni:gpo:gcf+user+alice");
    let xml = credential("geni-tools__untrusted-usercred.xml");
    let err = sfa::verify(&xml, &trust, &request(&alice, &alice, at(2015, 1, 1))).unwrap_err();
    assert_eq!(err.kind(), RefusalKind::CredentialSignerUntrusted, "{err}");
}
