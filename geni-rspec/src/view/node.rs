//! `<node>` and what it contains: sliver types with disk images, hardware
//! types, availability, location and interfaces with their IP addresses.

use super::{Services, ServicesMut, append_core, child_named, children_named, element_view, ns};
use crate::tree::{Document, NodeId};

element_view! {
    /// Read view of a `<node>`.
    Node + client_id {
        /// `component_id`: the URN of the physical component.
        component_id => "component_id",
        /// `component_manager_id`: the URN of the component manager it belongs to.
        component_manager_id => "component_manager_id",
        /// `component_name`.
        component_name => "component_name",
        /// ProtoGENI v2 `component_uuid` (older documents).
        component_uuid => "component_uuid",
        /// `sliver_id` (manifests).
        sliver_id => "sliver_id",
        /// `exclusive` as written; see [`Node::exclusive`] for the parsed value.
        exclusive_attr => "exclusive",
    }
}

impl<'a> Node<'a> {
    /// `exclusive` parsed as an `xs:boolean`; `None` when absent or malformed.
    pub fn exclusive(&self) -> Option<bool> {
        self.exclusive_attr().as_deref().and_then(super::parse_bool)
    }

    /// Every `<sliver_type>`.
    pub fn sliver_types(&self) -> impl Iterator<Item = SliverType<'a>> + use<'a> {
        let doc = self.doc;
        children_named(doc, self.id, "sliver_type").map(move |id| SliverType::new(doc, id))
    }

    /// The first `<sliver_type>` (a request names at most one per node of
    /// this aggregate, or none to get its default).
    pub fn sliver_type(&self) -> Option<SliverType<'a>> {
        self.sliver_types().next()
    }

    /// Every `<hardware_type>`.
    pub fn hardware_types(&self) -> impl Iterator<Item = HardwareType<'a>> + use<'a> {
        let doc = self.doc;
        children_named(doc, self.id, "hardware_type").map(move |id| HardwareType::new(doc, id))
    }

    /// `<available now=…>` parsed; `None` when absent or malformed.
    pub fn available_now(&self) -> Option<bool> {
        let available = child_named(self.doc, self.id, "available")?;
        super::parse_bool(&self.doc.attribute(available, "now")?)
    }

    /// `<location>`.
    pub fn location(&self) -> Option<Location<'a>> {
        child_named(self.doc, self.id, "location").map(|id| Location::new(self.doc, id))
    }

    /// Every `<interface>`.
    pub fn interfaces(&self) -> impl Iterator<Item = Interface<'a>> + use<'a> {
        let doc = self.doc;
        children_named(doc, self.id, "interface").map(move |id| Interface::new(doc, id))
    }

    /// `<services>`.
    pub fn services(&self) -> Option<Services<'a>> {
        child_named(self.doc, self.id, "services").map(|id| Services::new(self.doc, id))
    }

    /// The `name` of every `<host>` (manifests).
    pub fn hosts(&self) -> impl Iterator<Item = std::borrow::Cow<'a, str>> + use<'a> {
        let doc = self.doc;
        children_named(doc, self.id, "host").filter_map(move |id| doc.attribute(id, "name"))
    }
}

element_view! {
    /// Read view of a `<sliver_type>`.
    SliverType {
        /// `name`, e.g. `default-vm` or `raw-pc`.
        name => "name",
    }
}

impl<'a> SliverType<'a> {
    /// Every `<disk_image>` inside.
    pub fn disk_images(&self) -> impl Iterator<Item = DiskImage<'a>> + use<'a> {
        let doc = self.doc;
        children_named(doc, self.id, "disk_image").map(move |id| DiskImage::new(doc, id))
    }

    /// The Emulab `<xen>` sizing the VM, if any.
    pub fn xen(&self) -> Option<Xen<'a>> {
        self.doc
            .elements_named(self.id, ns::EMULAB, "xen")
            .next()
            .map(|id| Xen::new(self.doc, id))
    }
}

/// A VM's size in the terms of the Emulab `<xen>` element: granted (in a
/// manifest) or the largest offered (in an advertisement).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VmSize {
    /// Virtual CPUs (`cores`).
    pub cores: u32,
    /// Memory in MiB (`ram`).
    pub ram_mb: u64,
    /// Disk size in GB (`disk`); `None` when the image decides.
    pub disk_gb: Option<u64>,
}

