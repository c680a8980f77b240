//! The RADL JSON form (the Infrastructure Manager's REST API): a list of
//! objects whose `class` is `description`, `ansible`, `network`,
//! `system`, `configure`, `deploy` or `contextualize`, read into the same
//! [`Document`] as the text form. Comparisons are the `_min`/`_max`
//! suffixes (`cpu.count_min` is `cpu.count >= …`) and sizes are bytes.
//! Every object and feature keeps its byte offset, found from the raw
//! JSON text, for messages.

use super::ast::{Block, Count, CtxItem, Document, Feature, Kind, Op, Recipe, Value};
use super::syntax::SyntaxError;
use serde_json::value::RawValue;
use serde_json::{Map, Value as Json};

/// Parses a JSON RADL document.
pub(super) fn parse(text: &str) -> Result<Document, SyntaxError> {
    let objects: Vec<&RawValue> = serde_json::from_str(text).map_err(|e| SyntaxError {
        offset: offset_of(text, e.line(), e.column()),
        message: format!("malformed RADL JSON: {e}"),
    })?;
    let mut blocks = Vec::with_capacity(objects.len());
    for raw in objects {
        let at = raw.get().as_ptr() as usize - text.as_ptr() as usize;
        let object: Map<String, Json> =
            serde_json::from_str(raw.get()).map_err(|_| SyntaxError {
                offset: at,
                message: "malformed RADL JSON: every element must be an object with a \"class\""
                    .into(),
            })?;
        let object = Object {
            raw: raw.get(),
            at,
            fields: object,
        };
        blocks.push(Block {
            at,
            kind: object.kind()?,
        });
    }
    Ok(Document { blocks })
}

/// The byte offset of 1-based `line` and `column`.
fn offset_of(text: &str, line: usize, column: usize) -> usize {
    let start: usize = text
        .split_inclusive('\n')
        .take(line.saturating_sub(1))
        .map(str::len)
        .sum();
    (start + column.saturating_sub(1)).min(text.len())
}

/// One object of the list, with its raw text for offsets.
struct Object<'a> {
    raw: &'a str,
    at: usize,
    fields: Map<String, Json>,
}

