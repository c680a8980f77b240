//! Named states and kinds: the allocation and operational states of the
//! GENI AM API v3 ("Sliver Allocation States", "Sliver Operational
//! States"), the kinds and states of queued backend jobs, and the kinds of
//! audit events. Each variant has exactly one text, the one the API
//! shows or the store holds.

/// Defines an enum whose variants map one to one to fixed names.
macro_rules! named {
    ($(#[$meta:meta])* $name:ident { $($(#[$vm:meta])* $variant:ident => $text:literal),* $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name {
            $($(#[$vm])* $variant,)*
        }

        impl $name {
            /// Every value.
            pub const ALL: &'static [$name] = &[$($name::$variant,)*];

            /// The name, e.g. `geni_allocated` or `destroy`.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)*
                }
            }

            /// The value named `text` (exact name).
            pub fn parse(text: &str) -> Option<Self> {
                Self::ALL.iter().copied().find(|s| s.as_str() == text)
            }
        }

        impl std::fmt::Display for $name {
            /// The name.
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl serde::Serialize for $name {
            /// The name, as a string.
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }
    };
}

named! {
    /// Where a sliver is in the allocation state machine.
    AllocationState {
        /// Deleted or expired; kept for the record, never reused.
        Unallocated => "geni_unallocated",
        /// Reserved for a short time by Allocate.
        Allocated => "geni_allocated",
        /// Instantiated by Provision; lives until its expiry.
        Provisioned => "geni_provisioned",
    }
}

named! {
    /// Where a provisioned sliver is in the operational state machine.
    OperationalState {
        /// Provisioning not finished; no action possible.
        PendingAllocation => "geni_pending_allocation",
        /// Exists, not running; `geni_start` boots it.
        NotReady => "geni_notready",
        /// Booting towards `geni_ready`.
        Configuring => "geni_configuring",
        /// Powering off towards `geni_notready`.
        Stopping => "geni_stopping",
        /// Running and usable.
        Ready => "geni_ready",
        /// Usable but performing an action.
        ReadyBusy => "geni_ready_busy",
        /// Failed; delete it or ask the operators.
        Failed => "geni_failed",
        /// Installing new users' keys, back to `geni_ready` when done.
        UpdatingUsers => "geni_updating_users",
    }
}

impl AllocationState {
    /// The states of slivers that hold resources.
    pub const LIVE: [AllocationState; 2] = [Self::Allocated, Self::Provisioned];
}

impl OperationalState {
    /// Whether a sliver in this state waits for the backend to finish
    /// something (the poller follows it).
    pub fn awaits_backend(self) -> bool {
        Self::AWAITING_BACKEND.contains(&self)
    }

    /// The states in which a sliver waits for the backend to finish
    /// something.
    pub const AWAITING_BACKEND: [OperationalState; 4] = [
        Self::PendingAllocation,
        Self::Configuring,
        Self::Stopping,
        Self::ReadyBusy,
    ];
}

named! {
    /// What a job asks the backend to do to its sliver.
    JobKind {
        /// Create the VM (Provision).
        Provision => "provision",
        /// Boot it (`geni_start`). May be queued while the sliver is still
        /// provisioning: it runs after the provision job, and waits while
        /// the new VM is still being defined.
        Start => "start",
        /// Power it off (`geni_stop`).
        Stop => "stop",
        /// Reboot it (`geni_restart`).
        Restart => "restart",
        /// Install the slice users' current keys (`geni_update_users`).
        UpdateUsers => "update_users",
        /// Destroy the VM (Delete, expiry).
        Destroy => "destroy",
        /// Destroy a link's network once no sliver uses the link; the
        /// job's sliver URN is the link's sliver URN, its payload the
        /// handle.
        DestroyNetwork => "destroy_network",
    }
}

impl JobKind {
    /// Whether the job destroys something (a VM or a link's network).
    pub fn destroys(self) -> bool {
        matches!(self, Self::Destroy | Self::DestroyNetwork)
    }
}

named! {
    /// Where a job is.
    JobState {
        /// Waiting for its due time.
        Queued => "queued",
        /// Claimed by a worker until its lease expires.
        Running => "running",
        /// Done.
        Done => "done",
        /// Given up.
        Failed => "failed",
    }
}

impl JobState {
    /// The states of a job still to be done.
    pub const PENDING: [JobState; 2] = [Self::Queued, Self::Running];

    /// The states of a job that is over.
    pub const FINISHED: [JobState; 2] = [Self::Done, Self::Failed];
}

/// What an audit event records: something that happened to a slice or
/// sliver, or a job queued for one (logged under the job's kind).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EventKind {
    /// Allocate reserved the sliver.
    Allocate,
    /// Renew moved its expiry.
    Renew,
    /// Delete deallocated it.
    Delete,
    /// It expired and was deallocated.
    Expired,
    /// Shutdown stopped the slice.
    Shutdown,
    /// It failed.
    Failed,
    /// Its operational state changed.
    OperationalState,
    /// The backend reported its resources.
    Annotations,
    /// An operator turned draining on or off (no slice concerned).
    Drain,
    /// A job of this kind was queued.
    Queued(JobKind),
}

