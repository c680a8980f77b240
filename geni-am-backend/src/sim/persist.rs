//! The simulated cloud's state file: its VMs, networks and address leases
//! as JSON, written after every change and read back at start, so the
//! simulated VMs keep existing across a restart of the aggregate, a kill
//! included, as a real cloud's would.
//!
//! The state is written in turn to two files, the configured path and the
//! same path with `.b` appended, each snapshot numbered; at start the
//! highest-numbered file that reads back whole wins. A snapshot torn by a
//! kill in the middle of its write is then the one not read, and the other
//! file is one change behind, a change whose operation never returned.
//! Each write overwrites the older file in place instead of renaming a
//! temporary file over the state file: file systems flush a file renamed
//! over another (ext4's `auto_da_alloc`), and that flush on every change
//! was what held the aggregate at about 50 lifecycles a second on the
//! simulated cloud (docs/PERFORMANCE.md, "Service load"). Nothing is
//! synced: the files outlive the process, not the machine.

use super::network::AddressPool;
use super::vm::SimVm;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// Everything of the simulated cloud that outlives the process.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    /// Which write this is; the later of the two files is read back.
    /// Files of earlier releases have none (0).
    #[serde(default)]
    pub generation: u64,
    /// The id the next VM gets.
    pub next_id: u64,
    /// How many VMs were ever created.
    pub created: u64,
    /// The VMs by id.
    pub vms: BTreeMap<u64, Box<SimVm>>,
    /// The control network's leases.
    pub control: AddressPool,
    /// The link networks by slot.
    pub networks: BTreeMap<u64, SavedNetwork>,
}

/// One link network of the simulated cloud.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedNetwork {
    /// The tag given at creation.
    pub tag: String,
    /// Its address leases.
    pub pool: AddressPool,
}

/// The two files a [`Snapshot`] is kept in.
#[derive(Debug)]
pub struct StateFile {
    path: PathBuf,
    /// The generation of the last snapshot written or read.
    generation: std::sync::atomic::AtomicU64,
}

impl StateFile {
    /// The state file at `path` (created on the first save).
    pub fn new(path: &Path) -> StateFile {
        StateFile {
            path: path.to_owned(),
            generation: 0.into(),
        }
    }

    /// The file written by generation `generation`: odd ones (the first
    /// included) to the configured path, even ones to the `.b` file.
    fn slot(&self, generation: u64) -> PathBuf {
        if !generation.is_multiple_of(2) {
            self.path.clone()
        } else {
            let mut path = self.path.clone().into_os_string();
            path.push(".b");
            PathBuf::from(path)
        }
    }

    /// The latest saved snapshot that reads back whole, `None` if none was
    /// saved yet; an error when the files exist and neither reads back.
    /// The first write goes to the configured path and it is never
    /// removed, so without it nothing was saved: a `.b` file left alone
    /// (an operator removed the state file to start empty) is ignored.
    pub fn load(&self) -> Result<Option<Snapshot>, String> {
        if !self.path.exists() {
            return Ok(None);
        }
        let mut problem = None;
        let mut best: Option<Snapshot> = None;
        for generation in 1..=2 {
            let path = self.slot(generation);
            let text = match std::fs::read(&path) {
                Ok(text) => text,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
            };
            match serde_json::from_slice::<Snapshot>(&text) {
                Ok(snapshot)
                    if best
                        .as_ref()
                        .is_none_or(|b| snapshot.generation > b.generation) =>
                {
                    best = Some(snapshot);
                }
                Ok(_) => {}
                Err(e) => problem = Some(format!("{}: {e}", path.display())),
            }
        }
        match (best, problem) {
            (Some(snapshot), _) => {
                self.generation
                    .store(snapshot.generation, std::sync::atomic::Ordering::Relaxed);
                Ok(Some(snapshot))
            }
            (None, Some(problem)) => Err(format!(
                "{problem}: not a simulated cloud state file; remove {} to start empty",
                self.path.display()
            )),
            (None, None) => Ok(None),
        }
    }

    /// Writes `snapshot`, numbered after the last one, over the older of
    /// the two files.
    pub fn save(&self, mut snapshot: Snapshot) -> Result<(), String> {
        let generation = self
            .generation
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            + 1;
        let path = self.slot(generation);
        let fail = |e: &dyn std::fmt::Display| {
            format!("cannot save the simulated cloud to {}: {e}", path.display())
        };
        snapshot.generation = generation;
        let json = serde_json::to_vec(&snapshot).map_err(|e| fail(&e))?;
        let write = || -> std::io::Result<()> {
            let file = std::fs::OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(false)
                .open(&path)?;
            file.write_all_at(&json, 0)?;
            file.set_len(json.len() as u64)
        };
        write().map_err(|e| fail(&e))
    }
}