impl VmSize {
    /// Sets the `cores`, `ram` and `disk` attributes of `xen`.
    pub(crate) fn write(&self, doc: &mut Document, xen: NodeId) {
        doc.set_attribute(xen, "cores", &self.cores.to_string());
        doc.set_attribute(xen, "ram", &self.ram_mb.to_string());
        if let Some(disk) = self.disk_gb {
            doc.set_attribute(xen, "disk", &disk.to_string());
        }
    }
}

element_view! {
    /// Read view of an Emulab `<xen>` (namespace [`ns::EMULAB`]): the size
    /// of a VM as geni-lib's `XenVM.cores/ram/disk` write it.
    Xen {
        /// `cores`: virtual CPUs.
        cores => "cores",
        /// `ram`: memory in MiB.
        ram => "ram",
        /// `disk`: disk size in GB.
        disk => "disk",
    }
}

element_view! {
    /// Read view of a `<disk_image>`.
    DiskImage {
        /// `name`: the image URN.
        name => "name",
        /// `os`.
        os => "os",
        /// `version`.
        version => "version",
        /// `description`.
        description => "description",
        /// `url` (not in the v3 schema, but common in real requests).
        url => "url",
        /// `default` (advertisements).
        default => "default",
    }
}

element_view! {
    /// Read view of a `<hardware_type>`.
    HardwareType {
        /// `name`.
        name => "name",
    }
}

element_view! {
    /// Read view of a `<location>`.
    Location {
        /// `country` (ISO 3166 code).
        country => "country",
        /// `latitude`.
        latitude => "latitude",
        /// `longitude`.
        longitude => "longitude",
    }
}

element_view! {
    /// Read view of a node's `<interface>`.
    Interface + client_id {
        /// `component_id`.
        component_id => "component_id",
        /// `sliver_id` (manifests).
        sliver_id => "sliver_id",
        /// `mac_address` (manifests).
        mac_address => "mac_address",
    }
}

impl<'a> Interface<'a> {
    /// Every `<ip>`.
    pub fn ips(&self) -> impl Iterator<Item = Ip<'a>> + use<'a> {
        let doc = self.doc;
        children_named(doc, self.id, "ip").map(move |id| Ip::new(doc, id))
    }
}

element_view! {
    /// Read view of an interface's `<ip>`.
    Ip {
        /// `address`.
        address => "address",
        /// `netmask`.
        netmask => "netmask",
        /// `type`, e.g. `ipv4`.
        kind => "type",
    }
}

/// Write view of a `<node>`: sets the attributes the AM owns and appends
/// the elements it adds to manifests.
#[derive(Debug)]
pub struct NodeMut<'a> {
    doc: &'a mut Document,
    id: NodeId,
}

impl<'a> NodeMut<'a> {
    /// Edits element `id` of `doc`, which must be a `<node>`.
    pub fn new(doc: &'a mut Document, id: NodeId) -> Self {
        Self { doc, id }
    }

    /// Read access to the same node.
    pub fn as_view(&self) -> Node<'_> {
        Node::new(self.doc, self.id)
    }

    /// Sets `sliver_id`.
    pub fn set_sliver_id(&mut self, value: &str) {
        self.doc.set_attribute(self.id, "sliver_id", value);
    }

    /// Sets `component_id`.
    pub fn set_component_id(&mut self, value: &str) {
        self.doc.set_attribute(self.id, "component_id", value);
    }

    /// Sets `component_manager_id`.
    pub fn set_component_manager_id(&mut self, value: &str) {
        self.doc
            .set_attribute(self.id, "component_manager_id", value);
    }

    /// Sets `component_name`.
    pub fn set_component_name(&mut self, value: &str) {
        self.doc.set_attribute(self.id, "component_name", value);
    }

    /// Sets `exclusive`.
    pub fn set_exclusive(&mut self, value: bool) {
        self.doc
            .set_attribute(self.id, "exclusive", if value { "true" } else { "false" });
    }

    /// Appends `<host name=…>` unless a host of that name is already there.
    pub fn add_host(&mut self, name: &str) {
        if !self.as_view().hosts().any(|h| h == name) {
            let host = append_core(self.doc, self.id, "host");
            self.doc.set_attribute(host, "name", name);
        }
    }

    /// Appends `<sliver_type name=…>` when the node has no sliver type
    /// (the aggregate chose it); a requested one is kept as it is.
    pub fn add_sliver_type_if_missing(&mut self, name: &str) {
        if self.as_view().sliver_type().is_none() {
            let sliver_type = append_core(self.doc, self.id, "sliver_type");
            self.doc.set_attribute(sliver_type, "name", name);
        }
    }

    /// Writes `size` as the Emulab `<xen>` of the node's first
    /// `<sliver_type>` (replacing the one the request had), so the
    /// manifest shows the size the VM got. No-op without a sliver type.
    pub fn set_xen(&mut self, size: &VmSize) {
        let Some(sliver_type) = self.as_view().sliver_type().map(|s| s.id()) else {
            return;
        };
        let old: Vec<NodeId> = self
            .doc
            .elements_named(sliver_type, ns::EMULAB, "xen")
            .collect();
        for id in old {
            self.doc.remove(id);
        }
        let xen = self
            .doc
            .append_element(sliver_type, ns::EMULAB, "emulab", "xen");
        size.write(self.doc, xen);
    }

    /// The node's `<services>`, appended when it has none.
    pub fn services_mut(&mut self) -> ServicesMut<'_> {
        let id = super::child_or_append(self.doc, self.id, "services");
        ServicesMut::new(self.doc, id)
    }

    /// Edits the interface whose `client_id` is `client_id`, if the node has it.
    pub fn interface_mut(&mut self, client_id: &str) -> Option<InterfaceMut<'_>> {
        let id = self
            .as_view()
            .interfaces()
            .find(|i| i.client_id().as_deref() == Some(client_id))?
            .id();
        Some(InterfaceMut::new(self.doc, id))
    }
}

