//! Building the values of a document while it is read: one frame per open
//! element, each closed element handing what it holds to its parent. What
//! XML-RPC does not allow in arrangement (a `<param>` without a value, two
//! `<methodName>`s, text beside a typed value, a scalar whose text is not
//! of its type…) does not stop the reading — the reader still checks the
//! rest of the document, whose errors come first — but marks the part it
//! happened in (the `<params>`, the `<fault>`, or the rest) as not whole.
//! The rules are those `dxr` applied when it built the values after the
//! check: whitespace-only text of an untyped value is the empty string,
//! other text is kept as it is; integers and doubles may be surrounded by
//! whitespace, booleans and dates may not; in a struct, a later member of
//! the same name wins.

use crate::Value;
use std::collections::BTreeMap;

/// What a document held, once read.
#[derive(Default)]
pub(super) struct Read {
    /// The `<methodName>` text.
    pub(super) method: Option<String>,
    /// The values of the `<param>`s of `<params>`.
    pub(super) params: Option<Section>,
    /// The value of `<fault>`.
    pub(super) fault: Option<Section>,
    /// The members of the struct of `<fault>`, in the order sent.
    pub(super) fault_members: Vec<(String, Value)>,
    /// Whether everything outside `<params>` and `<fault>` is as XML-RPC
    /// arranges it.
    pub(super) whole: bool,
}

/// The values of `<params>` or `<fault>`, and whether they are whole.
pub(super) struct Section {
    /// The values, in order.
    pub(super) items: Vec<Value>,
    /// Whether nothing in the section broke XML-RPC's arrangement.
    pub(super) whole: bool,
}

/// An open element and what it has received so far.
enum Frame {
    Root,
    MethodName(String),
    Params(Vec<Value>),
    Param(Option<Value>),
    Fault(Option<Value>),
    Value {
        text: String,
        typed: Option<Value>,
    },
    /// A scalar type element or `<name>`: its element name and its text.
    Text(&'static str, String),
    Struct(Vec<(String, Value)>),
    Member {
        name: Option<String>,
        value: Option<Value>,
    },
    Array(Option<Vec<Value>>),
    Data(Vec<Value>),
}

/// The top-level part of the document an element sits in.
#[derive(Clone, Copy)]
enum Part {
    Params,
    Fault,
    Rest,
}

/// The frames of the open elements and what the closed ones left.
pub(super) struct Builder {
    frames: Vec<Frame>,
    read: Read,
    params: Option<Vec<Value>>,
    fault: Option<Vec<Value>>,
    broken: [bool; 3],
    xml_1_1: bool,
    /// Text followed the last item of the innermost open list.
    list_ended: bool,
    root_closed: bool,
}

impl Builder {
    pub(super) fn new() -> Builder {
        Builder {
            frames: Vec::with_capacity(16),
            read: Read::default(),
            params: None,
            fault: None,
            broken: [false; 3],
            xml_1_1: false,
            list_ended: false,
            root_closed: false,
        }
    }

    /// An element of XML-RPC (already checked to be in its place) opens.
    pub(super) fn open(&mut self, name: &'static str) {
        if std::mem::take(&mut self.list_ended) {
            self.broke();
        }
        let frame = match name {
            "methodCall" | "methodResponse" => Frame::Root,
            "methodName" => Frame::MethodName(String::new()),
            "params" => Frame::Params(Vec::new()),
            "param" => Frame::Param(None),
            "fault" => Frame::Fault(None),
            "value" => Frame::Value {
                text: String::new(),
                typed: None,
            },
            "struct" => Frame::Struct(Vec::new()),
            "member" => Frame::Member {
                name: None,
                value: None,
            },
            "array" => Frame::Array(None),
            "data" => Frame::Data(Vec::new()),
            _ => Frame::Text(name, String::new()),
        };
        self.frames.push(frame);
    }

    /// Text (decoded) inside the innermost open element; kept where text
    /// is a value or a name, ignored elsewhere.
    pub(super) fn text(&mut self, text: &str) {
        match self.frames.last_mut() {
            Some(
                Frame::MethodName(held) | Frame::Value { text: held, .. } | Frame::Text(_, held),
            ) => {
                if self.xml_1_1 {
                    held.extend(text.chars().map(|c| match c {
                        '\u{85}' | '\u{2028}' => '\n',
                        c => c,
                    }));
                } else {
                    held.push_str(text);
                }
            }
            // Text after an item of a list ends the list: another item
            // may not follow.
            Some(Frame::Params(items) | Frame::Data(items)) if !items.is_empty() => {
                self.list_ended |= !is_blank(text);
            }
            Some(Frame::Struct(members)) if !members.is_empty() => {
                self.list_ended |= !is_blank(text);
            }
            // Text before the root element.
            None if !self.root_closed && !is_blank(text) => self.broken = [true; 3],
            _ => {}
        }
    }

    /// A character reference that names no character.
    pub(super) fn bad_reference(&mut self) {
        self.broke();
    }

    /// An XML declaration naming no version, or one other than 1.0 and 1.1.
    pub(super) fn bad_declaration(&mut self) {
        self.broken = [true; 3];
    }

    /// The attributes of the innermost open element (which XML-RPC has
    /// none of, and which are otherwise ignored) are not well-formed; they
    /// matter on the elements that arrange values, not on scalars.
    pub(super) fn bad_attributes(&mut self) {
        if !matches!(self.frames.last(), Some(Frame::Text(kind, _)) if *kind != "name") {
            self.broke();
        }
    }

