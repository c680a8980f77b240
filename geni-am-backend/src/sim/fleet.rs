//! The VMs of the simulated cloud by id, with what the cloud's operations
//! look up kept beside them: the id of each tag (by the tag's hash, so the
//! tag is not stored twice), the VMs whose phase has a timed transition
//! still to come, and what each host holds. A hundred thousand VMs made
//! every operation walk them all three times, settling, finding the tag
//! and placing (docs/PERFORMANCE.md, "Memory").

use super::vm::{Delays, SimVm};
use std::collections::{BTreeMap, BTreeSet};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::time::Duration;

/// What the VMs on one host take.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HostUse {
    /// VMs placed there.
    pub vms: u32,
    /// Their CPU cores.
    pub cpus: u32,
    /// Their memory, in MiB.
    pub memory_mb: u64,
}

/// The VMs with their indexes.
#[derive(Debug, Default)]
pub struct Fleet {
    /// Boxed: a B-tree node has room for eleven values and is seldom full,
    /// so its spare room is pointers rather than VMs (a heap profile
    /// counted 270 bytes of nodes per VM unboxed).
    vms: BTreeMap<u64, Box<SimVm>>,
    /// `(hash of the tag, id)` of every VM.
    tags: BTreeSet<(u64, u64)>,
    /// The VMs pending, booting or stopping.
    moving: BTreeSet<u64>,
    /// By host index.
    hosts: Vec<HostUse>,
}

impl Fleet {
    /// The fleet of `vms` (a saved state's).
    pub fn from_vms(vms: BTreeMap<u64, Box<SimVm>>) -> Fleet {
        let mut fleet = Fleet::default();
        for (id, vm) in vms {
            fleet.insert(id, vm);
        }
        fleet
    }

    /// The VMs by id.
    pub fn vms(&self) -> &BTreeMap<u64, Box<SimVm>> {
        &self.vms
    }

    /// The VM `id`.
    pub fn get(&self, id: u64) -> Option<&SimVm> {
        self.vms.get(&id).map(Box::as_ref)
    }

    /// The id of the VM tagged `tag`.
    pub fn find_tag(&self, tag: &str) -> Option<u64> {
        let hash = hash_of(tag);
        self.tags
            .range((hash, 0)..=(hash, u64::MAX))
            .map(|(_, id)| *id)
            .find(|id| self.vms.get(id).is_some_and(|vm| &*vm.tag == tag))
    }

    /// What the VMs on host `host` take.
    pub fn host_use(&self, host: usize) -> HostUse {
        self.hosts.get(host).copied().unwrap_or_default()
    }

    /// Adds the VM `id`.
    pub fn insert(&mut self, id: u64, vm: Box<SimVm>) {
        self.remove(id);
        self.tags.insert((hash_of(&vm.tag), id));
        if vm.is_moving() {
            self.moving.insert(id);
        }
        if self.hosts.len() <= vm.host {
            self.hosts.resize(vm.host + 1, HostUse::default());
        }
        let host = &mut self.hosts[vm.host];
        host.vms += 1;
        host.cpus += vm.cpus;
        host.memory_mb += vm.memory_mb;
        self.vms.insert(id, vm);
    }

    /// Removes the VM `id` and returns it.
    pub fn remove(&mut self, id: u64) -> Option<Box<SimVm>> {
        let vm = self.vms.remove(&id)?;
        self.forget(id, &vm);
        Some(vm)
    }

    /// Runs `change` on the VM `id`, if it exists, and returns its answer.
    pub fn update<R>(&mut self, id: u64, change: impl FnOnce(&mut SimVm) -> R) -> Option<R> {
        let vm = self.vms.get_mut(&id)?;
        let answer = change(vm);
        if vm.is_moving() {
            self.moving.insert(id);
        }
        Some(answer)
    }

    /// Applies the transitions whose delay has passed by `now`.
    pub fn settle(&mut self, now: Duration, delays: &Delays) {
        let vms = &mut self.vms;
        self.moving.retain(|id| match vms.get_mut(id) {
            Some(vm) => {
                vm.settle(now, delays);
                vm.is_moving()
            }
            None => false,
        });
    }

    /// Drops the indexes' entries of `vm`, removed as `id`.
    fn forget(&mut self, id: u64, vm: &SimVm) {
        self.tags.remove(&(hash_of(&vm.tag), id));
        self.moving.remove(&id);
        if let Some(host) = self.hosts.get_mut(vm.host) {
            host.vms -= 1;
            host.cpus -= vm.cpus;
            host.memory_mb -= vm.memory_mb;
        }
    }
}

/// The hash a tag is indexed by (within this process only).
fn hash_of(tag: &str) -> u64 {
    let mut hasher = DefaultHasher::new();
    tag.hash(&mut hasher);
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    const DELAYS: Delays = Delays {
        create: Duration::from_secs(1),
        boot: Duration::from_secs(1),
        stop: Duration::from_secs(1),
    };

    fn vm(tag: &str, host: usize) -> Box<SimVm> {
        Box::new(SimVm::new(
            tag,
            host,
            (2, 1024),
            "n".into(),
            Vec::new(),
            Duration::ZERO,
        ))
    }

    #[test]
    fn tags_are_found_until_their_vm_is_removed() {
        let mut fleet = Fleet::default();
        fleet.insert(1, vm("a", 0));
        fleet.insert(2, vm("b", 0));
        assert_eq!(fleet.find_tag("b"), Some(2));
        assert_eq!(fleet.find_tag("c"), None);
        assert_eq!(fleet.remove(2).map(|vm| vm.tag), Some("b".into()));
        assert_eq!(fleet.find_tag("b"), None);
        assert_eq!(fleet.find_tag("a"), Some(1));
    }

    #[test]
    fn host_use_follows_the_vms_placed_and_removed() {
        let mut fleet = Fleet::from_vms([(1, vm("a", 1)), (2, vm("b", 1))].into());
        assert_eq!(
            fleet.host_use(1),
            HostUse {
                vms: 2,
                cpus: 4,
                memory_mb: 2048
            }
        );
        assert_eq!(fleet.host_use(0), HostUse::default());
        fleet.remove(1);
        assert_eq!(fleet.host_use(1).vms, 1);
        fleet.insert(2, vm("c", 1));
        assert_eq!(fleet.host_use(1).vms, 1, "a VM replaced counts once");
    }

    #[test]
    fn only_vms_in_transition_are_settled_and_each_until_it_is_over() {
        let mut fleet = Fleet::default();
        fleet.insert(1, vm("a", 0));
        fleet.settle(Duration::from_secs(1), &DELAYS);
        assert!(fleet.moving.is_empty(), "created, then powered off");
        assert_eq!(
            fleet.update(1, |vm| vm.boot(Duration::from_secs(1), None)),
            Some(Ok(()))
        );
        assert_eq!(fleet.moving.len(), 1);
        fleet.settle(Duration::from_secs(1), &DELAYS);
        assert_eq!(fleet.moving.len(), 1, "still booting");
        fleet.settle(Duration::from_secs(2), &DELAYS);
        assert!(fleet.get(1).is_some_and(|vm| !vm.is_moving()));
        assert!(fleet.moving.is_empty());
        assert_eq!(fleet.update(9, |_| ()), None);
    }
}
