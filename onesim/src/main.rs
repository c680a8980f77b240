//! `onesim`: runs the OpenNebula simulator as a separate process, e.g.
//! `onesim --version 6.10.0 --listen 127.0.0.1:2633`, until interrupted.

use clap::Parser;
use onesim::{Delays, OneSim, SimSettings};
use std::net::SocketAddr;
use std::time::Duration;

/// OpenNebula simulator: an XML-RPC server that answers like oned.
#[derive(Debug, Parser)]
#[command(name = "onesim", disable_version_flag = true)]
struct Args {
    /// OpenNebula release to simulate (5.8, 5.10.x, 5.12.x, 6.x, 7.4.0 …).
    #[arg(long, default_value = "7.4.0")]
    version: String,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:2633")]
    listen: SocketAddr,
    /// Milliseconds each life-cycle phase takes (PENDING, PROLOG, BOOT, SHUTDOWN, EPILOG).
    #[arg(long, default_value_t = 0)]
    phase_ms: u64,
}

fn main() {
    let args = Args::parse();
    let phase = Duration::from_millis(args.phase_ms);
    let delays = Delays::uniform(phase, phase);
    let settings = SimSettings {
        version: args.version,
        delays,
        clock: None,
        listen: Some(args.listen),
    };
    match OneSim::try_start(settings) {
        Ok(sim) => {
            eprintln!(
                "onesim: OpenNebula simulator listening on {}",
                sim.endpoint()
            );
            loop {
                std::thread::park();
            }
        }
        Err(e) => {
            eprintln!("onesim: {e}");
            std::process::exit(1);
        }
    }
}
