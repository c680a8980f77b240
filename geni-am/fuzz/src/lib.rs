//! The bodies of the am fuzz targets, one function per target. The fuzz
//! targets call them with libFuzzer's inputs; `geni-am/tests/fuzz_replay.rs`
//! includes this file and calls them with every committed seed and crash
//! input, so a regression fails `cargo test`.

pub mod config;
pub mod xmlrpc;
