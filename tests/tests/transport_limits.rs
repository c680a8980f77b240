//! The transport's limits and conveniences over the real binary: clients
//! that send a request slowly are cut off at `request_timeout_secs` (the
//! headers of a later request on a kept-alive connection within
//! `keep_alive_secs` more), a
//! client beyond its connection cap is refused at once while others are
//! served, compression bombs stop at `body_limit` without the server
//! growing, a second process on a taken port stops before it touches the
//! store, the first call on a fresh connection and large answers do not
//! wait for a delayed ACK, and the URLs a client may be given (`/am/3/`,
//! the bare host) answer while others get a readable XML-RPC fault.

use flate2::Compression;
use flate2::write::GzEncoder;
use geni_am_tests::aggregate::{Aggregate, set};
use geni_am_tests::calls::call;
use geni_am_tests::creds::DevAuthority;
use geni_am_tests::database::Store;
use geni_am_tests::raw::{Connection, post_head};
use geni_xmlrpc::Value;
use std::io::Write;
use std::time::{Duration, Instant};

/// Starts an aggregate whose `[server]` section has the integer `keys`.
fn aggregate_with(keys: &[(&str, i64)]) -> Aggregate {
    Aggregate::start_with(Store::Sqlite, |table| {
        for (key, value) in keys {
            set(table, &["server", key], (*value).into());
        }
    })
}

fn get_version() -> Vec<u8> {
    geni_xmlrpc::encode_call("GetVersion", &[])
        .expect("encoded")
        .into_bytes()
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = GzEncoder::new(Vec::new(), Compression::best());
    encoder.write_all(bytes).expect("compressed");
    encoder.finish().expect("compressed")
}

/// A field of the server process's status (`VmRSS`, `VmHWM`), in bytes.
fn memory(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("process status");
    let kib: u64 = status
        .lines()
        .find_map(|line| line.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("{field} in the process status"));
    kib * 1024
}

/// Resets the process's peak resident memory (`VmHWM`) to what it holds now.
fn reset_peak(pid: u32) {
    std::fs::write(format!("/proc/{pid}/clear_refs"), "5").expect("peak memory reset");
}

#[test]
fn connections_beyond_a_clients_cap_are_refused_at_once_and_a_fresh_client_still_gets_get_version()
{
    let aggregate = aggregate_with(&[
        ("max_connections_per_client", 4),
        ("max_connections", 16),
        ("request_timeout_secs", 30),
    ]);
    let started = Instant::now();
    let trickle_head = post_head("/am/3", &[], 1000);
    let mut held: Vec<Connection> = (0..4)
        .map(|_| {
            let mut connection = Connection::alice(&aggregate);
            // One call completes, so the connection holds its slot, then a
            // request whose body never comes.
            connection.post("/am/3", &[], &get_version()).expect("sent");
            assert_eq!(connection.read_answer().expect("answer").status, 200);
            connection.send(trickle_head.as_bytes()).expect("sent");
            connection.send(b"<").expect("sent");
            connection
        })
        .collect();
    for _ in 0..3 {
        let mut extra = Connection::alice(&aggregate);
        extra.send(trickle_head.as_bytes()).expect("sent");
        let answer = extra.read_answer().expect("an answer");
        assert_eq!(answer.status, 503, "a connection beyond the cap");
        let message = answer.fault_message();
        assert!(message.contains("max_connections_per_client"), "{message}");
        assert!(extra.is_closed(), "the refused connection stays open");
    }
    let (cert, key) = DevAuthority::open(aggregate.dir()).write_user("bob", aggregate.dir());
    let mut bob = aggregate.client_as(3, &cert, &key);
    let version = call(&mut bob, "GetVersion", vec![]).ok();
    assert_eq!(version.member("geni_api"), &Value::Integer(3));
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "the fresh client was served only after the trickling connections timed out"
    );
    for connection in &mut held {
        assert!(
            !connection.server_spoke(),
            "a connection within the cap was cut off before its deadline"
        );
    }
}

