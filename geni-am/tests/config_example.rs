//! `deploy/geni-am.example.toml` documents every key of the configuration:
//! the keys are enumerated from the `Config` types themselves (a probing
//! deserializer visits every struct field, optional ones included), and
//! each must be set, at its place, in the example.

use geni_am::config::Config;
use serde::Deserialize;
use serde::de::value::{Error, MapDeserializer, SeqDeserializer};
use serde::de::{self, IntoDeserializer, Visitor};
use std::cell::RefCell;
use std::collections::BTreeSet;
use std::path::PathBuf;

/// A deserializer that invents a value for every field it is asked for and
/// records the dotted path of every struct field.
struct Probe<'k> {
    path: String,
    keys: &'k RefCell<BTreeSet<String>>,
}

impl<'k> Probe<'k> {
    fn child(&self, name: &str) -> Probe<'k> {
        let path = if self.path.is_empty() {
            name.to_owned()
        } else {
            format!("{}.{name}", self.path)
        };
        self.keys.borrow_mut().insert(path.clone());
        Probe {
            path,
            keys: self.keys,
        }
    }
}

impl<'de> IntoDeserializer<'de, Error> for Probe<'_> {
    type Deserializer = Self;
    fn into_deserializer(self) -> Self {
        self
    }
}

impl<'de> de::Deserializer<'de> for Probe<'_> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_str("x")
    }
    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_bool(false)
    }
    fn deserialize_u8<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_u64(1)
    }
    fn deserialize_u16<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_u64(1)
    }
    fn deserialize_u32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_u64(1)
    }
    fn deserialize_u64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_u64(1)
    }
    fn deserialize_i32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_i64(1)
    }
    fn deserialize_i64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_i64(1)
    }
    fn deserialize_f64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_f64(0.5)
    }
    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_some(self)
    }
    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_seq(SeqDeserializer::new(std::iter::once(self)))
    }
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        let entries: Vec<(&str, Probe<'_>)> = fields.iter().map(|f| (*f, self.child(f))).collect();
        visitor.visit_map(MapDeserializer::new(entries.into_iter()))
    }
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_enum(variants[0].into_deserializer())
    }

    serde::forward_to_deserialize_any! {
        i8 i16 i128 u128 f32 char str string bytes byte_buf unit unit_struct
        newtype_struct tuple tuple_struct map identifier ignored_any
    }
}

fn every_config_key() -> BTreeSet<String> {
    let keys = RefCell::new(BTreeSet::new());
    let probe = Probe {
        path: String::new(),
        keys: &keys,
    };
    Config::deserialize(probe).expect("the probe builds a Config");
    keys.into_inner()
}

/// The value at a dotted path, looking into the first entry of arrays.
fn lookup<'v>(root: &'v toml::Value, path: &str) -> Option<&'v toml::Value> {
    path.split('.').try_fold(root, |value, key| {
        let value = match value {
            toml::Value::Array(items) => items.first()?,
            other => other,
        };
        value.get(key)
    })
}

fn example() -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../deploy/geni-am.example.toml");
    std::fs::read_to_string(path).unwrap()
}

#[test]
fn the_probe_sees_nested_and_optional_keys() {
    let keys = every_config_key();
    for key in [
        "server.listen",
        "server.workers",
        "aggregate.max_lease_secs",
        "store.url",
        "backend.sim.failure_rate",
        "backend.sim.hosts.max_vms",
        "backend.sim.sliver_types.disk_images.description",
        "backend.opennebula.sliver_types.template_id",
        "backend.opennebula.links.cluster",
    ] {
        assert!(keys.contains(key), "{key} missing from {keys:?}");
    }
    assert!(keys.len() > 30, "{keys:?}");
}

/// Keys still accepted so that files of earlier releases load, but with
/// no effect: the example must not set them.
const RETIRED: &[&str] = &["jobs.max_attempts"];

#[test]
fn the_example_sets_every_key_of_the_configuration() {
    let text = example();
    let document: toml::Value = toml::from_str(&text).unwrap();
    let keys = every_config_key();
    let missing: Vec<&String> = keys
        .iter()
        .filter(|key| !RETIRED.contains(&key.as_str()))
        .filter(|key| lookup(&document, key).is_none())
        .collect();
    assert!(
        missing.is_empty(),
        "keys not documented in deploy/geni-am.example.toml: {missing:?}"
    );
    for retired in RETIRED {
        assert!(keys.contains(*retired), "{retired} is no longer accepted");
        assert!(
            lookup(&document, retired).is_none(),
            "the example sets the retired key {retired}"
        );
    }
}

#[test]
fn the_example_parses_as_a_configuration_and_its_sim_section_is_valid() {
    let config = Config::parse(&example()).unwrap();
    assert_eq!(config.server.api_url(3), "https://am.example.org:8443/am/3");
    config
        .backend
        .sim
        .expect("the example configures the sim backend")
        .validate()
        .unwrap();
}

#[test]
fn the_examples_opennebula_section_is_valid_with_one_of_each_alternative() {
    let config = Config::parse(&example()).unwrap();
    let mut one = config
        .backend
        .opennebula
        .expect("the example documents the OpenNebula backend");
    let both = one.validate().unwrap_err();
    assert_eq!(both.key, "backend.opennebula.session", "{both}");
    one.one_auth = None;
    let links = one.links.as_mut().unwrap();
    assert!(links.parent_network.is_some() && links.template.is_some());
    links.template = None;
    one.validate().unwrap();
    let links = one.links.as_mut().unwrap();
    links.parent_network = None;
    links.template = Some("VN_MAD = \"bridge\"".into());
    one.validate().unwrap();
}
