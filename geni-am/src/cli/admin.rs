//! `geni-am admin --config FILE <command>`: the operator's commands over
//! the configured store, safe while `serve` runs on it (SQLite in WAL
//! mode: readers go beside the one writer, writers wait up to the busy
//! timeout; PostgreSQL: ordinary transactions). Reads go through
//! `core::overview`, actions through the core's own paths
//! (`Aggregate::operator_shutdown`, `operator_delete`, `set_draining`), so
//! the jobs of the running `serve` carry out what they queue.
//!
//! The store is opened without applying migrations ([`Store::attach`]):
//! `serve` applies them when it starts, and a newer `admin` must not change
//! the schema under an older `serve`; `admin` stops when the schema is
//! behind (except `backup`, which copies whatever is there).
//!
//! Output: aligned tables by default, `--json` for scripts. Exit status: 0
//! done, 1 the command failed (an unknown slice or sliver, named; the
//! store), 2 usage or configuration errors (clap's own, a malformed time or
//! state, an unreadable configuration, no operator name).

mod table;
mod views;

use crate::config::Config;
use crate::core::overview::{self, StateFilter};
use crate::core::{Aggregate, CoreError};
use crate::service;
use crate::store::{Store, slices};
use chrono::{DateTime, Utc};
use clap::{Args, Subcommand, ValueEnum};
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `geni-am admin`.
#[derive(Debug, Args)]
pub struct AdminArgs {
    /// The configuration file of the aggregate (its `[store]` is used).
    #[arg(long, value_name = "FILE")]
    pub config: PathBuf,
    /// Print JSON (an array or an object with stable keys) instead of a
    /// table.
    #[arg(long, global = true)]
    pub json: bool,
    /// The name actions are recorded under in the audit log [default:
    /// $SUDO_USER, else $USER].
    #[arg(long, global = true, value_name = "NAME")]
    pub operator: Option<String>,
    /// What to do.
    #[command(subcommand)]
    pub command: AdminCommand,
}

/// The commands of `geni-am admin`.
#[derive(Debug, Subcommand)]
pub enum AdminCommand {
    /// List the slices holding live slivers or shut down: live slivers by
    /// state, next expiry, shutdown.
    Slices {
        /// Also the slices with nothing live here (every slice ever seen).
        #[arg(long)]
        all: bool,
    },
    /// List slivers (the live ones unless --state names another).
    Slivers {
        /// Only this slice's slivers.
        #[arg(long, value_name = "URN")]
        slice: Option<String>,
        /// Only slivers in this allocation or operational state
        /// (`geni_ready`, `failed`, `provisioned`, `geni_unallocated` for
        /// the deleted ones still kept, …).
        #[arg(long, value_name = "STATE", value_parser = parse_state)]
        state: Option<StateFilter>,
    },
    /// Show the job queue (queued and running jobs), or the failed jobs.
    Jobs {
        /// The jobs given up instead of the queue.
        #[arg(long)]
        failed: bool,
    },
    /// Show the audit log, oldest first.
    Events {
        /// Only this slice's events.
        #[arg(long, value_name = "URN")]
        slice: Option<String>,
        /// Only events at or after this time (RFC 3339, e.g.
        /// 2026-11-27T08:00:00Z).
        #[arg(long, value_name = "TIME", value_parser = parse_time)]
        since: Option<DateTime<Utc>>,
        /// At most this many (the newest).
        #[arg(long, value_name = "N", default_value_t = 100)]
        limit: usize,
    },
    /// Show capacity per host, used and free, as Allocate counts it.
    Capacity,
    /// Shut a slice down (as the AM API's Shutdown): running slivers are
    /// stopped and kept, experimenters can no longer change the slice.
    Shutdown {
        /// The slice URN.
        slice: String,
        /// Why (recorded with the slice and in the audit log).
        #[arg(long, value_name = "TEXT")]
        reason: String,
    },
    /// Delete slivers (as the AM API's Delete, also in a shut-down slice);
    /// the jobs of `serve` destroy their VMs.
    Delete {
        /// The sliver URNs.
        #[arg(required = true, value_name = "SLIVER")]
        slivers: Vec<String>,
        /// Why (recorded in the audit log).
        #[arg(long, value_name = "TEXT")]
        reason: Option<String>,
    },
    /// Refuse new slivers (Allocate, CreateSliver) while existing ones keep
    /// working (`on`), allocate again (`off`), or show the state.
    Drain {
        /// `on` or `off`; without it, show whether the aggregate drains.
        #[arg(value_enum)]
        state: Option<Switch>,
        /// Why (with `on`; shown to experimenters refused).
        #[arg(long, value_name = "TEXT", default_value = "")]
        reason: String,
    },
    /// Copy the SQLite store to a new file while it is in use (for
    /// PostgreSQL use pg_dump).
    Backup {
        /// The file to write; must not exist.
        file: PathBuf,
    },
}

/// `drain on|off`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Switch {
    /// Begin draining.
    On,
    /// Stop draining.
    Off,
}

/// A state named on the command line.
fn parse_state(text: &str) -> Result<StateFilter, String> {
    StateFilter::parse(text).ok_or_else(|| {
        format!(
            "`{text}` is no sliver state; use an allocation state (geni_allocated, geni_provisioned, geni_unallocated) or an operational state (geni_ready, geni_failed, …)"
        )
    })
}

