//! GetVersion (GENI AM API v3 and v2, "GetVersion"): the API versions served at absolute
//! URLs, the RSpec versions spoken (GENI 3 with the ssh-user, opstate and
//! proxy extensions), the credential types accepted, the allocation model
//! (`geni_many`; `geni_single_allocation` omitted, i.e. false) and who the
//! aggregate is. This aggregate adds `geni_am_draining` (a boolean, with
//! `geni_am_draining_since` while true): an operator drained it, so it
//! allocates nothing new (clients ignore members they do not know).

use super::envelope::{fields, text};
use geni_credentials::sfa::wire::CREDENTIAL_TYPES;
use geni_rspec::ns;
use geni_xmlrpc::Value;

/// The absolute URLs of the two endpoints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoints {
    /// The AM API v2 URL (`…/am/2`).
    pub v2: String,
    /// The AM API v3 URL (`…/am/3`).
    pub v3: String,
}

/// Extension namespaces the aggregate understands, advertised in every
/// RSpec version entry.
const EXTENSIONS: [&str; 3] = [ns::SSH_USER, ns::OPSTATE, ns::PROXY];

/// One `{type, version, schema, namespace, extensions}` entry for GENI 3.
fn rspec_version(schema: &str) -> Value {
    fields([
        ("type", text("GENI")),
        ("version", text("3")),
        ("schema", text(format!("{}/{schema}", ns::GENI_V3))),
        ("namespace", text(ns::GENI_V3)),
        (
            "extensions",
            Value::Array(EXTENSIONS.iter().map(|e| text(*e)).collect()),
        ),
    ])
}

/// The entries of the template languages a request may also be written
/// in (TOSCA, RADL, HOT; docs/languages/), after GENI 3.
fn template_versions() -> impl Iterator<Item = Value> {
    geni_templates::Language::TEMPLATES.into_iter().map(|l| {
        fields([
            ("type", text(l.version_type())),
            ("version", text(l.version())),
            ("schema", text(l.schema())),
            ("namespace", text(l.namespace())),
            (
                "extensions",
                Value::Array(vec![text(geni_templates::OUTPUTS_NS)]),
            ),
        ])
    })
}

/// A `{geni_type, geni_version}` entry.
fn credential_type(kind: &str, version: &str) -> Value {
    fields([("geni_type", text(kind)), ("geni_version", text(version))])
}

/// The `value` of GetVersion for API `api` (2 or 3) of the aggregate `am_urn`.
pub fn value(api: u32, endpoints: &Endpoints, am_urn: &str) -> Value {
    let mut value = fields([
        ("geni_api", Value::Integer(api as i32)),
        (
            "geni_api_versions",
            fields([
                ("2", text(endpoints.v2.clone())),
                ("3", text(endpoints.v3.clone())),
            ]),
        ),
        (
            "geni_request_rspec_versions",
            Value::Array(
                std::iter::once(rspec_version("request.xsd"))
                    .chain(template_versions())
                    .collect(),
            ),
        ),
        (
            "geni_ad_rspec_versions",
            Value::Array(vec![rspec_version("ad.xsd")]),
        ),
        (
            "geni_credential_types",
            Value::Array(
                CREDENTIAL_TYPES
                    .iter()
                    .map(|(kind, version)| credential_type(kind, version))
                    .collect(),
            ),
        ),
        ("geni_am_type", text("geni-am")),
        ("geni_am_code", text(env!("CARGO_PKG_VERSION"))),
        ("urn", text(am_urn)),
    ]);
    if api == 3
        && let Value::Struct(members) = &mut value
    {
        members.insert("geni_allocate".into(), text("geni_many"));
    }
    value
}

/// `value` with the drain state: `geni_am_draining`, and while draining
/// since `since`, `geni_am_draining_since`.
pub fn with_drain(mut value: Value, since: Option<&chrono::DateTime<chrono::Utc>>) -> Value {
    if let Value::Struct(members) = &mut value {
        members.insert("geni_am_draining".into(), Value::Boolean(since.is_some()));
        if let Some(since) = since {
            members.insert(
                "geni_am_draining_since".into(),
                text(crate::time::format(since)),
            );
        }
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;
    use geni_xmlrpc::member;

    fn endpoints() -> Endpoints {
        Endpoints {
            v2: "https://am.example:8443/am/2".into(),
            v3: "https://am.example:8443/am/3".into(),
        }
    }

    #[test]
    fn v3_value_has_what_omni_and_the_acceptance_suite_check() {
        let v = value(3, &endpoints(), "urn:publicid:IDN+am.example+authority+am");
        assert_eq!(member(&v, "geni_api"), Some(&Value::Integer(3)));
        let urls = member(&v, "geni_api_versions").unwrap();
        assert_eq!(
            member(urls, "3"),
            Some(&text("https://am.example:8443/am/3"))
        );
        assert_eq!(
            member(urls, "2"),
            Some(&text("https://am.example:8443/am/2"))
        );
        assert_eq!(member(&v, "geni_allocate"), Some(&text("geni_many")));
        assert_eq!(member(&v, "geni_single_allocation"), None);
        let Some(Value::Array(ads)) = member(&v, "geni_ad_rspec_versions") else {
            panic!("no ad versions");
        };
        assert_eq!(
            member(&ads[0], "schema"),
            Some(&text("http://www.geni.net/resources/rspec/3/ad.xsd"))
        );
        let Some(Value::Array(extensions)) = member(&ads[0], "extensions") else {
            panic!("no extensions");
        };
        assert!(extensions.contains(&text(ns::OPSTATE)));
        let Some(Value::Array(creds)) = member(&v, "geni_credential_types") else {
            panic!("no credential types");
        };
        assert!(creds.contains(&credential_type("geni_sfa", "2")));
        assert!(creds.contains(&credential_type("geni_sfa", "3")));
        assert!(creds.contains(&credential_type("geni_abac", "1")));
    }

    #[test]
    fn request_versions_list_geni_3_first_then_each_template_language() {
        let v = value(3, &endpoints(), "urn:publicid:IDN+am.example+authority+am");
        let Some(Value::Array(requests)) = member(&v, "geni_request_rspec_versions") else {
            panic!("no request versions");
        };
        let kinds: Vec<_> = requests
            .iter()
            .map(|r| (member(r, "type").cloned(), member(r, "version").cloned()))
            .collect();
        assert_eq!(
            kinds,
            [
                ("GENI", "3"),
                ("TOSCA", "1.0"),
                ("RADL", "1.1"),
                ("HOT", "2013-05-23")
            ]
            .map(|(t, v)| (Some(text(t)), Some(text(v))))
        );
        for entry in requests {
            for field in ["schema", "namespace", "extensions"] {
                assert!(member(entry, field).is_some(), "{field} missing");
            }
        }
    }

    #[test]
    fn v2_value_names_api_2_and_no_allocation_model() {
        let v = value(2, &endpoints(), "urn:publicid:IDN+am.example+authority+am");
        assert_eq!(member(&v, "geni_api"), Some(&Value::Integer(2)));
        assert_eq!(member(&v, "geni_allocate"), None);
    }
}
