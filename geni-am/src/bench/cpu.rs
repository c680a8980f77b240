//! The CPU time the client side of a run used, to say whether the client
//! rather than the aggregate may have been the limit. Read from
//! `/proc/self/stat` (proc(5)): `utime` and `stime` of this process and
//! `cutime` and `cstime` of its waited-for children, the kernel's accounting
//! that getrusage(2) reports as `RUSAGE_SELF` and `RUSAGE_CHILDREN`, in
//! clock ticks of 1/100 s (`USER_HZ`), without `unsafe` in this crate.

use std::time::Duration;

/// The length of a clock tick of `/proc/self/stat` (`USER_HZ` is 100).
const TICK: Duration = Duration::from_millis(10);
/// The share of the machine's cores above which the client may be the
/// limit: the aggregate under test runs on the same machine, so a client
/// using half of it leaves the server no more than it takes.
const CLIENT_BOUND_SHARE: f64 = 0.5;

/// CPU time used so far by this process and its waited-for children;
/// `None` where `/proc/self/stat` cannot be read (not Linux).
pub fn used() -> Option<Duration> {
    parse_stat(&std::fs::read_to_string("/proc/self/stat").ok()?)
}

/// CPU time used since `before` (a reading of [`used`]).
pub fn since(before: Option<Duration>) -> Option<Duration> {
    used()
        .zip(before)
        .map(|(after, before)| after.saturating_sub(before))
}

/// `utime + stime + cutime + cstime` of a `/proc/PID/stat` line.
fn parse_stat(stat: &str) -> Option<Duration> {
    // The command name (field 2) is in parentheses and may hold spaces:
    // the fields are counted after its closing parenthesis, from field 3.
    let (_, rest) = stat.rsplit_once(')')?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = (14..=17)
        .map(|field| fields.get(field - 3)?.parse::<u32>().ok())
        .sum::<Option<u32>>()?;
    Some(TICK * ticks)
}

/// The cores this process may run on.
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// One line saying how many cores the client used over `wall` and
/// whether it may have been the limit.
pub fn verdict(cpu: Duration, wall: Duration, cores: usize) -> String {
    let used = cpu.as_secs_f64() / wall.as_secs_f64().max(f64::EPSILON);
    let judgement = if used >= CLIENT_BOUND_SHARE * cores as f64 {
        "the client may be the limit"
    } else {
        "the client was not the limit"
    };
    format!("client CPU {used:.2} of {cores} cores: {judgement}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_time_sums_own_and_children_ticks_after_the_command_name() {
        let stat = "4242 (geni am (x)) S 1 2 3 4 5 6 7 8 9 10 150 50 30 20 20 0 1";
        assert_eq!(parse_stat(stat), Some(Duration::from_millis(2500)));
        assert_eq!(parse_stat("4242 (short) S 1 2"), None);
    }

    #[test]
    fn the_cpu_time_of_a_busy_process_is_read_on_linux() {
        let spin = std::time::Instant::now();
        while spin.elapsed() < Duration::from_millis(30) {
            std::hint::black_box(0u64);
        }
        if cfg!(target_os = "linux") {
            assert!(used().is_some_and(|cpu| cpu > Duration::ZERO));
        }
    }

    #[test]
    fn a_client_using_half_the_cores_or_more_may_be_the_limit() {
        let second = Duration::from_secs(1);
        let bound = verdict(Duration::from_millis(1700), second, 2);
        assert_eq!(
            bound,
            "client CPU 1.70 of 2 cores: the client may be the limit"
        );
        let idle = verdict(Duration::from_millis(300), second, 2);
        assert!(idle.ends_with("the client was not the limit"), "{idle}");
    }
}