/// A time named on the command line.
fn parse_time(text: &str) -> Result<DateTime<Utc>, String> {
    crate::time::parse(text).map_err(|e| e.to_string())
}

/// Why a command stopped, with its exit status.
#[derive(Debug)]
enum Failure {
    /// Usage or configuration (2).
    Usage(String),
    /// The command failed (1).
    Failed(String),
}

impl From<CoreError> for Failure {
    fn from(e: CoreError) -> Self {
        Failure::Failed(e.to_string())
    }
}

impl AdminArgs {
    /// Runs the command; see the module doc for the exit status.
    pub fn run(self) -> ExitCode {
        match self.execute() {
            Ok(out) => {
                print!("{out}");
                ExitCode::SUCCESS
            }
            Err(Failure::Usage(message)) => {
                eprintln!("geni-am admin: {message}");
                ExitCode::from(2)
            }
            Err(Failure::Failed(message)) => {
                eprintln!("geni-am admin: {message}");
                ExitCode::FAILURE
            }
        }
    }

    /// Runs the command; returns what to print.
    fn execute(&self) -> Result<String, Failure> {
        let config = Config::load(&self.config).map_err(|e| Failure::Usage(e.to_string()))?;
        let store = Store::attach(&config.store.url, 2)
            .map_err(|e| Failure::Usage(format!("store.url {}: {e}", config.store.url)))?;
        let backup = matches!(self.command, AdminCommand::Backup { .. });
        let pending = if backup {
            Vec::new()
        } else {
            store
                .pending_migrations()
                .map_err(|e| Failure::Failed(e.to_string()))?
        };
        if !pending.is_empty() {
            return Err(Failure::Failed(format!(
                "the store's schema is older than this geni-am (migrations {} not applied); start `geni-am serve` of this version once, which applies them, then run admin again",
                pending.join(", ")
            )));
        }
        let aggregate = Aggregate::new(store, service::aggregate_config(&config))?;
        self.command(&aggregate)
    }

    /// Runs a command other than `backup` on `aggregate`.
    fn command(&self, am: &Aggregate) -> Result<String, Failure> {
        let store = am.store();
        let json = self.json;
        let now = Utc::now();
        match &self.command {
            AdminCommand::Slices { all } => {
                let mut slices = overview::slices(store)?;
                if !all {
                    slices.retain(|s| s.live_slivers > 0 || s.shut_down.is_some());
                }
                Ok(views::slices(&slices, json))
            }
            AdminCommand::Slivers { slice, state } => {
                if let Some(slice) = slice {
                    known_slice(store, slice)?;
                }
                let slivers = overview::slivers(store, slice.as_deref(), *state)?;
                Ok(views::slivers(&slivers, json))
            }
            AdminCommand::Jobs { failed } => Ok(views::jobs(
                &overview::jobs(store, now, *failed, None)?,
                json,
            )),
            AdminCommand::Events {
                slice,
                since,
                limit,
            } => {
                if let Some(slice) = slice {
                    known_slice(store, slice)?;
                }
                let events = overview::events(store, slice.as_deref(), *since, *limit)?;
                Ok(views::events(&events, json))
            }
            AdminCommand::Capacity => Ok(views::capacity(&overview::capacity(store, now)?, json)),
            AdminCommand::Shutdown { slice, reason } => {
                let operator = self.operator()?;
                am.operator_shutdown(&operator, slice, reason)?;
                let summary = overview::slice(store, slice)?;
                Ok(views::shut_down(
                    slice,
                    &operator,
                    reason,
                    summary.as_ref(),
                    json,
                ))
            }
            AdminCommand::Delete { slivers, reason } => {
                let operator = self.operator()?;
                let deleted = am.operator_delete(&operator, slivers, reason.as_deref())?;
                Ok(views::deleted(&deleted, &operator, json))
            }
            AdminCommand::Drain { state, reason } => {
                if let Some(state) = state {
                    let operator = self.operator()?;
                    am.set_draining(&operator, *state == Switch::On, reason)?;
                }
                Ok(views::drain(&overview::drain(store)?, json))
            }
            AdminCommand::Backup { file } => {
                store
                    .backup(file)
                    .map_err(|e| Failure::Failed(e.to_string()))?;
                Ok(views::backed_up(file, json))
            }
        }
    }

    /// The operator's name: `--operator`, else `$SUDO_USER`, else `$USER`.
    fn operator(&self) -> Result<String, Failure> {
        let from_env = |key: &str| std::env::var(key).ok().filter(|v| !v.trim().is_empty());
        self.operator
            .clone()
            .filter(|name| !name.trim().is_empty())
            .or_else(|| from_env("SUDO_USER"))
            .or_else(|| from_env("USER"))
            .map(|name| name.trim().to_owned())
            .ok_or_else(|| {
                Failure::Usage(
                    "who is acting? give --operator NAME (neither SUDO_USER nor USER is set)"
                        .into(),
                )
            })
    }
}

/// Fails, naming it, unless the slice `urn` is known here.
fn known_slice(store: &Store, urn: &str) -> Result<(), Failure> {
    let known = store
        .read(|conn| slices::find(conn, urn))
        .map_err(CoreError::from)?;
    match known {
        Some(_) => Ok(()),
        None => Err(CoreError::NoSuchSlice {
            slice: urn.to_owned(),
        }
        .into()),
    }
}
