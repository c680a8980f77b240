//! Loose XML-RPC arguments to typed ones, leniently (GENI AM API, "Data types"):
//! positional parameters by index and name, the options struct (unknown
//! options ignored; booleans as `boolean`, `int` 0/1 or strings; times as
//! RFC 3339 strings in any common spelling or `dateTime.iso8601`),
//! `geni_rspec_version`, `geni_users`, and the `urns` argument. Every
//! refusal is BADARGS naming the method and the argument, except an RSpec
//! version the AM does not speak (BADVERSION).

use super::errors::bad_argument;
use crate::geni::AmError;
use crate::model::UserKeys;
use chrono::{DateTime, Utc};
use geni_xmlrpc::{Value, as_bool, as_str, as_struct, as_xmlrpc_datetime};
use std::collections::BTreeMap;

/// The positional parameters of one call.
#[derive(Debug, Clone, Copy)]
pub struct Params<'a> {
    method: &'a str,
    params: &'a [Value],
}

impl<'a> Params<'a> {
    /// The parameters `params` of `method`.
    pub fn new(method: &'a str, params: &'a [Value]) -> Self {
        Self { method, params }
    }

    /// The method name, for messages.
    pub fn method(&self) -> &'a str {
        self.method
    }

    /// Parameter `index` (0-based), called `name` in messages.
    pub fn get(&self, index: usize, name: &str) -> Result<&'a Value, AmError> {
        self.params.get(index).ok_or_else(|| {
            bad_argument(
                self.method,
                format!("argument {} ({name}) is missing", index + 1),
            )
        })
    }

    /// Parameter `index` as a string.
    pub fn string(&self, index: usize, name: &str) -> Result<&'a str, AmError> {
        let value = self.get(index, name)?;
        as_str(value).ok_or_else(|| {
            bad_argument(
                self.method,
                format!("argument {} ({name}) must be a string", index + 1),
            )
        })
    }

    /// Parameter `index` as an array of strings.
    pub fn strings(&self, index: usize, name: &str) -> Result<Vec<&'a str>, AmError> {
        let not_strings = || {
            bad_argument(
                self.method,
                format!(
                    "argument {} ({name}) must be an array of strings",
                    index + 1
                ),
            )
        };
        match self.get(index, name)? {
            Value::Array(items) => items
                .iter()
                .map(|v| as_str(v).ok_or_else(not_strings))
                .collect(),
            _ => Err(not_strings()),
        }
    }

    /// Parameter `index` as a time (`expiration_time`).
    pub fn time(&self, index: usize, name: &str) -> Result<DateTime<Utc>, AmError> {
        let value = self.get(index, name)?;
        time_of(value).map_err(|why| bad_argument(self.method, format!("{name}: {why}")))
    }

    /// The options struct at `index`; absent means no options (only
    /// GetVersion may omit it, but refusing a call for that helps nobody).
    pub fn options(&self, index: usize) -> Result<Options<'a>, AmError> {
        match self.params.get(index) {
            None => Ok(Options::empty(self.method)),
            Some(value) => as_struct(value)
                .map(|members| Options {
                    method: self.method,
                    members: Some(members),
                })
                .ok_or_else(|| {
                    bad_argument(
                        self.method,
                        format!("argument {} (options) must be a struct", index + 1),
                    )
                }),
        }
    }
}

/// The options struct of a call.
#[derive(Debug, Clone, Copy)]
pub struct Options<'a> {
    method: &'a str,
    members: Option<&'a BTreeMap<String, Value>>,
}

impl<'a> Options<'a> {
    /// No options.
    pub fn empty(method: &'a str) -> Self {
        Self {
            method,
            members: None,
        }
    }

