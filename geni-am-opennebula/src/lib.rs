//! The OpenNebula backend: a [`geni_am_backend::Compute`] implementation that
//! drives a real `oned` over its XML-RPC API (the OpenNebula XML-RPC API
//! reference).
//!
//! [`rpc`] is the protocol layer: calls, the reply shapes of every server
//! version, error codes and their classification, the session, timeouts and
//! retries. [`docs`] reads the XML documents of its answers into typed
//! values and classifies VM states. [`config`] is the `[backend.opennebula]`
//! section, [`template`] writes the extra templates sent to oned,
//! [`context`] the CONTEXT a VM boots with and [`names`] the names of VMs
//! and networks; [`driver`] turns slivers into VMs and link networks on top
//! of them.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod check;
pub mod config;
pub mod context;
pub mod docs;
pub mod driver;
pub mod names;
pub mod rpc;
pub mod template;

#[cfg(test)]
mod testing;

pub use driver::OpenNebulaCloud;