impl EventKind {
    /// The kinds that are no queued job.
    const HAPPENINGS: [EventKind; 9] = [
        Self::Allocate,
        Self::Renew,
        Self::Delete,
        Self::Expired,
        Self::Shutdown,
        Self::Failed,
        Self::OperationalState,
        Self::Annotations,
        Self::Drain,
    ];

    /// The name, e.g. `allocate`, or the job's kind (`provision`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Allocate => "allocate",
            Self::Renew => "renew",
            Self::Delete => "delete",
            Self::Expired => "expired",
            Self::Shutdown => "shutdown",
            Self::Failed => "failed",
            Self::OperationalState => "operational_state",
            Self::Annotations => "annotations",
            Self::Drain => "drain",
            Self::Queued(kind) => kind.as_str(),
        }
    }

    /// The kind named `text` (exact name).
    pub fn parse(text: &str) -> Option<Self> {
        Self::HAPPENINGS
            .into_iter()
            .find(|k| k.as_str() == text)
            .or_else(|| JobKind::parse(text).map(Self::Queued))
    }
}

impl std::fmt::Display for EventKind {
    /// The name.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl serde::Serialize for EventKind {
    /// The name, as a string.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl From<JobKind> for EventKind {
    /// The event of queueing a job of that kind.
    fn from(kind: JobKind) -> Self {
        Self::Queued(kind)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_round_trip_through_their_geni_names() {
        for s in AllocationState::ALL {
            assert_eq!(AllocationState::parse(s.as_str()), Some(*s));
        }
        for s in OperationalState::ALL {
            assert_eq!(OperationalState::parse(s.as_str()), Some(*s));
            assert!(s.as_str().starts_with("geni_"));
        }
        assert_eq!(AllocationState::Allocated.as_str(), "geni_allocated");
        assert_eq!(OperationalState::Ready.to_string(), "geni_ready");
        assert_eq!(OperationalState::parse("ready"), None);
    }

    #[test]
    fn a_queued_job_is_logged_under_its_own_name() {
        for kind in JobKind::ALL {
            assert_eq!(JobKind::parse(kind.as_str()), Some(*kind));
            let event = EventKind::from(*kind);
            assert_eq!(event.as_str(), kind.as_str());
            assert_eq!(EventKind::parse(kind.as_str()), Some(event));
        }
        for event in EventKind::HAPPENINGS {
            assert_eq!(EventKind::parse(event.as_str()), Some(event));
        }
        assert_eq!(EventKind::parse("teleported"), None);
        for name in ["queued", "running", "done", "failed"] {
            assert_eq!(JobState::parse(name).map(JobState::as_str), Some(name));
        }
    }
}
