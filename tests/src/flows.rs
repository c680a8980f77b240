//! Steps of AM API v3 lifecycles shared by the suites: each makes one call
//! with the development slice's credential, asserts what the GENI AM API v3
//! requires of a successful answer and returns what later steps need; and
//! the v2 calls on the development slice ([`V2Slice`]).

use crate::calls::{Envelope, Sliver, call, creds, s, st, strs, users, with_version};
use geni_am::client::Client;
use geni_xmlrpc::Value;
use std::time::{Duration, Instant};

/// An SSH public key the suites install with `geni_users`.
pub const ALICE_KEY: &str =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDy3uYb4Lw3Bk0ZJdGq4VnW4vGmC0cX9r3HbJ3Zk8vAe alice@e2e";
/// How long Status is polled for `geni_ready`.
const READY_TIMEOUT: Duration = Duration::from_secs(60);

/// A v3 client acting with one slice credential.
pub struct Slice<'c> {
    /// The connection.
    pub client: &'c mut Client,
    /// The slice URN.
    pub urn: String,
    /// The slice credential XML.
    pub credential: String,
}

impl Slice<'_> {
    /// Allocate `request` to the slice: every sliver `geni_allocated`.
    pub fn allocate(&mut self, request: &str) -> Envelope {
        let reply = self.try_allocate(request).ok();
        assert_states(&reply.slivers(), "geni_allocated");
        reply
    }

    /// Allocate `request` to the slice, whatever the answer.
    pub fn try_allocate(&mut self, request: &str) -> Envelope {
        call(
            self.client,
            "Allocate",
            vec![
                s(&self.urn),
                creds(&self.credential),
                s(request),
                st(vec![]),
            ],
        )
    }

    /// Provision `urns` with alice's key: every sliver `geni_provisioned`.
    pub fn provision(&mut self, urns: &[&str]) -> Envelope {
        let options = with_version(vec![(
            "geni_users",
            users(crate::aggregate::ALICE, ALICE_KEY),
        )]);
        let reply = call(
            self.client,
            "Provision",
            vec![strs(urns), creds(&self.credential), options],
        )
        .ok();
        assert_states(&reply.slivers(), "geni_provisioned");
        reply
    }

    /// PerformOperationalAction `action` on `urns`.
    pub fn action(&mut self, urns: &[&str], action: &str) -> Envelope {
        call(
            self.client,
            "PerformOperationalAction",
            vec![strs(urns), creds(&self.credential), s(action), st(vec![])],
        )
    }

    /// Status of `urns`.
    pub fn status(&mut self, urns: &[&str]) -> Envelope {
        call(
            self.client,
            "Status",
            vec![strs(urns), creds(&self.credential), st(vec![])],
        )
    }

    /// Describe `urns` (uncompressed).
    pub fn describe(&mut self, urns: &[&str]) -> Envelope {
        call(
            self.client,
            "Describe",
            vec![strs(urns), creds(&self.credential), with_version(vec![])],
        )
    }

    /// Renew `urns` to `expiration`.
    pub fn renew(&mut self, urns: &[&str], expiration: &str) -> Envelope {
        call(
            self.client,
            "Renew",
            vec![
                strs(urns),
                creds(&self.credential),
                s(expiration),
                st(vec![]),
            ],
        )
    }

    /// Delete `urns`: every returned sliver `geni_unallocated`.
    pub fn delete(&mut self, urns: &[&str]) -> Envelope {
        let reply = call(
            self.client,
            "Delete",
            vec![strs(urns), creds(&self.credential), st(vec![])],
        )
        .ok();
        assert_states(&reply.slivers(), "geni_unallocated");
        reply
    }

    /// Polls Status of `urns` until every sliver is `geni_ready` (bounded):
    /// the last Status answer.
    pub fn wait_ready(&mut self, urns: &[&str]) -> Envelope {
        self.wait_operational(urns, "geni_ready")
    }

    /// Polls Status of `urns` until every sliver is in operational state
    /// `state` (bounded), failing at once if one is `geni_failed`: the last
    /// Status answer.
    pub fn wait_operational(&mut self, urns: &[&str], state: &str) -> Envelope {
        let started = Instant::now();
        loop {
            let status = self.status(urns).ok();
            let slivers = status.slivers();
            if !slivers.is_empty() && slivers.iter().all(|s| s.operational == state) {
                return status;
            }
            assert!(
                slivers.iter().all(|s| s.operational != "geni_failed"),
                "a sliver failed: {slivers:?}"
            );
            assert!(
                started.elapsed() < READY_TIMEOUT,
                "not {state} after {READY_TIMEOUT:?}: {slivers:?}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// A v2 client acting on the development slice with its credentials (v2
/// credentials are bare XML strings).
pub struct V2Slice<'c> {
    /// The connection.
    pub client: &'c mut Client,
    /// The credential list.
    pub credentials: Value,
}

impl V2Slice<'_> {
    /// SliverStatus (the envelope, successful or not).
    pub fn status(&mut self) -> Envelope {
        call(
            self.client,
            "SliverStatus",
            vec![
                s(crate::aggregate::DEMO_SLICE),
                self.credentials.clone(),
                st(vec![]),
            ],
        )
    }

    /// RenewSliver to `until`: answered `true`.
    pub fn renew(&mut self, until: &str) {
        let renewed = call(
            self.client,
            "RenewSliver",
            vec![
                s(crate::aggregate::DEMO_SLICE),
                self.credentials.clone(),
                s(until),
                st(vec![]),
            ],
        )
        .ok();
        assert_eq!(renewed.value, Value::Boolean(true), "RenewSliver");
    }

    /// DeleteSliver: answered `true`.
    pub fn delete(&mut self) {
        let deleted = call(
            self.client,
            "DeleteSliver",
            vec![
                s(crate::aggregate::DEMO_SLICE),
                self.credentials.clone(),
                st(vec![]),
            ],
        )
        .ok();
        assert_eq!(deleted.value, Value::Boolean(true), "DeleteSliver");
    }
}

/// Asserts every sliver is in allocation state `state` with a sliver URN
/// of the development authority.
pub fn assert_states(slivers: &[Sliver], state: &str) {
    assert!(!slivers.is_empty(), "no slivers");
    for sliver in slivers {
        assert_eq!(sliver.allocation, state, "{sliver:?}");
        assert!(
            sliver
                .urn
                .starts_with("urn:publicid:IDN+geni-am.test+sliver+"),
            "sliver URN {sliver:?}"
        );
    }
}

/// The URNs of `slivers`, sorted.
pub fn urns(slivers: &[Sliver]) -> Vec<String> {
    let mut urns: Vec<String> = slivers.iter().map(|s| s.urn.clone()).collect();
    urns.sort();
    urns
}
