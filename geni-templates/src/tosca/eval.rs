//! TOSCA intrinsic functions: `get_input` in properties (the input's
//! value, or unset), and the value of an output: `get_attribute` of a
//! node's or port's address becomes an address the manifest reports;
//! `get_input`, `get_property` and literals become literal text;
//! `concat` and `token` over literal text are computed. What the
//! aggregate cannot know (a volume's id, credentials, text computed from
//! an address) is kept as a literal saying it is unavailable, so the
//! output is reported, not dropped.

use crate::OutputValue;
use crate::yaml::params::Params;
use crate::yaml::tree::Kind;
use crate::yaml::{Problems, Yaml};
use std::collections::HashMap;

/// What an output can point at.
#[derive(Debug, Clone)]
pub(crate) enum Target {
    /// A VM: the `client_id`s of its replicas.
    Compute(Vec<String>),
    /// A port: its node and interface.
    Port { node: String, interface: String },
    /// Anything else, with its properties.
    Other(Yaml),
}

/// The value of a property, its `get_input` resolved; `None` when unset.
pub(crate) fn value(params: &Params, node: &Yaml, problems: &mut Problems) -> Option<Yaml> {
    if node.is_null() {
        return None;
    }
    match node.single_entry() {
        Some(("get_input", name)) => {
            let name_text = name
                .as_str()
                .or_else(|| name.items().first().and_then(Yaml::as_str))
                .unwrap_or("");
            match params.get(name_text) {
                Ok(v) => v.cloned().map(|mut v| {
                    v.line = node.line;
                    v
                }),
                Err(()) => {
                    problems.refuse(
                        node.line,
                        format!("get_input '{name_text}': the template declares no such input"),
                    );
                    None
                }
            }
        }
        Some((
            f @ ("get_property" | "get_attribute" | "get_operation_output" | "concat" | "token"),
            _,
        )) => {
            problems.refuse(
                node.line,
                format!(
                    "{f} in a property the aggregate must know before the VMs exist: not supported"
                ),
            );
            None
        }
        _ => Some(node.clone()),
    }
}

enum Ev {
    Text(String),
    Address(OutputValue),
    Unavailable(String),
}

/// The value of one output expression.
pub(crate) fn output(
    expr: &Yaml,
    params: &Params,
    targets: &HashMap<String, Target>,
    problems: &mut Problems,
) -> OutputValue {
    match eval(expr, params, targets, problems) {
        Ev::Text(t) => OutputValue::Literal(t),
        Ev::Address(a) => a,
        Ev::Unavailable(why) => {
            OutputValue::Literal(format!("unavailable at this aggregate: {why}"))
        }
    }
}

fn eval(
    expr: &Yaml,
    params: &Params,
    targets: &HashMap<String, Target>,
    problems: &mut Problems,
) -> Ev {
    let texts = |args: &[Yaml], problems: &mut Problems| -> Result<Vec<String>, Ev> {
        args.iter()
            .map(|a| match eval(a, params, targets, problems) {
                Ev::Text(t) => Ok(t),
                Ev::Address(_) => Err(Ev::Unavailable(
                    "text computed from an address known only once the VMs run".to_owned(),
                )),
                other => Err(other),
            })
            .collect()
    };
    match expr.single_entry() {
        Some(("get_input", _)) => match value(params, expr, problems) {
            Some(v) => eval(&v, params, targets, problems),
            None => Ev::Text(String::new()),
        },
        Some(("get_attribute", args)) => attribute(expr.line, args.items(), targets, problems),
        Some(("get_property", args)) => match args.items() {
            [node, name, ..] => {
                let found = node
                    .as_str()
                    .and_then(|n| targets.get(n))
                    .and_then(|t| match t {
                        Target::Other(props) => name.as_str().and_then(|p| props.get(p)).cloned(),
                        _ => None,
                    });
                match found.and_then(|v| value(params, &v, problems)) {
                    Some(v) => eval(&v, params, targets, problems),
                    None => Ev::Unavailable(format!("get_property {}", describe_args(args))),
                }
            }
            _ => Ev::Unavailable("get_property without a node and a property".to_owned()),
        },
        Some(("concat", args)) => match texts(args.items(), problems) {
            Ok(parts) => Ev::Text(parts.concat()),
            Err(e) => e,
        },
        Some(("token", args)) => match args.items() {
            [string, separator, index] => match texts(std::slice::from_ref(string), problems) {
                Ok(s) => {
                    let sep = separator.as_str().unwrap_or("");
                    let index = index.as_i64().unwrap_or(0).max(0) as usize;
                    let split: Vec<&str> = if sep.is_empty() {
                        vec![&s[0]]
                    } else {
                        s[0].split(sep).collect()
                    };
                    Ev::Text(split.get(index).copied().unwrap_or("").to_owned())
                }
                Err(Ev::Unavailable(why)) => Ev::Unavailable(format!("token of {why}")),
                Err(e) => e,
            },
            _ => Ev::Unavailable("token without a string, a separator and an index".to_owned()),
        },
        _ => match &expr.kind {
            Kind::Scalar { text, .. } if !expr.is_null() => Ev::Text(text.clone()),
            Kind::Scalar { .. } => Ev::Text(String::new()),
            _ => Ev::Unavailable(format!(
                "{} of no function this aggregate evaluates",
                expr.describe()
            )),
        },
    }
}

fn describe_args(args: &Yaml) -> String {
    let parts: Vec<&str> = args.items().iter().filter_map(Yaml::as_str).collect();
    format!("[{}]", parts.join(", "))
}

const ADDRESSES: &[&str] = &["private_address", "public_address", "ip_address"];

fn attribute(
    line: usize,
    args: &[Yaml],
    targets: &HashMap<String, Target>,
    problems: &mut Problems,
) -> Ev {
    let (Some(node), Some(attr)) = (
        args.first().and_then(Yaml::as_str),
        args.get(1).and_then(Yaml::as_str),
    ) else {
        problems.refuse(line, "get_attribute takes [node, attribute, …]");
        return Ev::Text(String::new());
    };
    let Some(target) = targets.get(node) else {
        problems.refuse(
            line,
            format!("get_attribute: the template has no node '{node}'"),
        );
        return Ev::Text(String::new());
    };
    let unavailable = || Ev::Unavailable(format!("attribute {attr} of '{node}'"));
    match target {
        Target::Compute(replicas) if ADDRESSES.contains(&attr) => {
            let index = match args.get(2) {
                None => 0,
                Some(i) => match i.as_i64().and_then(|i| usize::try_from(i).ok()) {
                    Some(i) => i,
                    None => return unavailable(),
                },
            };
            match replicas.get(index) {
                Some(replica) => Ev::Address(OutputValue::Address {
                    node: replica.clone(),
                    interface: None,
                }),
                None => {
                    problems.refuse(
                        line,
                        format!(
                            "get_attribute: '{node}' has {} VM(s), none at index {index}",
                            replicas.len()
                        ),
                    );
                    Ev::Text(String::new())
                }
            }
        }
        Target::Port { node, interface } if attr == "ip_address" => {
            Ev::Address(OutputValue::Address {
                node: node.clone(),
                interface: Some(interface.clone()),
            })
        }
        _ => unavailable(),
    }
}
