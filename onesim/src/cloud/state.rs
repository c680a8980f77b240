//! The two numbers oned reports for a VM: its `STATE` and, while it is
//! ACTIVE, its `LCM_STATE`, as enumerations with the numbering of the
//! OpenNebula XML-RPC API reference (virtual machine states). The simulator
//! works with the enums; the numbers appear only in the documents it writes
//! and the filters it reads.

/// Declares a state enum whose variants carry their wire number and name.
macro_rules! wire_states {
    ($(#[$meta:meta])* $name:ident { $($variant:ident = $number:literal, $text:literal;)* }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[non_exhaustive]
        pub enum $name {
            $(
                #[doc = concat!("`", $text, "` (", stringify!($number), ").")]
                $variant = $number,
            )*
        }

        impl $name {
            /// The number oned writes for this state.
            pub const fn number(self) -> i32 {
                self as i32
            }

            /// The name oned uses for this state (e.g. in refusal texts).
            pub const fn name(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)*
                }
            }

            /// The state with this wire number, if there is one.
            pub const fn from_number(number: i32) -> Option<Self> {
                match number {
                    $($number => Some($name::$variant),)*
                    _ => None,
                }
            }
        }
    };
}

wire_states! {
    /// A VM's `STATE`.
    VmState {
        Init = 0, "INIT";
        Pending = 1, "PENDING";
        Hold = 2, "HOLD";
        Active = 3, "ACTIVE";
        Stopped = 4, "STOPPED";
        Suspended = 5, "SUSPENDED";
        Done = 6, "DONE";
        Failed = 7, "FAILED";
        Poweroff = 8, "POWEROFF";
        Undeployed = 9, "UNDEPLOYED";
        Cloning = 10, "CLONING";
        CloningFailure = 11, "CLONING_FAILURE";
    }
}

