//! The client against a small HTTP server in a thread that replays
//! recorded oned 7.4.0 reply bodies by a script: keep-alive, reconnects,
//! timeouts, HTTP errors, retries and the call counter.

use super::*;
use crate::rpc::ErrorCode;
use openssl::ssl::{SslAcceptor, SslFiletype, SslMethod, SslStream};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::mpsc;

/// What the server does with one request.
enum Step {
    /// Answers `status` with `body`; `close` ends the connection after it,
    /// announced with `Connection: close` or not.
    Reply {
        status: u16,
        body: String,
        close: Close,
    },
    /// Reads the request and never answers.
    Stall,
    /// Reads the request and closes the connection without an answer.
    Hangup,
}

/// Whether and how the server closes a connection after its answer.
#[derive(Clone, Copy, PartialEq)]
enum Close {
    KeepAlive,
    Announced,
    /// Closed without notice; the test is told once it is closed.
    Silent,
}

/// The server: its address and what it saw.
struct Replay {
    endpoint: String,
    /// Bodies of the requests received, in order.
    requests: Arc<Mutex<Vec<String>>>,
    /// Connections accepted.
    accepted: Arc<AtomicU64>,
    /// Told when a connection was closed without notice.
    closed: mpsc::Receiver<()>,
}

fn recorded_reply(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/opennebula/recorded/oned-7.4.0")
        .join(format!("{name}.response.xml"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"))
}

fn ok(name: &str) -> Step {
    Step::Reply {
        status: 200,
        body: recorded_reply(name),
        close: Close::KeepAlive,
    }
}

/// A server side connection, plain or TLS.
trait ServerStream: Read + Write {
    /// Closes the connection.
    fn close(&mut self);
}

impl ServerStream for TcpStream {
    fn close(&mut self) {
        let _ = self.shutdown(std::net::Shutdown::Both);
    }
}

impl ServerStream for SslStream<TcpStream> {
    fn close(&mut self) {
        let _ = self.shutdown();
        self.get_mut().close();
    }
}

/// Reads one request off `reader`: its head and body, or `None` at the end.
fn read_request(reader: &mut impl BufRead) -> Option<(String, String)> {
    let mut head = String::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        if line == "\r\n" {
            break;
        }
        head.push_str(&line);
    }
    let length = header(&head, "content-length")?.parse().ok()?;
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some((head, String::from_utf8(body).ok()?))
}

/// The value of header `name` (lower case) in a request `head`; header
/// names are case-insensitive.
fn header<'h>(head: &'h str, name: &str) -> Option<&'h str> {
    head.lines().find_map(|line| {
        let (key, value) = line.split_once(':')?;
        key.eq_ignore_ascii_case(name).then(|| value.trim())
    })
}

/// Starts a plain HTTP server playing `script`.
fn serve(script: Vec<Step>) -> Replay {
    serve_with(script, None)
}

/// Starts a server that plays `script`, one step per request, across
/// connections (over TLS with `tls`); requests beyond the script get HTTP 500.
fn serve_with(script: Vec<Step>, tls: Option<SslAcceptor>) -> Replay {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let endpoint = match tls {
        Some(_) => format!("https://localhost:{port}/RPC2"),
        None => format!("http://127.0.0.1:{port}/RPC2"),
    };
    let requests = Arc::new(Mutex::new(Vec::new()));
    let accepted = Arc::new(AtomicU64::new(0));
    let (closed_sender, closed) = mpsc::channel();
    let (seen, count) = (requests.clone(), accepted.clone());
    std::thread::spawn(move || {
        let mut steps = script.into_iter();
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            count.fetch_add(1, Ordering::SeqCst);
            let stream: Box<dyn ServerStream> = match &tls {
                None => Box::new(stream),
                Some(acceptor) => match acceptor.accept(stream) {
                    Ok(tls_stream) => Box::new(tls_stream),
                    Err(_) => continue,
                },
            };
            let mut reader = BufReader::new(stream);
            while let Some((head, body)) = read_request(&mut reader) {
                assert!(head.starts_with("POST /RPC2 HTTP/1.1\r\n"), "{head}");
                assert_eq!(header(&head, "content-type"), Some("text/xml"), "{head}");
                seen.lock().unwrap().push(body);
                let step = steps.next().unwrap_or(Step::Reply {
                    status: 500,
                    body: "request beyond the script".into(),
                    close: Close::KeepAlive,
                });
                let (status, body, close) = match step {
                    Step::Reply {
                        status,
                        body,
                        close,
                    } => (status, body, close),
                    Step::Stall => {
                        // Holds the connection until the client gives up.
                        let _ = reader.read(&mut [0; 1]);
                        break;
                    }
                    Step::Hangup => break,
                };
                let connection = if close == Close::Announced {
                    "close"
                } else {
                    "keep-alive"
                };
                let answer = format!(
                    "HTTP/1.1 {status} X\r\nContent-Type: text/xml\r\nContent-Length: {}\r\nConnection: {connection}\r\n\r\n{body}",
                    body.len()
                );
                reader.get_mut().write_all(answer.as_bytes()).unwrap();
                if close != Close::KeepAlive {
                    reader.get_mut().close();
                    if close == Close::Silent {
                        closed_sender.send(()).unwrap();
                    }
                    break;
                }
            }
        }
    });
    Replay {
        endpoint,
        requests,
        accepted,
        closed,
    }
}

