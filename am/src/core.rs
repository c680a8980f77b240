//! The aggregate's rules on the store: allocation and operational state
//! machines (AMAPI.md §2.15), expiry rules (§2.6, §2.17), capacity
//! reservation, manifests and the advertisement.

pub mod types;
