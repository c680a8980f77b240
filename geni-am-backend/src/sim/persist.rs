//! The simulated cloud's state file: its VMs and networks as JSON, kept
//! current after every change and read back at start, so the simulated
//! VMs keep existing across a restart of the aggregate, a kill included,
//! as a real cloud's would.
//!
//! A file is a journal: a first line holding a whole [`Snapshot`], then
//! one line per change ([`Change`]: a VM or a network as it now is, or
//! gone), appended as each change is made and numbered with the
//! snapshot's generation. Writing the whole state after every change cost
//! a copy and an encoding of every VM per action, which grew with the
//! cloud (docs/PERFORMANCE.md, "The simulated cloud's journal"); a change
//! line costs the one VM. Once the change lines after a snapshot are
//! twice its size (and 64 KiB more), the next change writes a new
//! snapshot instead, so the file stays within a few times the state's
//! size and a snapshot's cost is spread over about as many changes as the
//! state has VMs.
//!
//! Snapshots are written in turn to two files, the configured path and the
//! same path with `.b` appended, each numbered; at start the
//! highest-numbered file whose snapshot reads back whole wins, and its
//! change lines are applied up to the first that does not read back (a
//! line torn by a kill in the middle of its write: a change whose
//! operation never returned) or is of another generation (the lines of
//! an older journal the new snapshot was written over, when a kill came
//! before the file was cut to the snapshot's length). A snapshot torn the
//! same way is the file not read, and the other file, one change behind,
//! is. After a start, and after a write failed, the next change writes a
//! snapshot, so nothing is appended behind a torn line or a lost one.
//!
//! Each write goes in place instead of renaming a temporary file over the
//! state file: file systems flush a file renamed over another (ext4's
//! `auto_da_alloc`), and that flush on every change was what held the
//! aggregate at about 50 lifecycles a second on the simulated cloud
//! (docs/PERFORMANCE.md, "Service load"). Nothing is synced: the files
//! outlive the process, not the machine. Files of earlier releases, a
//! snapshot alone, read as journals without changes.

use super::network::AddressPool;
use super::vm::SimVm;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

/// Bytes of change lines written after a snapshot, beyond twice the
/// snapshot's own size, before the next change writes a snapshot: a small
/// cloud is not written whole on every few changes.
const CHANGES_SLACK: u64 = 64 * 1024;

/// Everything of the simulated cloud that outlives the process.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    /// Which snapshot this is; the later of the two files is read back.
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

/// One change, as a line of the journal. The address leases a VM's NICs
/// hold are not written with it: they are made again from the VMs when
/// the state is read back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Change {
    /// VM `id` as it now is (`None`: gone), and the counters VMs move.
    Vm {
        /// Its id.
        id: u64,
        /// The VM, or `None` once destroyed.
        vm: Option<Box<SimVm>>,
        /// The id the next VM gets.
        next_id: u64,
        /// How many VMs were ever created.
        created: u64,
    },
    /// Link network `slot` as created (`None`: deleted).
    Network {
        /// Its slot.
        slot: u64,
        /// The network, or `None` once deleted.
        network: Option<SavedNetwork>,
    },
}

/// A change as written: numbered with the generation of the snapshot
/// it follows.
#[derive(Debug, Serialize, Deserialize)]
struct Line {
    generation: u64,
    change: Change,
}

impl Snapshot {
    /// Applies `change`.
    fn apply(&mut self, change: Change) {
        match change {
            Change::Vm {
                id,
                vm,
                next_id,
                created,
            } => {
                match vm {
                    Some(vm) => self.vms.insert(id, vm),
                    None => self.vms.remove(&id),
                };
                (self.next_id, self.created) = (next_id, created);
            }
            Change::Network { slot, network } => {
                match network {
                    Some(network) => self.networks.insert(slot, network),
                    None => self.networks.remove(&slot),
                };
            }
        }
    }
}

/// The two files a [`Snapshot`] and its changes are kept in.
#[derive(Debug)]
pub struct StateFile {
    path: PathBuf,
    /// Where the changes go; written only under the simulated cloud's own
    /// lock, so never waited for.
    journal: Mutex<Journal>,
}

/// Where the changes go.
#[derive(Debug, Default)]
struct Journal {
    /// The generation of the last snapshot written or read.
    generation: u64,
    /// The file of that snapshot, once this process wrote it; `None`
    /// until then, and after a write failed, so that the next change
    /// writes a snapshot.
    file: Option<File>,
    /// The bytes of the snapshot line.
    snapshot_len: u64,
    /// The bytes of the file: where the next change line goes.
    len: u64,
}

