//! The read side of the OpenNebula backend: the XML documents `oned` returns
//! as element `[1]` of a successful reply (a string) turned into typed values,
//! and the classification of a VM's (STATE, LCM_STATE) pair (the
//! OpenNebula XML-RPC API reference and its Virtual Machine States reference).
//!
//! Every document comes from the network and is parsed with the hardened
//! [`geni_rspec::tree`] parser under [`LIMITS`]: no DOCTYPE, no entities, bounded
//! size, depth and node count. The parsers accept every layout the recorded
//! servers produce (OpenNebula 2.x fixtures to 7.4): CDATA-wrapped or plain
//! values, pretty-printed or unformatted bodies, a stray `xmlns` on the root,
//! single or repeated NIC/DISK/AR elements, and empty pools. A missing
//! required element (an object's `ID`, a VM's `STATE`) or a number that is
//! not one is a [`DocError`] naming the document, the element path and the
//! line.

mod element;
mod host;
mod image;
mod phase;
mod quota;
mod template;
mod user;
mod vm;
mod vnet;

pub use host::{HostDoc, parse_host, parse_host_pool};
pub use image::{ImageDoc, parse_image, parse_image_pool};
pub use phase::{VmPhase, phase};
pub use quota::{Limit, NetworkQuota, Quotas, Usage, VmQuota};
pub use template::{TemplateDoc, parse_template, parse_template_pool};
pub use user::{UserDoc, parse_user, parse_user_pool};
pub use vm::{NicDoc, VmDoc, parse_vm, parse_vm_pool};
pub use vnet::{ArDoc, LeaseDoc, VnetDoc, parse_vnet, parse_vnet_pool};

use geni_rspec::{Limits, ParseError};

/// Parser limits for `oned` documents. A full VM body has a few hundred
/// nodes and nests about six levels; the bounds leave room for pools of
/// thousands of objects while refusing pathological input.
pub const LIMITS: Limits = Limits {
    max_bytes: 64 * 1024 * 1024,
    max_depth: 32,
    max_attributes: 16,
    max_nodes: 4_000_000,
};

/// Why an `oned` document could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("OpenNebula {document} document: {problem}")]
pub struct DocError {
    /// The root element the caller expected (`VM`, `HOST_POOL`, …).
    pub document: &'static str,
    /// What is wrong.
    pub problem: DocProblem,
}

/// What is wrong with a document; every variant names where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DocProblem {
    /// Not well-formed, or refused by the hardened parser (DOCTYPE, entity,
    /// limits, truncation).
    #[error("not accepted as XML: {0}")]
    Malformed(ParseError),
    /// The document element is another kind of object; the call or its
    /// reply got mixed up.
    #[error("the root element is <{found}>, expected <{expected}>")]
    WrongRoot {
        /// The root element expected.
        expected: &'static str,
        /// The root element found.
        found: String,
    },
    /// A required element is absent or empty.
    #[error("line {line}: required element {path} is missing or empty")]
    Missing {
        /// Slash-separated element path, e.g. `VM_POOL/VM[2]/STATE`.
        path: String,
        /// 1-based line of the enclosing element.
        line: u32,
    },
    /// An element that holds a number holds something else.
    #[error("line {line}: {path} holds {value:?}, not an integer")]
    NotANumber {
        /// Slash-separated element path.
        path: String,
        /// 1-based line of the element.
        line: u32,
        /// The text found (cut to 64 characters).
        value: String,
    },
}

#[cfg(test)]
mod tests;
