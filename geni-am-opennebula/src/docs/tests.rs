//! Tests of the document parsers against the recorded `oned` documents of
//! every version (the recorded test data), hostile input, and the state
//! classification against the Virtual Machine States tables and the recorded
//! transitions.

mod malformed;
mod phases;
mod recorded;
mod values;

use crate::rpc::Answer;
use crate::rpc::wire::decode_response;
use std::path::PathBuf;

/// The recorded reference data beside the checkout.
fn recorded_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/opennebula/recorded")
}

/// The text of recorded file `relative`.
fn recorded(relative: &str) -> String {
    let path = recorded_dir().join(relative);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Element `[1]` of a recorded reply when it is a string, read by the
/// client's own decoder exactly as oned sent it.
fn response_string(response: &str) -> Option<String> {
    match decode_response("recorded", response.as_bytes(), usize::MAX) {
        Ok(Answer::Str(answer)) => Some(answer),
        _ => None,
    }
}

/// Recorded 7.4.0 call `name`: its pretty-printed payload and the exact
/// string of its response.
fn recorded_call(name: &str) -> (String, String) {
    let payload = recorded(&format!("oned-7.4.0/{name}.payload.xml"));
    let response = recorded(&format!("oned-7.4.0/{name}.response.xml"));
    let exact = response_string(&response).unwrap_or_else(|| panic!("{name}: no document"));
    (payload, exact)
}
