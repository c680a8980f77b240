//! [`OpenNebulaCloud`]: the [`Compute`] trait on a real oned.
//!
//! * Inventory: usable hosts of `one.hostpool.info` (capacity in CPU
//!   share and memory as the scheduler allocates it, advertised as
//!   the hypervisor oned reports), sliver types from the configuration, disk images
//!   from the configuration or the READY/USED OS images of the image pool,
//!   and the address ranges of the links' parent network (`one.vn.info`),
//!   so that Allocate refuses addresses no reservation can hold.
//! * VMs: `one.template.instantiate` with `hold = true` (5 params, safe on
//!   every version) and an extra template carrying the type's size, the
//!   merged CONTEXT, the disk image, the NICs, the host binding and the tag
//!   (`LABELS = "<label>/<sliver URN>"`, which reduced pool bodies keep).
//!   A held VM is reported powered off; `start` releases it. VMs are found
//!   again by their label in `one.vmpool.info(-3, -1, -1, -1)`.
//! * Exclusivity: the core already keeps other slivers of this aggregate
//!   off a host an exclusive sliver holds, and every VM is bound to its
//!   component with `SCHED_REQUIREMENTS`; VMs that other OpenNebula users
//!   start on that host are not kept away (the policy documented in the
//!   example configuration).
//! * Links: a reservation from a parent network (`one.vn.reserve`) or a
//!   new VNET (`one.vn.allocate`) per link, named after its tag. A link
//!   whose request asks for addresses reserves the block that holds them
//!   (`IP` = the lowest), and a VM never gets another address than the
//!   one asked for.

use super::config::{OneConfig, OneConfigError, OneSliverType};
use super::context::SliverContext;
use super::docs::{self, HostDoc, TemplateDoc, VmDoc, VmPhase};
use super::names;
use super::rpc::{Answer, ErrorCode, OneRpc, Param, RpcError};
use super::template::{ExtraTemplate, TemplateError};
use failures::{gone, not_found, unexpected, unreadable, vm_error, vm_id};
use geni_am_backend::{
    AddressRange, BackendError, Compute, DiskImage, HARDWARE_TYPE, Host, Inventory, LinkNetwork,
    NetHandle, NetSpec, NicAddress, SliverType, TaggedVm, UserKeys, VmHandle, VmObservation,
    VmSize, VmSpec, VmState,
};
use reservation::{AddressBlock, reservation};
use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};

/// VMs per `one.vmpool.info` page when the jobs list every VM
/// ([`Compute::visit_vms`]), so that a listing holds one page at a time.
const LIST_PAGE: usize = 500;

/// A source of the current time in epoch seconds (tests pass their own).
pub type Clock = Box<dyn Fn() -> i64 + Send + Sync>;

/// The OpenNebula backend. Thread-safe: its caches sit behind locks and
/// every call goes through the [`OneRpc`] connection.
pub struct OpenNebulaCloud {
    rpc: Box<dyn OneRpc>,
    config: OneConfig,
    authority: String,
    clock: Clock,
    /// Templates read once per id (their CONTEXT is the base of every VM's).
    templates: Mutex<HashMap<i32, TemplateDoc>>,
    /// `(major, minor)` of oned, asked once.
    version: OnceLock<(u32, u32)>,
    /// Component URN → OpenNebula host id, from the last host pool read.
    hosts: Mutex<HashMap<String, i64>>,
    /// Image NAME → image id, from the last image pool read.
    images: Mutex<HashMap<String, i64>>,
    /// VM id → when it was first seen waiting for placement.
    pending_since: Mutex<HashMap<i64, i64>>,
}

impl std::fmt::Debug for OpenNebulaCloud {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenNebulaCloud")
            .field("endpoint", &self.config.endpoint)
            .field("label", &self.config.label)
            .finish_non_exhaustive()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The system clock in epoch seconds.
pub fn system_clock() -> Clock {
    Box::new(|| chrono::Utc::now().timestamp())
}

impl OpenNebulaCloud {
    /// A driver over `rpc` for a validated `config`; host URNs are built
    /// under `authority`.
    pub fn new(rpc: Box<dyn OneRpc>, config: OneConfig, authority: &str, clock: Clock) -> Self {
        OpenNebulaCloud {
            rpc,
            config,
            authority: authority.to_owned(),
            clock,
            templates: Mutex::new(HashMap::new()),
            version: OnceLock::new(),
            hosts: Mutex::new(HashMap::new()),
            images: Mutex::new(HashMap::new()),
            pending_since: Mutex::new(HashMap::new()),
        }
    }

