//! Template inputs (TOSCA `inputs`) and parameters (HOT `parameters`):
//! each declared one takes the value the caller passed, else its
//! default, else stays unset (what uses it is left out and the
//! aggregate's default applies). A value is checked against its type and
//! constraints; one given for nothing declared, a value breaking a
//! constraint, and an input declared `required: true` with neither value
//! nor default are refused, naming the input.

use super::Problems;
use super::tree::{Kind, Yaml};
use super::values::bytes;
use crate::{Inputs, Scalar};
use regex::Regex;
use std::cmp::Ordering;
use std::collections::BTreeMap;

/// Which language's constraint names are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dialect {
    /// TOSCA: `valid_values`, `in_range`, `greater_or_equal`, ….
    Tosca,
    /// HOT: `allowed_values`, `range`, `length`, `allowed_pattern`, ….
    Hot,
}

impl Dialect {
    fn noun(self) -> &'static str {
        match self {
            Dialect::Tosca => "input",
            Dialect::Hot => "parameter",
        }
    }
}

/// The values of a template's inputs, by name: `None` when unset.
#[derive(Debug, Default)]
pub(crate) struct Params {
    values: BTreeMap<String, Option<Yaml>>,
}

impl Params {
    /// Reads the declarations in `section`, takes the caller's `inputs`
    /// and checks them, refusing into `problems`.
    pub fn new(
        section: Option<&Yaml>,
        inputs: &Inputs,
        dialect: Dialect,
        problems: &mut Problems,
    ) -> Params {
        let noun = dialect.noun();
        let mut values = BTreeMap::new();
        if let Some(section) = section.filter(|s| !s.is_null()) {
            if !section.is_map() {
                problems.refuse(
                    section.line,
                    format!("{noun}s must be a mapping of names to definitions"),
                );
            }
            for (key, definition) in section.entries() {
                let Some(name) = key.as_str() else { continue };
                let given = inputs
                    .get(name)
                    .map(|v| given_value(v, key.line, key.column));
                let value = given
                    .clone()
                    .or_else(|| definition.get("default").filter(|d| !d.is_null()).cloned());
                match &value {
                    // The translation goes on with the default in place of
                    // a refused value (when the default is valid), so that
                    // the value is refused once, not again by all that
                    // uses it.
                    Some(v) if !check(name, definition, v, dialect, problems) => {
                        let fallback = definition
                            .get("default")
                            .filter(|d| !d.is_null())
                            .filter(|d| {
                                check(name, definition, d, dialect, &mut Problems::default())
                            })
                            .cloned();
                        values.insert(name.to_owned(), fallback);
                        continue;
                    }
                    Some(_) => {}
                    None if definition.get("required").and_then(Yaml::as_bool) == Some(true) => {
                        problems.refuse(
                            key.line,
                            format!("{noun} '{name}' is required and has no default: pass its value in geni_template_inputs"),
                        );
                    }
                    None => {}
                }
                values.insert(name.to_owned(), value);
            }
        }
        for name in inputs.keys().filter(|n| !values.contains_key(*n)) {
            let declared: Vec<&str> = values.keys().map(String::as_str).collect();
            problems.refuse(
                0,
                format!(
                    "{noun} '{name}' was given but the template declares no such {noun} (it declares: {})",
                    if declared.is_empty() { "none".to_owned() } else { declared.join(", ") }
                ),
            );
        }
        Params { values }
    }

    /// The value of input `name`: `Err` when no such input is declared,
    /// `Ok(None)` when it is unset.
    pub fn get(&self, name: &str) -> Result<Option<&Yaml>, ()> {
        self.values.get(name).map(Option::as_ref).ok_or(())
    }
}

fn given_value(value: &Scalar, line: usize, column: usize) -> Yaml {
    match value {
        Scalar::Str(s) => Yaml::scalar(s.clone(), false, line, column),
        Scalar::Int(i) => Yaml::scalar(i.to_string(), true, line, column),
        Scalar::Float(f) => Yaml::scalar(f.to_string(), true, line, column),
        Scalar::Bool(b) => Yaml::scalar(b.to_string(), true, line, column),
    }
}

