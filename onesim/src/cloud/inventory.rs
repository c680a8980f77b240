//! What the cloud is made of besides its VMs: the accounts, the hosts with
//! their capacity, the virtual networks, the images and the VM templates,
//! seeded from the recorded objects and changed by the API or a test.

use super::record::{Pooled, Record};
use super::seed;
use super::vnet::Vnet;
use crate::xml::Element;

/// A host: its document and its capacity.
#[derive(Debug, Clone)]
pub struct Host {
    record: Record,
    max_cpu: i64,
    max_mem: i64,
}

impl Host {
    /// A host whose capacity (MAX_CPU, MAX_MEM) is read from its document.
    pub fn new(id: i32, doc: Element) -> Self {
        let max = |name: &str| {
            doc.value_at(&format!("HOST_SHARE/{name}"))
                .parse()
                .unwrap_or(0)
        };
        Host {
            max_cpu: max("MAX_CPU"),
            max_mem: max("MAX_MEM"),
            record: Record::new(id, doc),
        }
    }

    /// MAX_CPU (percent).
    pub fn max_cpu(&self) -> i64 {
        self.max_cpu
    }

    /// MAX_MEM (KiB).
    pub fn max_mem(&self) -> i64 {
        self.max_mem
    }

    /// Whether the scheduler places VMs on it (STATE MONITORED).
    pub fn is_monitored(&self) -> bool {
        self.doc().value_at("STATE") == "2"
    }
}

impl Pooled for Host {
    fn record(&self) -> &Record {
        &self.record
    }
}

/// The cloud's objects other than VMs.
#[derive(Debug)]
pub struct Inventory {
    /// Accounts: (user name, password).
    users: Vec<(String, String)>,
    /// The user document.
    user: Element,
    hosts: Vec<Host>,
    vnets: Vec<Vnet>,
    images: Vec<Element>,
    templates: Vec<Element>,
    next_vnet_id: i32,
}

impl Inventory {
    /// The recorded objects: host 0, network 0, image 0, template 0 and oneadmin.
    pub fn seeded() -> Self {
        Inventory {
            users: vec![("oneadmin".into(), "onetest".into())],
            user: seed::element(seed::USER),
            hosts: vec![Host::new(0, seed::element(seed::HOST))],
            vnets: vec![Vnet::new(0, seed::element(seed::VNET))],
            images: vec![seed::element(seed::IMAGE)],
            templates: vec![seed::element(seed::TEMPLATE)],
            next_vnet_id: 1,
        }
    }

    /// Checks a session string `user:password`; `None` when authentication fails.
    pub fn authenticate(&self, session: &str) -> Option<&str> {
        let (user, secret) = session.split_once(':')?;
        self.users
            .iter()
            .find(|(u, p)| u == user && p == secret)
            .map(|(u, _)| u.as_str())
    }

    /// Changes the password of `user`; false when there is no such account.
    pub fn set_password(&mut self, user: &str, password: &str) -> bool {
        let account = self.users.iter_mut().find(|(u, _)| u == user);
        account.map(|(_, p)| *p = password.to_owned()).is_some()
    }

    /// The user document (`one.user.info`).
    pub fn user(&self) -> &Element {
        &self.user
    }

    /// The hosts, in pool order.
    pub fn hosts(&self) -> &[Host] {
        &self.hosts
    }

    /// The position of host `id` among [`Inventory::hosts`].
    pub fn host_index(&self, id: i32) -> Option<usize> {
        self.hosts.iter().position(|h| h.id() == id)
    }

    /// The name of the host at `index` (empty when there is none).
    pub fn host_name(&self, index: usize) -> &str {
        self.hosts.get(index).map_or("", Host::name)
    }

    /// Adds a host under the next free id; returns the id.
    pub fn add_host(&mut self, doc: impl FnOnce(i32) -> Element) -> i32 {
        let id = self.hosts.iter().map(|h| h.id() + 1).max().unwrap_or(0);
        self.hosts.push(Host::new(id, doc(id)));
        id
    }

    /// Removes the host at `index`.
    pub fn remove_host(&mut self, index: usize) {
        if index < self.hosts.len() {
            self.hosts.remove(index);
        }
    }

    /// Sets a value of host `id`'s document (e.g. `STATE`, `IM_MAD`);
    /// `section` names a child element to set it in instead of the root.
    /// False when there is no such host or section.
    pub fn set_host_value(
        &mut self,
        id: i32,
        section: Option<&str>,
        key: &str,
        value: &str,
    ) -> bool {
        let Some(host) = self.hosts.iter_mut().find(|h| h.id() == id) else {
            return false;
        };
        let target = match section {
            Some(name) => host.record.doc_mut().child_mut(name),
            None => Some(host.record.doc_mut()),
        };
        target.map(|t| t.set_value(key, value)).is_some()
    }

