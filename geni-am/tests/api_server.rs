//! The API behind the real HTTPS server in process: calls made over TLS
//! with a client certificate reach the handlers through the server's
//! request handler (on the blocking pool) and come back as GENI envelopes;
//! an unknown method comes back as an XML-RPC fault.

mod api_support;
mod core_support;

use api_support::*;
use geni_am::client::Client;
use geni_am::config::ServerConfig;
use geni_am::{server, service};
use geni_xmlrpc::{Value, fault_code};
use std::sync::Arc;

#[test]
fn calls_over_tls_reach_the_handlers() {
    let w = World::new();
    let dir = tempfile::tempdir().unwrap();
    w.authority
        .server("am", &["localhost", "127.0.0.1"])
        .unwrap()
        .write_pem(dir.path(), "am")
        .unwrap();
    let trusted = dir.path().join("trusted");
    std::fs::create_dir(&trusted).unwrap();
    std::fs::write(trusted.join("ca.pem"), w.authority.cert().to_pem()).unwrap();
    let config = ServerConfig {
        listen: "127.0.0.1:0".into(),
        public_url: "https://localhost".into(),
        cert: dir.path().join("am-cert.pem"),
        key: dir.path().join("am-key.pem"),
        trust_roots: trusted,
        body_limit: 4 << 20,
        workers: 1,
        call_threads: 8,
        keep_alive_secs: 30,
        shutdown_timeout_secs: 1,
        request_timeout_secs: 30,
        max_connections: 64,
        max_connections_per_client: 16,
    };
    let handler = service::handler(w.aggregate.clone(), Arc::clone(&w.trust), &config);
    let running = server::spawn(&config, Arc::clone(&w.trust), handler).unwrap();
    let (cert, key) = w.alice.write_pem(dir.path(), "alice").unwrap();
    let url = format!("https://localhost:{}/am/3", running.addr.port());
    let mut client = Client::new(&url, &cert, &key, None).unwrap();

    let version = Answer(client.call("GetVersion", &[]).unwrap());
    assert_eq!(get(version.envelope(), "geni_api"), &Value::Integer(3));

    let user = w.user_credential();
    let ad = Answer(
        client
            .call("ListResources", &[creds(&[&user]), st(&[geni3()])])
            .unwrap(),
    );
    let Value::String(ad) = ad.ok() else {
        panic!("ad is not a string")
    };
    assert!(ad.contains("type=\"advertisement\""));

    let refused = Answer(
        client
            .call("ListResources", &[creds(&[&user[1..]]), st(&[geni3()])])
            .unwrap(),
    );
    refused.fails_with(20);

    let fault = client.call("Frobnicate", &[]).unwrap().unwrap_err();
    assert_eq!(fault.code(), fault_code::METHOD_NOT_FOUND);
    running.stop();
}