#[test]
fn a_trickling_client_is_cut_off_after_the_deadline() {
    let aggregate = aggregate_with(&[("request_timeout_secs", 2)]);
    // Complete headers, then a byte of body now and then.
    let mut body_trickler = Connection::alice(&aggregate);
    body_trickler
        .send(post_head("/am/3", &[], 1000).as_bytes())
        .expect("sent");
    // Headers a byte at a time.
    let mut head_trickler = Connection::alice(&aggregate);
    let head = post_head("/am/3", &[], 10);
    let mut head_bytes = head.bytes();
    for round in 0.. {
        if body_trickler.server_spoke() && head_trickler.server_spoke() {
            break;
        }
        assert!(round < 200, "a trickling client was never cut off");
        let _ = body_trickler.send(b" ");
        if let Some(byte) = head_bytes.next() {
            let _ = head_trickler.send(&[byte]);
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    let answer = body_trickler.read_answer().expect("an answer");
    assert_eq!(answer.status, 408);
    let message = answer.fault_message();
    assert!(message.contains("request_timeout_secs"), "{message}");
    assert!(body_trickler.is_closed(), "the late client stays connected");
    assert_eq!(head_trickler.read_answer().expect("an answer").status, 408);
    assert!(head_trickler.is_closed(), "the late client stays connected");
}

#[test]
fn a_client_trickling_the_headers_of_a_later_request_is_cut_off() {
    let aggregate = aggregate_with(&[("keep_alive_secs", 1), ("request_timeout_secs", 2)]);
    let mut connection = Connection::alice(&aggregate);
    connection.post("/am/3", &[], &get_version()).expect("sent");
    assert_eq!(connection.read_answer().expect("answer").status, 200);
    // The next request's head, a byte at a time, never complete.
    let head = format!("POST /am/3 HTTP/1.1\r\nX-Slow: {}", "a".repeat(400));
    for (round, byte) in head.bytes().enumerate() {
        if connection.server_spoke() {
            break;
        }
        assert!(round < 200, "the trickling client was never cut off");
        let _ = connection.send(&[byte]);
        std::thread::sleep(Duration::from_millis(250));
    }
    assert!(
        connection.is_closed(),
        "the trickling client stays connected"
    );
}

#[test]
fn compression_bombs_stop_at_the_body_limit_and_the_server_stays_small() {
    let limit = 256 << 10;
    let aggregate = aggregate_with(&[("body_limit", limit)]);
    let mut honest = Connection::alice(&aggregate);
    honest
        .post("/am/3", &["Content-Encoding: gzip"], &gzip(&get_version()))
        .expect("sent");
    let answer = honest.read_answer().expect("an answer");
    assert_eq!(answer.status, 200);
    assert!(
        String::from_utf8_lossy(&answer.body).contains("geni_api_versions"),
        "a gzip GetVersion is answered"
    );
    let pid = aggregate.pid();
    reset_peak(pid);
    let idle = memory(pid, "VmRSS");
    // 64 MiB of zeros in about 64 KiB.
    let bomb = gzip(&vec![0u8; 64 << 20]);
    std::thread::scope(|scope| {
        for _ in 0..8 {
            scope.spawn(|| {
                for _ in 0..2 {
                    let mut connection = Connection::alice(&aggregate);
                    let _ = connection.post("/am/3", &["Content-Encoding: gzip"], &bomb);
                    let answer = connection.read_answer().expect("an answer");
                    assert_eq!(answer.status, 413);
                    let message = answer.fault_message();
                    assert!(message.contains("server.body_limit"), "{message}");
                }
            });
        }
    });
    // The peak: memory taken while inflating is given back afterwards.
    let grown = memory(pid, "VmHWM").saturating_sub(idle);
    eprintln!("peak growth over idle: {} KiB", grown >> 10);
    assert!(
        grown < 16 << 20,
        "16 bombs grew the server by {} MiB at their peak",
        grown >> 20
    );
}

#[test]
fn a_second_instance_on_a_taken_port_stops_before_opening_its_store() {
    let aggregate = Aggregate::start(Store::Sqlite);
    let mut table: toml::Table = aggregate
        .read("geni-am.toml")
        .parse()
        .expect("configuration is TOML");
    let store = aggregate.file("second.sqlite");
    set(
        &mut table,
        &["store", "url"],
        store.display().to_string().into(),
    );
    let config = aggregate.file("second.toml");
    std::fs::write(&config, table.to_string()).expect("configuration written");
    let second = std::process::Command::new(geni_am_tests::geni_am_bin())
        .arg("serve")
        .arg("--config")
        .arg(&config)
        .output()
        .expect("geni-am serve runs");
    let log = String::from_utf8_lossy(&second.stderr);
    assert!(!second.status.success(), "a second instance served: {log}");
    assert!(log.contains("server.listen"), "{log}");
    assert!(!log.contains("geni-am serving"), "{log}");
    assert!(
        !store.exists(),
        "the second instance opened its store before binding: {log}"
    );
}

/// Sends `body` to `/am/3` on `connection` and returns how long the answer took.
fn timed_call(connection: &mut Connection, body: &[u8]) -> Duration {
    let started = Instant::now();
    connection.post("/am/3", &[], body).expect("sent");
    let answer = connection.read_answer().expect("an answer");
    assert_eq!(answer.status, 200);
    started.elapsed()
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

#[test]
fn the_first_call_on_a_fresh_connection_and_a_large_answer_do_not_wait_for_a_delayed_ack() {
    let aggregate = Aggregate::start(Store::Sqlite);
    let small = get_version();
    // An unknown method's fault repeats its name: an answer of 24 KiB.
    let large = geni_xmlrpc::encode_call(&"X".repeat(24 << 10), &[])
        .expect("encoded")
        .into_bytes();
    let (mut first, mut warm, mut big) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..9 {
        let mut connection = Connection::alice(&aggregate);
        first.push(timed_call(&mut connection, &small));
        warm.push(timed_call(&mut connection, &small));
        big.push(timed_call(&mut connection, &large));
    }
    // A delayed ACK stalls every such call by about 40 ms, so even the
    // quickest is 30 to 60 times a warm call; without it the quickest first
    // call takes 2 to 4 times a warm one (the server verifies the client
    // chain). The quickest sample is the one least disturbed by other load.
    let quickest = |samples: Vec<Duration>| samples.into_iter().min().expect("samples");
    let (first, warm, big) = (quickest(first), median(warm), quickest(big));
    eprintln!(
        "quickest first call {first:?}, median warm call {warm:?}, quickest 24 KiB answer {big:?}"
    );
    assert!(
        first < warm * 10,
        "the first call took {first:?}, a warm one {warm:?}"
    );
    assert!(
        big < warm * 10,
        "a 24 KiB answer took {big:?}, a small one {warm:?}"
    );
}

#[test]
fn trailing_slashes_and_the_bare_host_answer_and_other_paths_get_a_fault() {
    let aggregate = Aggregate::start(Store::Sqlite);
    let mut client = aggregate.client(3);
    for (path, version) in [("/am/3/", 3), ("/am/2/", 2)] {
        let reply = client.send("POST", path, &get_version()).expect("answer");
        assert_eq!(reply.status, 200, "{path}");
        let value = geni_xmlrpc::decode_response(&reply.body, 1 << 20)
            .expect("XML-RPC")
            .expect("no fault");
        let api = geni_xmlrpc::member(&value, "geni_api").and_then(geni_xmlrpc::as_int);
        assert_eq!(api, Some(version), "{path}");
    }
    let reply = client.send("POST", "/", &get_version()).expect("answer");
    assert_eq!(reply.status, 200);
    let value = geni_xmlrpc::decode_response(&reply.body, 1 << 20)
        .expect("XML-RPC")
        .expect("no fault");
    let urls = geni_xmlrpc::member(&value, "value")
        .and_then(|v| geni_xmlrpc::member(v, "geni_api_versions"))
        .expect("geni_api_versions");
    for v in [2u8, 3] {
        let url = geni_xmlrpc::member(urls, &v.to_string()).and_then(geni_xmlrpc::as_str);
        assert_eq!(url, Some(aggregate.url(v).as_str()), "URL of v{v}");
    }
    let list = geni_xmlrpc::encode_call("ListResources", &[]).expect("encoded");
    let reply = client.send("POST", "/", list.as_bytes()).expect("answer");
    let fault = geni_xmlrpc::decode_response(&reply.body, 1 << 20)
        .expect("XML-RPC")
        .expect_err("ListResources at / is a fault");
    assert!(fault.string().contains("/am/3"), "{}", fault.string());
    for (method, path, status) in [
        ("POST", "/am/4", 404),
        ("POST", "/RPC2", 404),
        ("GET", "/am/3", 405),
    ] {
        let mut connection = Connection::alice(&aggregate);
        let request =
            format!("{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n");
        connection.send(request.as_bytes()).expect("sent");
        let answer = connection.read_answer().expect("an answer");
        assert_eq!(answer.status, status, "{method} {path}");
        let message = answer.fault_message();
        assert!(
            message.contains("/am/3") && message.contains("/am/2"),
            "{method} {path}: {message}"
        );
    }
}
