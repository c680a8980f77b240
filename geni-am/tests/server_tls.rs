//! The HTTPS server in process, with a stub dispatcher that echoes the
//! verified caller: client certificates are required and must chain to
//! the trust roots (intermediates sent by the client accepted, GENI
//! namespace rule applied, legacy SHA-1/1024-bit accepted), the verified
//! chain reaches the dispatcher (at once, for a small GetVersion it answers
//! from memory), and the HTTP surface (routes, body limit,
//! faults readable by XML-RPC clients, keep-alive) behaves. The server
//! key may be RSA or ECDSA P-256, the server sends its chain without the
//! root, sessions resume (TLS 1.2 and 1.3, a TLS 1.3 ticket once) with the caller still known, and
//! server and client read each other's flights at once (read-ahead).

use geni_am::api::ApiVersion;
use geni_am::client::{Client, ClientError};
use geni_am::config::{ServerConfig, TlsIdentity};
use geni_am::server::{self, Dispatch, Handler, RunningServer};
use geni_credentials::devca::{Authority, Defect, Identity, KeyType};
use geni_credentials::{TrustStore, VerifiedChain};
use geni_xmlrpc::{Call, Fault, Reply, Value, as_str, fault_code, member};
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Answers `Echo` with the API version, the caller URN and the chain
/// length, and GetVersion saying where it was answered.
struct Echo;

impl Dispatch for Echo {
    fn dispatch(&self, version: ApiVersion, caller: &VerifiedChain, call: &Call) -> Reply {
        match call.method.as_str() {
            "Echo" => Ok(Value::Struct(BTreeMap::from([
                ("api".to_owned(), Value::Integer(version.number() as i32)),
                (
                    "caller".to_owned(),
                    Value::String(caller.leaf_urn().unwrap().to_string()),
                ),
                (
                    "chain".to_owned(),
                    Value::Integer(caller.certificates().len() as i32),
                ),
                ("params".to_owned(), Value::Array(call.params.clone())),
            ]))),
            "GetVersion" => Ok(Value::String("answered on the pool".into())),
            other => Err(Fault::new(
                fault_code::METHOD_NOT_FOUND,
                format!("no {other}"),
            )),
        }
    }

    /// A GetVersion whose first parameter is "memory" is answered here.
    fn answer_from_memory(&self, _version: ApiVersion, call: &Call) -> Option<Reply> {
        (call.method == "GetVersion" && call.params.first().and_then(as_str) == Some("memory"))
            .then(|| Ok(Value::String("answered from memory".into())))
    }
}

/// A server with its PKI: the root CA (trusted), an untrusted CA, files in `dir`.
struct Setup {
    dir: tempfile::TempDir,
    root: Authority,
    server: RunningServer,
}

impl Setup {
    fn new(body_limit: usize) -> Setup {
        Setup::with_server_key(body_limit, KeyType::Rsa)
    }

    fn with_server_key(body_limit: usize, key: KeyType) -> Setup {
        Setup::with_server(body_limit, |root| {
            root.server_with_key("am", &["localhost", "127.0.0.1"], key)
                .unwrap()
        })
    }

    /// A server whose certificate `issue` makes with the root CA.
    fn with_server(body_limit: usize, issue: impl FnOnce(&Authority) -> Identity) -> Setup {
        let dir = tempfile::tempdir().unwrap();
        let root = Authority::root("geni-am.test", "sa").unwrap();
        issue(&root).write_pem(dir.path(), "am").unwrap();
        std::fs::create_dir(dir.path().join("trusted")).unwrap();
        std::fs::write(dir.path().join("trusted/ca.pem"), root.cert().to_pem()).unwrap();
        std::fs::write(dir.path().join("ca.pem"), root.cert().to_pem()).unwrap();
        let config = ServerConfig {
            listen: "127.0.0.1:0".into(),
            public_url: "https://localhost".into(),
            cert: dir.path().join("am-cert.pem"),
            key: dir.path().join("am-key.pem"),
            trust_roots: dir.path().join("trusted"),
            body_limit,
            workers: 1,
            call_threads: 8,
            keep_alive_secs: 30,
            shutdown_timeout_secs: 1,
            request_timeout_secs: 30,
            max_connections: 64,
            max_connections_per_client: 16,
        };
        let trust = Arc::new(TrustStore::from_dir(&config.trust_roots).unwrap());
        let handler = Handler::new(Arc::new(Echo), config.body_limit);
        let server = server::spawn(&config, trust, handler).unwrap();
        Setup { dir, root, server }
    }

