//! A minimal XML-RPC client over std TCP for the simulator's tests: encodes
//! calls, posts them with HTTP/1.1 keep-alive, and decodes the reply array.

#![allow(dead_code)]

use onesim::xml::{self, Element};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};

/// A call parameter.
#[derive(Debug, Clone)]
pub enum P {
    S(&'static str),
    Owned(String),
    I(i32),
    B(bool),
}

/// The session the simulator accepts.
pub const SESSION: P = P::S("oneadmin:onetest");

/// Encodes a `<methodCall>`.
pub fn encode(method: &str, params: &[P]) -> String {
    let mut body = format!(
        "<?xml version=\"1.0\"?>\n<methodCall>\n<methodName>{method}</methodName>\n<params>\n"
    );
    for p in params {
        let value = match p {
            P::S(s) => format!("<string>{}</string>", escape(s)),
            P::Owned(s) => format!("<string>{}</string>", escape(s)),
            P::I(i) => format!("<int>{i}</int>"),
            P::B(b) => format!("<boolean>{}</boolean>", u8::from(*b)),
        };
        body.push_str(&format!("<param>\n<value>{value}</value>\n</param>\n"));
    }
    body.push_str("</params>\n</methodCall>\n");
    body
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// One HTTP connection to the simulator.
pub struct Connection {
    address: SocketAddr,
    reader: BufReader<TcpStream>,
    writer: TcpStream,
}

/// A raw HTTP answer.
pub struct HttpAnswer {
    /// Status code.
    pub status: u16,
    /// `Connection:` header value.
    pub connection: String,
    /// Body.
    pub body: String,
}

impl Connection {
    /// Connects.
    pub fn open(address: SocketAddr) -> Connection {
        let stream = TcpStream::connect(address).expect("connect to the simulator");
        stream
            .set_read_timeout(Some(std::time::Duration::from_secs(20)))
            .expect("timeout");
        Connection {
            address,
            writer: stream.try_clone().expect("clone"),
            reader: BufReader::new(stream),
        }
    }

    /// Posts a body; `None` when the server closed the connection without answering.
    pub fn post(&mut self, body: &str) -> Option<HttpAnswer> {
        let request = format!(
            "POST /RPC2 HTTP/1.1\r\nHost: localhost\r\nContent-Type: text/xml\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        self.writer.write_all(request.as_bytes()).ok()?;
        let mut status_line = String::new();
        if self.reader.read_line(&mut status_line).ok()? == 0 {
            return None;
        }
        let status = status_line.split_whitespace().nth(1)?.parse().ok()?;
        let mut length = 0;
        let mut connection = String::new();
        loop {
            let mut line = String::new();
            self.reader.read_line(&mut line).ok()?;
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some((k, v)) = line.split_once(':') {
                match k.to_ascii_lowercase().as_str() {
                    "content-length" => length = v.trim().parse().ok()?,
                    "connection" => connection = v.trim().to_owned(),
                    _ => {}
                }
            }
        }
        let mut body = vec![0; length];
        self.reader.read_exact(&mut body).ok()?;
        Some(HttpAnswer {
            status,
            connection,
            body: String::from_utf8(body).ok()?,
        })
    }

    /// Instantiates template 0 (`geni-small`) as `name`, not on hold, without extra template.
    pub fn instantiate(&mut self, name: &'static str) -> i32 {
        let params = [
            SESSION,
            P::I(0),
            P::S(name),
            P::B(false),
            P::S(""),
            P::B(false),
        ];
        self.call("one.template.instantiate", &params).int()
    }

    /// Calls a method and decodes the reply, reconnecting when the server closed the connection.
    pub fn call(&mut self, method: &str, params: &[P]) -> Reply {
        let answer = self.post(&encode(method, params)).expect("an answer");
        if answer.connection == "close" {
            *self = Connection::open(self.address);
        }
        assert_eq!(answer.status, 200, "HTTP status");
        decode(&answer.body)
    }
}

/// A decoded reply.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// `[true, value, 0]`.
    Ok(Element),
    /// `[false, message, code, resp_id(, i8)]`: message, code, element count.
    Err(String, i32, usize),
    /// `<fault>`.
    Fault(i32, String),
}

impl Reply {
    /// The string payload of a success.
    pub fn text(&self) -> String {
        match self {
            Reply::Ok(v) => v.value_at("string").to_owned(),
            other => panic!("expected success, got {other:?}"),
        }
    }

    /// The int payload of a success.
    pub fn int(&self) -> i32 {
        match self {
            Reply::Ok(v) => v.value_at("i4").parse().expect("an i4"),
            other => panic!("expected success, got {other:?}"),
        }
    }

    /// The message and code of a failure.
    pub fn failure(&self) -> (String, i32) {
        match self {
            Reply::Err(m, c, _) => (m.clone(), *c),
            other => panic!("expected failure, got {other:?}"),
        }
    }
}

/// Decodes a `<methodResponse>`.
pub fn decode(body: &str) -> Reply {
    let root = xml::parse(body).expect("reply is XML");
    if let Some(fault) = root.at("fault/value/struct") {
        let members = fault.children();
        let code = members[0].value_at("value/i4").parse().expect("code");
        let text = members[1].value_at("value/string").to_owned();
        return Reply::Fault(code, text);
    }
    let data = root.at("params/param/value/array/data").expect("array");
    let values = data.children();
    if values[0].value_at("boolean") == "1" {
        Reply::Ok(values[1].clone())
    } else {
        let code = values[2].value_at("i4").parse().expect("code");
        Reply::Err(values[1].value_at("string").to_owned(), code, values.len())
    }
}

/// A document with the OpenNebula namespace on its root, as the schemas expect.
pub fn with_namespace(document: &str) -> String {
    let close = document.find('>').expect("a root element");
    let (open, rest) = document.split_at(close);
    let open = open.trim_end_matches('/');
    let self_closed = document[..=close].ends_with("/>");
    let tail = if self_closed {
        format!("/{rest}")
    } else {
        rest.to_owned()
    };
    format!("{open} xmlns=\"http://opennebula.org/XMLSchema\"{tail}")
}
