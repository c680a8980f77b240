//! `geni-am bench --processes P`: the load split over P client processes
//! (this binary run again, each printing [`super::wire`] lines), so that
//! one process's threads are not what limits the run. The children are
//! started together, their raw latencies merged into one report, timed
//! from the first client's start to the last one's end (as the processes
//! report them, so that their start-up is left out), and the CPU time they
//! used (with this process's) measured.

use super::{BenchError, Report, cpu, wire};
use std::process::{Command, Output, Stdio};
use std::time::Instant;

/// Runs `children` (each a `geni-am bench` printing wire lines) at once and
/// merges what they measured. A child that exits with status 2 (could not start) or
/// prints no totals fails the run.
pub fn run(children: Vec<Command>) -> Result<Report, BenchError> {
    let cpu_before = cpu::used();
    let started = Instant::now();
    let mut spawned = Vec::with_capacity(children.len());
    for mut command in children {
        command.stdout(Stdio::piped()).stderr(Stdio::inherit());
        match command.spawn() {
            Ok(child) => spawned.push(child),
            Err(error) => {
                for mut child in spawned {
                    // Already started clients are stopped; a kill that
                    // fails means the child is gone anyway.
                    let _ = child.kill();
                    let _ = child.wait();
                }
                return Err(BenchError::Process(format!(
                    "cannot start a client: {error}"
                )));
            }
        }
    }
    let outputs: Vec<std::io::Result<Output>> = std::thread::scope(|scope| {
        let waits: Vec<_> = spawned
            .into_iter()
            .map(|child| scope.spawn(move || child.wait_with_output()))
            .collect();
        waits
            .into_iter()
            .map(|wait| {
                wait.join()
                    .unwrap_or_else(|_| Err(std::io::Error::other("the waiting thread panicked")))
            })
            .collect()
    });
    let elapsed = started.elapsed();
    let mut report = Report {
        processes: outputs.len(),
        elapsed,
        client_cpu: cpu::since(cpu_before),
        ..Report::default()
    };
    for (number, output) in outputs.into_iter().enumerate() {
        let output = output.map_err(|e| BenchError::Process(format!("client {number}: {e}")))?;
        if output.status.code() == Some(2) {
            return Err(BenchError::Process(format!(
                "client process {number} could not start ({})",
                output.status
            )));
        }
        let part = wire::read(&String::from_utf8_lossy(&output.stdout))
            .map_err(|e| BenchError::Process(format!("client process {number}: {e}")))?;
        report.merge(part);
    }
    if let Some((start, end)) = report.window {
        report.elapsed = end.duration_since(start).unwrap_or(report.elapsed);
    }
    Ok(report)
}