fn client(replay: &Replay, retries: u32) -> OneClient {
    let session = Session::parse("oneadmin:onetest").unwrap();
    OneClient::new(ClientSettings {
        timeout: Duration::from_millis(200),
        retries,
        ..ClientSettings::new(&replay.endpoint, session)
    })
    .unwrap()
}

/// Asserts that `outcome` is a transport error whose detail holds `detail`.
fn assert_transport(outcome: Result<Answer, RpcError>, detail: &str) {
    assert!(
        matches!(&outcome, Err(RpcError::Transport { detail: got, .. }) if got.contains(detail)),
        "expected a transport error naming {detail:?}, got {outcome:?}"
    );
}

impl Replay {
    /// Asserts that the server received `count` requests, as `client` counted.
    fn assert_requests(&self, client: &OneClient, count: usize) {
        assert_eq!(
            self.requests.lock().unwrap().len(),
            count,
            "requests received"
        );
        assert_eq!(client.calls(), count as u64, "requests counted");
    }
}

#[test]
fn keeps_connections_alive_and_reconnects_when_oned_closes_them() {
    let replay = serve(vec![
        ok("system.version"),
        ok("vm.info-running"),
        Step::Reply {
            status: 200,
            body: recorded_reply("vmpool.info-running"),
            close: Close::Announced,
        },
        ok("system.version"),
        Step::Reply {
            status: 200,
            body: recorded_reply("system.version"),
            close: Close::Silent,
        },
        ok("vn.info"),
    ]);
    let client = client(&replay, 0);
    assert_eq!(
        client.call("one.system.version", &[]),
        Ok(Answer::Str("7.4.0".into()))
    );
    let vm = client.call("one.vm.info", &[Param::Int(0)]).unwrap();
    assert!(matches!(&vm, Answer::Str(xml) if xml.starts_with("<VM><ID>0</ID>")));
    let pool = [
        Param::Int(-2),
        Param::Int(-1),
        Param::Int(-1),
        Param::Int(-1),
    ];
    assert!(client.call("one.vmpool.info", &pool).is_ok());
    assert_eq!(
        replay.accepted.load(Ordering::SeqCst),
        1,
        "one connection for three calls"
    );

    // Announced close: the next call opens a new connection.
    assert!(client.call("one.system.version", &[]).is_ok());
    assert!(client.call("one.system.version", &[]).is_ok());
    // Silent close: the idle connection is found closed and replaced.
    replay.closed.recv().unwrap();
    assert!(client.call("one.vn.info", &[Param::Int(0)]).is_ok());
    assert_eq!(replay.accepted.load(Ordering::SeqCst), 3);
    assert_eq!(client.connections(), 3);
    assert_eq!(client.calls(), 6);

    let requests = replay.requests.lock().unwrap();
    assert!(requests[1].contains("<methodName>one.vm.info</methodName>"));
    assert!(requests[1].contains("<string>oneadmin:onetest</string>"));
}

#[test]
fn a_stalled_server_hits_the_timeout() {
    let replay = serve(vec![Step::Stall]);
    let client = client(&replay, 0);
    assert_transport(
        client.call("one.system.version", &[]),
        "no answer from http://127.0.0.1:",
    );
}

#[test]
fn http_errors_are_transport_errors() {
    let replay = serve(vec![Step::Reply {
        status: 500,
        body: "Internal Server Error".into(),
        close: Close::KeepAlive,
    }]);
    let client = client(&replay, 0);
    assert_transport(
        client.call("one.vm.info", &[Param::Int(0)]),
        "answered HTTP 500: Internal Server Error",
    );
}

#[test]
fn a_locked_vm_is_read_again() {
    let locked = recorded_reply("err.vm-info-no-such-id")
        .replace("<i4>1024</i4>", "<i4>32768</i4>")
        .replace(
            "Error getting virtual machine [99999].",
            "The resource virtual machine is locked. [0].",
        );
    let replay = serve(vec![
        Step::Reply {
            status: 200,
            body: locked,
            close: Close::KeepAlive,
        },
        ok("vm.info-running"),
    ]);
    let client = client(&replay, 2);
    let answer = client.call("one.vm.info", &[Param::Int(0)]).unwrap();
    assert!(matches!(answer, Answer::Str(xml) if xml.starts_with("<VM>")));
    replay.assert_requests(&client, 2);
}

#[test]
fn creating_calls_are_tried_once() {
    let replay = serve(vec![Step::Hangup, ok("template.instantiate")]);
    let client = client(&replay, 3);
    let params = [
        Param::Int(0),
        Param::Str("geni-sliver-2".into()),
        Param::Bool(true),
        Param::Str(String::new()),
        Param::Bool(false),
    ];
    let err = client
        .call("one.template.instantiate", &params)
        .unwrap_err();
    assert!(matches!(err, RpcError::Transport { .. }), "{err:?}");
    assert!(
        err.is_retryable(),
        "retryable, yet not repeated: it creates a VM"
    );
    replay.assert_requests(&client, 1);
}

