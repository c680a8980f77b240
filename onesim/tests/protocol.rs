//! The transport and protocol behaviour: identical authentication failures,
//! XML-RPC faults, the 4- and 5-element failure arrays and the other
//! per-release differences, keep-alive with oned's 30-call limit, injected
//! transport faults, and the `onesim` binary.

mod common;
#[path = "../../tests/src/ports.rs"]
mod ports;

use common::{Connection, P, Reply, SESSION, decode, encode};
use onesim::{OneSim, SimSettings, TransportFault};
use std::time::Duration;

fn sim(version: &str) -> OneSim {
    OneSim::start(SimSettings {
        version: version.into(),
        ..SimSettings::default()
    })
}

#[test]
fn every_authentication_failure_gives_the_same_reply() {
    let sim = sim("7.4.0");
    let mut c = Connection::open(sim.address());
    let expected = Reply::Err(
        "[one.vm.info] User couldn't be authenticated, aborting call.".into(),
        256,
        5,
    );
    for session in ["oneadmin:wrong", "nobody:onetest", "oneadmin", ""] {
        assert_eq!(
            c.call("one.vm.info", &[P::S(session), P::I(0)]),
            expected,
            "session {session:?}"
        );
    }
    let (message, code) = c
        .call(
            "one.vmpool.info",
            &[P::S("x:y"), P::I(-2), P::I(-1), P::I(-1), P::I(-1)],
        )
        .failure();
    assert_eq!(
        (message.as_str(), code),
        (
            "[one.vmpool.info] User couldn't be authenticated, aborting call.",
            256
        )
    );
    assert_eq!(sim.call_count("one.vm.info"), 4);
}

#[test]
fn protocol_errors_are_faults() {
    let sim = sim("7.4.0");
    let mut c = Connection::open(sim.address());
    assert_eq!(
        c.call("one.vm.nosuch", &[SESSION]),
        Reply::Fault(-506, "Method 'one.vm.nosuch' not defined".into())
    );
    assert_eq!(
        c.call("one.vm.info", &[SESSION, P::S("0")]),
        Reply::Fault(
            -501,
            "Parameter that is supposed to be integer is not".into()
        )
    );
    assert_eq!(
        c.call("one.vm.allocate", &[SESSION, P::S("CPU=1"), P::I(1)]),
        Reply::Fault(
            -501,
            "Parameter that is supposed to be boolean is not".into()
        )
    );
    assert_eq!(
        c.call("one.vm.action", &[SESSION, P::S("terminate")]),
        Reply::Fault(-501, "Not enough parameters".into())
    );
    assert_eq!(
        c.call("one.vm.info", &[P::I(1)]),
        Reply::Fault(
            -501,
            "Parameter that is supposed to be string is not".into()
        )
    );
    let answer = c
        .post("<methodCall><methodName>x</methodName><params><param></params></methodCall>")
        .expect("answer");
    assert!(matches!(decode(&answer.body), Reply::Fault(-503, _)));
    let answer = c
        .post("<!DOCTYPE x [<!ENTITY e \"e\">]><methodCall/>")
        .expect("answer");
    assert!(matches!(decode(&answer.body), Reply::Fault(-503, _)));
}

#[test]
fn failure_arrays_have_four_elements_before_5_10_and_five_after() {
    for (version, elements) in [("5.8", 4), ("5.10.x", 5), ("6.10.0", 5), ("7.4.0", 5)] {
        let sim = sim(version);
        let mut c = Connection::open(sim.address());
        assert_eq!(
            c.call("one.system.version", &[SESSION]).text(),
            onesim::Version::parse(version).expect("v").to_string()
        );
        match c.call("one.vm.info", &[SESSION, P::I(42)]) {
            Reply::Err(message, 1024, n) => {
                assert_eq!(message, "[one.vm.info] Error getting virtual machine [42].");
                assert_eq!(n, elements, "{version}");
            }
            other => panic!("{version}: {other:?}"),
        }
        let raw = c
            .post(&encode("one.vm.info", &[SESSION, P::I(42)]))
            .expect("answer")
            .body;
        assert_eq!(
            raw.contains("<value><i8>-1</i8></value>"),
            elements == 5,
            "{version}"
        );
    }
}

