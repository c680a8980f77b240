//! What a client process of `geni-am bench --processes` prints for its
//! parent: JSON lines, one per method with every raw latency in
//! nanoseconds, then one with the totals; the parent merges them into one
//! [`Report`] so the percentiles are those of all calls, not averages of
//! each process's.

use super::Report;
use super::stats::Latencies;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// One line of a client process's output.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Line {
    /// The latencies of one method's calls.
    Samples {
        /// The AM API method (or the refused-Allocate entry).
        method: String,
        /// Each call's latency in nanoseconds.
        nanos: Vec<u64>,
    },
    /// What the process counted.
    Totals {
        /// Completed lifecycles or successful calls.
        completed: usize,
        /// One line per failure.
        failures: Vec<String>,
        /// Allocates refused for no room and sent again.
        no_room_retries: usize,
        /// Connections opened.
        connections: u64,
        /// When the clients started and the last one ended, in
        /// nanoseconds since the Unix epoch.
        window_unix_nanos: Option<(u64, u64)>,
    },
}

/// Writes `report` as JSON lines.
pub fn write(report: &Report, out: &mut impl Write) -> std::io::Result<()> {
    for (method, latencies) in &report.methods {
        let nanos = latencies
            .samples()
            .iter()
            .map(|d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
            .collect();
        let line = Line::Samples {
            method: method.clone(),
            nanos,
        };
        writeln!(out, "{}", serde_json::to_string(&line)?)?;
    }
    let totals = Line::Totals {
        completed: report.completed,
        failures: report.failures.clone(),
        no_room_retries: report.no_room_retries,
        connections: report.connections,
        window_unix_nanos: report
            .window
            .map(|(start, end)| (unix_nanos(start), unix_nanos(end))),
    };
    writeln!(out, "{}", serde_json::to_string(&totals)?)?;
    out.flush()
}

/// `at` in nanoseconds since the Unix epoch (0 before it).
fn unix_nanos(at: SystemTime) -> u64 {
    at.duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

/// The report a client process wrote; an error names the line that is
/// not one of ours, or says the totals are missing (the process died).
pub fn read(text: &str) -> Result<Report, String> {
    let mut report = Report::default();
    let mut totals = false;
    for (number, line) in text.lines().enumerate().filter(|(_, l)| !l.is_empty()) {
        let parsed: Line =
            serde_json::from_str(line).map_err(|e| format!("line {}: {e}", number + 1))?;
        match parsed {
            Line::Samples { method, nanos } => {
                let latencies: Latencies = nanos.into_iter().map(Duration::from_nanos).collect();
                report.methods.entry(method).or_default().extend(latencies);
            }
            Line::Totals {
                completed,
                failures,
                no_room_retries,
                connections,
                window_unix_nanos,
            } => {
                report.completed += completed;
                report.failures.extend(failures);
                report.no_room_retries += no_room_retries;
                report.connections += connections;
                report.window = window_unix_nanos.map(|(start, end)| {
                    let at = |nanos| UNIX_EPOCH + Duration::from_nanos(nanos);
                    (at(start), at(end))
                });
                totals = true;
            }
        }
    }
    if totals {
        Ok(report)
    } else {
        Err("no totals line: the client process did not finish".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_read_back_has_every_latency_and_total() {
        let mut report = Report {
            completed: 3,
            failures: vec!["Delete: refused".into()],
            no_room_retries: 2,
            connections: 5,
            window: Some((UNIX_EPOCH + Duration::from_secs(7), SystemTime::now())),
            ..Report::default()
        };
        let latencies = [7, 1, 4].map(Duration::from_micros).into_iter().collect();
        report.methods.insert("GetVersion".into(), latencies);
        let mut out = Vec::new();
        write(&report, &mut out).unwrap();
        let back = read(std::str::from_utf8(&out).unwrap()).unwrap();
        let samples = back.methods["GetVersion"].samples();
        assert_eq!(samples, [7, 1, 4].map(Duration::from_micros));
        assert_eq!(
            (back.completed, back.no_room_retries, back.connections),
            (3, 2, 5)
        );
        assert_eq!(back.failures, ["Delete: refused"]);
        let (start, end) = back.window.unwrap();
        assert_eq!(start, UNIX_EPOCH + Duration::from_secs(7));
        assert!(end > start);
    }

    #[test]
    fn output_without_totals_is_an_error() {
        let error = read("{\"samples\":{\"method\":\"GetVersion\",\"nanos\":[1]}}\n").unwrap_err();
        assert!(error.contains("no totals"), "{error}");
        assert!(
            read("Allocate 3 calls\n")
                .unwrap_err()
                .starts_with("line 1")
        );
    }
}
