//! What the objects of oned's pools that the simulator keeps as documents
//! (hosts, virtual networks) share: an ID and the document `*.info` shows.

use crate::xml::Element;

/// An object's ID and stored document.
#[derive(Debug, Clone)]
pub struct Record {
    id: i32,
    doc: Element,
}

impl Record {
    /// The record of object `id`.
    pub fn new(id: i32, doc: Element) -> Self {
        Record { id, doc }
    }

    /// The document, to change.
    pub fn doc_mut(&mut self) -> &mut Element {
        &mut self.doc
    }
}

/// An object kept as a [`Record`]: its ID, document and NAME.
pub trait Pooled {
    /// The object's record.
    fn record(&self) -> &Record;

    /// ID.
    fn id(&self) -> i32 {
        self.record().id
    }

    /// The document as stored.
    fn doc(&self) -> &Element {
        &self.record().doc
    }

    /// NAME.
    fn name(&self) -> &str {
        self.doc().value_at("NAME")
    }
}
