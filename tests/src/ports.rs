//! Loopback ports for servers a test starts as separate processes.
//!
//! A port is picked outside the kernel's ephemeral range
//! (`/proc/sys/net/ipv4/ip_local_port_range`): a port of that range, as
//! binding port 0 picks one, can become the source port of one of the
//! many client connections the tests make between the pick and the
//! server's own bind, which then fails with "Address already in use".
//! Outside the range only listeners take ports; the pick starts at a
//! random place so that tests running at the same time rarely try the
//! same one, and skips every port something listens on already. A port
//! is handed out once per test process: between the pick and the bind of
//! the server it is for (a process start, a second or more under load)
//! nothing listens on it, so without that record the test threads of one
//! suite could be given the same port, and the second server fail with
//! "Address already in use" or, worse, the test's wait for it connect to
//! the first. When the range leaves no room (a machine tuned to
//! `1024 65535`), port 0 picks as before.
//!
//! Used by the `tests` crate and, by path, by the `geni-am` and `onesim`
//! suites that start their binaries.

use std::collections::BTreeSet;
use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::net::{Ipv4Addr, TcpListener};
use std::ops::RangeInclusive;
use std::sync::Mutex;

/// The lowest port handed out: above the ports of the usual services a
/// test machine runs (PostgreSQL, MariaDB, Redis, RabbitMQ's AMQP,
/// Mosquitto, NATS); the higher ones of RabbitMQ's management and
/// clustering, and any other service, listen already and are skipped.
const LOWEST: u16 = 10_000;
/// The ephemeral range when the kernel does not say (Linux's default).
const EPHEMERAL_DEFAULT: (u16, u16) = (32_768, 60_999);

/// The ports [`free_port`] handed out in this process.
static HANDED_OUT: Mutex<BTreeSet<u16>> = Mutex::new(BTreeSet::new());

/// A loopback port nobody listens on right now and that this process
/// was not given before, outside the ephemeral range when there is room.
pub fn free_port() -> u16 {
    let start = RandomState::new().build_hasher().finish();
    let pools = pools(ephemeral_range());
    let mut handed_out = HANDED_OUT.lock().unwrap_or_else(|e| e.into_inner());
    first_free(start, &pools, |port| {
        !handed_out.contains(&port) && TcpListener::bind((Ipv4Addr::LOCALHOST, port)).is_ok()
    })
    .inspect(|&port| {
        handed_out.insert(port);
    })
    .unwrap_or_else(|| {
        TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .and_then(|listener| listener.local_addr())
            .expect("a free loopback port")
            .port()
    })
}

/// The ports from [`LOWEST`] up that lie below or above the ephemeral
/// range `(first, last)`.
fn pools((first, last): (u16, u16)) -> Vec<RangeInclusive<u16>> {
    let mut pools = Vec::new();
    if first > LOWEST {
        pools.push(LOWEST..=first - 1);
    }
    if last < u16::MAX {
        pools.push(last.max(LOWEST - 1) + 1..=u16::MAX);
    }
    pools
}

/// The first port of `pools` that `is_free`, trying them in turn from
/// the one `start` falls on and wrapping around.
fn first_free(
    start: u64,
    pools: &[RangeInclusive<u16>],
    is_free: impl Fn(u16) -> bool,
) -> Option<u16> {
    let ports: Vec<u16> = pools.iter().cloned().flatten().collect();
    let span = ports.len();
    if span == 0 {
        return None;
    }
    let first = (start % span as u64) as usize;
    (0..span)
        .map(|step| ports[(first + step) % span])
        .find(|&port| is_free(port))
}

/// The kernel's ephemeral range, first and last port.
fn ephemeral_range() -> (u16, u16) {
    std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|range| {
            let mut ports = range.split_whitespace().map(str::parse);
            Some((ports.next()?.ok()?, ports.next()?.ok()?))
        })
        .unwrap_or(EPHEMERAL_DEFAULT)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_port_is_outside_the_ephemeral_range_and_bindable() {
        let (first, last) = ephemeral_range();
        let port = free_port();
        if !pools((first, last)).is_empty() {
            assert!(
                !(first..=last).contains(&port),
                "{port} in {first}..={last}"
            );
            assert!(port >= LOWEST, "{port}");
        }
        TcpListener::bind((Ipv4Addr::LOCALHOST, port)).expect("the port is free");
    }

    #[test]
    fn a_port_is_not_handed_out_twice_while_nothing_listens_on_it() {
        if pools(ephemeral_range()).is_empty() {
            return;
        }
        let picks: Vec<u16> = std::thread::scope(|scope| {
            let threads: Vec<_> = (0..8)
                .map(|_| scope.spawn(|| (0..100).map(|_| free_port()).collect::<Vec<_>>()))
                .collect();
            threads
                .into_iter()
                .flat_map(|thread| thread.join().expect("picking thread"))
                .collect()
        });
        let distinct: BTreeSet<u16> = picks.iter().copied().collect();
        assert_eq!(distinct.len(), picks.len(), "{picks:?}");
    }

    #[test]
    fn the_pools_lie_below_and_above_the_range() {
        assert_eq!(pools((32_768, 60_999)), [10_000..=32_767, 61_000..=65_535]);
        assert_eq!(pools((1_024, 65_535)), []);
        assert_eq!(pools((1_024, 60_999)), [61_000..=65_535]);
        assert_eq!(pools((10_000, 65_535)), []);
        assert_eq!(pools((10_001, 65_535)), [10_000..=10_000]);
    }

    #[test]
    fn taken_ports_are_skipped_from_the_random_start_on() {
        let pools = [10_000..=10_009, 20_000..=20_009];
        let taken = |port: u16| (10_005..=10_009).contains(&port);
        assert_eq!(first_free(5, &pools, |p| !taken(p)), Some(20_000));
        assert_eq!(first_free(0, &pools, |p| !taken(p)), Some(10_000));
        assert_eq!(first_free(u64::MAX, &pools, |_| true), Some(20_005));
    }

    #[test]
    fn the_search_wraps_around_and_ends_when_all_are_taken() {
        let pools = [10_000..=10_009];
        assert_eq!(first_free(8, &pools, |p| p == 10_002), Some(10_002));
        assert_eq!(first_free(3, &pools, |_| false), None);
        assert_eq!(first_free(3, &[], |_| true), None);
    }
}