    /// The option `name`, if sent.
    pub fn get(&self, name: &str) -> Option<&'a Value> {
        self.members.and_then(|m| m.get(name))
    }

    /// A boolean option; absent is false.
    pub fn flag(&self, name: &str) -> Result<bool, AmError> {
        match self.get(name) {
            None => Ok(false),
            Some(value) => as_bool(value).ok_or_else(|| {
                bad_argument(
                    self.method,
                    format!("option {name} must be a boolean (true/false, 1/0)"),
                )
            }),
        }
    }

    /// A string option.
    pub fn string(&self, name: &str) -> Result<Option<&'a str>, AmError> {
        self.get(name)
            .map(|value| {
                as_str(value).ok_or_else(|| {
                    bad_argument(self.method, format!("option {name} must be a string"))
                })
            })
            .transpose()
    }

    /// A time option (`geni_end_time`).
    pub fn time(&self, name: &str) -> Result<Option<DateTime<Utc>>, AmError> {
        self.get(name)
            .map(|value| {
                time_of(value).map_err(|why| bad_argument(self.method, format!("{name}: {why}")))
            })
            .transpose()
    }

    /// The users option (`geni_users`), if sent.
    pub fn users(&self, name: &str) -> Result<Option<Vec<UserKeys>>, AmError> {
        self.get(name)
            .map(|value| users(self.method, name, value))
            .transpose()
    }

    /// The values of a template's inputs (the option
    /// `geni_template_inputs`: a struct of strings, ints, doubles and
    /// booleans); none when absent. Anything else is BADARGS naming the key.
    pub fn template_inputs(&self) -> Result<geni_templates::Inputs, AmError> {
        use geni_templates::Scalar;
        const NAME: &str = "geni_template_inputs";
        let Some(value) = self.get(NAME) else {
            return Ok(Default::default());
        };
        let Value::Struct(members) = value else {
            return Err(bad_argument(
                self.method,
                format!("option {NAME} must be a struct of input names to values"),
            ));
        };
        members
            .iter()
            .map(|(key, value)| {
                let scalar = match value {
                    Value::String(s) => Scalar::Str(s.clone()),
                    Value::Integer(i) => Scalar::Int(i64::from(*i)),
                    Value::Long(i) => Scalar::Int(*i),
                    Value::Double(d) => Scalar::Float(*d),
                    Value::Boolean(b) => Scalar::Bool(*b),
                    _ => {
                        return Err(bad_argument(
                            self.method,
                            format!(
                                "option {NAME}: input `{key}` must be a string, int, double or boolean"
                            ),
                        ));
                    }
                };
                Ok((key.clone(), scalar))
            })
            .collect()
    }

    /// Checks the required `geni_rspec_version` option names GENI 3:
    /// missing or malformed is BADARGS, another version BADVERSION.
    pub fn require_rspec_version(&self) -> Result<(), AmError> {
        let Some(value) = self.get("geni_rspec_version") else {
            return Err(bad_argument(
                self.method,
                "option geni_rspec_version is required, e.g. {type: \"GENI\", version: \"3\"}",
            ));
        };
        let part = |name: &str| {
            geni_xmlrpc::member(value, name)
                .and_then(version_text)
                .ok_or_else(|| {
                    bad_argument(
                        self.method,
                        format!("option geni_rspec_version needs a string member `{name}`"),
                    )
                })
        };
        let (kind, version) = (part("type")?, part("version")?);
        if kind.trim().eq_ignore_ascii_case("GENI") && version.trim() == "3" {
            Ok(())
        } else {
            Err(AmError::bad_version(format!(
                "{}: RSpec type {kind:?} version {version:?} is not supported; this aggregate speaks GENI 3",
                self.method
            )))
        }
    }
}

/// A version-ish member: a string, or an int some clients send.
fn version_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Integer(i) => Some(i.to_string()),
        _ => None,
    }
}

/// A time sent as a string (any spelling `time::parse` reads) or as a
/// `dateTime.iso8601` value (UTC).
fn time_of(value: &Value) -> Result<DateTime<Utc>, String> {
    if let Some(t) = as_xmlrpc_datetime(value) {
        return Ok(t);
    }
    let text = as_str(value).ok_or("must be a date and time string (RFC 3339)")?;
    crate::time::parse(text).map_err(|e| e.0)
}

