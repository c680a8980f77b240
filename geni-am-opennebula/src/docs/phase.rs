//! The classification of a VM's (STATE, LCM_STATE) pair into the phases a
//! GENI driver acts on (the OpenNebula Virtual Machine States reference). Every STATE
//! and every LCM_STATE of 2.x–7.4 has a phase; numbers this table does not
//! know are [`VmPhase::Unknown`].

/// Where a VM is in its life cycle, as far as the aggregate is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum VmPhase {
    /// Not placed yet: INIT, PENDING (waiting for the scheduler), CLONING
    /// (waiting for image copies).
    Pending,
    /// On hold; only a `release` moves it on.
    Held,
    /// Placed and on its way up: image transfer, domain creation, resume
    /// from an off state, cold migration to another host.
    Booting,
    /// ACTIVE/RUNNING: the guest is up.
    Running,
    /// The guest is up but an operation is in progress (live migration,
    /// hotplug, snapshot, resize, backup); new operations are refused.
    Busy,
    /// Being shut down, saved, undeployed or cleaned up.
    ShuttingDown,
    /// Allocated but not running: stopped, suspended, powered off,
    /// undeployed, including while an operation runs on the off VM.
    Stopped,
    /// A boot, transfer, migration, cleanup or image clone failed; the VM
    /// needs `recover` or `terminate`.
    Failed,
    /// Monitoring lost the VM (LCM UNKNOWN, it may recover by itself), or
    /// oned reported a state number this table does not know.
    Unknown,
    /// DONE: gone for good.
    Done,
}

/// Classifies a (STATE, LCM_STATE) pair. LCM_STATE only counts when STATE
/// is 3 ACTIVE.
pub fn phase(state: i64, lcm_state: i64) -> VmPhase {
    match state {
        0 | 1 | 10 => VmPhase::Pending,
        2 => VmPhase::Held,
        3 => active_phase(lcm_state),
        4 | 5 | 8 | 9 => VmPhase::Stopped,
        6 => VmPhase::Done,
        7 | 11 => VmPhase::Failed,
        _ => VmPhase::Unknown,
    }
}

/// The phase of an ACTIVE VM by its LCM_STATE.
fn active_phase(lcm_state: i64) -> VmPhase {
    match lcm_state {
        3 => VmPhase::Running,
        // Live migration, hotplug, snapshots, resize, backup of a running
        // guest. 58 DISK_SNAPSHOT_REVERT was never produced but belongs here.
        4 | 17 | 24 | 25 | 26 | 57 | 58 | 59 | 62 | 66 | 69 => VmPhase::Busy,
        // Prolog, boot, resume from stopped/undeployed/poweroff/suspended;
        // cold migration (7, 8, 35, 60) ends with a boot on the new host.
        0 | 1 | 2 | 7 | 8 | 9 | 19 | 20 | 21 | 22 | 31 | 32 | 35 | 60 => VmPhase::Booting,
        // Shutdown, epilog, save, cleanup; 13 CANCEL was the ≤4.12 hard
        // shutdown.
        5 | 6 | 10 | 11 | 12 | 13 | 15 | 18 | 23 | 29 | 30 => VmPhase::ShuttingDown,
        // 14 FAILURE is the ≤4.12 generic failure.
        14 | 36..=42 | 44 | 46..=50 | 61 => VmPhase::Failed,
        16 => VmPhase::Unknown,
        // Operations on a powered-off, suspended, undeployed or stopped VM;
        // 43/45 migrate a powered-off/suspended VM, which stays so.
        27 | 28 | 33 | 34 | 43 | 45 | 51..=56 | 63 | 64 | 65 | 67 | 68 | 70 | 71 => {
            VmPhase::Stopped
        }
        _ => VmPhase::Unknown,
    }
}