impl Object<'_> {
    /// Byte offset of `key` in the document (the object's, if not found).
    fn offset(&self, key: &str) -> usize {
        self.raw
            .find(&format!("\"{key}\""))
            .map_or(self.at, |i| self.at + i)
    }

    fn error(&self, key: &str, message: String) -> SyntaxError {
        SyntaxError {
            offset: self.offset(key),
            message,
        }
    }

    /// The string member `key`, required.
    fn string(&self, key: &str) -> Result<String, SyntaxError> {
        match self.fields.get(key) {
            Some(Json::String(s)) => Ok(s.clone()),
            Some(_) => Err(self.error(
                key,
                format!("malformed RADL JSON: \"{key}\" must be a string"),
            )),
            None => Err(self.error(
                "class",
                format!("malformed RADL JSON: this object needs a \"{key}\""),
            )),
        }
    }

    /// What the object says.
    fn kind(&self) -> Result<Kind, SyntaxError> {
        let class = self.string("class")?;
        Ok(match class.as_str() {
            "description" => Kind::Description {
                name: self.string("id").unwrap_or_default(),
                features: self.features()?,
            },
            "ansible" => Kind::Ansible {
                name: self.string("id")?,
            },
            "network" => Kind::Network {
                name: self.string("id")?,
                features: Some(self.features()?),
            },
            "system" => Kind::System {
                name: self.string("id")?,
                features: Some(self.features()?),
            },
            "configure" => Kind::Configure {
                name: self.string("id")?,
                recipe: match self.fields.get("recipes") {
                    Some(Json::String(text)) => Some(Recipe {
                        text: text.clone(),
                        at: self.offset("recipes"),
                    }),
                    _ => None,
                },
            },
            "deploy" => Kind::Deploy {
                system: self.string("system")?,
                count: match self.fields.get("vm_number") {
                    Some(Json::Number(n)) => Count::Number(n.as_u64().ok_or_else(|| {
                        self.error(
                            "vm_number",
                            "malformed RADL JSON: \"vm_number\" must be a whole number".into(),
                        )
                    })?),
                    None => Count::Number(1),
                    Some(_) => {
                        return Err(self.error(
                            "vm_number",
                            "malformed RADL JSON: \"vm_number\" must be a number".into(),
                        ));
                    }
                },
                cloud: self
                    .fields
                    .get("cloud")
                    .and_then(Json::as_str)
                    .map(str::to_owned),
            },
            "contextualize" => Kind::Contextualize {
                max_time: self.fields.get("max_time").and_then(Json::as_u64),
                items: Some(self.context_items()?),
            },
            other => {
                return Err(self.error(
                    "class",
                    format!(
                        "malformed RADL JSON: unknown class '{other}' (expected description, ansible, network, system, configure, deploy or contextualize)"
                    ),
                ));
            }
        })
    }

    /// Every member but `class` and `id`, as features.
    fn features(&self) -> Result<Vec<Feature>, SyntaxError> {
        let mut features = Vec::new();
        for (key, value) in &self.fields {
            if key == "class" || key == "id" {
                continue;
            }
            let at = self.offset(key);
            let (name, op) = if let Some(name) = key.strip_suffix("_min") {
                (name, Op::Ge)
            } else if let Some(name) = key.strip_suffix("_max") {
                (name, Op::Le)
            } else {
                (key.as_str(), Op::Eq)
            };
            let bytes = name.ends_with("size");
            match value {
                Json::Array(items) => {
                    for item in items {
                        features.push(Feature {
                            name: name.to_owned(),
                            op: Op::Contains,
                            value: self.value(key, item, bytes)?,
                            at,
                        });
                    }
                }
                value => features.push(Feature {
                    name: name.to_owned(),
                    op,
                    value: self.value(key, value, bytes)?,
                    at,
                }),
            }
        }
        features.sort_by_key(|f| f.at);
        Ok(features)
    }

    /// One JSON value as a feature value; numbers of sizes are bytes.
    fn value(&self, key: &str, value: &Json, bytes: bool) -> Result<Value, SyntaxError> {
        Ok(match value {
            Json::String(s) => Value::Str(s.clone()),
            Json::Bool(b) => Value::Str(if *b { "yes" } else { "no" }.into()),
            Json::Number(n) => Value::Number {
                value: n.as_f64().unwrap_or_default(),
                unit: bytes.then(|| "B".to_owned()),
            },
            Json::Object(members) => Value::Features(
                members
                    .iter()
                    .map(|(name, v)| {
                        Ok(Feature {
                            name: name.clone(),
                            op: Op::Eq,
                            value: self.value(key, v, false)?,
                            at: self.offset(key),
                        })
                    })
                    .collect::<Result<_, SyntaxError>>()?,
            ),
            Json::Null | Json::Array(_) => {
                return Err(self.error(
                    key,
                    format!("malformed RADL JSON: \"{key}\" must be a string, number or object"),
                ));
            }
        })
    }

    /// The `items` of a contextualize object.
    fn context_items(&self) -> Result<Vec<CtxItem>, SyntaxError> {
        let Some(items) = self.fields.get("items") else {
            return Ok(Vec::new());
        };
        let Json::Array(items) = items else {
            return Err(self.error(
                "items",
                "malformed RADL JSON: \"items\" must be a list".into(),
            ));
        };
        items
            .iter()
            .map(|item| {
                let field = |name: &str| item.get(name).and_then(Json::as_str).map(str::to_owned);
                match (field("system"), field("configure")) {
                    (Some(system), Some(configure)) => Ok(CtxItem {
                        system,
                        configure,
                        step: item.get("num").and_then(Json::as_u64),
                        tool: field("ctxt_tool"),
                        at: self.offset("items"),
                    }),
                    _ => Err(self.error(
                        "items",
                        "malformed RADL JSON: each contextualize item needs \"system\" and \"configure\"".into(),
                    )),
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXAMPLE: &str = r#"[
  {"class": "network", "id": "publica", "outbound": "yes"},
  {"class": "system", "id": "front", "cpu.arch": "x86_64", "cpu.count_min": 1,
   "memory.size_min": 536870912, "net_interface.0.connection": "publica"},
  {"class": "configure", "id": "front", "recipes": "\n---\n- roles: []"},
  {"class": "deploy", "system": "front", "vm_number": 1, "cloud": "cloud_id"},
  {"class": "contextualize", "items": [{"configure": "front", "system": "front", "ctxt_tool": "Ansible"}]}
]"#;

    #[test]
    fn the_documented_example_reads_into_the_same_tree_as_text() {
        let doc = parse(EXAMPLE).unwrap();
        assert_eq!(doc.blocks.len(), 5);
        let Kind::System { name, features } = &doc.blocks[1].kind else {
            panic!("not a system");
        };
        assert_eq!(name, "front");
        let features = features.as_ref().unwrap();
        let memory = features.iter().find(|f| f.name == "memory.size").unwrap();
        assert_eq!(memory.op, Op::Ge);
        assert_eq!(
            memory.value,
            Value::Number {
                value: 536870912.0,
                unit: Some("B".into())
            }
        );
        assert_eq!(&EXAMPLE[memory.at..memory.at + 17], "\"memory.size_min\"");
        assert!(matches!(
            doc.blocks[3].kind,
            Kind::Deploy {
                count: Count::Number(1),
                ..
            }
        ));
    }

    #[test]
    fn malformed_json_is_reported_at_its_place() {
        let error = parse("[\n {\"class\": \"system\",\n  \"id\" \"x\"}]").unwrap_err();
        assert!(error.message.contains("line 3"), "{}", error.message);
        let error = parse("[{\"class\": \"machine\", \"id\": \"x\"}]").unwrap_err();
        assert!(error.message.contains("unknown class 'machine'"));
        assert_eq!(error.offset, 2);
    }
}