/// Checks `value` of input `name` against the type and constraints of
/// its `definition`.
fn check(
    name: &str,
    definition: &Yaml,
    value: &Yaml,
    dialect: Dialect,
    problems: &mut Problems,
) -> bool {
    let noun = dialect.noun();
    let line = definition.line.max(value.line);
    let kind = definition
        .get("type")
        .and_then(Yaml::as_str)
        .unwrap_or("string");
    let type_ok = match kind {
        "integer" => value.as_i64().is_some(),
        "float" | "number" => value.as_f64().is_some(),
        "boolean" => value.as_bool().is_some() || matches!(value.as_str(), Some("true" | "false")),
        "scalar-unit.size" => value.as_str().is_some_and(|t| bytes(t).is_ok()),
        _ => true,
    };
    if !type_ok {
        problems.refuse(
            line,
            format!(
                "{noun} '{name}' is {}, not a value of type {kind}",
                value.describe()
            ),
        );
        return false;
    }
    let mut ok = true;
    for constraint in definition
        .get("constraints")
        .map(Yaml::items)
        .unwrap_or_default()
    {
        for (key, bound) in constraint.entries() {
            let Some(op) = key.as_str() else { continue };
            match holds(op, bound, value, dialect) {
                Ok(true) => {}
                Ok(false) => {
                    ok = false;
                    problems.refuse(
                        constraint.line,
                        format!(
                            "{noun} '{name}' is {}, which breaks its constraint {op}: {}{}",
                            value.describe(),
                            show(bound),
                            constraint
                                .get("description")
                                .and_then(Yaml::as_str)
                                .map(|d| format!(" ({})", d.trim()))
                                .unwrap_or_default()
                        ),
                    );
                }
                Err(why) => {
                    ok = false;
                    problems.refuse(
                        constraint.line,
                        format!("{noun} '{name}': constraint {op}: {why}"),
                    );
                }
            }
        }
    }
    ok
}

/// Whether `value` satisfies constraint `op` with `bound`.
fn holds(op: &str, bound: &Yaml, value: &Yaml, dialect: Dialect) -> Result<bool, String> {
    let cmp = |b: &Yaml| {
        compare(value, b)
            .ok_or_else(|| format!("cannot compare {} with {}", value.describe(), b.describe()))
    };
    let length = || {
        value
            .as_str()
            .map(|s| s.chars().count())
            .unwrap_or_else(|| value.items().len()) as f64
    };
    let number = |b: Option<&Yaml>| b.and_then(Yaml::as_f64);
    match (dialect, op) {
        (_, "description") => Ok(true),
        (Dialect::Tosca, "equal") => Ok(cmp(bound)? == Ordering::Equal),
        (Dialect::Tosca, "greater_than") => Ok(cmp(bound)? == Ordering::Greater),
        (Dialect::Tosca, "greater_or_equal") => Ok(cmp(bound)? != Ordering::Less),
        (Dialect::Tosca, "less_than") => Ok(cmp(bound)? == Ordering::Less),
        (Dialect::Tosca, "less_or_equal") => Ok(cmp(bound)? != Ordering::Greater),
        (Dialect::Tosca, "in_range") => match bound.items() {
            [low, high] => Ok(cmp(low)? != Ordering::Less && cmp(high)? != Ordering::Greater),
            _ => Err("in_range takes [low, high]".to_owned()),
        },
        (Dialect::Tosca, "valid_values") | (Dialect::Hot, "allowed_values") => Ok(bound
            .items()
            .iter()
            .any(|b| compare(value, b) == Some(Ordering::Equal))),
        (Dialect::Tosca, "length") => Ok(Some(length()) == number(Some(bound))),
        (Dialect::Tosca, "min_length") => Ok(number(Some(bound)).is_some_and(|m| length() >= m)),
        (Dialect::Tosca, "max_length") => Ok(number(Some(bound)).is_some_and(|m| length() <= m)),
        (Dialect::Hot, "range") | (Dialect::Hot, "length") => {
            let measured = if op == "range" {
                value
                    .as_f64()
                    .ok_or_else(|| format!("{} is not a number", value.describe()))?
            } else {
                length()
            };
            Ok(number(bound.get("min")).is_none_or(|m| measured >= m)
                && number(bound.get("max")).is_none_or(|m| measured <= m))
        }
        (Dialect::Hot, "modulo") => {
            let (step, offset) = (
                number(bound.get("step")),
                number(bound.get("offset")).unwrap_or(0.0),
            );
            let v = value
                .as_f64()
                .ok_or_else(|| format!("{} is not a number", value.describe()))?;
            let step = step.filter(|s| *s != 0.0).ok_or("modulo needs a step")?;
            Ok((v - offset).rem_euclid(step) == 0.0)
        }
        (Dialect::Tosca, "pattern") | (Dialect::Hot, "allowed_pattern") => {
            let pattern = bound.as_str().ok_or("the pattern is not a string")?;
            let re =
                Regex::new(&format!("^(?:{pattern})$")).map_err(|e| format!("bad pattern: {e}"))?;
            Ok(value.as_str().is_some_and(|v| re.is_match(v)))
        }
        // Names a validator of an OpenStack service (nova.flavor,
        // glance.image, …); the translation checks flavours and images
        // against the aggregate's offer instead.
        (Dialect::Hot, "custom_constraint") => Ok(true),
        _ => Err("unknown constraint".to_owned()),
    }
}

