//! One client's timed calls: full AM API v3 lifecycles (Allocate →
//! Provision → `geni_start` → Status until `geni_ready` → Delete), an
//! Allocate refused for want of room retried with backoff, a run of
//! GetVersion calls; the session in which a client of a populate run
//! makes its calls; and the envelope helpers they share.

use super::{BenchOptions, Report, SliceCredential, Workload};
use crate::client::{Client, ClientError};
use geni_xmlrpc::Value;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// The GENI code of a refusal for want of capacity, `INSUFFICIENT_NODES`
/// (GENI AM API v3, "Error codes"); `api/errors.rs` gives it to
/// `CoreError::NoCapacity`.
const NO_ROOM: i64 = 26;
/// The name under which refused Allocates are timed, apart from the
/// Allocates that placed a sliver.
pub const ALLOCATE_NO_ROOM: &str = "Allocate (no room)";
/// The first pause before an Allocate refused for no room is sent again;
/// it doubles up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_millis(10);
/// The longest pause between retries of an Allocate.
const MAX_BACKOFF: Duration = Duration::from_millis(200);

/// Why a call did not succeed.
pub(super) struct Failure {
    /// The GENI code of the envelope, when there was one.
    code: Option<i64>,
    /// One line saying what failed.
    message: String,
}

impl From<Failure> for String {
    fn from(failure: Failure) -> String {
        failure.message
    }
}

impl<'a> Session<'a> {
    /// Client number `index`, calling on `client`.
    pub(super) fn new(index: usize, client: &'a mut Client, options: &'a BenchOptions) -> Self {
        client.set_keep_alive(!options.new_connection);
        let slice = match (options.workload, options.slices.len()) {
            (Workload::Lifecycles(_), count @ 1..) => &options.slices[index % count],
            _ => &options.slice,
        };
        Session {
            client,
            options,
            slice,
            request: request(&options.sliver_type, &format!("bench{index}")),
            report: Report::default(),
        }
    }

    /// `count` lifecycles of client number `index`, each started on its
    /// schedule when the run (which started at `started`) has a rate, and
    /// how late it started recorded.
    pub(super) fn lifecycles(&mut self, index: usize, count: usize, started: Instant) {
        let options = self.options;
        for k in 0..count {
            if let Some(rate) = options.rate {
                let slot = k * options.clients + (index - options.first_client);
                let due = started + Duration::from_secs_f64(slot as f64 / rate);
                wait_until(due);
                self.report
                    .lags
                    .push(Instant::now().saturating_duration_since(due));
            }
            match self.lifecycle() {
                Ok(()) => self.report.completed += 1,
                Err(failure) => self.report.failures.push(failure),
            }
        }
    }

    /// `count` GetVersion calls.
    pub(super) fn getversion(&mut self, count: usize) {
        for _ in 0..count {
            match self.call("GetVersion", vec![empty()]) {
                Ok(_) => self.report.completed += 1,
                Err(failure) => self.report.failures.push(failure.into()),
            }
        }
    }

    /// What this client measured, with the connections it opened.
    pub(super) fn into_report(self) -> Report {
        let mut report = self.report;
        report.connections = self.client.connections();
        report
    }
}

/// Sleeps until `when`, at once when it is past.
fn wait_until(when: Instant) {
    if let Some(wait) = when.checked_duration_since(Instant::now()) {
        std::thread::sleep(wait);
    }
}

/// A client making timed calls.
pub(super) struct Session<'a> {
    client: &'a mut Client,
    pub(super) options: &'a BenchOptions,
    /// The slice this client's lifecycles run in.
    slice: &'a SliceCredential,
    /// This client's lifecycle request (its own node client_id).
    request: String,
    pub(super) report: Report,
}