    /// A driver connected to the oned `config` names, on the system clock.
    pub fn connect(config: &OneConfig, authority: &str) -> Result<Self, OneConfigError> {
        config.validate()?;
        let client = config.client()?;
        tracing::info!(endpoint = %config.endpoint, label = %config.label, "OpenNebula backend configured");
        Ok(OpenNebulaCloud::new(
            Box::new(client),
            config.clone(),
            authority,
            system_clock(),
        ))
    }

    /// Calls `method` and expects an XML document.
    fn document(&self, method: &str, params: &[Param]) -> Result<String, RpcError> {
        match self.rpc.call(method, params)? {
            Answer::Str(xml) => Ok(xml),
            other => Err(unexpected(method, &other)),
        }
    }

    /// `one.vn.reserve` from network `parent` with the `reservation`
    /// template; the new network's id.
    fn reserve(&self, parent: i32, reservation: String) -> Result<i64, RpcError> {
        self.id_call(
            "one.vn.reserve",
            &[Param::Int(parent), Param::Str(reservation)],
        )
    }

    /// Calls `method` and expects an object id.
    fn id_call(&self, method: &str, params: &[Param]) -> Result<i64, RpcError> {
        match self.rpc.call(method, params)? {
            Answer::Int(id) => Ok(id),
            other => Err(unexpected(method, &other)),
        }
    }

    fn vm_info(&self, id: i32) -> Result<VmDoc, BackendError> {
        let xml = self
            .document("one.vm.info", &[Param::Int(id)])
            .map_err(|e| vm_error(e, id))?;
        docs::parse_vm(&xml).map_err(unreadable)
    }

    /// The template `id`, read once.
    fn template(&self, id: i32) -> Result<TemplateDoc, BackendError> {
        if let Some(known) = lock(&self.templates).get(&id) {
            return Ok(known.clone());
        }
        let xml = self
            .document("one.template.info", &[Param::Int(id)])
            .map_err(|e| match e.is_no_exists() {
                true => BackendError::Permanent(format!(
                    "the configured OpenNebula template {id} does not exist: {e}"
                )),
                false => e.into(),
            })?;
        let template = docs::parse_template(&xml).map_err(unreadable)?;
        lock(&self.templates).insert(id, template.clone());
        Ok(template)
    }

    /// `(major, minor)` of oned, asked with `one.system.version` once.
    fn version(&self) -> Result<(u32, u32), BackendError> {
        if let Some(version) = self.version.get() {
            return Ok(*version);
        }
        let text = match self.rpc.call("one.system.version", &[])? {
            Answer::Str(text) => text,
            other => return Err(unexpected("one.system.version", &other).into()),
        };
        let version = parse_version(&text).ok_or_else(|| {
            BackendError::Permanent(format!("OpenNebula reports an unreadable version `{text}`"))
        })?;
        Ok(*self.version.get_or_init(|| version))
    }

    /// This aggregate's live VMs (not DONE) with their tags, newest first,
    /// from one listing of the whole pool: a consistent picture, for
    /// finding a VM and counting the capacity held.
    fn tagged_vms(&self) -> Result<Vec<(VmDoc, String)>, BackendError> {
        let params = [-3, -1, -1, -1].map(Param::Int);
        let pool = self.vm_pool(&params)?;
        Ok(pool
            .into_iter()
            .filter_map(|vm| {
                let tag = self.tag_of(&vm)?.to_owned();
                Some((vm, tag))
            })
            .collect())
    }

    /// The VMs `one.vmpool.info` lists with `params`.
    fn vm_pool(&self, params: &[Param]) -> Result<Vec<VmDoc>, BackendError> {
        let xml = self.document("one.vmpool.info", params)?;
        docs::parse_vm_pool(&xml).map_err(unreadable)
    }

