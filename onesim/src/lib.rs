//! onesim — an OpenNebula simulator for tests.
//!
//! No `oned` runs in CI, so the OpenNebula backend is tested against this
//! simulator: a real HTTP XML-RPC server, started inside a test process
//! ([`OneSim::start`]) or as the `onesim` binary, that answers like oned of a
//! chosen release (5.x, 6.x, 7.x). For OpenNebula 7.4.0 its replies equal the
//! recorded traffic of a real oned byte for byte (see `tests/recorded.rs`);
//! its documents validate against each release's official schemas. Tests
//! steer it through a control API: a settable clock, life-cycle delays,
//! injected boot failures, quotas, capacity limits and transport faults, and
//! inspection of the VMs, networks, templates and calls it received.
//!
//! ```
//! use onesim::{Delays, OneSim, SimSettings};
//! use std::time::Duration;
//!
//! let sim = OneSim::start(SimSettings {
//!     version: "6.10.0".into(),
//!     delays: Delays::uniform(Duration::from_millis(200), Duration::from_millis(50)),
//!     ..SimSettings::default()
//! });
//! // Point the backend at `sim.endpoint()` with the session "oneadmin:onetest".
//! assert!(sim.endpoint().starts_with("http://127.0.0.1:"));
//! sim.fail_next_boots(1);
//! assert_eq!(sim.call_count("one.template.instantiate"), 0);
//! ```
//!
//! Inside, each module imports only those below it: `xml`, `template` and
//! `version` at the bottom; `cloud` (the inventory, the life-cycle engine
//! with the VM states, and the journal of calls) with `faults` (what a test
//! injects) and `refusal` (oned's error replies); `docs`, `networks` and
//! `methods`, which answer the XML-RPC calls; `server` (HTTP) and `sim`
//! (the [`OneSim`] handle) on top.

#![warn(missing_docs)]
#![forbid(unsafe_code)]

mod cloud;
mod docs;
mod faults;
mod methods;
mod networks;
mod refusal;
mod server;
mod sim;
mod template;
mod version;
mod versions;
pub mod xml;
mod xmlrpc;

pub use cloud::lifecycle::Delays;
pub use cloud::seed;
pub use cloud::state::{LcmState, VmState};
pub use faults::TransportFault;
pub use sim::{OneSim, SimSettings, StartError};
pub use version::Version;
