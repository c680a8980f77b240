//! Shared fixtures of the API tests: a development CA (trusted root, user,
//! slices), credentials signed by it, an aggregate on a fresh SQLite store
//! reading the real clock, built from a configuration by the service's
//! composition root, and calls made the way clients make them — an XML-RPC
//! body through the server's request handler, with the configured body
//! limit and the caller's verified chain.
#![allow(dead_code)]

use crate::core_support;
use chrono::{DateTime, TimeDelta, Utc};
use geni_am::api::ApiVersion;
use geni_am::config::Config;
use geni_am::core::Aggregate;
use geni_am::server::{Endpoint, Handler, PeerIdentity, Response};
use geni_am::service;
use geni_am::store::components::{ComponentRow, DiskImageSpec};
use geni_credentials::devca::{Authority, Identity};
use geni_credentials::privilege::Privilege;
use geni_credentials::sign::{self, Algorithms, CredentialSpec};
use geni_credentials::{TrustStore, VerifiedChain};
use geni_xmlrpc::{Value, member};
use std::collections::BTreeMap;
use std::sync::Arc;

/// The corpus request the tests allocate: two nodes, `romeo` and `juliet`.
pub const REQUEST: &str = "rspec/request/ffund-tcpip__two-hosts-one-segment.xml";

/// The text of corpus file `path`.
pub fn corpus_text(path: &str) -> String {
    let file = core_support::corpus().join(path);
    std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()))
}

/// The corpus request [`REQUEST`].
pub fn request() -> String {
    corpus_text(REQUEST)
}

/// The slice authority of the tests.
pub const AUTHORITY: &str = "ch.api.example";

/// The disk image the corpus requests ask for.
pub const CORPUS_IMAGE: &str = "urn:publicid:IDN+emulab.net+image+emulab-ops:UBUNTU18-64-STD";

/// A 4-CPU host of the core fixtures that also offers [`CORPUS_IMAGE`].
fn host(name: &str) -> ComponentRow {
    let mut row = core_support::host(name, 4);
    for kind in &mut row.details.sliver_types {
        kind.disk_images.push(DiskImageSpec {
            name: CORPUS_IMAGE.into(),
            os: Some("Linux".into()),
            version: Some("18.04".into()),
            description: None,
            default: false,
        });
    }
    row
}

/// The world one test runs in.
pub struct World {
    pub handler: Handler,
    pub authority: Authority,
    pub alice: Identity,
    pub trust: Arc<TrustStore>,
    pub aggregate: Aggregate,
    _dir: tempfile::TempDir,
}

/// The configuration of the tests' aggregate: GetVersion advertises
/// `https://am.api.example:8443/am/{3,2}`, the identity is the core
/// fixtures', every other key has its default (the files it names are
/// never read).
pub fn config() -> Config {
    let text = format!(
        r#"
[server]
listen = "127.0.0.1:0"
public_url = "https://am.api.example:8443"
cert = "am-cert.pem"
key = "am-key.pem"
trust_roots = "trusted"

[aggregate]
authority = "{authority}"
urn = "urn:publicid:IDN+{authority}+authority+am"
cm_urn = "{cm}"

[backend]
kind = "sim"
"#,
        authority = core_support::AUTHORITY,
        cm = core_support::CM,
    );
    Config::parse(&text).unwrap()
}

impl World {
    /// A fresh aggregate with two 4-CPU hosts and a CA trusting itself.
    pub fn new() -> World {
        World::with_config(config())
    }

    /// [`World::new`] with the aggregate configured as `config`.
    pub fn with_config(config: Config) -> World {
        let authority = Authority::root(AUTHORITY, "sa").unwrap();
        let alice = authority.user("alice").unwrap();
        let mut trust = TrustStore::new();
        trust.add_root(authority.cert().clone());
        let trust = Arc::new(trust);
        let dir = tempfile::tempdir().unwrap();
        let mut config = config;
        config.store.url = dir.path().join("am.sqlite").to_string_lossy().into_owned();
        config.store.pool_size = 4;
        let store = service::open_store(&config.store).unwrap();
        store
            .sync_components(&[host("h1"), host("h2")], Utc::now())
            .unwrap();
        let aggregate = Aggregate::new(store, service::aggregate_config(&config)).unwrap();
        let handler = service::handler(aggregate.clone(), Arc::clone(&trust), &config.server);
        World {
            handler,
            authority,
            alice,
            trust,
            aggregate,
            _dir: dir,
        }
    }

    /// The URN of slice `name`.
    pub fn slice_urn(&self, name: &str) -> String {
        format!("urn:publicid:IDN+{AUTHORITY}+slice+{name}")
    }

    /// A credential owned by `owner` for `target`, granting `privileges`,
    /// expiring in `lifetime`, signed by the slice authority.
    pub fn credential(
        &self,
        owner: &Identity,
        target: &Identity,
        privileges: &[&str],
        lifetime: TimeDelta,
    ) -> String {
        let privileges: Vec<Privilege> =
            privileges.iter().map(|p| Privilege::new(p, true)).collect();
        let spec = CredentialSpec {
            owner: &owner.chain(),
            target: &target.chain(),
            expires: Utc::now() + lifetime,
            privileges: &privileges,
        };
        sign::issue(
            &spec,
            &self.authority.identity().signing_key(),
            Algorithms::default(),
        )
        .unwrap()
    }

    /// Alice's slice credential for slice `name` (`*`), valid `days` days.
    pub fn slice_credential(&self, name: &str, days: i64) -> String {
        let slice = self.authority.slice(name).unwrap();
        self.credential(&self.alice, &slice, &["*"], TimeDelta::days(days))
    }