/// Write view of an `<interface>`.
#[derive(Debug)]
pub struct InterfaceMut<'a> {
    doc: &'a mut Document,
    id: NodeId,
}

impl<'a> InterfaceMut<'a> {
    /// Edits element `id` of `doc`, which must be an `<interface>`.
    pub fn new(doc: &'a mut Document, id: NodeId) -> Self {
        Self { doc, id }
    }

    /// Read access to the same interface.
    pub fn as_view(&self) -> Interface<'_> {
        Interface::new(self.doc, self.id)
    }

    /// Sets `sliver_id`.
    pub fn set_sliver_id(&mut self, value: &str) {
        self.doc.set_attribute(self.id, "sliver_id", value);
    }

    /// Sets `component_id`.
    pub fn set_component_id(&mut self, value: &str) {
        self.doc.set_attribute(self.id, "component_id", value);
    }

    /// Sets `mac_address`.
    pub fn set_mac_address(&mut self, value: &str) {
        self.doc.set_attribute(self.id, "mac_address", value);
    }

    /// Removes every `<ip>` of the interface (the addresses a request asked
    /// for, before writing the ones the node really has).
    pub fn remove_ips(&mut self) {
        let ips: Vec<NodeId> = self.as_view().ips().map(|ip| ip.id()).collect();
        for ip in ips {
            self.doc.remove(ip);
        }
    }

    /// Appends `<ip address=… netmask=… type=…>` unless an `<ip>` with that
    /// address is already there (a request may carry the address it wants).
    pub fn add_ip(&mut self, address: &str, netmask: Option<&str>, kind: Option<&str>) {
        if self
            .as_view()
            .ips()
            .any(|ip| ip.address().as_deref() == Some(address))
        {
            return;
        }
        let ip = append_core(self.doc, self.id, "ip");
        self.doc.set_attribute(ip, "address", address);
        if let Some(netmask) = netmask {
            self.doc.set_attribute(ip, "netmask", netmask);
        }
        if let Some(kind) = kind {
            self.doc.set_attribute(ip, "type", kind);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const V2: &str = r#"<rspec xmlns="http://www.protogeni.net/resources/rspec/2" type="request">
  <node virtual_id="pc" component_uuid="u-1" exclusive="1">
    <interface virtual_id="pc:if0"/>
  </node>
</rspec>"#;

    #[test]
    fn v2_virtual_id_and_uuid_are_read() {
        let doc = Document::parse(V2.as_bytes()).unwrap();
        let rspec = super::super::RSpec::new(&doc).unwrap();
        let node = rspec.nodes().next().unwrap();
        assert_eq!(node.client_id().as_deref(), Some("pc"));
        assert_eq!(node.component_uuid().as_deref(), Some("u-1"));
        assert_eq!(node.exclusive(), Some(true));
        let iface = node.interfaces().next().unwrap();
        assert_eq!(iface.client_id().as_deref(), Some("pc:if0"));
    }
}