#[test]
fn release_differences() {
    let extra = [SESSION, P::I(0), P::S("four"), P::B(true)];
    let old = sim("6.10.0");
    let mut c = Connection::open(old.address());
    assert_eq!(
        c.call("one.template.instantiate", &extra),
        Reply::Fault(-501, "Not enough parameters".into())
    );
    assert_eq!(
        c.call("one.vm.action", &[SESSION, P::S("shutdown"), P::I(0)])
            .failure(),
        (
            "[one.vm.action] Action \"shutdown\" is not supported".into(),
            2048
        )
    );
    let new = sim("7.4.0");
    let mut c = Connection::open(new.address());
    let id = c.call("one.template.instantiate", &extra).int();
    assert_eq!(new.vm_state(id), Some((2, 0)), "held");

    let five = sim("5.12.x");
    let mut c = Connection::open(five.address());
    let id = c
        .call(
            "one.template.instantiate",
            &[SESSION, P::I(0), P::S("a"), P::B(false), P::S("")],
        )
        .int();
    c.call("one.vm.info", &[SESSION, P::I(id)]);
    assert_eq!(
        c.call("one.vm.action", &[SESSION, P::S("shutdown"), P::I(id)])
            .int(),
        id,
        "4.x alias accepted in 5.x"
    );
    assert!(matches!(
        c.call("one.vmpool.infoset", &[SESSION, P::S("0"), P::B(false)]),
        Reply::Fault(-506, _)
    ));
    assert!(matches!(
        sim("5.8").answer_for("one.vmpool.infoextended"),
        Reply::Fault(-506, _)
    ));
}

trait AnswerFor {
    fn answer_for(&self, method: &str) -> Reply;
}

impl AnswerFor for OneSim {
    fn answer_for(&self, method: &str) -> Reply {
        decode(&self.answer(&encode(
            method,
            &[SESSION, P::I(-2), P::I(-1), P::I(-1), P::I(-1)],
        )))
    }
}

#[test]
fn keep_alive_ends_after_thirty_calls() {
    let sim = sim("7.4.0");
    let mut c = Connection::open(sim.address());
    let call = encode("one.system.version", &[SESSION]);
    for n in 1..=30 {
        let answer = c.post(&call).expect("answered");
        assert_eq!(
            answer.connection,
            if n == 30 { "close" } else { "Keep-Alive" },
            "call {n}"
        );
    }
    assert!(
        c.post(&call).is_none(),
        "the 31st call on the connection is not answered"
    );
    assert_eq!(sim.call_count("one.system.version"), 30);
}

#[test]
fn injected_transport_faults() {
    let sim = sim("7.4.0");
    let call = encode("one.system.version", &[SESSION]);
    sim.inject_transport_fault(TransportFault::Drop);
    sim.inject_transport_fault(TransportFault::Http500);
    sim.inject_transport_fault(TransportFault::Delay(Duration::from_millis(300)));
    assert!(
        Connection::open(sim.address()).post(&call).is_none(),
        "dropped"
    );
    let mut c = Connection::open(sim.address());
    assert_eq!(c.post(&call).expect("answer").status, 500);
    let started = std::time::Instant::now();
    assert_eq!(decode(&c.post(&call).expect("answer").body).text(), "7.4.0");
    assert!(
        started.elapsed() >= Duration::from_millis(300),
        "the reply waited for the injected delay"
    );
    assert_eq!(decode(&c.post(&call).expect("answer").body).text(), "7.4.0");
    assert_eq!(
        sim.call_count("one.system.version"),
        2,
        "dropped and failed requests never reach the methods"
    );
}

