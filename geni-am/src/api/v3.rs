//! AM API v3 (the GENI AM API v3 specification): GetVersion, ListResources, Describe, Allocate,
//! Provision, Status, Renew, PerformOperationalAction, Delete, Shutdown.
//! Each handler reads its arguments, authorises, calls the core and shapes
//! the value each method's section of that specification defines.

use super::args::Params;
use super::envelope::{self, fields, sliver_infos, text};
use super::errors::bad_argument;
use super::{Context, Outcome};
use crate::core::{ProvisionOptions, RenewOptions};
use geni_xmlrpc::Value;

/// Answers `method`, or `None` when v3 has no such method.
pub(super) fn call(context: &Context<'_>, method: &str, params: &[Value]) -> Option<Outcome> {
    let handler: fn(&Context<'_>, Params<'_>) -> Outcome = match method {
        "GetVersion" => |c, _| c.get_version(),
        "ListResources" => list_resources,
        "Describe" => describe,
        "Allocate" => allocate,
        "Provision" => provision,
        "Status" => status,
        "Renew" => renew,
        "PerformOperationalAction" => perform_operational_action,
        "Delete" => delete,
        "Shutdown" => shutdown,
        _ => return None,
    };
    Some(handler(context, Params::new(method, params)))
}

/// `ListResources(credentials, options)`: the advertisement.
fn list_resources(context: &Context<'_>, params: Params<'_>) -> Outcome {
    let options = params.options(1)?;
    if options.get("geni_slice_urn").is_some() {
        return Err(bad_argument(
            params.method(),
            "geni_slice_urn is not a v3 option; use Describe for a slice's manifest",
        ));
    }
    options.require_rspec_version()?;
    let available = options.flag("geni_available")?;
    let compressed = options.flag("geni_compressed")?;
    context.authorize(&params, 0, &options, None)?;
    let advertisement = context.aggregate().advertisement(available)?;
    Ok((envelope::rspec(advertisement, compressed)?, String::new()))
}

/// `Describe(urns, credentials, options)`: manifest and sliver states.
fn describe(context: &Context<'_>, params: Params<'_>) -> Outcome {
    let options = params.options(2)?;
    options.require_rspec_version()?;
    let compressed = options.flag("geni_compressed")?;
    let (selector, _) = context.scope(&params, 0, &options)?;
    let report = context.aggregate().describe(&selector)?;
    let value = fields([
        ("geni_rspec", envelope::rspec(report.manifest, compressed)?),
        ("geni_urn", text(report.slice_urn)),
        ("geni_slivers", sliver_infos(&report.slivers)),
    ]);
    Ok((value, String::new()))
}

/// `Allocate(slice_urn, credentials, rspec, options)`; `rspec` may be a
/// template (TOSCA, RADL, HOT) with `geni_template_inputs`.
fn allocate(context: &Context<'_>, params: Params<'_>) -> Outcome {
    let slice = context.slice_arg(&params, 0)?;
    let rspec = params.string(2, "rspec")?;
    let options = params.options(3)?;
    let inputs = options.template_inputs()?;
    let principal = context.authorize(&params, 1, &options, Some(&slice))?;
    let rspec = context.aggregate().request_rspec(rspec, &inputs)?;
    let allocation = context
        .aggregate()
        .allocate(&principal, slice.as_str(), &rspec)?;
    let value = fields([
        ("geni_rspec", text(allocation.manifest)),
        ("geni_slivers", sliver_infos(&allocation.slivers)),
    ]);
    Ok((value, String::new()))
}

/// `Provision(urns, credentials, options)`.
fn provision(context: &Context<'_>, params: Params<'_>) -> Outcome {
    let options = params.options(2)?;
    options.require_rspec_version()?;
    let provision = ProvisionOptions {
        best_effort: options.flag("geni_best_effort")?,
        end_time: options.time("geni_end_time")?,
        users: options.users("geni_users")?.unwrap_or_default(),
    };
    let (selector, principal) = context.scope(&params, 0, &options)?;
    let report = context
        .aggregate()
        .provision(&principal, &selector, &provision)?;
    let value = fields([
        ("geni_rspec", text(report.manifest)),
        ("geni_slivers", sliver_infos(&report.slivers)),
    ]);
    Ok((value, String::new()))
}

/// `Status(urns, credentials, options)`.
fn status(context: &Context<'_>, params: Params<'_>) -> Outcome {
    let options = params.options(2)?;
    let (selector, _) = context.scope(&params, 0, &options)?;
    let report = context.aggregate().status(&selector)?;
    let value = fields([
        ("geni_urn", text(report.slice_urn)),
        ("geni_slivers", sliver_infos(&report.slivers)),
    ]);
    Ok((value, String::new()))
}

/// `Renew(urns, credentials, expiration_time, options)`.
fn renew(context: &Context<'_>, params: Params<'_>) -> Outcome {
    let requested = params.time(2, "expiration_time")?;
    let options = params.options(3)?;
    let renew = RenewOptions {
        best_effort: options.flag("geni_best_effort")?,
        extend_alap: options.flag("geni_extend_alap")?,
    };
    let (selector, principal) = context.scope(&params, 0, &options)?;
    let slivers = context
        .aggregate()
        .renew(&principal, &selector, requested, renew)?;
    Ok((sliver_infos(&slivers), String::new()))
}

/// `PerformOperationalAction(urns, credentials, action, options)`.
fn perform_operational_action(context: &Context<'_>, params: Params<'_>) -> Outcome {
    let action = params.string(2, "action")?;
    let options = params.options(3)?;
    let best_effort = options.flag("geni_best_effort")?;
    let users = options.users("geni_users")?;
    let (selector, principal) = context.scope(&params, 0, &options)?;
    let slivers = context.aggregate().perform_action(
        &principal,
        &selector,
        action,
        best_effort,
        users.as_deref(),
    )?;
    Ok((sliver_infos(&slivers), String::new()))
}

/// `Delete(urns, credentials, options)`.
fn delete(context: &Context<'_>, params: Params<'_>) -> Outcome {
    let options = params.options(2)?;
    // Checked for shape only: Delete of known slivers cannot partly fail,
    // so all-or-nothing and best effort answer alike.
    options.flag("geni_best_effort")?;
    let (selector, principal) = context.scope(&params, 0, &options)?;
    let slivers = context.aggregate().delete(&principal, &selector)?;
    Ok((sliver_infos(&slivers), String::new()))
}

/// `Shutdown(slice_urn, credentials, options)` (the same in v2).
pub(super) fn shutdown(context: &Context<'_>, params: Params<'_>) -> Outcome {
    let slice = context.slice_arg(&params, 0)?;
    let options = params.options(2)?;
    let principal = context.authorize(&params, 1, &options, Some(&slice))?;
    context.aggregate().shutdown(&principal, slice.as_str())?;
    Ok((Value::Boolean(true), String::new()))
}
