//! The simulated cloud's state file: its VMs, networks and address leases
//! as JSON, written atomically (a temporary file renamed over the old one)
//! after changes (see `SimulatedCloud`) and read back at start, so the simulated VMs keep
//! existing across a restart of the aggregate as a real cloud's would.

use super::network::AddressPool;
use super::vm::SimVm;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Everything of the simulated cloud that outlives the process.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    /// The id the next VM gets.
    pub next_id: u64,
    /// How many VMs were ever created.
    pub created: u64,
    /// The VMs by id.
    pub vms: BTreeMap<u64, SimVm>,
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

/// The file a [`Snapshot`] is kept in.
#[derive(Debug, Clone)]
pub struct StateFile {
    path: PathBuf,
}

impl StateFile {
    /// The state file at `path` (created on the first save).
    pub fn new(path: &Path) -> StateFile {
        StateFile {
            path: path.to_owned(),
        }
    }

    /// The saved snapshot, `None` if the file does not exist yet.
    pub fn load(&self) -> Result<Option<Snapshot>, String> {
        let text = match std::fs::read(&self.path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(format!("cannot read {}: {e}", self.path.display())),
        };
        serde_json::from_slice(&text).map(Some).map_err(|e| {
            format!(
                "{} is not a simulated cloud state file ({e}); remove it to start empty",
                self.path.display()
            )
        })
    }

    /// Writes `snapshot` to a temporary file next to the state file and
    /// renames it over the state file, so a crash of the process leaves the
    /// old or the new state, never a torn one. The file is not synced to
    /// the disk: a simulator needs to outlive a restart of the aggregate,
    /// not of the machine, and a sync on every change was what bounded the
    /// aggregate's lifecycles per second on the simulated cloud
    /// (docs/PERFORMANCE.md, "Service load").
    pub fn save(&self, snapshot: &Snapshot) -> Result<(), String> {
        let fail = |e: &dyn std::fmt::Display| {
            format!(
                "cannot save the simulated cloud to {}: {e}",
                self.path.display()
            )
        };
        let json = serde_json::to_vec(snapshot).map_err(|e| fail(&e))?;
        let mut temp = self.path.clone().into_os_string();
        temp.push(".tmp");
        let temp = PathBuf::from(temp);
        let write = || -> std::io::Result<()> {
            let mut file = std::fs::File::create(&temp)?;
            file.write_all(&json)?;
            std::fs::rename(&temp, &self.path)
        };
        write().map_err(|e| fail(&e))
    }
}