    /// The tag of this aggregate `vm` carries, if any.
    fn tag_of<'a>(&self, vm: &'a VmDoc) -> Option<&'a str> {
        names::tag_from_labels(&self.config.label, vm.labels.as_deref()?)
    }

    /// The usable hosts, remembering their ids by component URN.
    fn usable_hosts(&self) -> Result<Vec<HostDoc>, BackendError> {
        let xml = self.document("one.hostpool.info", &[])?;
        let hosts: Vec<HostDoc> = docs::parse_host_pool(&xml)
            .map_err(unreadable)?
            .into_iter()
            .filter(HostDoc::is_usable)
            .collect();
        *lock(&self.hosts) = hosts.iter().map(|h| (self.component_id(h), h.id)).collect();
        Ok(hosts)
    }

    /// CPU share (× 100) and memory (MiB) this aggregate's VMs hold, by
    /// OpenNebula host id.
    fn our_allocations(&self) -> Result<HashMap<i64, (i64, i64)>, BackendError> {
        let mut held: HashMap<i64, (i64, i64)> = HashMap::new();
        for (vm, _) in self.tagged_vms()? {
            if let (true, Some((host, _))) = (vm.holds_capacity(), &vm.host) {
                let entry = held.entry(*host).or_default();
                entry.0 += vm.cpu_share;
                entry.1 += vm.memory_mib;
            }
        }
        Ok(held)
    }

    /// The IPv4 address ranges of the configured parent network, which
    /// every link reservation comes from (`one.vn.info`, its AR_POOL);
    /// `None` when links are new networks of a template, or not offered.
    fn link_ranges(&self) -> Result<Option<Vec<AddressRange>>, BackendError> {
        let Some(parent) = self.config.links.as_ref().and_then(|l| l.parent_network) else {
            return Ok(None);
        };
        let xml = self
            .document("one.vn.info", &[Param::Int(parent)])
            .map_err(|e| match e.is_no_exists() {
                true => BackendError::Permanent(format!(
                    "the configured parent network {parent} (backend.opennebula.links.parent_network) does not exist: {e}"
                )),
                false => e.into(),
            })?;
        let vnet = docs::parse_vnet(&xml).map_err(unreadable)?;
        Ok(Some(
            vnet.ars
                .iter()
                .filter_map(|ar| {
                    let first = ar.ip.as_deref()?.trim().parse().ok()?;
                    AddressRange::starting_at(first, u32::try_from(ar.size).ok()?)
                })
                .collect(),
        ))
    }

    /// The hardware type advertised for `host`: the configured one, else
    /// `<hypervisor>-host` for the hypervisor oned reports.
    fn hardware_type(&self, host: &HostDoc) -> String {
        match (&self.config.hardware_type, &host.hypervisor) {
            (Some(configured), _) => configured.clone(),
            (None, Some(hypervisor)) => format!("{}-host", hypervisor.to_ascii_lowercase()),
            (None, None) => HARDWARE_TYPE.to_owned(),
        }
    }

    fn component_id(&self, host: &HostDoc) -> String {
        format!(
            "urn:publicid:IDN+{}+node+{}",
            self.authority,
            names::component_name(&host.name)
        )
    }

    /// The OpenNebula host behind a component URN (host pool re-read once
    /// when it is not known).
    fn host_id(&self, component_id: &str) -> Result<i64, BackendError> {
        if let Some(id) = lock(&self.hosts).get(component_id) {
            return Ok(*id);
        }
        self.usable_hosts()?;
        lock(&self.hosts).get(component_id).copied().ok_or_else(|| {
            BackendError::Permanent(format!(
                "OpenNebula has no usable host for component {component_id}"
            ))
        })
    }

    /// The bootable images offered: the configured names, or every READY
    /// or USED OS image; remembers their ids by name.
    fn offered_images(&self) -> Result<Vec<DiskImage>, BackendError> {
        let params = [-2, -1, -1].map(Param::Int);
        let xml = self.document("one.imagepool.info", &params)?;
        let pool = docs::parse_image_pool(&xml).map_err(unreadable)?;
        let bootable = pool.into_iter().filter(docs::ImageDoc::is_bootable);
        let mut ids = HashMap::new();
        let mut offered = Vec::new();
        for image in bootable {
            let wanted = self.config.images.is_empty() || self.config.images.contains(&image.name);
            if wanted && !ids.contains_key(&image.name) {
                ids.insert(image.name.clone(), image.id);
                offered.push(DiskImage {
                    name: image.name.clone(),
                    os: String::new(),
                    version: String::new(),
                    description: image.description.clone().unwrap_or_default(),
                });
            }
        }
        if !self.config.images.is_empty() {
            offered.sort_by_key(|i| self.config.images.iter().position(|n| *n == i.name));
        }
        *lock(&self.images) = ids;
        Ok(offered)
    }

    fn image_id(&self, name: &str) -> Result<i64, BackendError> {
        if let Some(id) = lock(&self.images).get(name) {
            return Ok(*id);
        }
        self.offered_images()?;
        lock(&self.images).get(name).copied().ok_or_else(|| {
            BackendError::Permanent(format!("OpenNebula offers no disk image `{name}`"))
        })
    }

    /// The extra template of a new VM: the granted size (`CPU` grows with
    /// `VCPU` at the type's share per virtual CPU; a disk size becomes the
    /// first DISK's `SIZE` in MiB), the CONTEXT, disks, NICs and labels.
    fn extra_template(
        &self,
        spec: &VmSpec,
        template: &TemplateDoc,
        record: &SliverContext,
        size: &OneSliverType,
    ) -> Result<ExtraTemplate, BackendError> {
        let granted = granted_size(spec, size);
        // The type's CPU share per virtual CPU, kept for the granted cores.
        let cpu = size.cpu * f64::from(granted.cores) / f64::from(size.vcpu);
        let mut extra = ExtraTemplate::new();
        extra
            .single("CPU", &cpu.to_string())?
            .single("VCPU", &granted.cores.to_string())?
            .single("MEMORY", &granted.ram_mb.to_string())?
            .vector("CONTEXT", &record.merge(&template.context))?;
        let disk_size = granted.disk_gb.map(|gb| (gb * 1024).to_string());
        let first_disk = match &spec.disk_image {
            Some(image) => Some(vec![(
                "IMAGE_ID".to_owned(),
                self.image_id(image)?.to_string(),
            )]),
            None => disk_size.as_ref().and(template.disks.first().cloned()),
        };
        if let Some(mut disk) = first_disk {
            if let Some(mib) = &disk_size {
                disk.retain(|(key, _)| key != "SIZE");
                disk.push(("SIZE".to_owned(), mib.clone()));
            }
            extra.vector("DISK", &disk)?;
            for disk in template.disks.iter().skip(1) {
                extra.vector("DISK", disk)?;
            }
        }
        if !spec.networks.is_empty() {
            for nic in &template.nics {
                extra.vector("NIC", nic)?;
            }
            for nic in &spec.networks {
                let mut entries = vec![("NETWORK_ID", nic.network.0.as_str())];
                if let Some(ip) = &nic.ip {
                    entries.push(("IP", ip.as_str()));
                }
                extra.vector("NIC", &entries)?;
            }
        }
        if let Some(component) = &spec.host {
            let host = self.host_id(component)?;
            extra.single("SCHED_REQUIREMENTS", &format!("ID=\"{host}\""))?;
        }
        extra
            .single("LABELS", &names::vm_label(&self.config.label, &spec.tag))?
            .single("GENI_SLIVER_URN", &spec.tag)?;
        Ok(extra)
    }

    /// Instantiates the type's template on hold: always 5 parameters,
    /// which every server version reads correctly.
    fn instantiate(
        &self,
        spec: &VmSpec,
        template: &TemplateDoc,
        record: &SliverContext,
        size: &OneSliverType,
    ) -> Result<i64, BackendError> {
        let extra = self.extra_template(spec, template, record, size)?;
        let params = [
            Param::Int(size.template_id),
            Param::Str(names::vm_name(&spec.name)),
            Param::Bool(true),
            Param::Str(extra.to_xml()),
            Param::Bool(false),
        ];
        Ok(self.id_call("one.template.instantiate", &params)?)
    }

    /// Runs `one.vm.action(action, id)`. A refusal for the VM's state is
    /// fine when the VM already is in one of `done` phases, transient
    /// while it is between states, and permanent otherwise.
    fn act(&self, vm: &VmHandle, action: &str, done: &[VmPhase]) -> Result<(), BackendError> {
        let id = vm_id(vm)?;
        let params = [Param::Str(action.to_owned()), Param::Int(id)];
        match self.id_call("one.vm.action", &params) {
            Ok(_) => Ok(()),
            Err(RpcError::Refused {
                code: ErrorCode::Action,
                message,
                ..
            }) => {
                let phase = self.vm_info(id)?.phase();
                if done.contains(&phase) {
                    Ok(())
                } else if in_transition(phase) {
                    Err(BackendError::Transient(message))
                } else {
                    Err(BackendError::Permanent(message))
                }
            }
            Err(err) => Err(vm_error(err, id)),
        }
    }

    /// The observation of a VM waiting for placement: failed once it has
    /// waited longer than the placement deadline.
    fn pending(&self, vm: &VmDoc) -> (VmState, String) {
        let now = (self.clock)();
        let since = *lock(&self.pending_since).entry(vm.id).or_insert(now);
        let waited = now.saturating_sub(since);
        let reason = vm.sched_message.clone().unwrap_or_default();
        let deadline = i64::try_from(self.config.placement_deadline_secs).unwrap_or(i64::MAX);
        if waited > deadline {
            let message = format!(
                "OpenNebula could not place the VM within {deadline} s: {}",
                if reason.is_empty() {
                    "no reason given"
                } else {
                    reason.as_str()
                }
            );
            (VmState::Failed, message)
        } else {
            (VmState::Pending, reason)
        }
    }
}