wire_states! {
    /// A VM's `LCM_STATE` (meaningful while its `STATE` is ACTIVE).
    LcmState {
        Init = 0, "LCM_INIT";
        Prolog = 1, "PROLOG";
        Boot = 2, "BOOT";
        Running = 3, "RUNNING";
        Migrate = 4, "MIGRATE";
        SaveStop = 5, "SAVE_STOP";
        SaveSuspend = 6, "SAVE_SUSPEND";
        SaveMigrate = 7, "SAVE_MIGRATE";
        PrologMigrate = 8, "PROLOG_MIGRATE";
        PrologResume = 9, "PROLOG_RESUME";
        EpilogStop = 10, "EPILOG_STOP";
        Epilog = 11, "EPILOG";
        Shutdown = 12, "SHUTDOWN";
        Cancel = 13, "CANCEL";
        Failure = 14, "FAILURE";
        CleanupResubmit = 15, "CLEANUP_RESUBMIT";
        Unknown = 16, "UNKNOWN";
        Hotplug = 17, "HOTPLUG";
        ShutdownPoweroff = 18, "SHUTDOWN_POWEROFF";
        BootUnknown = 19, "BOOT_UNKNOWN";
        BootPoweroff = 20, "BOOT_POWEROFF";
        BootSuspended = 21, "BOOT_SUSPENDED";
        BootStopped = 22, "BOOT_STOPPED";
        CleanupDelete = 23, "CLEANUP_DELETE";
        HotplugSnapshot = 24, "HOTPLUG_SNAPSHOT";
        HotplugNic = 25, "HOTPLUG_NIC";
        HotplugSaveas = 26, "HOTPLUG_SAVEAS";
        HotplugSaveasPoweroff = 27, "HOTPLUG_SAVEAS_POWEROFF";
        HotplugSaveasSuspended = 28, "HOTPLUG_SAVEAS_SUSPENDED";
        ShutdownUndeploy = 29, "SHUTDOWN_UNDEPLOY";
        EpilogUndeploy = 30, "EPILOG_UNDEPLOY";
        PrologUndeploy = 31, "PROLOG_UNDEPLOY";
        BootUndeploy = 32, "BOOT_UNDEPLOY";
        HotplugPrologPoweroff = 33, "HOTPLUG_PROLOG_POWEROFF";
        HotplugEpilogPoweroff = 34, "HOTPLUG_EPILOG_POWEROFF";
        BootMigrate = 35, "BOOT_MIGRATE";
        BootFailure = 36, "BOOT_FAILURE";
        BootMigrateFailure = 37, "BOOT_MIGRATE_FAILURE";
        PrologMigrateFailure = 38, "PROLOG_MIGRATE_FAILURE";
        PrologFailure = 39, "PROLOG_FAILURE";
        EpilogFailure = 40, "EPILOG_FAILURE";
        EpilogStopFailure = 41, "EPILOG_STOP_FAILURE";
        EpilogUndeployFailure = 42, "EPILOG_UNDEPLOY_FAILURE";
        PrologMigratePoweroff = 43, "PROLOG_MIGRATE_POWEROFF";
        PrologMigratePoweroffFailure = 44, "PROLOG_MIGRATE_POWEROFF_FAILURE";
        PrologMigrateSuspend = 45, "PROLOG_MIGRATE_SUSPEND";
        PrologMigrateSuspendFailure = 46, "PROLOG_MIGRATE_SUSPEND_FAILURE";
        BootUndeployFailure = 47, "BOOT_UNDEPLOY_FAILURE";
        BootStoppedFailure = 48, "BOOT_STOPPED_FAILURE";
        PrologResumeFailure = 49, "PROLOG_RESUME_FAILURE";
        PrologUndeployFailure = 50, "PROLOG_UNDEPLOY_FAILURE";
        DiskSnapshotPoweroff = 51, "DISK_SNAPSHOT_POWEROFF";
        DiskSnapshotRevertPoweroff = 52, "DISK_SNAPSHOT_REVERT_POWEROFF";
        DiskSnapshotDeletePoweroff = 53, "DISK_SNAPSHOT_DELETE_POWEROFF";
        DiskSnapshotSuspended = 54, "DISK_SNAPSHOT_SUSPENDED";
        DiskSnapshotRevertSuspended = 55, "DISK_SNAPSHOT_REVERT_SUSPENDED";
        DiskSnapshotDeleteSuspended = 56, "DISK_SNAPSHOT_DELETE_SUSPENDED";
        DiskSnapshot = 57, "DISK_SNAPSHOT";
        DiskSnapshotRevert = 58, "DISK_SNAPSHOT_REVERT";
        DiskSnapshotDelete = 59, "DISK_SNAPSHOT_DELETE";
        PrologMigrateUnknown = 60, "PROLOG_MIGRATE_UNKNOWN";
        PrologMigrateUnknownFailure = 61, "PROLOG_MIGRATE_UNKNOWN_FAILURE";
        DiskResize = 62, "DISK_RESIZE";
        DiskResizePoweroff = 63, "DISK_RESIZE_POWEROFF";
        DiskResizeUndeployed = 64, "DISK_RESIZE_UNDEPLOYED";
        HotplugNicPoweroff = 65, "HOTPLUG_NIC_POWEROFF";
        HotplugResize = 66, "HOTPLUG_RESIZE";
        HotplugSaveasUndeployed = 67, "HOTPLUG_SAVEAS_UNDEPLOYED";
        HotplugSaveasStopped = 68, "HOTPLUG_SAVEAS_STOPPED";
        Backup = 69, "BACKUP";
        BackupPoweroff = 70, "BACKUP_POWEROFF";
        Restore = 71, "RESTORE";
    }
}

impl LcmState {
    /// A failure state from which `terminate` cleans up through the delete
    /// path: the `*_FAILURE` states from BOOT_FAILURE to
    /// PROLOG_UNDEPLOY_FAILURE.
    pub fn is_failure(self) -> bool {
        (36..=50).contains(&self.number())
            && !matches!(
                self,
                LcmState::PrologMigratePoweroff | LcmState::PrologMigrateSuspend
            )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_numbers_round_trip() {
        for number in 0..12 {
            let state = VmState::from_number(number).expect("a VM state");
            assert_eq!(state.number(), number);
        }
        for number in 0..72 {
            let lcm = LcmState::from_number(number).expect("an LCM state");
            assert_eq!(lcm.number(), number);
        }
        assert_eq!(VmState::from_number(12), None);
        assert_eq!(LcmState::from_number(72), None);
    }

    #[test]
    fn names_are_oned_names() {
        assert_eq!(VmState::Poweroff.name(), "POWEROFF");
        assert_eq!(LcmState::Init.name(), "LCM_INIT");
        assert_eq!(LcmState::BootFailure.number(), 36);
        assert_eq!(LcmState::ShutdownUndeploy.number(), 29);
    }

    #[test]
    fn failure_states_are_the_failure_range() {
        assert!(LcmState::BootFailure.is_failure());
        assert!(LcmState::PrologUndeployFailure.is_failure());
        assert!(!LcmState::PrologMigrateSuspend.is_failure());
        assert!(!LcmState::Running.is_failure());
    }
}
