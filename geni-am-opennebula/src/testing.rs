//! Test support for the OpenNebula driver: a replaying [`OneRpc`] that
//! answers each call with the next scripted reply — the recorded replies
//! of a real oned 7.4.0 (the recorded test data, [`recorded_dir`]) or
//! a given value — and records every call, and a reader that parses an
//! extra template back into `(PATH, value)` pairs, as oned would see it.

use super::rpc::wire::decode_response;
use super::rpc::{Answer, OneRpc, Param, RpcError};
use quick_xml::Reader;
use quick_xml::events::Event;
use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::Mutex;

/// The folder of the recorded oned 7.4.0 traffic.
pub fn recorded_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/opennebula/recorded/oned-7.4.0")
}

/// The reply recorded as `<name>.response.xml`, decoded by the client's
/// own reader: element `[1]` of a success, or the refusal or fault.
pub fn recorded(name: &str, method: &str) -> Result<Answer, RpcError> {
    let path = recorded_dir().join(format!("{name}.response.xml"));
    let body = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    decode_response(method, &body, 16 << 20)
}

/// One call the driver made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sent {
    /// The method.
    pub method: String,
    /// The parameters after the session.
    pub params: Vec<Param>,
}

/// A replaying [`OneRpc`]: each call must name the method of the next
/// scripted reply, which it gets; every call is recorded.
#[derive(Debug, Default)]
pub struct Replay {
    script: Mutex<VecDeque<(String, Result<Answer, RpcError>)>>,
    sent: Mutex<Vec<Sent>>,
}

impl Replay {
    /// A replay with nothing scripted.
    pub fn new() -> Replay {
        Replay::default()
    }

    /// Scripts the next reply to `method`: the recorded `<name>.response.xml`.
    pub fn recorded(&self, method: &str, name: &str) -> &Self {
        self.reply(method, recorded(name, method))
    }

    /// Scripts the next reply to `method`.
    pub fn reply(&self, method: &str, reply: Result<Answer, RpcError>) -> &Self {
        self.script
            .lock()
            .unwrap()
            .push_back((method.to_owned(), reply));
        self
    }

    /// Scripts an integer answer (a new object id, an action's VM id).
    pub fn id(&self, method: &str, id: i64) -> &Self {
        self.reply(method, Ok(Answer::Int(id)))
    }

    /// Scripts a document answer.
    pub fn document(&self, method: &str, xml: &str) -> &Self {
        self.reply(method, Ok(Answer::Str(xml.to_owned())))
    }

    /// The calls made so far (and forgets them).
    pub fn take_sent(&self) -> Vec<Sent> {
        std::mem::take(&mut *self.sent.lock().unwrap())
    }

    /// The methods called so far, in order (and forgets the calls).
    pub fn take_methods(&self) -> Vec<String> {
        self.take_sent().into_iter().map(|s| s.method).collect()
    }

    /// Whether every scripted reply was used.
    pub fn is_done(&self) -> bool {
        self.script.lock().unwrap().is_empty()
    }
}

impl OneRpc for Replay {
    fn call(&self, method: &str, params: &[Param]) -> Result<Answer, RpcError> {
        self.sent.lock().unwrap().push(Sent {
            method: method.to_owned(),
            params: params.to_vec(),
        });
        let (expected, reply) = self
            .script
            .lock()
            .unwrap()
            .pop_front()
            .unwrap_or_else(|| panic!("unscripted call {method}({params:?})"));
        assert_eq!(method, expected, "call {method}({params:?}) out of order");
        reply
    }
}

/// Parses an XML extra template as oned does into `(PATH, value)` pairs in
/// document order (`CONTEXT/USERNAME` inside a vector); panics on anything
/// that is not a well-formed template of single text nodes.
pub fn parse_extra_template(xml: &str) -> Vec<(String, String)> {
    assert!(xml.starts_with('<'), "an XML template starts with <");
    let mut reader = Reader::from_str(xml);
    let mut path: Vec<String> = Vec::new();
    let mut text = String::new();
    let mut pairs = Vec::new();
    loop {
        match reader.read_event().expect("well-formed XML") {
            Event::Start(start) => {
                path.push(String::from_utf8(start.name().as_ref().to_vec()).unwrap());
                text.clear();
            }
            Event::Text(t) => text.push_str(&t.xml_content().expect("escaped text")),
            Event::GeneralRef(r) => {
                let name = String::from_utf8(r.to_vec()).unwrap();
                text.push(match name.as_str() {
                    "amp" => '&',
                    "lt" => '<',
                    "gt" => '>',
                    "quot" => '"',
                    "apos" => '\'',
                    other => panic!("entity &{other};"),
                });
            }
            Event::End(_) => {
                if !text.is_empty() {
                    pairs.push((path[1..].join("/"), std::mem::take(&mut text)));
                }
                path.pop();
            }
            Event::Eof => break,
            Event::Empty(_) | Event::CData(_) | Event::DocType(_) | Event::PI(_) => {
                panic!("not a template of single text nodes: {xml}")
            }
            _ => {}
        }
    }
    pairs
}

/// The value at `path` of a parsed template.
pub fn value_at<'a>(pairs: &'a [(String, String)], path: &str) -> Option<&'a str> {
    pairs
        .iter()
        .find(|(p, _)| p == path)
        .map(|(_, v)| v.as_str())
}

/// The recorded document `<name>.payload.xml` (element `[1]` of the reply,
/// pretty-printed), for tests that answer with an edited recording.
pub fn payload(name: &str) -> String {
    let path = recorded_dir().join(format!("{name}.payload.xml"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

impl OneRpc for std::sync::Arc<Replay> {
    fn call(&self, method: &str, params: &[Param]) -> Result<Answer, RpcError> {
        self.as_ref().call(method, params)
    }
}