    fn url(&self, version: u32) -> String {
        format!("https://localhost:{}/am/{version}", self.server.addr.port())
    }

    /// Writes an identity's chain and key and returns their paths.
    fn files(&self, identity: &Identity, stem: &str) -> (PathBuf, PathBuf) {
        identity.write_pem(self.dir.path(), stem).unwrap()
    }

    fn client(&self, identity: &Identity, stem: &str, version: u32) -> Client {
        let (cert, key) = self.files(identity, stem);
        let ca = self.dir.path().join("ca.pem");
        Client::new(&self.url(version), &cert, &key, Some(ca.as_path())).unwrap()
    }
}

fn echo(client: &mut Client) -> Result<Value, ClientError> {
    Ok(client
        .call("Echo", &[Value::String("hello".into())])?
        .expect("Echo is answered"))
}

#[test]
fn a_trusted_client_reaches_the_dispatcher_with_its_verified_chain() {
    let setup = Setup::new(1 << 20);
    let alice = setup.root.user("alice").unwrap();
    for version in [3, 2] {
        let mut client = setup.client(&alice, "alice", version);
        let value = echo(&mut client).unwrap();
        assert_eq!(member(&value, "api"), Some(&Value::Integer(version as i32)));
        assert_eq!(
            member(&value, "caller").and_then(as_str),
            Some("urn:publicid:IDN+geni-am.test+user+alice")
        );
        assert_eq!(member(&value, "chain"), Some(&Value::Integer(2)));
        assert_eq!(
            member(&value, "params"),
            Some(&Value::Array(vec![Value::String("hello".into())]))
        );
    }
}

#[test]
fn an_ecdsa_p256_or_rsa_server_key_handshakes_with_the_test_client() {
    for key in [KeyType::EcdsaP256, KeyType::Rsa] {
        let setup = Setup::with_server_key(1 << 20, key);
        let alice = setup.root.user("alice").unwrap();
        let value = echo(&mut setup.client(&alice, "alice", 3)).unwrap();
        assert_eq!(
            member(&value, "caller").and_then(as_str),
            Some("urn:publicid:IDN+geni-am.test+user+alice"),
            "{key:?}"
        );
    }
}

/// An OpenSSL client of `setup` with the chain in `cert`, speaking only `version`.
fn openssl_client(
    setup: &Setup,
    (cert, key): (&Path, &Path),
    version: openssl::ssl::SslVersion,
) -> openssl::ssl::SslConnector {
    use openssl::ssl::{SslConnector, SslFiletype, SslMethod};
    let mut builder = SslConnector::builder(SslMethod::tls_client()).unwrap();
    builder.set_certificate_chain_file(cert).unwrap();
    builder.set_private_key_file(key, SslFiletype::PEM).unwrap();
    builder
        .set_ca_file(setup.dir.path().join("ca.pem"))
        .unwrap();
    builder.set_min_proto_version(Some(version)).unwrap();
    builder.set_max_proto_version(Some(version)).unwrap();
    builder.build()
}

/// How many certificates the server of `setup` sends in a handshake
/// that the client verifies against the root CA.
fn server_chain_sent(setup: &Setup) -> usize {
    use openssl::ssl::SslVersion;
    let alice = setup.root.user("alice").unwrap();
    let (cert, key) = setup.files(&alice, "alice");
    let client = openssl_client(setup, (&cert, &key), SslVersion::TLS1_3);
    let tcp = TcpStream::connect(setup.server.addr).unwrap();
    let tls = client.connect("localhost", tcp).unwrap();
    tls.ssl().peer_cert_chain().map_or(0, |chain| chain.len())
}

