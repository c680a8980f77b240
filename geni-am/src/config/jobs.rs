//! The `[jobs]` configuration section: how many workers, leases, polling,
//! reconciling and inventory intervals, and the backoff of retries after
//! transient backend errors. Every key has a default, so the section may be left out.

use serde::Deserialize;
use std::time::Duration;
use thiserror::Error;

/// The `[jobs]` section of the configuration file.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct JobsConfig {
    /// Provisioning worker threads.
    pub workers: u32,
    /// Seconds a claimed job stays with its worker; a job whose worker
    /// died is claimed again once this lease has expired.
    pub lease_secs: u64,
    /// Longest an idle worker waits before looking for work again, in
    /// milliseconds: workers are woken when jobs are queued, so this is
    /// the safety net.
    pub idle_poll_ms: u64,
    /// Longest between two polls of slivers in transition, in
    /// milliseconds; the poller also looks when a job ends or the backend
    /// says its VMs changed, and polls a backend that cannot say sooner
    /// while slivers are in transition (see `jobs::poller`).
    pub poll_interval_ms: u64,
    /// Seconds between two reconciliations of the store with the backend.
    pub reconcile_interval_secs: u64,
    /// Milliseconds between two reads of the backend's inventory into the
    /// store's components (hosts added, disabled, filled or removed).
    pub inventory_interval_ms: u64,
    /// Longest the reaper sleeps, in milliseconds, before looking again for
    /// a sooner expiry (a new or shortened lease).
    pub reaper_recheck_ms: u64,
    /// Seconds before the first retry of a transiently failed job; each
    /// further retry waits twice as long. A transiently failed job is
    /// retried until its sliver expires (a destruction, for ever).
    pub retry_base_secs: u64,
    /// Longest wait between two retries, in seconds: how long work may
    /// lag behind a cloud that answers again after an outage, when no
    /// other call noticed first.
    pub retry_max_secs: u64,
    /// Names this installation's process across restarts, in the leases
    /// of the jobs it runs: at start, jobs still leased under it by an
    /// earlier run (killed mid-job) are claimed again at once instead of
    /// after their lease. Empty: `serve` uses `<host name>@<server.listen>`,
    /// and `jobs::start` a name no other process has (so nothing
    /// is reclaimed). Processes sharing one database need distinct names.
    pub instance_id: String,
    /// `max_attempts` of earlier releases, which failed work after a fixed
    /// number of transient errors. Still accepted so that their
    /// configuration files load, and otherwise ignored: `serve` warns
    /// that it has no effect.
    #[serde(rename = "max_attempts")]
    pub retired_max_attempts: Option<u32>,
}

impl Default for JobsConfig {
    fn default() -> JobsConfig {
        JobsConfig {
            workers: 2,
            lease_secs: 60,
            idle_poll_ms: 250,
            poll_interval_ms: 1000,
            reconcile_interval_secs: 60,
            inventory_interval_ms: 60_000,
            reaper_recheck_ms: 2000,
            retry_base_secs: 1,
            retry_max_secs: 60,
            instance_id: String::new(),
            retired_max_attempts: None,
        }
    }
}

/// A `[jobs]` value that cannot work, with the key that holds it.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("jobs.{key}: must be at least 1")]
pub struct JobsConfigError {
    /// The key, e.g. `workers`.
    pub key: &'static str,
}

impl JobsConfig {
    /// Checks that no count or interval is zero.
    pub fn validate(&self) -> Result<(), JobsConfigError> {
        let values = [
            ("workers", u64::from(self.workers)),
            ("lease_secs", self.lease_secs),
            ("idle_poll_ms", self.idle_poll_ms),
            ("poll_interval_ms", self.poll_interval_ms),
            ("reconcile_interval_secs", self.reconcile_interval_secs),
            ("inventory_interval_ms", self.inventory_interval_ms),
            ("reaper_recheck_ms", self.reaper_recheck_ms),
            ("retry_base_secs", self.retry_base_secs),
            ("retry_max_secs", self.retry_max_secs),
        ];
        match values.iter().find(|(_, value)| *value == 0) {
            Some((key, _)) => Err(JobsConfigError { key }),
            None => Ok(()),
        }
    }

    /// The wait before attempt `attempts + 1`, doubling from the base up
    /// to the maximum.
    pub fn backoff(&self, attempts: u32) -> Duration {
        let doublings = attempts.saturating_sub(1).min(30);
        let secs = self.retry_base_secs.saturating_mul(1 << doublings);
        Duration::from_secs(secs.min(self.retry_max_secs))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_section_is_optional_and_keys_override_defaults() {
        let config: JobsConfig = toml::from_str("workers = 4").unwrap();
        assert_eq!(config.workers, 4);
        assert_eq!(config.lease_secs, 60);
        config.validate().unwrap();
        assert!(toml::from_str::<JobsConfig>("worker = 4").is_err());
    }

    #[test]
    fn zero_values_are_refused_by_key() {
        let config = JobsConfig {
            lease_secs: 0,
            ..JobsConfig::default()
        };
        assert_eq!(
            config.validate().unwrap_err().to_string(),
            "jobs.lease_secs: must be at least 1"
        );
    }

    #[test]
    fn backoff_doubles_up_to_the_maximum() {
        let config = JobsConfig {
            retry_base_secs: 2,
            retry_max_secs: 10,
            ..JobsConfig::default()
        };
        let waits: Vec<u64> = (1..=5).map(|a| config.backoff(a).as_secs()).collect();
        assert_eq!(waits, [2, 4, 8, 10, 10]);
    }
}
