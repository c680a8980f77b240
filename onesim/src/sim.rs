//! [`OneSim`], the handle tests hold: it starts the server, exposes the
//! control API (clock, delays, injected failures, inventory changes) and the
//! inspection API (documents, states, received calls and templates), and
//! stops the server when dropped.

use crate::cloud::Cloud;
use crate::cloud::inventory::Kind;
use crate::cloud::lifecycle::Delays;
use crate::cloud::record::Pooled;
use crate::cloud::seed;
use crate::docs;
use crate::faults::TransportFault;
use crate::server::{self, Shared};
use crate::version::Version;
use crate::xml::Element;
use std::collections::BTreeMap;
use std::io;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

/// How a simulator starts.
#[derive(Debug, Clone)]
pub struct SimSettings {
    /// Release to play, e.g. "7.4.0", "6.10.0", "5.12.x", "5.8".
    pub version: String,
    /// Life-cycle delays.
    pub delays: Delays,
    /// Pinned clock (seconds since the epoch); `None` follows the system clock.
    pub clock: Option<i64>,
    /// Address to listen on; `None` is 127.0.0.1 on a free port.
    pub listen: Option<SocketAddr>,
}

impl Default for SimSettings {
    fn default() -> Self {
        Self {
            version: Version::RECORDED.to_string(),
            delays: Delays::ZERO,
            clock: None,
            listen: None,
        }
    }
}

/// Why a simulator could not start.
#[derive(Debug)]
#[non_exhaustive]
pub enum StartError {
    /// The version string is not a release.
    Version(String),
    /// Binding the listener failed.
    Io(io::Error),
}

impl std::fmt::Display for StartError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StartError::Version(v) => write!(f, "not an OpenNebula release: {v:?}"),
            StartError::Io(e) => write!(f, "cannot listen: {e}"),
        }
    }
}

impl std::error::Error for StartError {}

/// A running OpenNebula simulator.
pub struct OneSim {
    shared: Arc<Shared>,
    address: SocketAddr,
    acceptor: Option<JoinHandle<()>>,
}

impl OneSim {
    /// Starts a simulator; panics with the reason if it cannot (a test helper).
    pub fn start(settings: SimSettings) -> OneSim {
        Self::try_start(settings).unwrap_or_else(|e| panic!("OpenNebula simulator: {e}"))
    }

    /// Starts a simulator in background threads.
    pub fn try_start(settings: SimSettings) -> Result<OneSim, StartError> {
        let version = Version::parse(&settings.version)
            .ok_or_else(|| StartError::Version(settings.version.clone()))?;
        let listen = settings
            .listen
            .unwrap_or_else(|| SocketAddr::from(([127, 0, 0, 1], 0)));
        let listener = TcpListener::bind(listen).map_err(StartError::Io)?;
        let address = listener.local_addr().map_err(StartError::Io)?;
        let mut cloud = Cloud::new(version, settings.delays);
        if let Some(secs) = settings.clock {
            cloud.engine_mut().clock_mut().pin_ms(secs * 1000);
        }
        let shared = Arc::new(Shared::new(cloud));
        let accept_shared = Arc::clone(&shared);
        let acceptor = std::thread::Builder::new()
            .name("onesim-accept".into())
            .spawn(move || server::accept_loop(&listener, &accept_shared))
            .map_err(StartError::Io)?;
        Ok(OneSim {
            shared,
            address,
            acceptor: Some(acceptor),
        })
    }

    /// `http://127.0.0.1:PORT/RPC2`.
    pub fn endpoint(&self) -> String {
        format!("http://{}/RPC2", self.address)
    }

    /// The listening address.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// The release played.
    pub fn version(&self) -> Version {
        self.cloud().version()
    }

