//! The aggregate's metrics, in the Prometheus text format (OpenMetrics,
//! through `prometheus-client`): the counters and histograms the request
//! path and the jobs record as they go ([`record_call`],
//! [`record_refusal`], [`record_backend_call`]), held process-wide, and
//! the gauges read from the store when the endpoint is scraped
//! ([`Gauges`], rendered with the rest by [`render`]). The names and
//! labels are what deploy/OPERATOR-ENDPOINT.md lists and the alert rules
//! of the install guide use; change them together.
//!
//! Label values are bounded: methods are the API's own (an unknown method
//! counts as `unknown`), codes are GENI code numbers or `fault`, reasons
//! and backend operations are fixed words.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::encoding::text::{encode_eof, encode_registry};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use std::sync::LazyLock;

/// The content type of [`render`]'s text.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CallLabels {
    method: String,
    code: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct MethodLabels {
    method: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ReasonLabels {
    reason: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct BackendCallLabels {
    operation: &'static str,
    outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ClassLabels {
    class: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct SliverLabels {
    allocation_state: String,
    operational_state: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct HostLabels {
    host: String,
    resource: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct StateLabels {
    state: &'static str,
}

/// A latency histogram: 1 ms to about 65 s, doubling.
fn latency() -> Histogram {
    Histogram::new(exponential_buckets(0.001, 2.0, 17))
}

/// What the process records as it runs.
struct Recorded {
    registry: Registry,
    calls: Family<CallLabels, Counter>,
    durations: Family<MethodLabels, Histogram, fn() -> Histogram>,
    refusals: Family<ReasonLabels, Counter>,
    backend_calls: Family<BackendCallLabels, Counter>,
    backend_errors: Family<ClassLabels, Counter>,
}

static RECORDED: LazyLock<Recorded> = LazyLock::new(|| {
    let calls = Family::<CallLabels, Counter>::default();
    let durations = Family::<MethodLabels, Histogram, fn() -> Histogram>::new_with_constructor(
        latency as fn() -> Histogram,
    );
    let refusals = Family::<ReasonLabels, Counter>::default();
    let backend_calls = Family::<BackendCallLabels, Counter>::default();
    let backend_errors = Family::<ClassLabels, Counter>::default();
    let mut registry = Registry::default();
    registry.register(
        "geni_am_calls",
        "AM API calls answered, by method and GENI code (fault: an XML-RPC fault)",
        calls.clone(),
    );
    registry.register(
        "geni_am_call_duration_seconds",
        "Time to answer an AM API call, from the decoded body to the encoded answer",
        durations.clone(),
    );
    registry.register(
        "geni_am_refusals",
        "Requests and connections refused before or by the credential check, by reason",
        refusals.clone(),
    );
    registry.register(
        "geni_am_backend_calls",
        "Calls of the jobs to the cloud backend, by operation and outcome (ok or error)",
        backend_calls.clone(),
    );
    registry.register(
        "geni_am_backend_errors",
        "Failed calls to the cloud backend, by error class",
        backend_errors.clone(),
    );
    Recorded {
        registry,
        calls,
        durations,
        refusals,
        backend_calls,
        backend_errors,
    }
});

/// The answer of one call, as the metrics count it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallCode {
    /// A GENI envelope with this `geni_code`.
    Geni(i32),
    /// An XML-RPC fault.
    Fault,
}

/// Counts one call of `method` answered with `code` in `seconds`.
/// `method` must be one the API answers (others as `unknown`).
pub fn record_call(method: &str, code: CallCode, seconds: f64) {
    let code = match code {
        CallCode::Geni(n) => n.to_string(),
        CallCode::Fault => "fault".to_owned(),
    };
    RECORDED
        .calls
        .get_or_create(&CallLabels {
            method: method.to_owned(),
            code,
        })
        .inc();
    RECORDED
        .durations
        .get_or_create(&MethodLabels {
            method: method.to_owned(),
        })
        .observe(seconds);
}

/// Counts one refusal for `reason` (a fixed word: `untrusted_certificate`,
/// `over_capacity`, `body_too_large`, a credential refusal's label, …).
pub fn record_refusal(reason: &'static str) {
    RECORDED
        .refusals
        .get_or_create(&ReasonLabels { reason })
        .inc();
}

/// Counts one backend call of `operation` (a `Compute` method name);
/// `error` is the class of its failure, `None` when it succeeded.
pub fn record_backend_call(operation: &'static str, error: Option<&'static str>) {
    let outcome = if error.is_some() { "error" } else { "ok" };
    RECORDED
        .backend_calls
        .get_or_create(&BackendCallLabels { operation, outcome })
        .inc();
    if let Some(class) = error {
        RECORDED
            .backend_errors
            .get_or_create(&ClassLabels { class })
            .inc();
    }
}

/// The use of one host.
#[derive(Debug, Clone, PartialEq)]
pub struct HostUse {
    /// The host's name.
    pub host: String,
    /// What is used and free of each resource (`cpus`, `memory_mb`,
    /// `vms`): `(resource, used, free)`.
    pub resources: Vec<(&'static str, i64, i64)>,
}

/// The state the gauges show, read from the store when scraped.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Gauges {
    /// Live slivers by `(allocation_state, operational_state)`.
    pub slivers: Vec<(String, String, i64)>,
    /// The hosts' capacity.
    pub hosts: Vec<HostUse>,
    /// Jobs queued, due or waiting.
    pub jobs_queued: i64,
    /// Age of the oldest queued job, in seconds (0 with none).
    pub jobs_oldest_age_seconds: i64,
    /// Whether the backend answers (no outage recorded).
    pub backend_up: bool,
    /// Store connections in use and idle in this process's pool.
    pub store_in_use: i64,
    /// Idle store connections.
    pub store_idle: i64,
    /// Whether the aggregate is drained (new allocations refused).
    pub draining: bool,
}

impl Gauges {
    /// The gauges as a registry of their own, made for one scrape.
    fn registry(&self) -> Registry {
        let mut registry = Registry::default();
        let slivers = Family::<SliverLabels, Gauge>::default();
        for (allocation, operational, count) in &self.slivers {
            slivers
                .get_or_create(&SliverLabels {
                    allocation_state: allocation.clone(),
                    operational_state: operational.clone(),
                })
                .set(*count);
        }
        registry.register(
            "geni_am_slivers",
            "Live slivers by allocation and operational state",
            slivers,
        );
        let (used, free) = (
            Family::<HostLabels, Gauge>::default(),
            Family::<HostLabels, Gauge>::default(),
        );
        for host in &self.hosts {
            for &(resource, in_use, left) in &host.resources {
                let labels = HostLabels {
                    host: host.host.clone(),
                    resource,
                };
                used.get_or_create(&labels).set(in_use);
                free.get_or_create(&labels).set(left);
            }
        }
        registry.register(
            "geni_am_host_used",
            "What the aggregate's slivers hold of each host",
            used,
        );
        registry.register(
            "geni_am_host_free",
            "What is left of each host for new slivers",
            free,
        );
        let single = |value: i64| {
            let gauge = Gauge::<i64>::default();
            gauge.set(value);
            gauge
        };
        registry.register(
            "geni_am_jobs_queued",
            "Backend jobs queued (due or waiting for a retry)",
            single(self.jobs_queued),
        );
        registry.register(
            "geni_am_jobs_oldest_age_seconds",
            "Age of the oldest queued backend job",
            single(self.jobs_oldest_age_seconds),
        );
        registry.register(
            "geni_am_backend_up",
            "1 while the backend answers, 0 during an outage",
            single(i64::from(self.backend_up)),
        );
        let connections = Family::<StateLabels, Gauge>::default();
        connections
            .get_or_create(&StateLabels { state: "in_use" })
            .set(self.store_in_use);
        connections
            .get_or_create(&StateLabels { state: "idle" })
            .set(self.store_idle);
        registry.register(
            "geni_am_store_connections",
            "Connections of the request pool to the store (on SQLite with the writers' shared one), in use or idle",
            connections,
        );
        registry.register(
            "geni_am_draining",
            "1 while the aggregate is drained (new allocations refused)",
            single(i64::from(self.draining)),
        );
        registry
    }
}

/// The recorded metrics and `gauges` in the text format.
pub fn render(gauges: &Gauges) -> String {
    let mut text = String::new();
    // Writing to a String cannot fail.
    let _ = encode_registry(&mut text, &RECORDED.registry);
    let _ = encode_registry(&mut text, &gauges.registry());
    let _ = encode_eof(&mut text);
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The value of the sample named `name` with exactly `labels`.
    fn sample(text: &str, name: &str, labels: &str) -> Option<f64> {
        let prefix = format!("{name}{{{labels}}} ");
        text.lines()
            .find_map(|line| line.strip_prefix(&prefix))
            .and_then(|value| value.parse().ok())
    }

    #[test]
    fn recorded_calls_are_counted_by_method_and_code() {
        let before = render(&Gauges::default());
        let count = |text: &str, code: &str| {
            sample(
                text,
                "geni_am_calls_total",
                &format!("method=\"TelemetryTest\",code=\"{code}\""),
            )
            .unwrap_or(0.0)
        };
        record_call("TelemetryTest", CallCode::Geni(0), 0.002);
        record_call("TelemetryTest", CallCode::Geni(0), 0.004);
        record_call("TelemetryTest", CallCode::Fault, 0.001);
        let after = render(&Gauges::default());
        assert_eq!(count(&after, "0") - count(&before, "0"), 2.0);
        assert_eq!(count(&after, "fault") - count(&before, "fault"), 1.0);
        assert!(
            after.contains(
                "geni_am_call_duration_seconds_bucket{le=\"0.002\",method=\"TelemetryTest\"}"
            ) || after.contains(
                "geni_am_call_duration_seconds_bucket{method=\"TelemetryTest\",le=\"0.002\"}"
            ),
            "{after}"
        );
        assert!(after.ends_with("# EOF\n"));
    }

    #[test]
    fn gauges_show_what_the_store_said() {
        let gauges = Gauges {
            slivers: vec![("geni_provisioned".into(), "geni_ready".into(), 3)],
            hosts: vec![HostUse {
                host: "host-1".into(),
                resources: vec![("cpus", 2, 6), ("vms", 1, 9)],
            }],
            jobs_queued: 4,
            jobs_oldest_age_seconds: 12,
            backend_up: true,
            store_in_use: 1,
            store_idle: 7,
            draining: false,
        };
        let text = render(&gauges);
        let labels = "allocation_state=\"geni_provisioned\",operational_state=\"geni_ready\"";
        assert_eq!(sample(&text, "geni_am_slivers", labels), Some(3.0));
        let host = "host=\"host-1\",resource=\"cpus\"";
        assert_eq!(sample(&text, "geni_am_host_used", host), Some(2.0));
        assert_eq!(sample(&text, "geni_am_host_free", host), Some(6.0));
        assert!(text.contains("geni_am_jobs_queued 4\n"), "{text}");
        assert!(text.contains("geni_am_jobs_oldest_age_seconds 12\n"));
        assert!(text.contains("geni_am_backend_up 1\n"));
        assert!(text.contains("geni_am_draining 0\n"));
        let idle = "state=\"idle\"";
        assert_eq!(sample(&text, "geni_am_store_connections", idle), Some(7.0));
    }

    #[test]
    fn backend_failures_are_counted_by_class() {
        record_backend_call("telemetry_test", Some("capacity"));
        record_backend_call("telemetry_test", None);
        let text = render(&Gauges::default());
        let ok = "operation=\"telemetry_test\",outcome=\"ok\"";
        assert!(sample(&text, "geni_am_backend_calls_total", ok).unwrap_or(0.0) >= 1.0);
        assert!(sample(&text, "geni_am_backend_errors_total", "class=\"capacity\"").is_some());
    }
}
