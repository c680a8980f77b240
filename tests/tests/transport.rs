//! The transport over the real binary: GetVersion answers over TLS with the
//! development user's certificate on both endpoints, the server certificate
//! verifies against the development CA, and calls without a client
//! certificate or with one from an untrusted authority are refused.

use geni_am::client::{Client, ClientError};
use geni_am_tests::aggregate::Aggregate;
use geni_am_tests::calls::{call, s, st};
use geni_am_tests::creds::Stranger;
use geni_am_tests::database::Store;
use geni_xmlrpc::Value;
use openssl::ssl::{SslConnector, SslMethod};
use std::io::{Read, Write};
use std::net::TcpStream;

#[test]
fn get_version_answers_on_both_endpoints_with_absolute_urls() {
    let aggregate = Aggregate::start(Store::Sqlite);
    for version in [3u8, 2] {
        let mut client = aggregate.client(version);
        let reply = call(&mut client, "GetVersion", vec![]).ok();
        let top = geni_xmlrpc::member(&reply.raw, "geni_api").and_then(geni_xmlrpc::as_int);
        assert_eq!(top, Some(i64::from(version)), "top-level geni_api");
        let inner = geni_xmlrpc::as_int(reply.member("geni_api"));
        assert_eq!(inner, Some(i64::from(version)), "value.geni_api");
        let urls = reply.member("geni_api_versions");
        for v in [2u8, 3] {
            let url = geni_xmlrpc::member(urls, &v.to_string()).and_then(geni_xmlrpc::as_str);
            assert_eq!(url, Some(aggregate.url(v).as_str()), "URL of v{v}");
        }
        // GetVersion with an options struct answers the same.
        let with_options = call(&mut client, "GetVersion", vec![st(vec![("x", s("y"))])]);
        assert_eq!(
            with_options.ok().member("geni_api"),
            &Value::Integer(version.into())
        );
    }
}

#[test]
fn keep_alive_reuses_one_connection_for_many_calls() {
    let aggregate = Aggregate::start(Store::Sqlite);
    let mut client = aggregate.client(3);
    for _ in 0..5 {
        call(&mut client, "GetVersion", vec![]).ok();
    }
    assert_eq!(client.connections(), 1);
}

#[test]
fn an_untrusted_client_certificate_is_refused() {
    let aggregate = Aggregate::start(Store::Sqlite);
    let (cert, key) = Stranger::new().write_user(aggregate.dir());
    let mut client = aggregate.client_as(3, &cert, &key);
    let outcome = client.call("GetVersion", &[]);
    assert!(
        refused(&outcome),
        "untrusted certificate accepted: {outcome:?}"
    );
}

#[test]
fn a_call_without_a_client_certificate_is_refused() {
    let aggregate = Aggregate::start(Store::Sqlite);
    let mut connector = SslConnector::builder(SslMethod::tls_client()).expect("connector");
    connector
        .set_ca_file(aggregate.file("ca-cert.pem"))
        .expect("CA file");
    let tcp = TcpStream::connect(aggregate.url(3)[8..].split('/').next().expect("host:port"))
        .expect("connects");
    let answer = connector
        .build()
        .connect("127.0.0.1", tcp)
        .map_err(|e| e.to_string())
        .and_then(|mut tls| {
            let body = geni_xmlrpc::encode_call("GetVersion", &[]).expect("encoded");
            let head = format!(
                "POST /am/3 HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/xml\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            tls.write_all(head.as_bytes())
                .and_then(|()| tls.write_all(body.as_bytes()))
                .map_err(|e| e.to_string())?;
            let mut reply = String::new();
            tls.read_to_string(&mut reply).map_err(|e| e.to_string())?;
            Ok(reply)
        });
    match answer {
        Err(_) => {}
        Ok(reply) => assert!(
            reply.is_empty() || reply.starts_with("HTTP/1.1 403"),
            "call without certificate answered: {reply}"
        ),
    }
}

#[test]
fn the_server_certificate_does_not_verify_against_another_ca() {
    let aggregate = Aggregate::start(Store::Sqlite);
    let stranger_dir = tempfile::tempdir().expect("temporary directory");
    let stranger = Stranger::new();
    let (stranger_ca, _) = stranger.write_user(stranger_dir.path());
    let mut client = Client::new(
        &aggregate.url(3),
        &aggregate.file("alice-cert.pem"),
        &aggregate.file("alice-key.pem"),
        Some(&stranger_ca),
    )
    .expect("client set-up");
    let outcome = client.call("GetVersion", &[]);
    assert!(
        matches!(outcome, Err(ClientError::Tls(_) | ClientError::Io { .. })),
        "server verified against the wrong CA: {outcome:?}"
    );
}

/// Refused at the TLS handshake, or (when the handshake completes) with
/// HTTP 403 before any XML-RPC is read.
fn refused(outcome: &Result<geni_xmlrpc::Reply, ClientError>) -> bool {
    matches!(
        outcome,
        Err(ClientError::Tls(_) | ClientError::Io { .. } | ClientError::Status { status: 403, .. })
    )
}
