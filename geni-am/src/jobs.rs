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
//!
//! Nothing waits on a poll interval when it can be told instead: workers
//! wait on the store's bell, rung when jobs are queued (by any process
//! sharing a PostgreSQL store, see [`crate::store::bell`]); the poller
//! waits on the followers' bell, rung when a worker finished a job and,
//! for a backend that can tell ([`Compute::watch`]), when VMs changed.
//! The intervals of `[jobs]` remain as the safety net.

mod error;
mod execute;
mod inventory;
mod networks;
mod observe;
mod outage;
mod pace;
mod poller;
mod purger;
mod reaper;
mod reconciler;
mod worker;

pub use crate::config::JobsConfig;
use crate::store::retention::Retention;
use crate::store::{Bell, Store};
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
    /// Rung when slivers may have reached what the poller waits for: a
    /// worker finished a job, or the backend said its VMs changed.
    followers: Arc<Bell>,
    /// Whether the backend rings `followers` when its VMs change, so the
    /// poller need not poll it sooner than `poll_interval_ms`.
    watched: bool,
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

    /// True once stopped.
    fn is_stopped(&self) -> bool {
        *self.stopped.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The running background threads; dropping it (or [`JobsHandle::stop`])
/// stops them and waits for them to finish their current step.
pub struct JobsHandle {
    signal: Arc<StopSignal>,
    threads: Vec<JoinHandle<()>>,
    /// The bells the workers and the poller wait on, rung at stop.
    bells: (Store, Arc<Bell>),
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
        self.bells.0.bell().ring();
        self.bells.1.ring();
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
    let followers = Arc::<Bell>::default();
    let hook = followers.clone();
    let watched = backend.watch(Arc::new(move || hook.ring()));
    let context = Arc::new(Context {
        backend: outage::Watched::new(backend, store.clone()),
        store: store.clone(),
        config,
        in_flight: Mutex::default(),
        link_networks: Mutex::default(),
        followers: followers.clone(),
        watched,
    });
    let mut handle = JobsHandle {
        signal: Arc::default(),
        threads: Vec::new(),
        bells: (store, followers),
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
    if context.store.is_postgres() {
        let listen: LoopFn = Box::new(|cx, signal| cx.store.listen(&|wait| signal.sleep(wait)));
        loops.push(("listener".into(), listen));
    }
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
