//! The aggregate's vocabulary, at the bottom of the crate: the states of
//! the GENI AM API's state machines and of the queued backend work (as
//! enums with their exact stored text), slice and sliver URNs and how
//! sliver URNs are named, what the AM reports about a sliver, who is
//! calling, and the per-sliver node plan the workers read. It imports
//! nothing of the crate above it; the store maps these types to columns
//! and the core, api and jobs speak them.

pub mod plan;
mod sliver;
mod states;
mod urn;

pub use geni_am_backend::{AddressRange, UserKeys};
pub use sliver::{
    InterfaceAddresses, LoginEndpoint, Principal, Selector, SliverAnnotations, SliverInfo,
};
pub use states::{AllocationState, EventKind, JobKind, JobState, OperationalState};
pub use urn::{SliceUrn, SliverUrn, UrnRefusal};
