//! The simulated cloud: what it is made of ([`inventory`]), its VMs and
//! their life cycle ([`lifecycle`]), the failures a test injected into it
//! ([`crate::faults::Injected`]), and the journal of what it received. Time
//! is a settable clock; the life cycle advances lazily whenever the cloud is
//! read.

mod clock;
mod creation;
pub mod inventory;
pub mod lifecycle;
mod placement;
pub mod record;
pub mod seed;
pub mod state;
pub mod vnet;

use crate::faults::Injected;
use crate::refusal::Refusal;
use crate::version::Version;
use inventory::Inventory;
use lifecycle::{Delays, Engine, Vm};
use std::collections::BTreeMap;

/// What the cloud received: each call's method, and the templates sent
/// by instantiate (extra templates), allocate, update and network calls.
#[derive(Debug, Default)]
struct Journal {
    templates: Vec<String>,
    calls: BTreeMap<String, u64>,
}

/// Everything the simulator knows.
#[derive(Debug)]
pub struct Cloud {
    version: Version,
    inventory: Inventory,
    engine: Engine,
    injected: Injected,
    journal: Journal,
}

impl Cloud {
    /// A cloud seeded with the recorded objects, playing `version`.
    pub fn new(version: Version, delays: Delays) -> Self {
        Cloud {
            version,
            inventory: Inventory::seeded(),
            engine: Engine::new(delays),
            injected: Injected::default(),
            journal: Journal::default(),
        }
    }

    /// The release played.
    pub fn version(&self) -> Version {
        self.version
    }

    /// Hosts, networks, images, templates and accounts.
    pub fn inventory(&self) -> &Inventory {
        &self.inventory
    }

    /// The inventory, to change.
    pub fn inventory_mut(&mut self) -> &mut Inventory {
        &mut self.inventory
    }

    /// The life-cycle engine: VMs, clock and delays.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// The engine, to set its clock, delays and identifiers.
    pub fn engine_mut(&mut self) -> &mut Engine {
        &mut self.engine
    }

    /// The failures injected into the cloud.
    pub fn injected_mut(&mut self) -> &mut Injected {
        &mut self.injected
    }

    /// VM `id`.
    pub fn vm(&self, id: i32) -> Option<&Vm> {
        self.engine.vm(id)
    }

    /// VM `id`, to change its templates.
    pub fn vm_mut(&mut self, id: i32) -> Option<&mut Vm> {
        self.engine.vm_mut(id)
    }

    /// CPU (percent) and memory (KiB) allocated on the host at `index`, and the VMs there.
    pub fn host_usage(&self, index: usize) -> (i64, i64, Vec<i32>) {
        self.engine.host_usage(index)
    }

    /// Runs every life-cycle step whose time has come.
    pub fn advance(&mut self) {
        self.engine.advance(&mut self.inventory);
    }

    /// Applies `one.vm.action`. The error is the refusal without the method prefix.
    pub fn action(&mut self, action: &str, id: i32) -> Result<(), Refusal> {
        self.advance();
        self.engine
            .action(&mut self.inventory, self.version, action, id)
    }

    /// Removes a VM from the database as if purged: later calls give NO_EXISTS.
    pub fn purge(&mut self, id: i32) -> bool {
        self.engine.purge(&mut self.inventory, id)
    }

    /// Counts a call of `method`.
    pub fn record_call(&mut self, method: &str) {
        *self.journal.calls.entry(method.to_owned()).or_default() += 1;
    }

    /// Keeps a template text the cloud received.
    pub fn record_template(&mut self, text: &str) {
        self.journal.templates.push(text.to_owned());
    }

    /// The templates received, in order.
    pub fn received_templates(&self) -> &[String] {
        &self.journal.templates
    }

    /// Calls per method name.
    pub fn call_counts(&self) -> &BTreeMap<String, u64> {
        &self.journal.calls
    }
}