    /// The cloud, locked, without advancing the life cycle.
    fn cloud(&self) -> MutexGuard<'_, Cloud> {
        self.shared.cloud()
    }

    /// The cloud, locked, with every step that is due run first.
    fn current(&self) -> MutexGuard<'_, Cloud> {
        let mut cloud = self.shared.cloud();
        cloud.advance();
        cloud
    }

    // The clock, the life cycle's pace and the identifiers it hands out.

    /// Pins the clock to `secs` since the epoch.
    pub fn set_clock(&self, secs: i64) {
        self.set_clock_ms(secs * 1000);
    }

    /// Pins the clock to `ms` since the epoch.
    pub fn set_clock_ms(&self, ms: i64) {
        self.cloud().engine_mut().clock_mut().pin_ms(ms);
    }

    /// Moves a pinned clock forward (pins it at the current time first if needed).
    pub fn advance_clock(&self, by: Duration) {
        self.cloud().engine_mut().clock_mut().advance(by);
    }

    /// Sets how long each life-cycle phase takes from now on.
    pub fn set_delays(&self, delays: Delays) {
        self.current().engine_mut().set_delays(delays);
    }

    /// Sets the request id the next action writes into HISTORY/REQUEST_ID.
    pub fn set_next_request_id(&self, id: i64) {
        self.current().engine_mut().set_next_request_id(id);
    }

    /// UUIDs given to the next VMs, in order.
    pub fn queue_uuids<I: IntoIterator<Item = String>>(&self, uuids: I) {
        self.cloud().engine_mut().queue_uuids(uuids);
    }

    // Injected failures and limits.

    /// The next `count` VMs to boot end in BOOT_FAILURE with an ERROR text.
    pub fn fail_next_boots(&self, count: u32) {
        self.cloud().injected_mut().fail_next_boots(count);
    }

    /// Limits how many VMs (not DONE) may exist; creation beyond fails with the 512 quota text.
    pub fn set_vm_quota(&self, limit: Option<usize>) {
        self.cloud().injected_mut().set_vm_quota(limit);
    }

    /// Sets a host's MAX_CPU (percent) and MAX_MEM (KiB), e.g. to exhaust capacity.
    pub fn set_host_capacity(&self, host_id: i32, max_cpu: i64, max_mem: i64) {
        self.cloud()
            .inventory_mut()
            .set_host_capacity(host_id, max_cpu, max_mem);
    }

    /// Applies `fault` to a coming request (faults queue in order).
    pub fn inject_transport_fault(&self, fault: TransportFault) {
        self.shared.transport().queue(fault);
    }

    /// Takes oned down: until [`OneSim::end_outage`], every request meets
    /// `fault` (a dropped connection, as when oned is stopped or killed;
    /// an HTTP 500 from a proxy in front of it; a delay past the client's
    /// timeout), however long that lasts. Nothing reaches the cloud.
    pub fn begin_outage(&self, fault: TransportFault) {
        self.shared.transport().set_outage(Some(fault));
    }

    /// Brings oned back: requests are answered again.
    pub fn end_outage(&self) {
        self.shared.transport().set_outage(None);
    }

    /// The next call of `method` is carried out at once but answered only
    /// after `delay`: the window in which oned has acted and its client
    /// does not know yet (e.g. a VM created whose id is not recorded).
    pub fn answer_late(&self, method: &str, delay: Duration) {
        self.shared.transport().answer_late(method, delay);
    }

    // The inventory, changed as an operator would.

    /// Adds a host like the seeded one (same capacity and drivers, MONITORED)
    /// named `name`, under the next free id; returns the id.
    pub fn add_host(&self, name: &str) -> i32 {
        self.current().inventory_mut().add_host(|id| {
            let mut doc = seed::element(seed::HOST);
            doc.set_value("ID", id.to_string());
            doc.set_value("NAME", name);
            doc
        })
    }

    /// The id of host `name`.
    pub fn host_id(&self, name: &str) -> Option<i32> {
        let cloud = self.current();
        let host = cloud.inventory().hosts().iter().find(|h| h.name() == name);
        host.map(|h| h.id())
    }

    /// Sets a host's `STATE` number (2 MONITORED, 4 DISABLED …), as
    /// `onehost enable`/`disable` or its monitoring would.
    pub fn set_host_state(&self, host_id: i32, state: i32) {
        let state = state.to_string();
        self.current()
            .inventory_mut()
            .set_host_value(host_id, None, "STATE", &state);
    }

    /// Makes a host run `hypervisor` (`kvm`, `lxc` …) as oned reports it:
    /// its `IM_MAD` and `VM_MAD` drivers and the monitored
    /// `TEMPLATE/HYPERVISOR`.
    pub fn set_host_hypervisor(&self, host_id: i32, hypervisor: &str) {
        let mut cloud = self.cloud();
        let inventory = cloud.inventory_mut();
        for key in ["IM_MAD", "VM_MAD"] {
            inventory.set_host_value(host_id, None, key, hypervisor);
        }
        for key in ["HYPERVISOR", "IM_MAD", "VM_MAD"] {
            inventory.set_host_value(host_id, Some("TEMPLATE"), key, hypervisor);
        }
    }

    /// Removes a host from the pool whatever runs on it; false when there is none.
    pub fn remove_host(&self, host_id: i32) -> bool {
        let mut cloud = self.current();
        let inventory = cloud.inventory_mut();
        let index = inventory.host_index(host_id);
        index.map(|i| inventory.remove_host(i)).is_some()
    }

    /// Changes an account's password (a session with the old one then fails
    /// authentication); false when there is no such account.
    pub fn set_password(&self, user: &str, password: &str) -> bool {
        self.current().inventory_mut().set_password(user, password)
    }

    /// Adds a network from its document as `one.vn.info` shows it before
    /// any lease, under the `ID` it carries; networks created later get
    /// higher ids. Returns the id.
    pub fn add_vnet(&self, doc: Element) -> i32 {
        self.current().inventory_mut().insert_vnet(doc)
    }

    /// Adds a VM template document, replacing the one with its `ID`.
    pub fn put_template(&self, doc: Element) {
        self.current().inventory_mut().put(Kind::Template, doc);
    }

    /// Adds an image document, replacing the one with its `ID`.
    pub fn put_image(&self, doc: Element) {
        self.current().inventory_mut().put(Kind::Image, doc);
    }

    // VMs as their monitoring and the database see them.

    /// Stores a monitoring record for a VM (the figures a monitor driver reports).
    pub fn set_vm_monitoring(&self, id: i32, record: Vec<(String, String)>) -> bool {
        self.cloud().engine_mut().monitor(id, record)
    }

    /// Purges a VM from the database: it vanishes and later calls get NO_EXISTS.
    pub fn purge_vm(&self, id: i32) -> bool {
        self.cloud().purge(id)
    }

    // Inspection.

    /// The `one.vm.info` document of a VM.
    pub fn vm_document(&self, id: i32) -> Option<String> {
        let cloud = self.current();
        let vm = cloud.vm(id)?;
        Some(docs::vm_full(&cloud, vm, true).to_xml())
    }

    /// (STATE, LCM_STATE) of a VM, as the numbers oned reports.
    pub fn vm_state(&self, id: i32) -> Option<(i32, i32)> {
        let cloud = self.current();
        let vm = cloud.vm(id)?;
        Some((vm.state().number(), vm.lcm().number()))
    }

    /// The ACTION of a VM's last HISTORY record (0 when it has none).
    pub fn vm_last_action(&self, id: i32) -> Option<i32> {
        let cloud = self.current();
        let vm = cloud.vm(id)?;
        Some(vm.history().last().map_or(0, |h| h.action))
    }

    /// Ids of every VM the database holds.
    pub fn vm_ids(&self) -> Vec<i32> {
        self.current().engine().vms().keys().copied().collect()
    }

    /// The templates received by instantiate (extra templates), allocate and update, in order.
    pub fn received_templates(&self) -> Vec<String> {
        self.cloud().received_templates().to_vec()
    }

    /// How many times `method` was called.
    pub fn call_count(&self, method: &str) -> u64 {
        self.cloud().call_counts().get(method).copied().unwrap_or(0)
    }

    /// How many times each method was called.
    pub fn call_counts(&self) -> BTreeMap<String, u64> {
        self.cloud().call_counts().clone()
    }

    /// The `one.template.info` document of a VM template.
    pub fn template_document(&self, id: i32) -> Option<String> {
        self.current().inventory().template(id).map(Element::to_xml)
    }

    /// The `one.vn.info` document of a network.
    pub fn vnet_document(&self, id: i32) -> Option<String> {
        let cloud = self.current();
        let vnet = cloud.inventory().vnet(id)?;
        Some(docs::vnet(&cloud, vnet, false).to_xml())
    }

    /// Ids of the networks.
    pub fn vnet_ids(&self) -> Vec<i32> {
        let cloud = self.cloud();
        cloud.inventory().vnets().iter().map(|v| v.id()).collect()
    }

    /// Answers one XML-RPC body as the server would (no transport).
    pub fn answer(&self, body: &str) -> String {
        server::answer(&self.shared, body)
    }
}

impl Drop for OneSim {
    fn drop(&mut self) {
        self.shared.stop();
        // Wake the blocking accept.
        let _ = TcpStream::connect_timeout(&self.address, Duration::from_secs(1));
        if let Some(handle) = self.acceptor.take() {
            let _ = handle.join();
        }
    }
}
