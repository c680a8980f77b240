//! HOT (Heat Orchestration Template) documents into a [`Request`].

use crate::{Inputs, Offer, Refusal, Refusals, Request};

/// Translates `text` (named `source` in messages) against `offer`.
pub fn translate(
    source: &str,
    text: &str,
    inputs: &Inputs,
    offer: &Offer,
) -> Result<Request, Refusals> {
    let _ = (text, inputs, offer);
    Err(Refusals {
        document: source.to_owned(),
        refusals: vec![Refusal {
            line: 0,
            column: None,
            message: "this language is not translated yet".to_owned(),
        }],
    })
}