impl Compute for OpenNebulaCloud {
    fn name(&self) -> &str {
        "OpenNebula cloud"
    }

    /// Hosts with the capacity the scheduler allocates (the OpenNebula
    /// XML-RPC API reference, `one.hostpool.info`): CPU share (× 100) and memory, MAX_CPU/MAX_MEM minus what
    /// VMs not of this aggregate hold there (the core subtracts its own
    /// slivers), so a type of CPU 0.5 fits twice per core, as oned places
    /// it. A host is available while that capacity fits the smallest
    /// configured type: this aggregate's own VMs do not count (the core
    /// counts its slivers), or a host would stay unavailable until the
    /// next refresh after they are deleted.
    fn inventory(&self) -> Result<Inventory, BackendError> {
        let ours = self.our_allocations()?;
        let types = &self.config.sliver_types;
        let hosts = self
            .usable_hosts()?
            .iter()
            .map(|h| {
                let (our_cpu, our_mem_mib) = ours.get(&h.id).copied().unwrap_or_default();
                let others_cpu = (h.cpu_usage - our_cpu).max(0);
                let others_mem_kib = (h.mem_usage_kib - our_mem_mib * 1024).max(0);
                let cpus = u32::try_from((h.max_cpu - others_cpu).max(0)).unwrap_or(u32::MAX);
                let memory_mb =
                    u64::try_from((h.max_mem_kib - others_mem_kib).max(0) / 1024).unwrap_or(0);
                Host {
                    component_id: self.component_id(h),
                    name: names::component_name(&h.name),
                    cpus,
                    memory_mb,
                    max_vms: self.config.max_vms_per_host,
                    hardware_type: self.hardware_type(h),
                    available: types
                        .iter()
                        .any(|t| cpu_share(t.cpu) <= cpus && t.memory_mb <= memory_mb),
                }
            })
            .collect();
        let images = self.offered_images()?;
        let sliver_types = self
            .config
            .sliver_types
            .iter()
            .map(|t| SliverType {
                name: t.name.clone(),
                cpus: cpu_share(t.cpu),
                cores: t.vcpu,
                memory_mb: t.memory_mb,
                max_size: geni_am_backend::max_size(
                    t.vcpu,
                    t.memory_mb,
                    t.max_cores,
                    t.max_ram_mb,
                    t.max_disk_gb,
                ),
                disk_images: images.clone(),
            })
            .collect();
        Ok(Inventory {
            hosts,
            sliver_types,
            link_ranges: self.link_ranges()?,
        })
    }