#[test]
fn the_server_sends_its_intermediates_but_not_the_root_its_clients_hold() {
    assert_eq!(server_chain_sent(&Setup::new(1 << 20)), 1);
    let via_intermediate = Setup::with_server(1 << 20, |root| {
        let servers = root.intermediate("servers", "servers").unwrap();
        servers.server("am", &["localhost", "127.0.0.1"]).unwrap()
    });
    assert_eq!(server_chain_sent(&via_intermediate), 2);
}

/// One `Echo` over a new connection of `client`, offering `session` for
/// resumption: the HTTP answer, whether the session was resumed, and the
/// session to offer next time.
fn echo_with_session(
    setup: &Setup,
    client: &openssl::ssl::SslConnector,
    session: Option<&openssl::ssl::SslSessionRef>,
) -> (String, bool, openssl::ssl::SslSession) {
    use std::io::{Read, Write};
    let mut ssl = client.configure().unwrap().into_ssl("localhost").unwrap();
    if let Some(session) = session {
        // SAFETY: the session came from a connection of the same client
        // context to the same server.
        unsafe { ssl.set_session(session).unwrap() };
    }
    let tcp = TcpStream::connect(setup.server.addr).unwrap();
    let mut tls = openssl::ssl::SslStream::new(ssl, tcp).unwrap();
    tls.connect().unwrap();
    let body = "<methodCall><methodName>Echo</methodName><params/></methodCall>";
    let request = format!(
        "POST /am/3 HTTP/1.1\r\nHost: localhost\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    tls.write_all(request.as_bytes()).unwrap();
    let mut answer = Vec::new();
    tls.read_to_end(&mut answer).unwrap();
    let _ = tls.shutdown();
    let reused = tls.ssl().session_reused();
    let next = tls.ssl().session().unwrap().to_owned();
    (String::from_utf8_lossy(&answer).into_owned(), reused, next)
}

#[test]
fn a_resumed_session_is_still_authorised_as_the_same_caller_and_a_tls13_ticket_resumes_once() {
    use openssl::ssl::SslVersion;
    let setup = Setup::with_server_key(1 << 20, KeyType::EcdsaP256);
    let alice = setup.root.user("alice").unwrap();
    let bob = setup
        .root
        .intermediate("ma", "ma")
        .unwrap()
        .user("bob")
        .unwrap();
    for version in [SslVersion::TLS1_2, SslVersion::TLS1_3] {
        for (identity, stem, urn) in [
            (&alice, "alice", "urn:publicid:IDN+geni-am.test+user+alice"),
            (&bob, "bob", "urn:publicid:IDN+geni-am.test:ma+user+bob"),
        ] {
            let (cert, key) = setup.files(identity, stem);
            let client = openssl_client(&setup, (&cert, &key), version);
            let (first, reused, session) = echo_with_session(&setup, &client, None);
            assert!(!reused);
            assert!(first.contains(urn), "{first}");
            let (again, reused, _) = echo_with_session(&setup, &client, Some(&session));
            assert!(reused, "{version:?} {stem}: the session was not resumed");
            assert!(again.starts_with("HTTP/1.1 200"), "{again}");
            assert!(again.contains(urn), "{version:?} {stem}: {again}");
            // A TLS 1.3 ticket resumes once (RFC 8446, 8.1); a TLS 1.2
            // session id as often as the client offers it.
            let (third, reused, _) = echo_with_session(&setup, &client, Some(&session));
            assert_eq!(reused, version == SslVersion::TLS1_2, "{version:?} {stem}");
            assert!(third.contains(urn), "{version:?} {stem}: {third}");
        }
    }
}

#[test]
fn an_intermediate_sent_in_the_handshake_completes_the_chain() {
    let setup = Setup::new(1 << 20);
    let ma = setup.root.intermediate("ma", "ma").unwrap();
    let bob = ma.user("bob").unwrap();
    let value = echo(&mut setup.client(&bob, "bob", 3)).unwrap();
    assert_eq!(
        member(&value, "caller").and_then(as_str),
        Some("urn:publicid:IDN+geni-am.test:ma+user+bob")
    );
    assert_eq!(member(&value, "chain"), Some(&Value::Integer(3)));
}

#[test]
fn a_legacy_sha1_1024_bit_certificate_from_a_trusted_root_is_accepted() {
    let setup = Setup::new(1 << 20);
    let old = setup.root.defective("oldtimer", Defect::Legacy).unwrap();
    let value = echo(&mut setup.client(&old, "old", 3)).unwrap();
    assert_eq!(
        member(&value, "caller").and_then(as_str),
        Some("urn:publicid:IDN+geni-am.test+user+oldtimer")
    );
}

#[test]
fn a_certificate_from_an_untrusted_ca_fails_the_handshake() {
    let setup = Setup::new(1 << 20);
    let stranger = Authority::root("elsewhere.test", "sa").unwrap();
    let mallory = stranger.user("mallory").unwrap();
    let error = echo(&mut setup.client(&mallory, "mallory", 3)).unwrap_err();
    assert!(
        matches!(error, ClientError::Tls(_) | ClientError::Io { .. }),
        "{error}"
    );
}

#[test]
fn a_certificate_outside_its_issuers_namespace_is_refused_with_the_reason() {
    let setup = Setup::new(1 << 20);
    let outsider = setup.root.defective("eve", Defect::WrongNamespace).unwrap();
    let error = echo(&mut setup.client(&outsider, "eve", 3)).unwrap_err();
    let ClientError::Status { status, body } = error else {
        panic!("expected a 403, got {error}");
    };
    assert_eq!(status, 403);
    assert!(body.contains("not an authority for"), "{body}");
}

/// Connects with OpenSSL directly, presenting no certificate, and sends a call.
fn call_without_certificate(addr: std::net::SocketAddr) -> Result<String, String> {
    use openssl::ssl::{SslConnector, SslMethod, SslVerifyMode};
    use std::io::{Read, Write};
    let mut builder = SslConnector::builder(SslMethod::tls_client()).unwrap();
    builder.set_verify(SslVerifyMode::NONE);
    let tcp = TcpStream::connect(addr).unwrap();
    let mut tls = builder
        .build()
        .connect("localhost", tcp)
        .map_err(|e| e.to_string())?;
    let body = "<methodCall><methodName>Echo</methodName></methodCall>";
    let request = format!(
        "POST /am/3 HTTP/1.1\r\nHost: localhost\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    tls.write_all(request.as_bytes())
        .map_err(|e| e.to_string())?;
    let mut answer = String::new();
    tls.read_to_string(&mut answer).map_err(|e| e.to_string())?;
    Ok(answer)
}

#[test]
fn a_client_without_a_certificate_gets_no_answer() {
    let setup = Setup::new(1 << 20);
    let outcome = call_without_certificate(setup.server.addr);
    assert!(
        outcome.as_ref().is_err() || outcome.as_ref().is_ok_and(|a| a.is_empty()),
        "{outcome:?}"
    );
}

#[test]
fn routes_body_limit_faults_and_keep_alive() {
    let setup = Setup::new(4096);
    let alice = setup.root.user("alice").unwrap();
    let mut client = setup.client(&alice, "alice", 3);
    for (method, path, status) in [("GET", "/am/3", 405), ("POST", "/am/1", 404)] {
        let refused = client.send(method, path, b"x").unwrap();
        assert_eq!(refused.status, status, "{method} {path}");
        let fault = geni_xmlrpc::decode_response(&refused.body, 1 << 20)
            .unwrap()
            .unwrap_err();
        assert!(fault.string().contains("/am/3"), "{}", fault.string());
    }
    let big = vec![b' '; 5000];
    assert_eq!(client.send("POST", "/am/3", &big).unwrap().status, 413);

    let fault = client.call("Nope", &[]).unwrap().unwrap_err();
    assert_eq!(fault.code(), fault_code::METHOD_NOT_FOUND);
    let malformed = client
        .send("POST", "/am/3", b"<methodCall><methodName>x")
        .unwrap();
    assert_eq!(malformed.status, 200);
    let text = String::from_utf8(malformed.body).unwrap();
    assert!(
        text.contains("<fault>") && text.contains("not well-formed XML"),
        "{text}"
    );

    let mut fresh = setup.client(&alice, "alice", 3);
    for _ in 0..5 {
        echo(&mut fresh).unwrap();
    }
    assert_eq!(fresh.connections(), 1, "every call reused one connection");
}

#[test]
fn stopping_the_server_refuses_new_connections() {
    let setup = Setup::new(1 << 20);
    let addr = setup.server.addr;
    let Setup { server, dir, .. } = setup;
    server.stop();
    assert!(TcpStream::connect(addr).is_err());
    drop(dir);
}

/// A TCP stream that counts the reads made on it.
#[derive(Debug)]
struct Counted {
    tcp: TcpStream,
    reads: Arc<AtomicUsize>,
}

impl Read for Counted {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.reads.fetch_add(1, Ordering::Relaxed);
        self.tcp.read(buf)
    }
}

impl Write for Counted {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.tcp.write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.tcp.flush()
    }
}

