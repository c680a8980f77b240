//! The OpenNebula backend: a [`crate::backend::Compute`] implementation that
//! drives a real `oned` over its XML-RPC API (OPENNEBULA.md).
//!
//! [`rpc`] is the protocol layer: calls, the reply shapes of every server
//! version, error codes and their classification, the session, timeouts and
//! retries. [`docs`] reads the XML documents of its answers into typed
//! values and classifies VM states. The driver on top of them turns slivers
//! into VMs and link networks.

pub mod docs;
pub mod rpc;