#[test]
fn authentication_failures_are_not_retried() {
    let replay = serve(vec![ok("err.bad-password"), ok("system.version")]);
    let client = client(&replay, 3);
    let err = client.call("one.vm.info", &[Param::Int(0)]).unwrap_err();
    assert!(
        matches!(
            err,
            RpcError::Refused {
                code: ErrorCode::Authentication,
                ..
            }
        ),
        "{err:?}"
    );
    replay.assert_requests(&client, 1);
}

#[test]
fn lost_answers_to_reads_are_retried() {
    let replay = serve(vec![Step::Hangup, ok("vm.info-running")]);
    let client = client(&replay, 1);
    assert!(client.call("one.vm.info", &[Param::Int(0)]).is_ok());
    replay.assert_requests(&client, 2);
}

#[test]
fn oversized_replies_are_refused() {
    let replay = serve(vec![ok("vm.info-running")]);
    let client = client(&replay, 0).with_response_limit(1000);
    assert_transport(
        client.call("one.vm.info", &[Param::Int(0)]),
        "more than the limit of 1000 bytes",
    );
}

#[test]
fn https_endpoints_verify_the_proxy_certificate() {
    let root = geni_credentials::devca::Authority::root("geni-am.test", "ca").unwrap();
    let proxy = root.server("oned-proxy", &["localhost"]).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (cert, key) = proxy.write_pem(dir.path(), "proxy").unwrap();
    let ca = dir.path().join("ca.pem");
    std::fs::write(&ca, root.identity().chain_pem()).unwrap();
    let acceptor = || {
        let mut builder = SslAcceptor::mozilla_intermediate_v5(SslMethod::tls_server()).unwrap();
        builder.set_certificate_chain_file(&cert).unwrap();
        builder
            .set_private_key_file(&key, SslFiletype::PEM)
            .unwrap();
        builder.build()
    };
    let session = Session::parse("oneadmin:onetest").unwrap();

    let replay = serve_with(vec![ok("system.version"), ok("vn.info")], Some(acceptor()));
    let trusting = OneClient::new(ClientSettings {
        ca_file: Some(ca),
        timeout: Duration::from_secs(5),
        ..ClientSettings::new(&replay.endpoint, session.clone())
    })
    .unwrap();
    assert_eq!(
        trusting.call("one.system.version", &[]),
        Ok(Answer::Str("7.4.0".into()))
    );
    assert!(trusting.call("one.vn.info", &[Param::Int(0)]).is_ok());
    assert_eq!(
        trusting.connections(),
        1,
        "the TLS connection is kept alive"
    );

    let replay = serve_with(vec![ok("system.version")], Some(acceptor()));
    let untrusting = OneClient::new(ClientSettings {
        retries: 0,
        timeout: Duration::from_secs(5),
        ..ClientSettings::new(&replay.endpoint, session)
    })
    .unwrap();
    assert_transport(untrusting.call("one.system.version", &[]), "TLS handshake");
}

#[test]
fn settings_are_checked() {
    let session = Session::parse("oneadmin:onetest").unwrap();
    for endpoint in [
        "ftp://host/RPC2",
        "host:2633",
        "http://",
        "http://user:pass@host:2633/RPC2",
        "http://host:notaport/RPC2",
    ] {
        let built = OneClient::new(ClientSettings::new(endpoint, session.clone()));
        assert!(
            matches!(built, Err(ClientError::BadEndpoint(_))),
            "{endpoint}"
        );
    }
    let client = OneClient::new(ClientSettings::new("http://oned:2633", session.clone())).unwrap();
    assert_eq!(client.url, "http://oned:2633/RPC2");
    let no_slots = ClientSettings {
        max_connections: 0,
        ..ClientSettings::new("http://oned:2633/RPC2", session.clone())
    };
    assert!(matches!(
        OneClient::new(no_slots),
        Err(ClientError::BadSetting(_))
    ));
    let missing_ca = ClientSettings {
        ca_file: Some("/nonexistent/ca.pem".into()),
        ..ClientSettings::new("https://proxy/RPC2", session)
    };
    assert!(
        matches!(OneClient::new(missing_ca), Err(ClientError::Tls(m)) if m.contains("/nonexistent/ca.pem"))
    );
}

#[test]
fn only_safe_methods_are_repeatable() {
    for method in [
        "one.vm.info",
        "one.vmpool.info",
        "one.vmpool.infoextended",
        "one.vmpool.infoset",
        "one.hostpool.info",
        "one.system.version",
        "one.user.info",
        "one.vm.action",
        "one.vm.update",
        "one.vm.updateconf",
        "one.vn.delete",
    ] {
        assert!(is_repeatable(method), "{method}");
    }
    for method in [
        "one.template.instantiate",
        "one.vm.allocate",
        "one.vn.allocate",
        "one.vn.reserve",
        "one.user.login",
        "one.vm.rename",
    ] {
        assert!(!is_repeatable(method), "{method}");
    }
}