    /// Alice's user credential.
    pub fn user_credential(&self) -> String {
        self.credential(
            &self.alice,
            &self.alice,
            &["refresh", "resolve", "info"],
            TimeDelta::days(30),
        )
    }

    /// Alice's verified chain, as the server attaches it.
    pub fn alice_chain(&self) -> VerifiedChain {
        self.trust
            .verify_chain(&self.alice.chain(), Utc::now())
            .unwrap()
    }

    /// Calls `method` on `version` as alice; the decoded answer.
    pub fn call(&self, version: ApiVersion, method: &str, params: Vec<Value>) -> Answer {
        self.call_as(&self.alice_chain(), version, method, params)
    }

    /// Calls `method` on `version` as the client with `chain`.
    pub fn call_as(
        &self,
        chain: &VerifiedChain,
        version: ApiVersion,
        method: &str,
        params: Vec<Value>,
    ) -> Answer {
        let body = geni_xmlrpc::encode_call(method, &params).unwrap();
        self.send(chain, version, body.as_bytes())
    }

    /// Sends a raw body to `version`'s endpoint; the decoded answer,
    /// after checking it came with HTTP 200.
    pub fn send(&self, chain: &VerifiedChain, version: ApiVersion, body: &[u8]) -> Answer {
        let peer = PeerIdentity::Verified(Arc::new(chain.clone()));
        let response = self.post(Endpoint::Api(version), Some(&peer), body);
        assert_eq!(response.status.as_u16(), 200, "{}", response.body);
        Answer(geni_xmlrpc::decode_response(response.body.as_bytes(), usize::MAX).unwrap())
    }

    /// Posts a raw body to `endpoint` on a connection whose caller is
    /// `peer`; the HTTP response, as the server would send it.
    pub fn post(&self, endpoint: Endpoint, peer: Option<&PeerIdentity>, body: &[u8]) -> Response {
        self.handler.answer(endpoint, peer, body)
    }

    /// Calls a v3 method as alice.
    pub fn v3(&self, method: &str, params: Vec<Value>) -> Answer {
        self.call(ApiVersion::V3, method, params)
    }

    /// Calls a v2 method as alice.
    pub fn v2(&self, method: &str, params: Vec<Value>) -> Answer {
        self.call(ApiVersion::V2, method, params)
    }
}

/// A decoded answer: an envelope, or a fault.
#[derive(Debug)]
pub struct Answer(pub geni_xmlrpc::Reply);

impl Answer {
    /// The envelope (panics on a fault).
    pub fn envelope(&self) -> &Value {
        match &self.0 {
            Ok(v) => v,
            Err(f) => panic!("fault {}: {}", f.code(), f.string()),
        }
    }

    /// `code.geni_code`.
    pub fn code(&self) -> i32 {
        match member(self.envelope(), "code").and_then(|c| member(c, "geni_code")) {
            Some(Value::Integer(i)) => *i,
            other => panic!("no int geni_code: {other:?}"),
        }
    }

    /// `output` (always a string).
    pub fn output(&self) -> &str {
        match member(self.envelope(), "output") {
            Some(Value::String(s)) => s,
            other => panic!("output is not a string: {other:?}"),
        }
    }

    /// `value`, after checking the call succeeded.
    pub fn ok(&self) -> &Value {
        assert_eq!(self.code(), 0, "call failed: {}", self.output());
        member(self.envelope(), "value").expect("value")
    }

    /// Asserts the call failed with `code`; returns the output.
    pub fn fails_with(&self, code: i32) -> &str {
        assert_eq!(self.code(), code, "output: {}", self.output());
        self.output()
    }
}

/// A string value.
pub fn s(text: impl Into<String>) -> Value {
    Value::String(text.into())
}

/// A struct value.
pub fn st(members: &[(&str, Value)]) -> Value {
    Value::Struct(
        members
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.clone()))
            .collect::<BTreeMap<_, _>>(),
    )
}

/// An array of strings.
pub fn strings(items: &[&str]) -> Value {
    Value::Array(items.iter().map(|i| s(*i)).collect())
}

/// A credentials array of `geni_sfa` 3 structs.
pub fn creds(xmls: &[&str]) -> Value {
    Value::Array(
        xmls.iter()
            .map(|x| {
                st(&[
                    ("geni_type", s("geni_sfa")),
                    ("geni_version", s("3")),
                    ("geni_value", s(*x)),
                ])
            })
            .collect(),
    )
}

/// `geni_rspec_version` for GENI 3.
pub fn geni3() -> (&'static str, Value) {
    (
        "geni_rspec_version",
        st(&[("type", s("GENI")), ("version", s("3"))]),
    )
}

/// A member of a struct value.
pub fn get<'v>(value: &'v Value, name: &str) -> &'v Value {
    member(value, name).unwrap_or_else(|| panic!("no member {name} in {value:?}"))
}

/// A string member.
pub fn text<'v>(value: &'v Value, name: &str) -> &'v str {
    match get(value, name) {
        Value::String(s) => s,
        other => panic!("{name} is not a string: {other:?}"),
    }
}

/// The items of an array value.
pub fn items(value: &Value) -> &[Value] {
    match value {
        Value::Array(items) => items,
        other => panic!("not an array: {other:?}"),
    }
}

/// A time string as the API emits it.
pub fn time(t: DateTime<Utc>) -> String {
    geni_am::time::format(&t)
}

/// The sliver URNs of an array of sliver-info structs.
pub fn sliver_urns(slivers: &Value) -> Vec<String> {
    items(slivers)
        .iter()
        .map(|s| text(s, "geni_sliver_urn").to_owned())
        .collect()
}
