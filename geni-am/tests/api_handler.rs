//! The request handler the server's routes run, driven directly: a client
//! certificate that did not verify is refused with 403 and its reason, a
//! body over the configured limit with 413, and `/` answers GetVersion
//! only — the same responses the HTTPS server sends; small GetVersion
//! calls are answered from memory, as the pool would answer them, while
//! the drain state read is fresh.

mod api_support;
mod core_support;

use api_support::*;
use geni_am::api::ApiVersion;
use geni_am::server::{Content, Endpoint, PeerIdentity};
use geni_xmlrpc::{Value, fault_code};
use std::sync::Arc;

fn get_version() -> String {
    geni_xmlrpc::encode_call("GetVersion", &[]).unwrap()
}

#[test]
fn a_refused_client_certificate_is_answered_403_with_its_reason() {
    let w = World::new();
    let refused = PeerIdentity::Refused("the certificate expired".into());
    let body = get_version();
    let r = w.post(
        Endpoint::Api(ApiVersion::V3),
        Some(&refused),
        body.as_bytes(),
    );
    assert_eq!(r.status.as_u16(), 403);
    assert_eq!(r.content, Content::Text);
    assert_eq!(r.body, "the certificate expired\n");
    assert!(!r.close);

    let none = w.post(Endpoint::Api(ApiVersion::V2), None, body.as_bytes());
    assert_eq!(none.status.as_u16(), 403);
    assert_eq!(none.body, "no client certificate was presented\n");
}

#[test]
fn a_body_over_the_configured_limit_is_answered_413() {
    let mut config = api_support::config();
    config.server.body_limit = 64;
    let w = World::with_config(config);
    let alice = PeerIdentity::Verified(Arc::new(w.alice_chain()));
    let big = geni_xmlrpc::encode_call("GetVersion", &[s("x".repeat(64))]).unwrap();
    let r = w.post(Endpoint::Api(ApiVersion::V3), Some(&alice), big.as_bytes());
    assert_eq!(r.status.as_u16(), 413);
    assert_eq!(r.content, Content::Xml);
    assert!(r.close);
    let fault = geni_xmlrpc::decode_response(r.body.as_bytes(), usize::MAX)
        .unwrap()
        .unwrap_err();
    assert_eq!(fault.code(), fault_code::TRANSPORT_ERROR);
    assert!(fault.string().contains("64 bytes"), "{}", fault.string());
}

#[test]
fn the_root_answers_get_version_as_v3_and_nothing_else() {
    let w = World::new();
    let alice = PeerIdentity::Verified(Arc::new(w.alice_chain()));
    let r = w.post(Endpoint::Root, Some(&alice), get_version().as_bytes());
    assert_eq!(r.status.as_u16(), 200);
    let answer = Answer(geni_xmlrpc::decode_response(r.body.as_bytes(), usize::MAX).unwrap());
    assert_eq!(get(answer.envelope(), "geni_api"), &Value::Integer(3));

    let list = geni_xmlrpc::encode_call("ListResources", &[]).unwrap();
    let r = w.post(Endpoint::Root, Some(&alice), list.as_bytes());
    assert_eq!(r.status.as_u16(), 200);
    let fault = Answer(geni_xmlrpc::decode_response(r.body.as_bytes(), usize::MAX).unwrap());
    let fault = fault.0.unwrap_err();
    assert_eq!(fault.code(), fault_code::METHOD_NOT_FOUND);
    assert!(fault.string().contains("/am/3"), "{}", fault.string());
}

#[test]
fn get_version_is_answered_from_memory_while_the_drain_state_read_is_fresh() {
    let w = World::new();
    let alice = PeerIdentity::Verified(Arc::new(w.alice_chain()));
    let body = get_version();
    let at_once = |endpoint| {
        w.handler
            .answer_from_memory(endpoint, Some(&alice), body.as_bytes())
    };
    let v3 = Endpoint::Api(ApiVersion::V3);
    assert_eq!(at_once(v3), None, "the drain state was never read");

    let pooled = w.post(v3, Some(&alice), body.as_bytes());
    assert_eq!(at_once(v3), Some(pooled.clone()));
    for endpoint in [Endpoint::Api(ApiVersion::V2), Endpoint::Root] {
        let pooled = w.post(endpoint, Some(&alice), body.as_bytes());
        assert_eq!(at_once(endpoint), Some(pooled), "{endpoint:?}");
    }

    w.aggregate.set_draining("ops", true, "").unwrap();
    assert_eq!(at_once(v3), None, "a drain of this process is read again");
    let drained = w.post(v3, Some(&alice), body.as_bytes());
    let from_memory = at_once(v3).expect("read again by the pooled call");
    assert_eq!(from_memory, drained);
    let answer =
        Answer(geni_xmlrpc::decode_response(from_memory.body.as_bytes(), usize::MAX).unwrap());
    assert_eq!(get(answer.ok(), "geni_am_draining"), &Value::Boolean(true));

    std::thread::sleep(std::time::Duration::from_millis(1100));
    assert_eq!(
        at_once(v3),
        None,
        "a state read over a second ago is read again"
    );
}

#[test]
fn only_small_get_version_calls_of_a_verified_caller_are_answered_from_memory() {
    let w = World::new();
    let alice = PeerIdentity::Verified(Arc::new(w.alice_chain()));
    let v3 = Endpoint::Api(ApiVersion::V3);
    w.post(v3, Some(&alice), get_version().as_bytes());
    let at_once = |endpoint, peer: Option<&PeerIdentity>, body: &str| {
        w.handler
            .answer_from_memory(endpoint, peer, body.as_bytes())
    };
    assert!(at_once(v3, Some(&alice), &get_version()).is_some());

    let list = geni_xmlrpc::encode_call("ListResources", &[]).unwrap();
    assert_eq!(at_once(v3, Some(&alice), &list), None);
    assert_eq!(at_once(Endpoint::Root, Some(&alice), &list), None);
    let naming = geni_xmlrpc::encode_call("ListResources", &[s("GetVersion")]).unwrap();
    assert_eq!(
        at_once(v3, Some(&alice), &naming),
        None,
        "only the method counts"
    );
    let padded = geni_xmlrpc::encode_call("GetVersion", &[s("x".repeat(5000))]).unwrap();
    assert_eq!(at_once(v3, Some(&alice), &padded), None, "over 4 KiB");
    assert_eq!(
        w.post(v3, Some(&alice), padded.as_bytes()).status.as_u16(),
        200
    );
    let refused = PeerIdentity::Refused("the certificate expired".into());
    assert_eq!(at_once(v3, Some(&refused), &get_version()), None);
    assert_eq!(at_once(v3, None, &get_version()), None);
    assert_eq!(
        at_once(v3, Some(&alice), "<methodCall><methodName>GetVersion"),
        None
    );
}