    /// Sets host `id`'s MAX_CPU (percent) and MAX_MEM (KiB), in its document too.
    pub fn set_host_capacity(&mut self, id: i32, max_cpu: i64, max_mem: i64) -> bool {
        let Some(host) = self.hosts.iter_mut().find(|h| h.id() == id) else {
            return false;
        };
        host.max_cpu = max_cpu;
        host.max_mem = max_mem;
        if let Some(share) = host.record.doc_mut().child_mut("HOST_SHARE") {
            share.set_value("MAX_CPU", max_cpu.to_string());
            share.set_value("MAX_MEM", max_mem.to_string());
        }
        true
    }

    /// The virtual networks, in creation order.
    pub fn vnets(&self) -> &[Vnet] {
        &self.vnets
    }

    /// Network `id`.
    pub fn vnet(&self, id: i32) -> Option<&Vnet> {
        self.vnets.iter().find(|v| v.id() == id)
    }

    /// The position of network `id` among [`Inventory::vnets`].
    pub fn vnet_index(&self, id: i32) -> Option<usize> {
        self.vnets.iter().position(|v| v.id() == id)
    }

    /// The network at `index`, to lease from.
    pub fn vnet_at_mut(&mut self, index: usize) -> Option<&mut Vnet> {
        self.vnets.get_mut(index)
    }

    /// The id the next network gets.
    pub fn next_vnet_id(&self) -> i32 {
        self.next_vnet_id
    }

    /// Adds a network under the next id, its document built for that id; returns the id.
    pub fn add_vnet(&mut self, doc: impl FnOnce(i32) -> Element) -> i32 {
        let id = self.next_vnet_id;
        self.next_vnet_id += 1;
        self.vnets.push(Vnet::new(id, doc(id)));
        id
    }

    /// Adds a network under the `ID` its document carries; later networks get higher ids.
    pub fn insert_vnet(&mut self, doc: Element) -> i32 {
        let id = doc.value_at("ID").parse().unwrap_or(self.next_vnet_id);
        self.next_vnet_id = self.next_vnet_id.max(id + 1);
        self.vnets.push(Vnet::new(id, doc));
        id
    }

    /// Removes the network at `index` and the leases it held on others (a reservation's).
    pub fn remove_vnet(&mut self, index: usize) {
        if index >= self.vnets.len() {
            return;
        }
        let id = self.vnets.remove(index).id();
        for vnet in &mut self.vnets {
            vnet.release(super::vnet::Lease::reservation_owner(id));
        }
    }

    /// Releases every lease VM `vm` holds.
    pub fn release_leases(&mut self, vm: i32) {
        for vnet in &mut self.vnets {
            vnet.release(vm);
        }
    }

    /// The images.
    pub fn images(&self) -> &[Element] {
        &self.images
    }

    /// The VM templates.
    pub fn templates(&self) -> &[Element] {
        &self.templates
    }

    /// Template `id`.
    pub fn template(&self, id: i32) -> Option<&Element> {
        let id = id.to_string();
        self.templates.iter().find(|t| t.value_at("ID") == id)
    }

    /// The images or the templates.
    pub fn documents(&self, kind: Kind) -> &[Element] {
        match kind {
            Kind::Image => &self.images,
            Kind::Template => &self.templates,
        }
    }

    /// Adds an image or template document, replacing the one with its `ID`.
    pub fn put(&mut self, kind: Kind, doc: Element) {
        let list = match kind {
            Kind::Image => &mut self.images,
            Kind::Template => &mut self.templates,
        };
        let id = doc.value_at("ID").to_owned();
        match list.iter_mut().find(|d| d.value_at("ID") == id) {
            Some(existing) => *existing = doc,
            None => list.push(doc),
        }
    }
}

/// The document lists of [`Inventory::documents`] and [`Inventory::put`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Images (`one.imagepool.info`).
    Image,
    /// VM templates (`one.templatepool.info`).
    Template,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seeded_inventory_authenticates_oneadmin() {
        let mut inventory = Inventory::seeded();
        assert_eq!(inventory.authenticate("oneadmin:onetest"), Some("oneadmin"));
        assert!(inventory.set_password("oneadmin", "rotated"));
        assert_eq!(inventory.authenticate("oneadmin:onetest"), None);
        assert!(!inventory.set_password("nobody", "x"));
    }

    #[test]
    fn an_inserted_network_moves_the_next_id_past_it() {
        let mut inventory = Inventory::seeded();
        let mut doc = seed::element(seed::VNET);
        doc.set_value("ID", "4");
        assert_eq!(inventory.insert_vnet(doc), 4);
        assert_eq!(inventory.next_vnet_id(), 5);
        assert_eq!(inventory.add_vnet(|_| seed::element(seed::VNET)), 5);
    }

    #[test]
    fn a_put_template_replaces_the_one_with_its_id() {
        let mut inventory = Inventory::seeded();
        let mut doc = seed::element(seed::TEMPLATE);
        doc.set_value("NAME", "renamed");
        inventory.put(Kind::Template, doc);
        assert_eq!(inventory.templates().len(), 1);
        assert_eq!(
            inventory.template(0).map(|t| t.value_at("NAME")),
            Some("renamed")
        );
    }
}