/// A `geni_users` / `users` array: `[{urn, keys: [..]}]`. Keys lose
/// trailing newlines; other members (PG `privs`) are ignored.
pub fn users(method: &str, name: &str, value: &Value) -> Result<Vec<UserKeys>, AmError> {
    let bad = |what: &str| bad_argument(method, format!("{name}: {what}"));
    let Value::Array(entries) = value else {
        return Err(bad("must be an array of {urn, keys} structs"));
    };
    entries
        .iter()
        .enumerate()
        .map(|(i, entry)| {
            let urn = geni_xmlrpc::member(entry, "urn")
                .and_then(as_str)
                .ok_or_else(|| bad(&format!("entry {} has no string `urn`", i + 1)))?;
            let keys = match geni_xmlrpc::member(entry, "keys") {
                None => Vec::new(),
                Some(Value::Array(keys)) => keys
                    .iter()
                    .map(|k| as_str(k).map(|k| k.trim_end().to_owned()))
                    .collect::<Option<Vec<_>>>()
                    .ok_or_else(|| {
                        bad(&format!("entry {} has a key that is not a string", i + 1))
                    })?,
                Some(_) => return Err(bad(&format!("entry {}: `keys` must be an array", i + 1))),
            };
            Ok(UserKeys {
                urn: urn.trim().to_owned(),
                keys,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(members: &[(&str, Value)]) -> Value {
        Value::Struct(
            members
                .iter()
                .map(|(k, v)| ((*k).to_owned(), v.clone()))
                .collect(),
        )
    }

    fn code(result: Result<(), AmError>) -> i32 {
        result.err().map_or(0, |e| e.code.as_i32())
    }

    #[test]
    fn missing_arguments_are_badargs_naming_them() {
        let params = [Value::String("urn".into())];
        let p = Params::new("Allocate", &params);
        let e = p.get(2, "rspec").unwrap_err();
        assert_eq!(e.code.as_i32(), 1);
        assert_eq!(e.message, "Allocate: argument 3 (rspec) is missing");
        assert_eq!(p.string(0, "slice_urn").unwrap(), "urn");
        assert!(p.strings(0, "urns").is_err());
        assert!(p.options(1).unwrap().get("x").is_none());
    }

    #[test]
    fn flags_are_lenient_and_default_to_false() {
        let params = [options(&[
            ("a", Value::Integer(1)),
            ("b", Value::String("false".into())),
            ("c", Value::String("maybe".into())),
        ])];
        let o = Params::new("ListResources", &params).options(0).unwrap();
        assert!(o.flag("a").unwrap());
        assert!(!o.flag("b").unwrap());
        assert!(!o.flag("absent").unwrap());
        assert_eq!(o.flag("c").unwrap_err().code.as_i32(), 1);
    }

    #[test]
    fn rspec_version_missing_is_badargs_and_unknown_is_badversion() {
        let geni = |t: &str, v: Value| {
            [options(&[(
                "geni_rspec_version",
                options(&[("type", Value::String(t.into())), ("version", v)]),
            )])]
        };
        let check = |params: &[Value]| {
            code(
                Params::new("Describe", params)
                    .options(0)
                    .unwrap()
                    .require_rspec_version(),
            )
        };
        assert_eq!(check(&[options(&[])]), 1);
        assert_eq!(check(&geni(" geni ", Value::String("3".into()))), 0);
        assert_eq!(check(&geni("GENI", Value::Integer(3))), 0);
        assert_eq!(check(&geni("ProtoGENI", Value::String("2".into()))), 4);
        assert_eq!(check(&geni("GENI", Value::String("2".into()))), 4);
        let no_version = [options(&[(
            "geni_rspec_version",
            options(&[("type", Value::String("GENI".into()))]),
        )])];
        assert_eq!(check(&no_version), 1);
    }

    #[test]
    fn times_are_read_from_strings_and_datetimes() {
        let params = [
            Value::String("2026-05-01 12:00:00".into()),
            Value::String("tomorrow".into()),
        ];
        let p = Params::new("Renew", &params);
        assert_eq!(
            crate::time::format(&p.time(0, "expiration_time").unwrap()),
            "2026-05-01T12:00:00Z"
        );
        assert_eq!(p.time(1, "expiration_time").unwrap_err().code.as_i32(), 1);
    }

    #[test]
    fn users_are_read_with_keys_chomped() {
        let value = Value::Array(vec![options(&[
            ("urn", Value::String("urn:publicid:IDN+x+user+alice".into())),
            (
                "keys",
                Value::Array(vec![Value::String("ssh-rsa AAAA a@b\n".into())]),
            ),
            ("privs", Value::Array(vec![])),
        ])]);
        let users = users("Provision", "geni_users", &value).unwrap();
        assert_eq!(users[0].urn, "urn:publicid:IDN+x+user+alice");
        assert_eq!(users[0].keys, vec!["ssh-rsa AAAA a@b".to_owned()]);
        let bad = Value::Array(vec![options(&[("keys", Value::Array(vec![]))])]);
        assert_eq!(
            super::users("Provision", "geni_users", &bad)
                .unwrap_err()
                .code
                .as_i32(),
            1
        );
    }
}
