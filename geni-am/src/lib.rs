//! The geni-am aggregate manager.
//!
//! The service itself (config, server, api, core, store, jobs, service) is
//! built here; for now the library holds the command-line tools for people.

pub mod api;
pub mod bench;
pub mod cli;
pub mod client;
pub mod config;
pub mod core;
pub mod geni;
pub mod jobs;
pub mod model;
pub mod server;
pub mod service;
pub mod store;
pub mod time;
