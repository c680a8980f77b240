//! The opstate extension of advertisements: `rspec_opstate` with the
//! sliver types it covers and its states, actions and automatic transitions.

use super::{element_view, ns};
use std::borrow::Cow;

element_view! {
    /// Read view of an `<rspec_opstate>`: one operational state machine.
    Opstate {
        /// `aggregate_manager_id`: the AM the machine belongs to.
        aggregate_manager_id => "aggregate_manager_id",
        /// `start`: the state a sliver is in right after provisioning.
        start => "start",
    }
}

impl<'a> Opstate<'a> {
    /// The `name` of every `<sliver_type>` the machine applies to.
    pub fn sliver_types(&self) -> impl Iterator<Item = Cow<'a, str>> + use<'a> {
        let doc = self.doc;
        doc.elements_named(self.id, ns::OPSTATE, "sliver_type")
            .filter_map(move |id| doc.attribute(id, "name"))
    }

    /// Every `<state>`.
    pub fn states(&self) -> impl Iterator<Item = OpstateState<'a>> + use<'a> {
        let doc = self.doc;
        doc.elements_named(self.id, ns::OPSTATE, "state")
            .map(move |id| OpstateState::new(doc, id))
    }

    /// The state named `name`.
    pub fn state(&self, name: &str) -> Option<OpstateState<'a>> {
        self.states().find(|s| s.name().as_deref() == Some(name))
    }
}

element_view! {
    /// Read view of an opstate `<state>`.
    OpstateState {
        /// `name`, e.g. `geni_ready`.
        name => "name",
    }
}

impl<'a> OpstateState<'a> {
    /// Every `<action>`: what the experimenter may do here.
    pub fn actions(&self) -> impl Iterator<Item = OpstateAction<'a>> + use<'a> {
        let doc = self.doc;
        doc.elements_named(self.id, ns::OPSTATE, "action")
            .map(move |id| OpstateAction::new(doc, id))
    }

    /// Every `<wait>`: where the sliver goes on its own, as
    /// (`type`, `next`) pairs.
    pub fn waits(&self) -> impl Iterator<Item = (Cow<'a, str>, Cow<'a, str>)> + use<'a> {
        let doc = self.doc;
        doc.elements_named(self.id, ns::OPSTATE, "wait")
            .filter_map(move |id| Some((doc.attribute(id, "type")?, doc.attribute(id, "next")?)))
    }

    /// The text of its `<description>`, trimmed.
    pub fn description(&self) -> Option<String> {
        description(self.doc, self.id)
    }
}

element_view! {
    /// Read view of an opstate `<action>`.
    OpstateAction {
        /// `name`, e.g. `geni_start`.
        name => "name",
        /// `next`: the state the action leads to.
        next => "next",
    }
}

impl OpstateAction<'_> {
    /// The text of its `<description>`, trimmed.
    pub fn description(&self) -> Option<String> {
        description(self.doc, self.id)
    }
}

/// The trimmed text of the opstate `<description>` child of `id`.
fn description(doc: &crate::tree::Document, id: crate::tree::NodeId) -> Option<String> {
    let element = doc.elements_named(id, ns::OPSTATE, "description").next()?;
    Some(doc.text(element).trim().to_owned())
}
