//! AM API v2 (the GENI AM API v2 specification): GetVersion, ListResources (the advertisement,
//! or with `geni_slice_urn` the slice's manifest), CreateSliver,
//! SliverStatus, RenewSliver, DeleteSliver, Shutdown. One sliver set per
//! slice; methods take the slice URN.

use super::args::{Params, users};
use super::envelope::{self, fields, text};
use super::{Context, Outcome};
use crate::core::{V2Resource, V2Status};
use crate::model::Selector;
use geni_xmlrpc::Value;

/// Answers `method`, or `None` when v2 has no such method.
pub(super) fn call(context: &Context<'_>, method: &str, params: &[Value]) -> Option<Outcome> {
    let handler: fn(&Context<'_>, Params<'_>) -> Outcome = match method {
        "GetVersion" => |c, _| c.get_version(),
        "ListResources" => list_resources,
        "CreateSliver" => create_sliver,
        "SliverStatus" => sliver_status,
        "RenewSliver" => renew_sliver,
        "DeleteSliver" => delete_sliver,
        "Shutdown" => super::v3::shutdown,
        _ => return None,
    };
    Some(handler(context, Params::new(method, params)))
}

/// `ListResources(credentials, options)`.
fn list_resources(context: &Context<'_>, params: Params<'_>) -> Outcome {
    let options = params.options(1)?;
    options.require_rspec_version()?;
    let compressed = options.flag("geni_compressed")?;
    let document = match options.string("geni_slice_urn")? {
        Some(text) => {
            let slice = super::slice_urn(params.method(), text)?;
            context.authorize(&params, 0, &options, Some(&slice))?;
            let selector = Selector::Slice(slice.to_string());
            context.aggregate().describe(&selector)?.manifest
        }
        None => {
            let available = options.flag("geni_available")?;
            context.authorize(&params, 0, &options, None)?;
            context.aggregate().advertisement(available)?
        }
    };
    Ok((envelope::rspec(document, compressed)?, String::new()))
}

/// `CreateSliver(slice_urn, credentials, rspec, users, options)`; `rspec`
/// may be a template (TOSCA, RADL, HOT) with `geni_template_inputs`.
fn create_sliver(context: &Context<'_>, params: Params<'_>) -> Outcome {
    let slice = context.slice_arg(&params, 0)?;
    let rspec = params.string(2, "rspec")?;
    let users = match params.get(3, "users") {
        Ok(value) => users(params.method(), "users", value)?,
        Err(_) => Vec::new(),
    };
    let options = params.options(4)?;
    let inputs = options.template_inputs()?;
    let principal = context.authorize(&params, 1, &options, Some(&slice))?;
    let rspec = context.aggregate().request_rspec(rspec, &inputs)?;
    let manifest = context
        .aggregate()
        .create_sliver(&principal, slice.as_str(), &rspec, &users)?;
    Ok((text(manifest), String::new()))
}

/// `SliverStatus(slice_urn, credentials, options)`.
fn sliver_status(context: &Context<'_>, params: Params<'_>) -> Outcome {
    let slice = context.slice_arg(&params, 0)?;
    let options = params.options(2)?;
    context.authorize(&params, 1, &options, Some(&slice))?;
    let status = context.aggregate().sliver_status(slice.as_str())?;
    Ok((status_value(&status), String::new()))
}

/// The v2 status word: the four of the v2 "SliverStatus" section, anything else `unknown`.
fn word(status: &str) -> &'static str {
    match status {
        "configuring" => "configuring",
        "ready" => "ready",
        "failed" => "failed",
        _ => "unknown",
    }
}

/// The SliverStatus struct, with the top-level `geni_expires` clients read.
fn status_value(status: &V2Status) -> Value {
    let resource = |r: &V2Resource| {
        fields([
            ("geni_urn", text(r.urn.clone())),
            ("geni_status", text(word(r.status))),
            ("geni_error", text(r.error.clone())),
            ("geni_client_id", text(r.client_id.clone())),
        ])
    };
    fields([
        ("geni_urn", text(status.slice_urn.clone())),
        ("geni_status", text(word(status.status))),
        ("geni_expires", text(crate::time::format(&status.expires))),
        (
            "geni_resources",
            Value::Array(status.resources.iter().map(resource).collect()),
        ),
    ])
}

/// `RenewSliver(slice_urn, credentials, expiration_time, options)`: true,
/// with the expiry actually set in `output`.
fn renew_sliver(context: &Context<'_>, params: Params<'_>) -> Outcome {
    let slice = context.slice_arg(&params, 0)?;
    let requested = params.time(2, "expiration_time")?;
    let options = params.options(3)?;
    let alap = options.flag("geni_extend_alap")?;
    let principal = context.authorize(&params, 1, &options, Some(&slice))?;
    let expires = context
        .aggregate()
        .renew_sliver(&principal, slice.as_str(), requested, alap)?;
    Ok((Value::Boolean(true), crate::time::format(&expires)))
}

/// `DeleteSliver(slice_urn, credentials, options)`.
fn delete_sliver(context: &Context<'_>, params: Params<'_>) -> Outcome {
    let slice = context.slice_arg(&params, 0)?;
    let options = params.options(2)?;
    let principal = context.authorize(&params, 1, &options, Some(&slice))?;
    context
        .aggregate()
        .delete_sliver(&principal, slice.as_str())?;
    Ok((Value::Boolean(true), String::new()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_words_are_the_four_of_v2() {
        assert_eq!(word("ready"), "ready");
        assert_eq!(word("configuring"), "configuring");
        assert_eq!(word("failed"), "failed");
        assert_eq!(word("shutdown"), "unknown");
    }
}
