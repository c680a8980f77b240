//! A development PKI for the SFA credential tests: one root slice authority
//! (the only trust root), users alice, bob and carol, slice `s1`, and
//! helpers that issue and delegate slice credentials as a clearinghouse and
//! its users would. Each test binary uses a subset of it.

#![allow(dead_code)]

use chrono::{DateTime, Duration, Utc};
use geni_credentials::TrustStore;
use geni_credentials::devca::{Authority, Identity};
use geni_credentials::privilege::Privilege;
use geni_credentials::sfa::Request;
use geni_credentials::sign::{self, Algorithms, CredentialSpec};
use std::sync::OnceLock;

/// The shared test PKI.
pub struct Pki {
    /// The slice authority, `urn:publicid:IDN+sfa.test+authority+sa`.
    pub root: Authority,
    /// The slice owner.
    pub alice: Identity,
    /// A delegatee.
    pub bob: Identity,
    /// A second delegatee.
    pub carol: Identity,
    /// The slice, `urn:publicid:IDN+sfa.test+slice+s1`.
    pub slice: Identity,
    /// Trusts `root` only.
    pub trust: TrustStore,
}

/// The PKI, created once per test binary (key generation is slow).
pub fn pki() -> &'static Pki {
    static PKI: OnceLock<Pki> = OnceLock::new();
    PKI.get_or_init(|| {
        let root = Authority::root("sfa.test", "sa").unwrap();
        let mut trust = TrustStore::new();
        trust.add_root(root.cert().clone());
        Pki {
            alice: root.user("alice").unwrap(),
            bob: root.user("bob").unwrap(),
            carol: root.user("carol").unwrap(),
            slice: root.slice("s1").unwrap(),
            root,
            trust,
        }
    })
}

/// `n` days from now.
pub fn days(n: i64) -> DateTime<Utc> {
    Utc::now() + Duration::days(n)
}

/// The privilege `*`, delegatable.
pub fn all_delegatable() -> Vec<Privilege> {
    vec![Privilege::new("*", true)]
}

impl Pki {
    /// A credential for `owner` on `target`, signed by `signer`.
    pub fn credential(
        &self,
        signer: &Identity,
        owner: &Identity,
        target: &Identity,
        privileges: &[Privilege],
        expires: DateTime<Utc>,
        algorithms: Algorithms,
    ) -> String {
        let (owner, target) = (owner.chain(), target.chain());
        let spec = CredentialSpec {
            owner: &owner,
            target: &target,
            expires,
            privileges,
        };
        sign::issue(&spec, &signer.signing_key(), algorithms).unwrap()
    }

    /// The usual slice credential: the authority gives alice `*` on s1 for 30 days.
    pub fn slice_credential(&self) -> String {
        self.credential(
            self.root.identity(),
            &self.alice,
            &self.slice,
            &all_delegatable(),
            days(30),
            Algorithms::default(),
        )
    }

    /// `from` delegates `parent` (on s1) to `to`.
    pub fn delegate(
        &self,
        parent: &str,
        from: &Identity,
        to: &Identity,
        privileges: &[Privilege],
        expires: DateTime<Utc>,
        algorithms: Algorithms,
    ) -> String {
        let (owner, target) = (to.chain(), self.slice.chain());
        let spec = CredentialSpec {
            owner: &owner,
            target: &target,
            expires,
            privileges,
        };
        sign::delegate(parent, &spec, &from.signing_key(), algorithms).unwrap()
    }

    /// A request by `caller` on s1 needing `createsliver`, now.
    pub fn request<'a>(&'a self, caller: &'a Identity) -> Request<'a> {
        Request {
            caller: caller.urn(),
            target: Some(self.slice.urn()),
            operation: Some("createsliver"),
            at: Utc::now(),
        }
    }
}
