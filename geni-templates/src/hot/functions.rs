//! HOT intrinsic functions in resource properties: `get_param` (the
//! parameter's value, or unset), `get_resource` (a reference to another
//! resource of the template), `str_replace` and `list_join` over known
//! text. Functions that need the cloud running (`get_attr`) or files the
//! aggregate never receives (`get_file`) are refused there.

use crate::yaml::params::Params;
use crate::yaml::tree::Kind;
use crate::yaml::{Problems, Yaml};

/// A property's value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Val {
    /// Nothing: an unset parameter or a null.
    Unset,
    /// A value written in the template or passed as a parameter.
    Yaml(Yaml),
    /// Another resource of the template, by name.
    Resource(String),
}

impl Val {
    /// The text of a scalar value.
    pub fn text(&self) -> Option<&str> {
        match self {
            Val::Yaml(y) => y.as_str(),
            _ => None,
        }
    }
}

/// Evaluates the property value `node`.
pub(crate) fn eval(
    node: &Yaml,
    params: &Params,
    resources: &[String],
    problems: &mut Problems,
) -> Val {
    if node.is_null() {
        return Val::Unset;
    }
    let Some((function, args)) = node.single_entry().filter(|(k, _)| is_function(k)) else {
        return Val::Yaml(node.clone());
    };
    match function {
        "get_param" => {
            let name = args
                .as_str()
                .or_else(|| args.items().first().and_then(Yaml::as_str))
                .unwrap_or("");
            match params.get(name) {
                Ok(Some(v)) => {
                    let mut v = v.clone();
                    v.line = node.line;
                    Val::Yaml(v)
                }
                Ok(None) => Val::Unset,
                Err(()) => {
                    problems.refuse(
                        node.line,
                        format!("get_param '{name}': the template declares no such parameter"),
                    );
                    Val::Unset
                }
            }
        }
        "get_resource" => {
            let name = args.as_str().unwrap_or("");
            if resources.iter().any(|r| r == name) {
                Val::Resource(name.to_owned())
            } else {
                problems.refuse(
                    node.line,
                    format!("get_resource '{name}': the template has no such resource"),
                );
                Val::Unset
            }
        }
        "str_replace" => {
            let template = args
                .get("template")
                .map(|t| eval(t, params, resources, problems));
            let Some(mut text) = template.as_ref().and_then(Val::text).map(str::to_owned) else {
                problems.refuse(node.line, "str_replace needs a template text");
                return Val::Unset;
            };
            for (key, value) in args.get("params").map(Yaml::entries).unwrap_or_default() {
                let key = key.as_str().unwrap_or("");
                match eval(value, params, resources, problems) {
                    Val::Yaml(v) if v.as_str().is_some() => text = text.replace(key, v.as_str().unwrap_or("")),
                    _ => problems.refuse(
                        value.line,
                        format!("str_replace: the value for '{key}' is not known when the template is translated"),
                    ),
                }
            }
            Val::Yaml(Yaml::scalar(text, false, node.line, node.column))
        }
        "list_join" => {
            let items = args.items();
            let separator = items.first().and_then(Yaml::as_str).unwrap_or("");
            let mut parts = Vec::new();
            for list in items.iter().skip(1) {
                for item in list.items() {
                    match eval(item, params, resources, problems) {
                        Val::Yaml(v) if v.as_str().is_some() => {
                            parts.push(v.as_str().unwrap_or("").to_owned())
                        }
                        _ => {
                            problems.refuse(
                                item.line,
                                "list_join: an item not known when the template is translated",
                            );
                            return Val::Unset;
                        }
                    }
                }
            }
            Val::Yaml(Yaml::scalar(
                parts.join(separator),
                false,
                node.line,
                node.column,
            ))
        }
        "get_file" => {
            problems.refuse(node.line, "get_file: files beside the template are never sent to the aggregate; put the text in the template");
            Val::Unset
        }
        other => {
            problems.refuse(
                node.line,
                format!("{other} in a property the aggregate must know before the VMs exist: not supported"),
            );
            Val::Unset
        }
    }
}

/// Whether `key` names a HOT intrinsic function.
pub(crate) fn is_function(key: &str) -> bool {
    matches!(
        key,
        "get_param"
            | "get_resource"
            | "get_attr"
            | "str_replace"
            | "str_replace_strict"
            | "str_replace_vstrict"
            | "list_join"
            | "get_file"
            | "digest"
            | "repeat"
            | "str_split"
            | "map_merge"
            | "map_replace"
            | "list_concat"
            | "list_concat_unique"
            | "contains"
            | "yaql"
            | "if"
            | "equals"
            | "not"
            | "and"
            | "or"
            | "filter"
            | "make_url"
            | "resource_facade"
            | "Fn::GetAZs"
            | "Fn::Base64"
    )
}

/// A scalar's text or a short description, for messages.
pub(crate) fn show(v: &Val) -> String {
    match v {
        Val::Unset => "unset".to_owned(),
        Val::Resource(r) => format!("resource '{r}'"),
        Val::Yaml(y) => match &y.kind {
            Kind::Scalar { text, .. } => format!("'{text}'"),
            _ => y.describe(),
        },
    }
}
