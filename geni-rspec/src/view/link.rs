//! `<link>` and what it contains: component managers, link types, interface
//! references and link properties.

use super::{append_core, children_named, element_view};
use crate::tree::{Document, NodeId};
use std::borrow::Cow;

element_view! {
    /// Read view of a `<link>`.
    Link + client_id {
        /// `sliver_id` (manifests).
        sliver_id => "sliver_id",
        /// `vlantag` (manifests).
        vlantag => "vlantag",
        /// `component_id` (advertisements).
        component_id => "component_id",
    }
}

impl<'a> Link<'a> {
    /// The `name` of every `<component_manager>`: the CMs the link spans.
    pub fn component_managers(&self) -> impl Iterator<Item = Cow<'a, str>> + use<'a> {
        let doc = self.doc;
        children_named(doc, self.id, "component_manager")
            .filter_map(move |id| doc.attribute(id, "name"))
    }

    /// Every `<link_type>`.
    pub fn link_types(&self) -> impl Iterator<Item = LinkType<'a>> + use<'a> {
        let doc = self.doc;
        children_named(doc, self.id, "link_type").map(move |id| LinkType::new(doc, id))
    }

    /// Every `<interface_ref>`: the link's end points.
    pub fn interface_refs(&self) -> impl Iterator<Item = InterfaceRef<'a>> + use<'a> {
        let doc = self.doc;
        children_named(doc, self.id, "interface_ref").map(move |id| InterfaceRef::new(doc, id))
    }

    /// Every `<property>`.
    pub fn properties(&self) -> impl Iterator<Item = Property<'a>> + use<'a> {
        let doc = self.doc;
        children_named(doc, self.id, "property").map(move |id| Property::new(doc, id))
    }
}

element_view! {
    /// Read view of a `<link_type>`.
    LinkType {
        /// `name`, e.g. `lan` or `vlan`.
        name => "name",
        /// `class`.
        class => "class",
    }
}

element_view! {
    /// Read view of an `<interface_ref>`.
    InterfaceRef + client_id {
        /// `component_id`.
        component_id => "component_id",
        /// `sliver_id` (manifests).
        sliver_id => "sliver_id",
    }
}

element_view! {
    /// Read view of a link `<property>`: one direction between two interfaces.
    Property {
        /// `source_id`: client_id of the sending interface.
        source_id => "source_id",
        /// `dest_id`: client_id of the receiving interface.
        dest_id => "dest_id",
        /// `capacity` in kbit/s.
        capacity => "capacity",
        /// `latency` in ms.
        latency => "latency",
        /// `packet_loss` as a fraction.
        packet_loss => "packet_loss",
    }
}

/// Write view of a `<link>`.
#[derive(Debug)]
pub struct LinkMut<'a> {
    doc: &'a mut Document,
    id: NodeId,
}

impl<'a> LinkMut<'a> {
    /// Edits element `id` of `doc`, which must be a `<link>`.
    pub fn new(doc: &'a mut Document, id: NodeId) -> Self {
        Self { doc, id }
    }

    /// Read access to the same link.
    pub fn as_view(&self) -> Link<'_> {
        Link::new(self.doc, self.id)
    }

    /// Sets `sliver_id`.
    pub fn set_sliver_id(&mut self, value: &str) {
        self.doc.set_attribute(self.id, "sliver_id", value);
    }

    /// Sets `vlantag`.
    pub fn set_vlantag(&mut self, value: &str) {
        self.doc.set_attribute(self.id, "vlantag", value);
    }

    /// Appends `<component_manager name=…>` unless the link already names it.
    pub fn add_component_manager(&mut self, name: &str) {
        if !self.as_view().component_managers().any(|cm| cm == name) {
            let cm = append_core(self.doc, self.id, "component_manager");
            self.doc.set_attribute(cm, "name", name);
        }
    }

    /// Sets `sliver_id` and `component_id` on every `<interface_ref>` whose
    /// `client_id` is `client_id`.
    pub fn annotate_interface_ref(
        &mut self,
        client_id: &str,
        sliver_id: Option<&str>,
        component_id: Option<&str>,
    ) {
        let refs: Vec<NodeId> = self
            .as_view()
            .interface_refs()
            .filter(|r| r.client_id().as_deref() == Some(client_id))
            .map(|r| r.id())
            .collect();
        for id in refs {
            if let Some(value) = sliver_id {
                self.doc.set_attribute(id, "sliver_id", value);
            }
            if let Some(value) = component_id {
                self.doc.set_attribute(id, "component_id", value);
            }
        }
    }
}
