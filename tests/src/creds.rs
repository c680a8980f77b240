//! Credentials and identities for the suites, made with the development
//! authority a test aggregate trusts (more slices, other expiries) or with
//! an authority it does not trust.

use chrono::{DateTime, Duration, Utc};
use geni_credentials::devca::{Authority, Identity};
use geni_credentials::privilege::Privilege;
use geni_credentials::sign::{Algorithms, CredentialSpec, issue, speaks_for};
use std::path::{Path, PathBuf};

/// The development authority of an aggregate directory and its user alice.
pub struct DevAuthority {
    ca: Authority,
    alice: Identity,
}

impl DevAuthority {
    /// Reads the CA and alice's identity `geni-am dev init` wrote into `dir`.
    pub fn open(dir: &Path) -> DevAuthority {
        let ca = Identity::read_pem(&dir.join("ca-cert.pem"), &dir.join("ca-key.pem"))
            .expect("dev CA readable");
        let alice = Identity::read_pem(&dir.join("alice-cert.pem"), &dir.join("alice-key.pem"))
            .expect("alice readable");
        DevAuthority {
            ca: Authority::from(ca),
            alice,
        }
    }

    /// A slice `name` of this authority: its URN and a credential for
    /// alice over it with every privilege, expiring at `expires`.
    pub fn slice_credential(&self, name: &str, expires: DateTime<Utc>) -> (String, String) {
        let slice = self.ca.slice(name).expect("slice certificate");
        let xml = sign(&self.ca, &self.alice, &slice.chain(), expires);
        (slice.urn().to_string(), xml)
    }

    /// Writes into `dir` (as `<stem>-cert.pem`, `<stem>-key.pem`) a tool
    /// certificate of this authority, and returns the paths with alice's
    /// speaks-for statement letting the tool speak for her for a day.
    pub fn speaking_tool(&self, dir: &Path, stem: &str) -> (PathBuf, PathBuf, String) {
        let tool = self.ca.tool(stem).expect("tool certificate");
        let (cert, key) = tool.write_pem(dir, stem).expect("tool written");
        let statement = speaks_for(
            &self.alice.signing_key(),
            tool.cert(),
            Utc::now() + Duration::days(1),
            Algorithms::default(),
        )
        .expect("speaks-for statement signed");
        (cert, key, statement)
    }

    /// Writes into `dir` a user certificate of this authority valid only
    /// between `not_before` and `not_after`; its certificate and key paths.
    pub fn user_valid(
        &self,
        dir: &Path,
        name: &str,
        not_before: DateTime<Utc>,
        not_after: DateTime<Utc>,
    ) -> (PathBuf, PathBuf) {
        let spec = self
            .ca
            .spec_for("user", name)
            .expect("user spec")
            .valid(not_before, not_after);
        self.ca
            .issue(spec)
            .expect("user certificate")
            .write_pem(dir, name)
            .expect("user written")
    }

    /// Writes the certificate chain and key of another user `name` of
    /// this authority (trusted like alice) into `dir`; their paths.
    pub fn write_user(&self, name: &str, dir: &Path) -> (PathBuf, PathBuf) {
        self.ca
            .user(name)
            .expect("user certificate")
            .write_pem(dir, name)
            .expect("user written")
    }

    /// Alice's user credential (over herself), valid for a week.
    pub fn user_credential(&self) -> String {
        sign(
            &self.ca,
            &self.alice,
            &self.alice.chain(),
            Utc::now() + Duration::days(7),
        )
    }
}

/// An authority no test aggregate trusts, with a user of its own.
pub struct Stranger {
    ca: Authority,
    user: Identity,
}

impl Stranger {
    /// A fresh untrusted root `untrusted.test` and its user `mallory`.
    pub fn new() -> Stranger {
        let ca = Authority::root("untrusted.test", "sa").expect("untrusted root");
        let user = ca.user("mallory").expect("untrusted user");
        Stranger { ca, user }
    }

    /// Writes mallory's certificate chain and key into `dir`; their paths.
    pub fn write_user(&self, dir: &Path) -> (PathBuf, PathBuf) {
        self.user
            .write_pem(dir, "mallory")
            .expect("mallory written")
    }

    /// A credential over `slice_urn`'s slice `name` for alice (`owner`),
    /// signed by this untrusted authority.
    pub fn credential_for(&self, owner: &DevAuthority, name: &str) -> String {
        let slice = self.ca.slice(name).expect("untrusted slice");
        sign(
            &self.ca,
            &owner.alice,
            &slice.chain(),
            Utc::now() + Duration::days(7),
        )
    }
}

impl Default for Stranger {
    fn default() -> Self {
        Stranger::new()
    }
}

/// A credential for `owner` over `target` with every privilege, signed by `ca`.
fn sign(
    ca: &Authority,
    owner: &Identity,
    target: &[geni_credentials::GeniCert],
    expires: DateTime<Utc>,
) -> String {
    let spec = CredentialSpec {
        owner: &owner.chain(),
        target,
        expires,
        privileges: &[Privilege::new("*", true)],
    };
    issue(&spec, &ca.identity().signing_key(), Algorithms::default()).expect("credential signed")
}
