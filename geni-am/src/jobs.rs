//! The background work of the aggregate, on threads started by `serve`:
//! provisioning workers that claim queued jobs and drive the backend, a
//! poller that follows slivers in transition until the backend reaches the
//! state they wait for, the expiry reaper (expired slivers are deleted to
//! the second), the reconciler (VMs no live sliver owns are destroyed;
//! slivers whose VM vanished fail), and the inventory refresh (the
//! components, and so the advertisement, follow the cloud's hosts), and
//! the purger (the store forgets what its retention lets go). Every call
//! to the backend is watched for outages (see [`outage`]).
//! Requests never wait for any of it: they read the state these threads
//! write to the store.

mod error;
mod execute;
mod inventory;
mod networks;
mod observe;
mod outage;
mod poller;
mod purger;
mod reaper;
mod reconciler;
mod worker;

pub use crate::config::JobsConfig;
use crate::store::Store;
use crate::store::retention::Retention;
use geni_am_backend::Compute;
pub use inventory::store as store_inventory;
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

/// Why the background jobs could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The leases of an earlier run could not be ended.
    #[error("cannot reclaim the jobs of an earlier run: {0}")]
    Store(#[from] crate::store::StoreError),
    /// A thread could not be started.
    #[error("cannot start the background jobs: {0}")]
    Thread(#[from] std::io::Error),
}

/// What every background thread shares.
struct Context {
    store: Store,
    /// The backend, watched for outages.
    backend: outage::Watched,
    config: JobsConfig,
    /// Slivers a worker of this process is handling right now, so two
    /// workers never drive one VM at once.
    in_flight: Mutex<std::collections::HashSet<String>>,
    /// Held while a link's network is looked up, created and recorded, so
    /// two workers provisioning nodes of one link make one network.
    link_networks: Mutex<()>,
}

/// A stop flag threads can sleep on: they wake at once when it is set.
#[derive(Default)]
struct StopSignal {
    stopped: Mutex<bool>,
    wake: Condvar,
}

impl StopSignal {
    /// Sleeps for `timeout` or until stopped; true when stopped.
    fn sleep(&self, timeout: Duration) -> bool {
        let stopped = self.stopped.lock().unwrap_or_else(PoisonError::into_inner);
        let (stopped, _) = self
            .wake
            .wait_timeout_while(stopped, timeout, |stopped| !*stopped)
            .unwrap_or_else(PoisonError::into_inner);
        *stopped
    }

    fn stop(&self) {
        *self.stopped.lock().unwrap_or_else(PoisonError::into_inner) = true;
        self.wake.notify_all();
    }
}

/// The running background threads; dropping it (or [`JobsHandle::stop`])
/// stops them and waits for them to finish their current step.
pub struct JobsHandle {
    signal: Arc<StopSignal>,
    threads: Vec<JoinHandle<()>>,
}

impl JobsHandle {
    /// Stops every thread and waits for them. A job a worker was in the
    /// middle of is either finished or left to be claimed again after its
    /// lease.
    pub fn stop(self) {
        drop(self);
    }
}

impl JobsHandle {
    /// Adds the purger on `store`: every `interval` it removes what
    /// `retention` lets go at the time `clock` says. Fails only if the
    /// operating system refuses a thread.
    pub fn purge(
        &mut self,
        store: Store,
        retention: Retention,
        interval: Duration,
        clock: crate::core::Clock,
    ) -> std::io::Result<()> {
        let signal = self.signal.clone();
        let thread = std::thread::Builder::new()
            .name("jobs-purger".into())
            .spawn(move || purger::run(&store, &retention, interval, &clock, &signal))?;
        self.threads.push(thread);
        Ok(())
    }
}

impl Drop for JobsHandle {
    fn drop(&mut self) {
        self.signal.stop();
        for thread in self.threads.drain(..) {
            if thread.join().is_err() {
                tracing::error!("a background job thread panicked");
            }
        }
    }
}

/// Starts the workers, the poller, the reaper, the reconciler and the
/// inventory refresh on `store` and `backend`, after ending the leases
/// that `config.instance_id` still holds from an earlier run (see
/// [`Store::reclaim_leases`]). Fails if the store cannot be written or
/// the operating system refuses a thread.
pub fn start(
    store: Store,
    backend: Arc<dyn Compute>,
    config: JobsConfig,
) -> Result<JobsHandle, StartError> {
    let context = Arc::new(Context {
        backend: outage::Watched::new(backend, store.clone()),
        store,
        config,
        in_flight: Mutex::default(),
        link_networks: Mutex::default(),
    });
    let mut handle = JobsHandle {
        signal: Arc::default(),
        threads: Vec::new(),
    };
    let run = uuid::Uuid::new_v4().simple().to_string();
    let instance = match context.config.instance_id.as_str() {
        "" => format!("{}-{run}", std::process::id()),
        named => named.to_owned(),
    };
    let reclaimed = context
        .store
        .reclaim_leases(&instance, &run, chrono::Utc::now())?;
    if reclaimed > 0 {
        tracing::info!(%instance, reclaimed, "claiming again the jobs an earlier run of this instance left");
    }
    let owner = format!("{instance}/{run}");
    let mut loops: Vec<(String, LoopFn)> = (0..context.config.workers)
        .map(|i| {
            let name = format!("{owner}-w{i}");
            let lease_owner = name.clone();
            let run: LoopFn = Box::new(move |cx, signal| worker::run(cx, &lease_owner, signal));
            (name, run)
        })
        .collect();
    loops.push(("poller".into(), Box::new(poller::run)));
    loops.push(("reaper".into(), Box::new(reaper::run)));
    loops.push(("reconciler".into(), Box::new(reconciler::run)));
    loops.push(("inventory".into(), Box::new(inventory::run)));
    for (name, run) in loops {
        let context = context.clone();
        let signal = handle.signal.clone();
        let thread = std::thread::Builder::new()
            .name(format!("jobs-{name}"))
            .spawn(move || run(&context, &signal))?;
        handle.threads.push(thread);
    }
    tracing::info!(
        workers = context.config.workers,
        backend = context.backend.name(),
        "background jobs started"
    );
    Ok(handle)
}

/// The body of one background thread.
type LoopFn = Box<dyn FnOnce(&Context, &StopSignal) + Send>;