    fn create_vm(&self, spec: &VmSpec) -> Result<VmHandle, BackendError> {
        if let Some(existing) = self.find_vm(&spec.tag)? {
            return Ok(existing);
        }
        if spec.tag.contains(',') {
            return Err(BackendError::Permanent(format!(
                "the tag `{}` cannot be an OpenNebula label",
                spec.tag
            )));
        }
        let size = self
            .config
            .sliver_types
            .iter()
            .find(|t| t.name == spec.sliver_type)
            .ok_or_else(|| {
                BackendError::Permanent(format!(
                    "OpenNebula has no sliver type `{}` configured",
                    spec.sliver_type
                ))
            })?;
        let template = self.template(size.template_id)?;
        let record = SliverContext::new(size.template_id, spec);
        let id = match self.instantiate(spec, &template, &record, size) {
            // A requested address that is not free: never another one in
            // its place, the VM would not have the address asked for.
            Err(BackendError::Capacity(err))
                if err.contains("lease") && spec.networks.iter().any(|n| n.ip.is_some()) =>
            {
                let asked: Vec<&str> = spec
                    .networks
                    .iter()
                    .filter_map(|n| n.ip.as_deref())
                    .collect();
                Err(BackendError::Permanent(format!(
                    "the requested link address {} is not free on its link network: {err}",
                    asked.join(", ")
                )))
            }
            other => other,
        }?;
        tracing::info!(vm = id, tag = %spec.tag, "OpenNebula VM created on hold");
        Ok(VmHandle(id.to_string()))
    }