    /// The document declares XML 1.1, whose line ends also include NEL
    /// and LINE SEPARATOR (XML 1.1 §2.11): text reads them as LF.
    pub(super) fn xml_1_1(&mut self) {
        self.xml_1_1 = true;
    }

    /// The innermost open element closes.
    pub(super) fn close(&mut self) {
        self.list_ended = false;
        let Some(frame) = self.frames.pop() else {
            return;
        };
        match frame {
            Frame::Root => self.root_closed = true,
            Frame::MethodName(text) => {
                if is_blank(&text) || self.read.method.is_some() {
                    self.broke();
                }
                self.read.method = Some(text);
            }
            Frame::Params(items) => {
                if self.params.is_some() {
                    self.broken[Part::Params as usize] = true;
                }
                self.params = Some(items);
            }
            Frame::Fault(value) => {
                if self.fault.is_some() {
                    self.broken[Part::Fault as usize] = true;
                }
                self.fault = Some(value.into_iter().collect());
            }
            Frame::Param(value) => match (value, self.frames.last_mut()) {
                (Some(value), Some(Frame::Params(items))) => items.push(value),
                _ => self.broke(),
            },
            Frame::Value { text, typed } => {
                // The value of a fault is read for its struct alone.
                let in_fault = matches!(self.frames.last(), Some(Frame::Fault(_)));
                let value = match typed {
                    Some(value) if in_fault || is_blank(&text) => value,
                    Some(value) => {
                        self.broke();
                        value
                    }
                    None if is_blank(&text) => Value::String(String::new()),
                    None => Value::String(text),
                };
                self.give_value(value);
            }
            Frame::Text("name", text) => {
                let blank = is_blank(&text);
                let named = match self.frames.last_mut() {
                    Some(Frame::Member { name: held, .. }) if held.is_none() => {
                        *held = Some(text);
                        true
                    }
                    _ => false,
                };
                if !named || blank {
                    self.broke();
                }
            }
            Frame::Text(kind, text) => match scalar(kind, &text) {
                Some(value) => self.give_typed(value),
                None => self.broke(),
            },
            Frame::Struct(members) => {
                if let [.., Frame::Fault(_), Frame::Value { .. }] = self.frames.as_slice() {
                    self.read.fault_members = members.clone();
                }
                self.give_typed(Value::Struct(
                    members.into_iter().collect::<BTreeMap<_, _>>(),
                ));
            }
            Frame::Member { name, value } => match (name, value, self.frames.last_mut()) {
                (Some(name), Some(value), Some(Frame::Struct(members))) => {
                    members.push((name, value));
                }
                _ => self.broke(),
            },
            Frame::Array(data) => self.give_typed(Value::Array(data.unwrap_or_default())),
            Frame::Data(values) => match self.frames.last_mut() {
                Some(Frame::Array(held)) if held.is_none() => *held = Some(values),
                _ => self.broke(),
            },
        }
    }

    /// What was read, once the document ended.
    pub(super) fn finish(mut self) -> Read {
        let [params, fault, rest] = self.broken;
        self.read.params = self.params.map(|items| Section {
            items,
            whole: !params,
        });
        self.read.fault = self.fault.map(|items| Section {
            items,
            whole: !fault,
        });
        self.read.whole = !rest;
        self.read
    }

    /// Hands a closed `<value>` to its parent (`<param>`, `<member>`,
    /// `<data>` or `<fault>`), each of which but `<data>` holds one.
    fn give_value(&mut self, value: Value) {
        let slot = match self.frames.last_mut() {
            Some(Frame::Data(values)) => {
                values.push(value);
                return;
            }
            Some(Frame::Param(slot) | Frame::Fault(slot) | Frame::Member { value: slot, .. }) => {
                slot
            }
            _ => return self.broke(),
        };
        if slot.is_some() {
            return self.broke();
        }
        *slot = Some(value);
    }

    /// Hands a closed typed value to its `<value>`, which holds one.
    fn give_typed(&mut self, value: Value) {
        match self.frames.last_mut() {
            Some(Frame::Value { typed, .. }) if typed.is_none() => *typed = Some(value),
            _ => self.broke(),
        }
    }

    /// Marks the part of the document now open as not whole.
    fn broke(&mut self) {
        let part = match self.frames.get(1) {
            Some(Frame::Params(_)) => Part::Params,
            Some(Frame::Fault(_)) => Part::Fault,
            _ => Part::Rest,
        };
        self.broken[part as usize] = true;
    }
}

/// The value of a scalar element `kind` with `text`, if the text is one.
fn scalar(kind: &str, text: &str) -> Option<Value> {
    let trimmed = text.trim_matches(is_xml_space);
    Some(match kind {
        "string" => Value::String(text.to_owned()),
        "i4" | "int" => Value::Integer(trimmed.parse().ok()?),
        "i8" => Value::Long(trimmed.parse().ok()?),
        "double" => Value::Double(trimmed.parse().ok()?),
        "boolean" => match text {
            "1" => Value::Boolean(true),
            "0" => Value::Boolean(false),
            _ => return None,
        },
        "dateTime.iso8601" => Value::DateTime(text.parse().ok()?),
        "base64" => {
            use base64::Engine;
            let packed: String = text.chars().filter(|c| !c.is_ascii_whitespace()).collect();
            Value::Base64(
                base64::engine::general_purpose::STANDARD
                    .decode(packed)
                    .ok()?,
            )
        }
        "nil" => Value::Nil,
        _ => return None,
    })
}

/// XML's white space (XML 1.0 §2.3, `S`).
fn is_xml_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r')
}

/// Whether `text` is empty or only white space.
fn is_blank(text: &str) -> bool {
    text.chars().all(is_xml_space)
}
