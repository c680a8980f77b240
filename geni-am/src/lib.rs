//! The geni-am aggregate manager: the service and the `geni-am` binary.
//!
//! The modules form layers, each importing only those below it (the table
//! is in docs/ARCHITECTURE.md, and `tests/layers.rs` checks the sources):
//! `model` at the bottom; `config` (plain data) and `store` on it; `core`
//! (the aggregate's rules) on the store; `api` on the core and `server` on
//! the api; `jobs` drive the backend for the core; `service` builds them
//! all from a configuration; `cli` is the binary's commands. `geni` and
//! `time` are leaves the layers share, and so is `telemetry` (the
//! metrics); `operator` is the operator's HTTP endpoint (metrics, health,
//! dashboard) over the core and the store; `client` is the XML-RPC client
//! of `bench` and the tests.

pub mod api;
pub mod bench;
pub mod cli;
pub mod client;
pub mod config;
pub mod core;
pub mod geni;
pub mod jobs;
pub mod model;
pub mod operator;
pub mod server;
pub mod service;
pub mod store;
pub mod telemetry;
pub mod time;