    fn find_vm(&self, tag: &str) -> Result<Option<VmHandle>, BackendError> {
        Ok(self
            .tagged_vms()?
            .into_iter()
            .filter(|(_, t)| t == tag)
            .map(|(vm, _)| vm.id)
            .min()
            .map(|id| VmHandle(id.to_string())))
    }

    fn observe(&self, vm: &VmHandle) -> Result<VmObservation, BackendError> {
        let id = vm_id(vm)?;
        let doc = match self.vm_info(id) {
            Ok(doc) => doc,
            Err(BackendError::NotFound { .. }) => {
                lock(&self.pending_since).remove(&i64::from(id));
                return Ok(gone(id));
            }
            Err(err) => return Err(err),
        };
        let phase = doc.phase();
        if phase != VmPhase::Pending {
            lock(&self.pending_since).remove(&doc.id);
        }
        let failure = || {
            doc.failure_message().unwrap_or_else(|| {
                format!(
                    "OpenNebula reports the VM in STATE {} LCM_STATE {}",
                    doc.state, doc.lcm_state
                )
            })
        };
        let (state, message) = match phase {
            VmPhase::Pending => self.pending(&doc),
            VmPhase::Held | VmPhase::Stopped => (VmState::Stopped, String::new()),
            VmPhase::Booting => (VmState::Booting, String::new()),
            VmPhase::Running | VmPhase::Busy => (VmState::Running, String::new()),
            VmPhase::ShuttingDown => (VmState::Stopping, String::new()),
            VmPhase::Failed | VmPhase::Unknown => (VmState::Failed, failure()),
            VmPhase::Done => return Ok(gone(id)),
        };
        let record = SliverContext::from_context(&doc.context);
        let links: &[String] = record.as_ref().map_or(&[], |r| &r.networks);
        let mut addresses: Vec<NicAddress> = doc
            .nics
            .iter()
            .filter_map(|nic| {
                let network = nic
                    .network_id
                    .map(|n| n.to_string())
                    .filter(|n| links.contains(n))
                    .map(NetHandle);
                Some(NicAddress {
                    network,
                    ip: nic.ip.clone()?,
                    mac: nic.mac.clone().unwrap_or_default(),
                    netmask: context_netmask(&doc.context, nic.nic_id),
                })
            })
            .collect();
        addresses.sort_by_key(|a| a.network.is_some());
        let hostname = match (&self.config.domain, &record) {
            (Some(domain), Some(record)) => format!("{}-{id}.{domain}", record.hostname),
            (Some(domain), None) => format!("vm-{id}.{domain}"),
            (None, _) => addresses.first().map(|a| a.ip.clone()).unwrap_or_default(),
        };
        Ok(VmObservation {
            state,
            message,
            hostname,
            addresses,
        })
    }

    fn start(&self, vm: &VmHandle) -> Result<(), BackendError> {
        let id = vm_id(vm)?;
        let doc = self.vm_info(id)?;
        let action = match (doc.state, doc.phase()) {
            (2, _) => "release",
            // Off, or lost by monitoring (LCM UNKNOWN): resume boots it.
            (4 | 5 | 8 | 9, _) | (3, VmPhase::Unknown) => "resume",
            (_, VmPhase::Pending | VmPhase::Booting | VmPhase::Running | VmPhase::Busy) => {
                return Ok(());
            }
            (_, VmPhase::Done) => return Err(not_found(id)),
            (_, phase) if in_transition(phase) => {
                return Err(BackendError::Transient(format!(
                    "OpenNebula VM {id} is between states (STATE {} LCM_STATE {})",
                    doc.state, doc.lcm_state
                )));
            }
            _ => {
                return Err(BackendError::Permanent(format!(
                    "OpenNebula VM {id} cannot be started: {}",
                    doc.failure_message().unwrap_or_else(|| "it failed".into())
                )));
            }
        };
        lock(&self.pending_since).insert(doc.id, (self.clock)());
        self.act(
            vm,
            action,
            &[VmPhase::Pending, VmPhase::Booting, VmPhase::Running],
        )
    }

