//! What the two YAML languages (TOSCA and HOT) share: the bounded YAML
//! loader with line numbers ([`tree`]), sizes, versions and addresses
//! ([`values`]), inputs and parameters with their constraints
//! ([`params`]), choosing a sliver type, size and image from the
//! aggregate's [`Offer`](crate::Offer) ([`choose`]), addresses for
//! interfaces on a link ([`addressing`]), and collecting refusals in
//! document order ([`Problems`]).

pub(crate) mod addressing;
pub(crate) mod choose;
pub(crate) mod params;
pub(crate) mod tree;
pub(crate) mod values;

use crate::{Output, OutputValue, Refusal, Refusals, Request};
pub(crate) use tree::Yaml;

/// The refusals of one translation, gathered as the document is read so
/// that a user sees every construct refused at once.
#[derive(Debug, Default)]
pub(crate) struct Problems {
    refusals: Vec<Refusal>,
}

impl Problems {
    /// Refuses what is at `line` with `message`.
    pub fn refuse(&mut self, line: usize, message: impl Into<String>) {
        self.refusals.push(Refusal {
            line,
            column: None,
            message: message.into(),
        });
    }

    /// Whether nothing has been refused.
    pub fn is_empty(&self) -> bool {
        self.refusals.is_empty()
    }

    /// The refusals of `source`, in line order, or `Ok(value)` when there
    /// are none.
    pub fn finish<T>(mut self, source: &str, value: T) -> Result<T, Refusals> {
        if self.refusals.is_empty() {
            return Ok(value);
        }
        self.refusals.sort_by_key(|r| r.line);
        Err(Refusals {
            document: source.to_owned(),
            refusals: self.refusals,
        })
    }
}

/// The outputs of `section` (a mapping of names to `{description,
/// value}`), each value given by `value`.
pub(crate) fn outputs(
    section: Option<&Yaml>,
    mut value: impl FnMut(&Yaml) -> OutputValue,
) -> Vec<Output> {
    section
        .map(Yaml::entries)
        .unwrap_or_default()
        .iter()
        .map(|(key, output)| Output {
            name: key.as_str().unwrap_or("").to_owned(),
            description: output
                .get("description")
                .and_then(Yaml::as_str)
                .map(|d| d.trim().to_owned()),
            value: value(output.get("value").unwrap_or(output)),
        })
        .collect()
}

/// Loads `text` (named `source` in messages) and translates it with
/// `read`, which refuses into the problems it is given.
pub(crate) fn translate(
    source: &str,
    text: &str,
    read: impl FnOnce(&Yaml, &mut Problems) -> Request,
) -> Result<Request, Refusals> {
    let doc = load(source, text)?;
    let mut problems = Problems::default();
    let request = read(&doc, &mut problems);
    problems.finish(source, request)
}

/// Loads `text` as the YAML document named `source`, or refuses it with
/// the line and column of what is malformed or beyond the bounds.
pub(crate) fn load(source: &str, text: &str) -> Result<Yaml, Refusals> {
    tree::load(text).map_err(|e| Refusals {
        document: source.to_owned(),
        refusals: vec![Refusal {
            line: e.line,
            column: e.column,
            message: e.message,
        }],
    })
}