impl StateFile {
    /// The state file at `path` (created on the first save).
    pub fn new(path: &Path) -> StateFile {
        StateFile {
            path: path.to_owned(),
            journal: Mutex::default(),
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

    /// The latest saved state that reads back whole, `None` if none was
    /// saved yet; an error when the files exist and neither snapshot
    /// reads back. The first snapshot goes to the configured path and it
    /// is never removed, so without it nothing was saved: a `.b` file left
    /// alone (an operator removed the state file to start empty) is
    /// removed, so that its later snapshot does not win over the new
    /// state's at the next start.
    pub fn load(&self) -> Result<Option<Snapshot>, String> {
        if !self.path.exists() {
            let left = self.slot(2);
            return match std::fs::remove_file(&left) {
                Ok(()) => Ok(None),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                Err(e) => Err(format!("cannot remove {}: {e}", left.display())),
            };
        }
        let mut problem = None;
        let mut best: Option<(Snapshot, Vec<u8>)> = None;
        for generation in 1..=2 {
            let path = self.slot(generation);
            let text = match std::fs::read(&path) {
                Ok(text) => text,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
            };
            let first = text.split(|b| *b == b'\n').next().unwrap_or_default();
            match serde_json::from_slice::<Snapshot>(first) {
                Ok(snapshot)
                    if best
                        .as_ref()
                        .is_none_or(|(b, _)| snapshot.generation > b.generation) =>
                {
                    best = Some((snapshot, text));
                }
                Ok(_) => {}
                Err(e) => problem = Some(format!("{}: {e}", path.display())),
            }
        }
        match (best, problem) {
            (Some((mut snapshot, text)), _) => {
                for line in text.split(|b| *b == b'\n').skip(1) {
                    match serde_json::from_slice::<Line>(line) {
                        Ok(line) if line.generation == snapshot.generation => {
                            snapshot.apply(line.change);
                        }
                        // The end, a line torn by a kill, or one of an
                        // older journal.
                        _ => break,
                    }
                }
                self.journal().generation = snapshot.generation;
                Ok(Some(snapshot))
            }
            (None, Some(problem)) => Err(format!(
                "{problem}: not a simulated cloud state file; remove {} to start empty",
                self.path.display()
            )),
            (None, None) => Ok(None),
        }
    }

    /// Writes `change`, made to the state `whole` gives, as a line after
    /// the last snapshot; when there is none of this process yet, or the
    /// changes written outweigh it, writes the whole state instead.
    pub fn save(&self, change: Change, whole: impl FnOnce() -> Snapshot) -> Result<(), String> {
        let mut journal = self.journal();
        let generation = journal.generation;
        let fail = |e: &dyn std::fmt::Display| failed(&self.slot(generation), e);
        let line = Line { generation, change };
        let mut line = serde_json::to_vec(&line).map_err(|e| fail(&e))?;
        line.push(b'\n');
        let room = journal.snapshot_len.saturating_mul(3) + CHANGES_SLACK;
        match &journal.file {
            Some(file) if journal.len + line.len() as u64 <= room => {
                if let Err(e) = file.write_all_at(&line, journal.len) {
                    journal.file = None;
                    return Err(fail(&e));
                }
                journal.len += line.len() as u64;
                Ok(())
            }
            _ => self.write_snapshot(&mut journal, whole()),
        }
    }

    /// Writes `snapshot`, numbered after the last one, over the older of
    /// the two files; changes go after it from then on. A write that
    /// fails is made again to the same file by the next change.
    fn write_snapshot(&self, journal: &mut Journal, mut snapshot: Snapshot) -> Result<(), String> {
        let generation = journal.generation + 1;
        let path = self.slot(generation);
        snapshot.generation = generation;
        let mut json = serde_json::to_vec(&snapshot).map_err(|e| failed(&path, &e))?;
        json.push(b'\n');
        let write = || -> std::io::Result<File> {
            let file = std::fs::OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(false)
                .open(&path)?;
            file.write_all_at(&json, 0)?;
            file.set_len(json.len() as u64)?;
            Ok(file)
        };
        journal.file = None;
        let file = write().map_err(|e| failed(&path, &e))?;
        journal.generation = generation;
        journal.file = Some(file);
        journal.snapshot_len = json.len() as u64;
        journal.len = journal.snapshot_len;
        Ok(())
    }

    fn journal(&self) -> std::sync::MutexGuard<'_, Journal> {
        self.journal.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The message of a write to `path` that failed with `error`.
fn failed(path: &Path, error: &dyn std::fmt::Display) -> String {
    format!(
        "cannot save the simulated cloud to {}: {error}",
        path.display()
    )
}