    fn stop(&self, vm: &VmHandle) -> Result<(), BackendError> {
        self.act(vm, "poweroff", &[VmPhase::Stopped, VmPhase::Held])
    }

    fn restart(&self, vm: &VmHandle) -> Result<(), BackendError> {
        self.act(vm, "reboot", &[])
    }

    fn update_users(&self, vm: &VmHandle, users: &[UserKeys]) -> Result<(), BackendError> {
        let id = vm_id(vm)?;
        let doc = self.vm_info(id)?;
        let record = SliverContext::from_context(&doc.context)
            .ok_or_else(|| {
                BackendError::Permanent(format!(
                    "OpenNebula VM {id} carries no context written by this aggregate"
                ))
            })?
            .with_users(users);
        let template = self.template(record.template_id)?;
        let mut context = ExtraTemplate::new();
        context.vector("CONTEXT", &record.merge(&template.context))?;
        let mut params = vec![Param::Int(id), Param::Str(context.to_xml())];
        if self.version()? >= (6, 2) {
            params.push(Param::Int(1));
        }
        self.id_call("one.vm.updateconf", &params)
            .map_err(|e| vm_error(e, id))?;
        Ok(())
    }

    fn destroy(&self, vm: &VmHandle) -> Result<(), BackendError> {
        let id = vm_id(vm)?;
        // A VM being destroyed needs no placement deadline any more.
        lock(&self.pending_since).remove(&i64::from(id));
        let params = [Param::Str("terminate-hard".into()), Param::Int(id)];
        match self.id_call("one.vm.action", &params) {
            Ok(_) => {
                tracing::info!(vm = id, "OpenNebula VM terminated");
                Ok(())
            }
            Err(err) if err.is_no_exists() => Ok(()),
            Err(RpcError::Refused {
                code: ErrorCode::Action,
                message,
                ..
            }) => Err(BackendError::Transient(message)),
            Err(err) => Err(err.into()),
        }
    }

    fn visit_vms(&self, visit: &mut dyn FnMut(TaggedVm)) -> Result<(), BackendError> {
        // oned's pagination: with `end` below -1, `start` is the offset of
        // the first row and `-end` the size of the page. Rows inserted or
        // removed before the offset between two pages shift the rest,
        // hence a VM missed or seen twice, as the trait allows.
        for offset in (0..i32::MAX).step_by(LIST_PAGE) {
            let params = [-3, offset, -(LIST_PAGE as i32), -1].map(Param::Int);
            let pool = self.vm_pool(&params)?;
            for vm in &pool {
                if let Some(tag) = self.tag_of(vm) {
                    visit(TaggedVm {
                        handle: VmHandle(vm.id.to_string()),
                        tag: tag.to_owned(),
                    });
                }
            }
            if pool.len() < LIST_PAGE {
                break;
            }
        }
        Ok(())
    }