/// Orders two scalars: as numbers, else as sizes with units, else equal
/// when their texts are.
pub(crate) fn compare(a: &Yaml, b: &Yaml) -> Option<Ordering> {
    let (x, y) = (a.as_str()?, b.as_str()?);
    if let (Ok(x), Ok(y)) = (x.trim().parse::<f64>(), y.trim().parse::<f64>()) {
        return x.partial_cmp(&y);
    }
    if let (Ok(x), Ok(y)) = (bytes(x), bytes(y)) {
        return x.partial_cmp(&y);
    }
    (x == y).then_some(Ordering::Equal)
}

fn show(bound: &Yaml) -> String {
    match &bound.kind {
        Kind::Scalar { text, .. } => text.clone(),
        Kind::Seq(items) => format!(
            "[{}]",
            items.iter().map(show).collect::<Vec<_>>().join(", ")
        ),
        Kind::Map(entries) => format!(
            "{{{}}}",
            entries
                .iter()
                .map(|(k, v)| format!("{}: {}", show(k), show(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::tree::load;

    fn params(text: &str, inputs: &[(&str, Scalar)]) -> (Params, Problems) {
        let doc = load(text).unwrap();
        let inputs: Inputs = inputs
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect();
        let mut problems = Problems::default();
        let p = Params::new(Some(&doc), &inputs, Dialect::Tosca, &mut problems);
        (p, problems)
    }

    const CPUS: &str = "cpus:\n  type: integer\n  default: 2\n  constraints:\n    - valid_values: [1, 2, 4]\nmem:\n  type: scalar-unit.size\n  constraints:\n    - in_range: [1 GB, 8 GB]\n";

    #[test]
    fn a_given_value_beats_the_default_and_a_missing_one_stays_unset() {
        let (p, problems) = params(CPUS, &[("cpus", Scalar::Int(4))]);
        assert!(problems.is_empty());
        assert_eq!(p.get("cpus").unwrap().unwrap().as_i64(), Some(4));
        assert_eq!(p.get("mem"), Ok(None));
        assert_eq!(p.get("nope"), Err(()));
    }

    #[test]
    fn a_value_breaking_a_constraint_is_refused_naming_the_input() {
        let (_, problems) = params(
            CPUS,
            &[
                ("cpus", Scalar::Int(3)),
                ("mem", Scalar::Str("16 GB".into())),
            ],
        );
        let err = problems.finish("t.yml", ()).unwrap_err().to_string();
        assert!(
            err.contains(
                "t.yml:5: input 'cpus' is '3', which breaks its constraint valid_values: [1, 2, 4]"
            ),
            "{err}"
        );
        assert!(
            err.contains(
                "input 'mem' is '16 GB', which breaks its constraint in_range: [1 GB, 8 GB]"
            ),
            "{err}"
        );
    }

    #[test]
    fn a_value_of_the_wrong_type_or_for_no_input_is_refused() {
        let (_, problems) = params(
            CPUS,
            &[
                ("cpus", Scalar::Str("many".into())),
                ("disk", Scalar::Int(1)),
            ],
        );
        let err = problems.finish("t.yml", ()).unwrap_err().to_string();
        assert!(
            err.contains("input 'cpus' is 'many', not a value of type integer"),
            "{err}"
        );
        assert!(err.contains("input 'disk' was given but the template declares no such input (it declares: cpus, mem)"), "{err}");
    }

    #[test]
    fn a_required_input_without_default_or_value_is_refused() {
        let (_, problems) = params("img:\n  type: string\n  required: yes\n", &[]);
        let err = problems.finish("t.yml", ()).unwrap_err().to_string();
        assert_eq!(
            err,
            "t.yml:1: input 'img' is required and has no default: pass its value in geni_template_inputs"
        );
    }

    #[test]
    fn hot_constraints_are_read_in_their_own_words() {
        let doc = load("port:\n  type: number\n  default: 50000\n  constraints:\n    - range: { min: 40000, max: 60000 }\n      description: in range\npw:\n  type: string\n  constraints:\n    - allowed_pattern: \"[A-Z]+[a-z]*\"\n").unwrap();
        let inputs: Inputs = [("pw".to_string(), Scalar::Str("abc".into()))].into();
        let mut problems = Problems::default();
        Params::new(Some(&doc), &inputs, Dialect::Hot, &mut problems);
        let err = problems.finish("h.yaml", ()).unwrap_err().to_string();
        assert_eq!(
            err,
            "h.yaml:10: parameter 'pw' is 'abc', which breaks its constraint allowed_pattern: [A-Z]+[a-z]*"
        );
    }
}
