//! `geni-am bench --populate N`: fills an aggregate with N provisioned
//! slivers, to measure what it holds per sliver. The slivers come in
//! Allocates of many unbound nodes each, spread evenly over the slices of
//! [`super::BenchOptions::slices`], every request Provisioned as soon as it
//! is allocated and its slivers asked for (Status) until none waits for
//! its provision job, before the client takes the next request from the
//! counter the clients share. So at most one request's jobs per client
//! are queued: a queue of a hundred thousand jobs is a load of its own
//! (every claim and every round of the poller looks through it).

use super::SliceCredential;
use super::session::{Session, credentials, empty, rspec_version};
use geni_xmlrpc::Value;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The pause between two Status calls on a request's slivers: each covers
/// hundreds of slivers, so asking every few milliseconds would load the
/// aggregate more than its jobs do.
const WAIT_POLL: Duration = Duration::from_secs(1);

/// The operational state of a sliver whose provision job has not run.
const PENDING: &str = "geni_pending_allocation";

/// How `slivers` nodes are cut into requests of `per_request` and spread
/// over `slices` slices.
#[derive(Debug, Clone, Copy)]
pub struct Layout {
    /// Slivers in all.
    pub slivers: usize,
    /// Nodes per Allocate (the last one may have fewer).
    pub per_request: usize,
    /// Slices they are spread over.
    pub slices: usize,
}

impl Layout {
    /// How many Allocates it takes.
    pub fn requests(&self) -> usize {
        self.slivers.div_ceil(self.per_request.max(1))
    }

    /// The nodes of request `r`: the first one's number and how many.
    fn nodes(&self, r: usize) -> (usize, usize) {
        let first = r * self.per_request;
        (first, self.per_request.min(self.slivers - first))
    }

    /// The slice request `r` goes to: consecutive requests share a slice,
    /// each slice getting as many as the others or one fewer.
    fn slice(&self, r: usize) -> usize {
        r * self.slices.max(1) / self.requests().max(1)
    }
}

/// What one client does: takes requests from `next` until all are taken,
/// allocating and provisioning each and waiting for its provision jobs.
/// Completed counts the slivers provisioned and out of
/// `geni_pending_allocation` without failing.
pub(super) fn fill(session: &mut Session<'_>, slivers: usize, next: &AtomicUsize) {
    let options = session.options;
    let layout = Layout {
        slivers,
        per_request: options.nodes_per_request,
        slices: options.slices.len(),
    };
    loop {
        let r = next.fetch_add(1, Ordering::Relaxed);
        if r >= layout.requests() {
            break;
        }
        let slice = &options.slices[layout.slice(r)];
        let (first, count) = layout.nodes(r);
        let request = request(&options.sliver_type, first, count);
        match allocate_and_provision(session, slice, &request)
            .and_then(|urns| wait_provisioned(session, slice, urns))
        {
            Ok(done) => session.report.completed += done,
            Err(failure) => session.report.failures.push(failure),
        }
    }
}

/// Allocates `request` in `slice` and provisions what it got; returns the
/// slivers' URNs.
fn allocate_and_provision(
    session: &mut Session<'_>,
    slice: &SliceCredential,
    request: &str,
) -> Result<Value, String> {
    let allocated = session.allocate(&slice.urn, &slice.credential, request)?;
    let urns = sliver_urns(&allocated);
    let version = Value::Struct(BTreeMap::from([(
        "geni_rspec_version".to_owned(),
        rspec_version(),
    )]));
    let args = vec![urns.clone(), credentials(&slice.credential), version];
    session.call("Provision", args)?;
    Ok(urns)
}

/// Asks for `urns` until none is pending; returns how many are ready (not
/// failed), or why not.
fn wait_provisioned(
    session: &mut Session<'_>,
    slice: &SliceCredential,
    urns: Value,
) -> Result<usize, String> {
    let started = Instant::now();
    loop {
        let args = vec![urns.clone(), credentials(&slice.credential), empty()];
        let status = session.call("Status", args)?;
        let states = operational_states(&status);
        if !states.contains(&PENDING) {
            let failed = states.iter().filter(|s| **s == "geni_failed").count();
            if failed > 0 {
                return Err(format!("Status: {failed} slivers failed in {}", slice.urn));
            }
            return Ok(states.len());
        }
        if started.elapsed() > session.options.ready_timeout {
            return Err(format!(
                "Status: slivers of {} still pending after {:?}",
                slice.urn,
                started.elapsed()
            ));
        }
        std::thread::sleep(WAIT_POLL);
    }
}

/// The `geni_sliver_urn`s of an Allocate's value, as an array argument.
fn sliver_urns(value: &Value) -> Value {
    let urns = slivers(value)
        .filter_map(|sliver| geni_xmlrpc::member(sliver, "geni_sliver_urn").cloned())
        .collect();
    Value::Array(urns)
}

/// The `geni_operational_status` of each sliver of a Status value.
fn operational_states(value: &Value) -> Vec<&str> {
    slivers(value)
        .map(|sliver| {
            geni_xmlrpc::member(sliver, "geni_operational_status")
                .and_then(geni_xmlrpc::as_str)
                .unwrap_or_default()
        })
        .collect()
}

/// The entries of `geni_slivers`.
fn slivers(value: &Value) -> impl Iterator<Item = &Value> {
    match geni_xmlrpc::member(value, "geni_slivers") {
        Some(Value::Array(items)) => items.as_slice(),
        _ => &[],
    }
    .iter()
}

/// A request for `count` unbound VMs of `sliver_type`, named `p<first>`
/// onwards (names unique over the whole run).
fn request(sliver_type: &str, first: usize, count: usize) -> String {
    let mut out =
        String::from(r#"<rspec xmlns="http://www.geni.net/resources/rspec/3" type="request">"#);
    for n in first..first + count {
        out += &format!(
            r#"<node client_id="p{n}" exclusive="false"><sliver_type name="{sliver_type}"/></node>"#
        );
    }
    out + "</rspec>"
}

#[cfg(test)]
mod tests {
    use super::Layout;

    #[test]
    fn requests_cover_every_sliver_once_and_share_the_slices_evenly() {
        let layout = Layout {
            slivers: 2_250,
            per_request: 500,
            slices: 3,
        };
        assert_eq!(layout.requests(), 5);
        let nodes: Vec<(usize, usize)> = (0..5).map(|r| layout.nodes(r)).collect();
        assert_eq!(
            nodes,
            [(0, 500), (500, 500), (1000, 500), (1500, 500), (2000, 250)]
        );
        let slices: Vec<usize> = (0..5).map(|r| layout.slice(r)).collect();
        assert_eq!(slices, [0, 0, 1, 1, 2]);
    }
}
