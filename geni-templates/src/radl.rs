//! RADL documents (the Infrastructure Manager's Resource and Application
//! Description Language), text and JSON forms, into a [`Request`]: the
//! grammar ([`syntax`], winnow) and the JSON reader ([`json`]) build one
//! document tree ([`ast`]), which [`lower`] translates against the
//! [`Offer`], choosing sizes, sliver types and images with [`offer`].
//! Malformed documents and refusals carry the line and column of their
//! construct. docs/languages/radl.md is the mapping table.

mod ast;
mod json;
mod lower;
mod offer;
mod syntax;

use crate::{Inputs, Offer, Refusal, Refusals, Request};

pub(crate) use syntax::KEYWORDS;

/// The largest RADL document accepted, in bytes.
pub const MAX_DOCUMENT_BYTES: usize = 1 << 20;

/// Translates `text` (named `source` in messages) against `offer`.
pub fn translate(
    source: &str,
    text: &str,
    inputs: &Inputs,
    offer: &Offer,
) -> Result<Request, Refusals> {
    let refusals = |refusals: Vec<Refusal>| Refusals {
        document: source.to_owned(),
        refusals,
    };
    if text.len() > MAX_DOCUMENT_BYTES {
        return Err(refusals(vec![Refusal {
            line: 1,
            column: Some(1),
            message: format!(
                "the RADL document has {} bytes; at most {MAX_DOCUMENT_BYTES} are accepted",
                text.len()
            ),
        }]));
    }
    let parsed = if is_json(text) {
        json::parse(text)
    } else {
        syntax::parse(text)
    };
    let document = parsed.map_err(|e| refusals(vec![refusal(text, e.offset, e.message)]))?;
    lower::lower(&document, inputs, offer).map_err(|refused| {
        refusals(
            refused
                .into_iter()
                .map(|(at, message)| refusal(text, at, message))
                .collect(),
        )
    })
}

/// Whether `text` is the JSON form: a list.
pub(crate) fn is_json(text: &str) -> bool {
    text.trim_start_matches('\u{feff}')
        .trim_start()
        .starts_with('[')
}

/// A refusal at byte `offset` of `text`, with its line and column.
fn refusal(text: &str, offset: usize, message: String) -> Refusal {
    let offset = offset.min(text.len());
    let before = &text[..text.floor_char_boundary_compat(offset)];
    let line = before.matches('\n').count() + 1;
    let column = before
        .rsplit('\n')
        .next()
        .map_or(1, |l| l.chars().count() + 1);
    Refusal {
        line,
        column: Some(column),
        message,
    }
}

/// `floor_char_boundary` for the toolchain this workspace supports.
trait FloorCharBoundary {
    fn floor_char_boundary_compat(&self, index: usize) -> usize;
}

impl FloorCharBoundary for str {
    fn floor_char_boundary_compat(&self, mut index: usize) -> usize {
        while index > 0 && !self.is_char_boundary(index) {
            index -= 1;
        }
        index
    }
}

#[cfg(test)]
mod tests;