    fn create_network(&self, spec: &NetSpec) -> Result<LinkNetwork, BackendError> {
        let links = self.config.links.as_ref().ok_or_else(|| {
            BackendError::Permanent(
                "this aggregate offers no links: [backend.opennebula.links] is not configured"
                    .into(),
            )
        })?;
        let name = names::network_name(&self.config.label, &spec.tag);
        let params = [-3, -1, -1].map(Param::Int);
        let pool = docs::parse_vnet_pool(&self.document("one.vnpool.info", &params)?)
            .map_err(unreadable)?;
        if let Some(existing) = pool.iter().filter(|n| n.name == name).min_by_key(|n| n.id) {
            return Ok(link_network(existing.id, existing.vlan_id));
        }
        let id = match (links.parent_network, &links.template) {
            (Some(parent), _) => match AddressBlock::holding(&spec.addresses, links.size)? {
                None => self.reserve(parent, reservation(&name, links.size, None)?)?,
                // The configured size from the lowest requested address may
                // run past the end of the parent's range: then the
                // requested addresses alone (interfaces of the link that
                // ask for none share what is left of them).
                Some(block) => match self.reserve(parent, reservation(&name, block.size, Some(&block))?) {
                    Err(RpcError::Refused { .. }) if block.size > block.span() => {
                        self.reserve(parent, reservation(&name, block.span(), Some(&block))?)
                    }
                    answer => answer,
                }
                .map_err(|err| match err {
                    RpcError::Refused { message, .. } => BackendError::Permanent(format!(
                        "the link's requested addresses {block} cannot be reserved from OpenNebula network {parent} (taken, or outside its address ranges): {message}"
                    )),
                    other => other.into(),
                })?,
            },
            (None, Some(template)) => {
                let text = format!("{template}\nNAME = \"{name}\"\n");
                let params = [Param::Str(text), Param::Int(links.cluster)];
                self.id_call("one.vn.allocate", &params)?
            }
            (None, None) => {
                return Err(BackendError::Permanent(
                    "[backend.opennebula.links] names neither parent_network nor template".into(),
                ));
            }
        };
        // The tag oned gave it: a reservation's is its parent's, a network
        // of a template may have one oned chose (AUTOMATIC_VLAN_ID).
        let vnet = i32::try_from(id).map_err(|_| {
            BackendError::Permanent(format!("oned answered network id {id}, not a 32-bit id"))
        })?;
        let created = docs::parse_vnet(&self.document("one.vn.info", &[Param::Int(vnet)])?)
            .map_err(unreadable)?;
        tracing::info!(network = id, tag = %spec.tag, vlan = ?created.vlan_id, "OpenNebula link network created");
        Ok(link_network(id, created.vlan_id))
    }

    fn destroy_network(&self, net: &NetHandle) -> Result<(), BackendError> {
        let Ok(id) = net.0.parse::<i32>() else {
            return Ok(());
        };
        match self.id_call("one.vn.delete", &[Param::Int(id)]) {
            Ok(_) => Ok(()),
            Err(err) if err.is_no_exists() => Ok(()),
            Err(RpcError::Refused {
                code: ErrorCode::Action | ErrorCode::Internal,
                message,
                ..
            }) if message.contains("lease") || message.contains("in use") => {
                Err(BackendError::Transient(message))
            }
            Err(err) => Err(err.into()),
        }
    }
}

/// Link network `id` carried by VLAN `vlan_id`.
fn link_network(id: i64, vlan_id: Option<u32>) -> LinkNetwork {
    LinkNetwork {
        handle: NetHandle(id.to_string()),
        vlan_tag: vlan_id,
    }
}

impl From<TemplateError> for BackendError {
    fn from(err: TemplateError) -> Self {
        BackendError::Permanent(err.to_string())
    }
}

/// A CPU share (`CPU`, e.g. `0.5`) in the unit of `HOST_SHARE/MAX_CPU`:
/// hundredths of a CPU.
fn cpu_share(cpu: f64) -> u32 {
    (cpu * 100.0).round().clamp(0.0, f64::from(u32::MAX)) as u32
}

/// Whether a VM in `phase` is between two states, so an action refused
/// now may be accepted later.
fn in_transition(phase: VmPhase) -> bool {
    matches!(
        phase,
        VmPhase::Pending | VmPhase::Booting | VmPhase::Busy | VmPhase::ShuttingDown
    )
}

/// The netmask OpenNebula's contextualization gives NIC `nic_id`
/// (`ETH<n>_MASK`, filled from the network's `NETWORK_MASK` when the
/// CONTEXT has `NETWORK = "YES"`), if any.
fn context_netmask(context: &[(String, String)], nic_id: i64) -> Option<String> {
    let key = format!("ETH{nic_id}_MASK");
    context
        .iter()
        .find(|(name, _)| *name == key)
        .map(|(_, mask)| mask.trim().to_owned())
        .filter(|mask| !mask.is_empty())
}

/// `major.minor` of a version string such as `6.10.0`.
pub(super) fn parse_version(text: &str) -> Option<(u32, u32)> {
    let mut parts = text.trim().split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next().unwrap_or("0").parse().ok()?;
    Some((major, minor))
}

/// The size a VM of type `kind` gets: the one granted at Allocate, else
/// the type's own.
fn granted_size(spec: &VmSpec, kind: &OneSliverType) -> VmSize {
    spec.size.unwrap_or(VmSize {
        cores: kind.vcpu,
        ram_mb: kind.memory_mb,
        disk_gb: None,
    })
}

mod failures;
mod reservation;
#[cfg(test)]
mod tests;
