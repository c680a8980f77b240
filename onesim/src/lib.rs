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

#![warn(missing_docs)]

pub mod cloud;
pub mod docs;
pub mod methods;
pub mod networks;
pub mod server;
pub mod template;
pub mod version;
pub mod versions;
pub mod xml;
pub mod xmlrpc;

pub use cloud::Delays;
pub use server::{OneSim, SimSettings, StartError, TransportFault};
pub use version::Version;