#[test]
fn an_outage_fails_every_request_until_it_ends() {
    let sim = sim("7.4.0");
    let call = encode("one.system.version", &[SESSION]);
    sim.begin_outage(TransportFault::Http500);
    let mut c = Connection::open(sim.address());
    for n in 1..=12 {
        assert_eq!(c.post(&call).expect("answer").status, 500, "call {n}");
    }
    sim.begin_outage(TransportFault::Drop);
    assert!(
        Connection::open(sim.address()).post(&call).is_none(),
        "dropped while down"
    );
    assert_eq!(
        sim.call_count("one.system.version"),
        0,
        "nothing reached oned"
    );
    sim.end_outage();
    let mut c = Connection::open(sim.address());
    assert_eq!(decode(&c.post(&call).expect("answer").body).text(), "7.4.0");
}

#[test]
fn the_server_stops_when_dropped() {
    let sim = sim("7.4.0");
    let address = sim.address();
    assert_eq!(sim.endpoint(), format!("http://{address}/RPC2"));
    drop(sim);
    assert!(
        std::net::TcpStream::connect(address).is_err(),
        "nothing listens after drop"
    );
}

#[test]
fn the_binary_serves_the_requested_release() {
    let listen = format!("127.0.0.1:{}", ports::free_port());
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_onesim"))
        .args(["--version", "6.10.0", "--listen", &listen])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("onesim starts");
    let mut stderr = std::io::BufReader::new(child.stderr.take().expect("stderr"));
    let mut banner = String::new();
    std::io::BufRead::read_line(&mut stderr, &mut banner).expect("banner");
    assert!(
        banner.contains("OpenNebula simulator") && banner.contains(&listen),
        "{banner}"
    );
    let mut c = Connection::open(listen.parse().expect("address"));
    assert_eq!(c.call("one.system.version", &[SESSION]).text(), "6.10.0");
    child.kill().expect("stop onesim");
    let _ = child.wait();
}

#[test]
fn oversized_heads_and_other_paths_are_refused() {
    use std::io::{Read, Write};
    let sim = sim("7.4.0");
    let mut stream = std::net::TcpStream::connect(sim.address()).expect("connect");
    let endless = format!("POST /RPC2 HTTP/1.1\r\nX-Filler: {}", "a".repeat(70 * 1024));
    stream.write_all(endless.as_bytes()).expect("send");
    let mut answer = String::new();
    // The server closes with the rest of the head unread, which may reset the connection.
    let _ = stream.read_to_string(&mut answer);
    assert!(
        answer.is_empty() || answer.starts_with("HTTP/1.1 400 "),
        "{answer}"
    );

    let mut stream = std::net::TcpStream::connect(sim.address()).expect("connect");
    stream
        .write_all(b"POST /other HTTP/1.1\r\nContent-Length: 0\r\n\r\n")
        .expect("send");
    let mut answer = String::new();
    stream
        .read_to_string(&mut answer)
        .expect("read until close");
    assert!(answer.starts_with("HTTP/1.1 404 "), "{answer}");
    assert_eq!(sim.call_count("one.system.version"), 0);
}

#[test]
fn expect_continue_and_chunked_bodies() {
    use std::io::{Read, Write};
    let sim = sim("7.4.0");
    let body = encode("one.system.version", &[SESSION]);
    let mut stream = std::net::TcpStream::connect(sim.address()).expect("connect");
    let head = format!(
        "POST /RPC2 HTTP/1.1\r\nExpect: 100-continue\r\nConnection: close\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).expect("head");
    let mut interim = [0u8; 25];
    stream.read_exact(&mut interim).expect("interim answer");
    assert_eq!(&interim, b"HTTP/1.1 100 Continue\r\n\r\n");
    stream.write_all(body.as_bytes()).expect("body");
    let mut answer = String::new();
    stream.read_to_string(&mut answer).expect("answer");
    assert!(
        answer.starts_with("HTTP/1.1 200 OK") && answer.contains("<string>7.4.0</string>"),
        "{answer}"
    );

    let mut stream = std::net::TcpStream::connect(sim.address()).expect("connect");
    stream
        .write_all(b"POST /RPC2 HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n")
        .expect("send");
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    assert!(answer.starts_with("HTTP/1.1 411 "), "{answer}");
}