impl Session<'_> {
    /// Allocate → Provision → `geni_start` → Status until ready → Delete.
    fn lifecycle(&mut self) -> Result<(), String> {
        let request = self.request.clone();
        let slice = self.slice;
        let allocated = self.allocate(&slice.urn, &slice.credential, &request)?;
        let urn = first_sliver(&allocated)?;
        let urns = Value::Array(vec![s(&urn)]);
        let version = Value::Struct(BTreeMap::from([(
            "geni_rspec_version".to_owned(),
            rspec_version(),
        )]));
        let outcome = self
            .call("Provision", vec![urns.clone(), self.creds(), version])
            .and_then(|_| {
                let args = vec![urns.clone(), self.creds(), s("geni_start"), empty()];
                self.call("PerformOperationalAction", args)
            })
            .map_err(String::from)
            .and_then(|_| self.wait_ready(&urns));
        let deleted = self.call("Delete", vec![urns, self.creds(), empty()]);
        outcome.and(deleted.map_err(String::from)).map(drop)
    }

    /// Allocate, sent again after a growing pause while the aggregate
    /// refuses it for want of room, for at most the ready timeout: a
    /// deleted sliver's capacity is held until its destroy job has run.
    pub(super) fn allocate(
        &mut self,
        slice_urn: &str,
        credential: &str,
        request: &str,
    ) -> Result<Value, String> {
        let started = Instant::now();
        let mut pause = FIRST_BACKOFF;
        loop {
            let args = vec![s(slice_urn), credentials(credential), s(request), empty()];
            let started_call = Instant::now();
            match answer_value("Allocate", self.client.call("Allocate", &args)) {
                Err(failure)
                    if failure.code == Some(NO_ROOM)
                        && started.elapsed() < self.options.ready_timeout =>
                {
                    self.record(ALLOCATE_NO_ROOM, started_call.elapsed());
                    self.report.no_room_retries += 1;
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(MAX_BACKOFF);
                }
                outcome => {
                    self.record("Allocate", started_call.elapsed());
                    return outcome.map_err(String::from);
                }
            }
        }
    }

    fn wait_ready(&mut self, urns: &Value) -> Result<Value, String> {
        let started = Instant::now();
        loop {
            let status = self.call("Status", vec![urns.clone(), self.creds(), empty()])?;
            let state = geni_xmlrpc::member(&status, "geni_slivers")
                .and_then(|list| match list {
                    Value::Array(items) => items.first(),
                    _ => None,
                })
                .and_then(|sliver| geni_xmlrpc::member(sliver, "geni_operational_status"))
                .and_then(geni_xmlrpc::as_str)
                .unwrap_or_default();
            match state {
                "geni_ready" => return Ok(status),
                "geni_failed" => return Err("Status: the sliver failed".into()),
                _ if started.elapsed() > self.options.ready_timeout => {
                    let waited = started.elapsed();
                    return Err(format!("Status: still {state} after {waited:?}"));
                }
                _ => std::thread::sleep(self.options.poll_interval),
            }
        }
    }

    fn creds(&self) -> Value {
        credentials(&self.slice.credential)
    }

    /// Calls `method`, records its latency, and returns the envelope's
    /// value when `geni_code` is 0.
    pub(super) fn call(
        &mut self,
        method: &'static str,
        params: Vec<Value>,
    ) -> Result<Value, Failure> {
        let started = Instant::now();
        let reply = self.client.call(method, &params);
        self.record(method, started.elapsed());
        answer_value(method, reply)
    }

    fn record(&mut self, method: &str, latency: Duration) {
        self.report
            .methods
            .entry(method.to_owned())
            .or_default()
            .push(latency);
    }
}

/// The value of a call's answer when `geni_code` is 0, else why not.
pub(super) fn answer_value(
    method: &str,
    reply: Result<geni_xmlrpc::Reply, ClientError>,
) -> Result<Value, Failure> {
    let failure = |code, message| Failure { code, message };
    let envelope = match reply {
        Ok(Ok(envelope)) => envelope,
        Ok(Err(fault)) => return Err(failure(None, format!("{method}: fault {fault:?}"))),
        Err(error) => return Err(failure(None, format!("{method}: {error}"))),
    };
    let code = geni_xmlrpc::member(&envelope, "code")
        .and_then(|code| geni_xmlrpc::member(code, "geni_code"))
        .and_then(geni_xmlrpc::as_int);
    if code != Some(0) {
        let output = geni_xmlrpc::member(&envelope, "output")
            .and_then(geni_xmlrpc::as_str)
            .unwrap_or_default();
        let message = format!("{method}: geni_code {code:?}: {output}");
        return Err(failure(code, message));
    }
    Ok(geni_xmlrpc::member(&envelope, "value")
        .cloned()
        .unwrap_or_else(empty))
}

/// The credentials argument holding one SFA credential.
pub(super) fn credentials(credential: &str) -> Value {
    Value::Array(vec![Value::Struct(BTreeMap::from([
        ("geni_type".to_owned(), s("geni_sfa")),
        ("geni_version".to_owned(), s("3")),
        ("geni_value".to_owned(), s(credential)),
    ]))])
}

/// `geni_rspec_version` GENI 3.
pub(super) fn rspec_version() -> Value {
    Value::Struct(BTreeMap::from([
        ("type".to_owned(), s("GENI")),
        ("version".to_owned(), s("3")),
    ]))
}

/// The first sliver URN of an Allocate value.
fn first_sliver(value: &Value) -> Result<String, String> {
    let Some(Value::Array(slivers)) = geni_xmlrpc::member(value, "geni_slivers") else {
        return Err("Allocate: no geni_slivers".into());
    };
    slivers
        .first()
        .and_then(|sliver| geni_xmlrpc::member(sliver, "geni_sliver_urn"))
        .and_then(geni_xmlrpc::as_str)
        .map(str::to_owned)
        .ok_or_else(|| "Allocate: no sliver URN".into())
}

/// A request for one unbound VM of `sliver_type` named `client_id`.
fn request(sliver_type: &str, client_id: &str) -> String {
    format!(
        "<rspec xmlns=\"http://www.geni.net/resources/rspec/3\" type=\"request\"><node client_id=\"{client_id}\" exclusive=\"false\"><sliver_type name=\"{sliver_type}\"/></node></rspec>"
    )
}

fn s(text: &str) -> Value {
    Value::String(text.to_owned())
}

pub(super) fn empty() -> Value {
    Value::Struct(BTreeMap::new())
}
