//! SIGHUP (`systemctl reload geni-am`) re-reads the trust roots of a running
//! aggregate: a user of a clearinghouse whose root is added is refused
//! before, and after the reload admitted by TLS and authorised by a
//! credential that clearinghouse signed, with no restart; users of the old
//! roots are still served, and once the root is removed and the roots
//! reloaded again, its users are refused. A roots directory that does not read keeps the
//! old roots in force and says so in the log.

use chrono::{Duration as Days, Utc};
use geni_am::client::{Client, ClientError};
use geni_am_tests::aggregate::Aggregate;
use geni_am_tests::calls::{call, creds, with_version};
use geni_am_tests::database::Store;
use geni_credentials::devca::{Authority, Identity};
use geni_credentials::privilege::Privilege;
use geni_credentials::sign::{Algorithms, CredentialSpec, issue};
use std::process::Command;
use std::time::{Duration, Instant};

/// A clearinghouse the aggregate does not trust yet, and its user bob.
struct Partner {
    ca: Authority,
    bob: Identity,
}

impl Partner {
    fn new() -> Partner {
        let ca = Authority::root("partner.test", "sa").expect("partner root");
        let bob = ca.user("bob").expect("bob");
        Partner { ca, bob }
    }

    /// Adds the partner's root certificate to the aggregate's roots directory.
    fn trust_in(&self, aggregate: &Aggregate) {
        std::fs::write(
            aggregate.file("trusted/partner.pem"),
            self.ca.identity().chain_pem(),
        )
        .expect("root written");
    }

    /// A client of the aggregate presenting bob's certificate.
    fn client(&self, aggregate: &Aggregate) -> Client {
        let (cert, key) = self
            .bob
            .write_pem(aggregate.dir(), "bob")
            .expect("bob written");
        aggregate.client_as(3, &cert, &key)
    }

    /// Bob's user credential, signed by the partner.
    fn user_credential(&self) -> String {
        let spec = CredentialSpec {
            owner: &self.bob.chain(),
            target: &self.bob.chain(),
            expires: Utc::now() + Days::days(1),
            privileges: &[Privilege::new("*", true)],
        };
        issue(
            &spec,
            &self.ca.identity().signing_key(),
            Algorithms::default(),
        )
        .expect("credential signed")
    }
}

fn refused(outcome: &Result<geni_xmlrpc::Reply, ClientError>) -> bool {
    matches!(
        outcome,
        Err(ClientError::Tls(_) | ClientError::Io { .. } | ClientError::Status { status: 403, .. })
    )
}

/// Sends SIGHUP and waits until the log has one more line containing `mark`.
fn reload(aggregate: &Aggregate, mark: &str) {
    let seen = aggregate.log().matches(mark).count();
    let status = Command::new("kill")
        .args(["-HUP", &aggregate.pid().to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success(), "kill -HUP failed");
    let started = Instant::now();
    while aggregate.log().matches(mark).count() == seen {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "no {mark:?} in the log after SIGHUP:\n{}",
            aggregate.log()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn sighup_with_a_new_root_admits_its_users_and_their_credentials_without_a_restart() {
    let aggregate = Aggregate::start(Store::Sqlite);
    let partner = Partner::new();
    let before = partner.client(&aggregate).call("GetVersion", &[]);
    assert!(refused(&before), "bob accepted before his root: {before:?}");

    partner.trust_in(&aggregate);
    let pid = aggregate.pid();
    reload(&aggregate, "trust roots reloaded");
    assert_eq!(aggregate.pid(), pid);

    let mut bob = partner.client(&aggregate);
    call(&mut bob, "GetVersion", vec![]).ok();
    let listed = call(
        &mut bob,
        "ListResources",
        vec![creds(&partner.user_credential()), with_version(vec![])],
    );
    assert_eq!(
        listed.code, 0,
        "bob's credential refused: {}",
        listed.output
    );
    // The roots already there still admit alice.
    call(&mut aggregate.client(3), "GetVersion", vec![]).ok();

    // Removed again, the partner's users are refused on new connections.
    std::fs::remove_file(aggregate.file("trusted/partner.pem")).expect("root removed");
    reload(&aggregate, "trust roots reloaded");
    let after = partner.client(&aggregate).call("GetVersion", &[]);
    assert!(
        refused(&after),
        "bob accepted after his root was removed: {after:?}"
    );
}

#[test]
fn a_roots_directory_that_does_not_read_on_sighup_keeps_the_old_roots() {
    let aggregate = Aggregate::start(Store::Sqlite);
    let partner = Partner::new();
    // A new root beside a malformed one: the directory does not read, so
    // neither is taken.
    partner.trust_in(&aggregate);
    std::fs::write(
        aggregate.file("trusted/broken.pem"),
        "-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n",
    )
    .expect("broken root written");
    reload(&aggregate, "trust roots not reloaded");
    assert!(
        aggregate.log().contains("broken.pem"),
        "the error names the file:\n{}",
        aggregate.log()
    );
    call(&mut aggregate.client(3), "GetVersion", vec![]).ok();
    let bob = partner.client(&aggregate).call("GetVersion", &[]);
    assert!(
        refused(&bob),
        "bob accepted from a broken directory: {bob:?}"
    );

    // Fixed, it reloads.
    std::fs::remove_file(aggregate.file("trusted/broken.pem")).expect("removed");
    reload(&aggregate, "trust roots reloaded");
    call(&mut partner.client(&aggregate), "GetVersion", vec![]).ok();
}