#[test]
fn server_and_client_read_a_flight_at_once_not_a_record_at_a_time() {
    let root = Authority::root("geni-am.test", "sa").unwrap();
    let mut trust = TrustStore::new();
    trust.add_root(root.cert().clone());
    let am = root.server("am", &["localhost"]).unwrap();
    let identity = TlsIdentity {
        chain: am.chain().iter().map(|cert| cert.x509().clone()).collect(),
        key: am.key().clone(),
    };
    let server = server::tls::acceptor(&identity, &Arc::new(trust))
        .unwrap()
        .build();
    let dir = tempfile::tempdir().unwrap();
    let alice = root.user("alice").unwrap();
    let (cert, key) = alice.write_pem(dir.path(), "alice").unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let url = format!("https://localhost:{}/am/3", addr.port());
    let client = Client::new(&url, &cert, &key, None).unwrap();
    let (client_reads, server_reads) = (Arc::default(), Arc::default());
    let counted = Counted {
        tcp: TcpStream::connect(addr).unwrap(),
        reads: Arc::clone(&client_reads),
    };
    let connecting = std::thread::spawn(move || client.handshake(counted).map(drop));
    let (tcp, _) = listener.accept().unwrap();
    let reads = Arc::clone(&server_reads);
    server.accept(Counted { tcp, reads }).unwrap();
    connecting.join().unwrap().unwrap();
    // A record read on its own takes two reads (its header, then its
    // body): the client's second flight has four records, the
    // server's flight seven.
    let (server_reads, client_reads) = (
        server_reads.load(Ordering::Relaxed),
        client_reads.load(Ordering::Relaxed),
    );
    assert!(server_reads <= 3, "the server read {server_reads} times");
    assert!(client_reads <= 3, "the client read {client_reads} times");
}

#[test]
fn a_small_get_version_the_dispatcher_answers_from_memory_skips_the_pool() {
    let setup = Setup::new(1 << 20);
    let alice = setup.root.user("alice").unwrap();
    let mut client = setup.client(&alice, "alice", 3);
    let mut get_version = |param: String| {
        client
            .call("GetVersion", &[Value::String(param)])
            .unwrap()
            .unwrap()
    };
    let answered = |value: Value| as_str(&value).unwrap().to_owned();
    assert_eq!(
        answered(get_version("memory".into())),
        "answered from memory"
    );
    assert_eq!(answered(get_version("pool".into())), "answered on the pool");
    let padded = format!("memory{}", " ".repeat(5000));
    assert_eq!(
        answered(get_version(padded)),
        "answered on the pool",
        "over 4 KiB"
    );
}
