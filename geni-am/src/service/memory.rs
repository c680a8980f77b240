//! Handing freed memory back to the operating system. glibc's allocator
//! keeps what a burst of calls freed inside its arenas (one per thread that
//! allocated, up to eight per core), so after a load the resident size
//! stays near its peak although the heap is small again; the blocking
//! threads that served the burst exit, their arenas stay. A thread looks at
//! the arenas' free bytes and the resident size every few seconds and, when
//! either says memory was freed that may still be resident ([`Trimmer`]),
//! asks glibc to return it (`malloc_trim`). Measured in docs/PERFORMANCE.md,
//! "Memory". The arenas are also bounded in number ([`bound_arenas`]): free
//! space spread over sixteen of them was half the resident size of an
//! aggregate holding many slivers. And the server runs without glibc's
//! per-thread caches of freed chunks ([`restart_without_thread_caches`]):
//! each idle thread kept up to seven chunks of every small size, scattered
//! over pages the trim could otherwise have returned. With another C
//! library there is nothing to do.

use std::time::Duration;

/// How often the free bytes and the resident size are looked at.
pub const TRIM_INTERVAL: Duration = Duration::from_secs(10);

/// Growth of the free bytes, or of the resident size, that asks for a trim.
pub const TRIM_THRESHOLD: usize = 1 << 20;

/// The arenas the allocator may create: threads beyond that share them.
/// Each arena keeps its own free space; glibc's default is eight per core.
/// Two and four cost server CPU under a hundred clients (threads waiting
/// for an arena: 9 % more CPU with two; with four, 5–20 % fewer
/// lifecycles/s in an open load); eight kept the rate of glibc's sixteen and
/// held 100,000 slivers in 93 MB at rest, as four did (docs/PERFORMANCE.md,
/// "A hundred thousand slivers reached" and "The third session's merge").
pub const MAX_ARENAS: i32 = 8;

#[cfg(all(target_os = "linux", target_env = "gnu"))]
mod glibc {
    /// Sets how many arenas may exist; true when the allocator took it.
    pub fn set_arena_max(arenas: i32) -> bool {
        // SAFETY: mallopt only records the parameter under the main
        // arena's lock; arenas already created stay.
        unsafe { libc::mallopt(libc::M_ARENA_MAX, arenas) == 1 }
    }

    /// Bytes the allocator holds free, over every arena.
    pub fn free_bytes() -> usize {
        // SAFETY: mallinfo2 takes no arguments and only reads the
        // allocator's statistics under its arena locks.
        unsafe { libc::mallinfo2() }.fordblks
    }

    /// The process's resident bytes and, of them, the file-backed and
    /// shared ones (`/proc/self/statm`); 0 when they cannot be read.
    pub fn resident_and_shared() -> (usize, usize) {
        let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
        let mut pages = statm
            .split_whitespace()
            .skip(1)
            .map(|n| n.parse::<usize>().unwrap_or(0));
        // SAFETY: sysconf only reads a constant of the system.
        let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(4096);
        let resident = pages.next().unwrap_or(0);
        let shared = pages.next().unwrap_or(0);
        (resident * page, shared * page)
    }

    /// The process's anonymous resident bytes: resident, less file-backed
    /// and shared.
    pub fn anonymous_resident() -> usize {
        let (resident, shared) = resident_and_shared();
        resident.saturating_sub(shared)
    }

    /// Returns the free memory of every arena to the operating system.
    pub fn trim() {
        // SAFETY: malloc_trim takes each arena's lock while it releases
        // free pages; no memory in use is touched.
        unsafe {
            libc::malloc_trim(0);
        }
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
mod glibc {
    pub fn set_arena_max(_arenas: i32) -> bool {
        false
    }

    pub fn free_bytes() -> usize {
        0
    }

    pub fn anonymous_resident() -> usize {
        0
    }

    pub fn trim() {}
}

/// glibc's tunable for how many freed chunks of each small size a thread
/// keeps for itself (seven unless set).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const THREAD_CACHE: &str = "glibc.malloc.tcache_count";

/// `GLIBC_TUNABLES` as the server wants it, given the environment's
/// value: the thread caches switched off, beside whatever else it sets;
/// `None` when the value already sets them (the operator's choice, or this
/// process restarted) or cannot be read as text (left alone).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn tunables_without_thread_caches(current: Option<&std::ffi::OsStr>) -> Option<String> {
    let current = match current {
        None => "",
        Some(value) => value.to_str()?,
    };
    let names_it = current
        .split(':')
        .any(|setting| setting.split('=').next() == Some(THREAD_CACHE));
    match (names_it, current.is_empty()) {
        (true, _) => None,
        (false, true) => Some(format!("{THREAD_CACHE}=0")),
        (false, false) => Some(format!("{current}:{THREAD_CACHE}=0")),
    }
}

/// Runs this program again in this process (same pid, arguments and
/// descriptors) with glibc's per-thread caches switched off, since glibc
/// reads its tunables only when a program starts: a hundred clients left
/// 2–3 MB of pages held by idle threads' cached chunks, at no CPU cost
/// measured (docs/PERFORMANCE.md, "What a load leaves behind"). Returns
/// `Ok` without doing so when `GLIBC_TUNABLES` already sets them (so an
/// operator can give another value) and in secure-execution mode (a
/// binary given file capabilities: glibc then drops the tunables, so a
/// restart would never see them), and the error when the program could
/// not be run again. Call it before any thread starts. A profiler that
/// follows the program from its start (heaptrack) loses it at the restart:
/// set `GLIBC_TUNABLES` for it.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn restart_without_thread_caches() -> std::io::Result<()> {
    use std::os::unix::process::CommandExt;
    // SAFETY: getauxval only reads the auxiliary vector the kernel gave.
    if unsafe { libc::getauxval(libc::AT_SECURE) } != 0 {
        return Ok(());
    }
    let Some(tunables) =
        tunables_without_thread_caches(std::env::var_os("GLIBC_TUNABLES").as_deref())
    else {
        return Ok(());
    };
    let mut args = std::env::args_os();
    let program = args.next().unwrap_or_else(|| "geni-am".into());
    let error = std::process::Command::new("/proc/self/exe")
        .arg0(program)
        .args(args)
        .env("GLIBC_TUNABLES", tunables)
        .exec();
    // The standard library gave SIGPIPE its default action for the new
    // program; this one goes on, and must not die writing to a closed
    // connection.
    // SAFETY: setting a signal to be ignored has no handler to run.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
    Err(error)
}

/// With another C library there is nothing to switch off.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn restart_without_thread_caches() -> std::io::Result<()> {
    Ok(())
}

/// Bounds the allocator's arenas to [`MAX_ARENAS`], unless the
/// environment sets glibc's own `MALLOC_ARENA_MAX`, which then stands.
/// Called before the server starts its threads, since arenas once created
/// stay; true when the bound was set (false with another C library).
pub fn bound_arenas() -> bool {
    std::env::var_os("MALLOC_ARENA_MAX").is_none() && glibc::set_arena_max(MAX_ARENAS)
}

/// Decides when to trim, from two readings taken at every look: the bytes
/// the arenas hold free and the anonymous resident size. Free bytes grown
/// beyond the least they were since the last trim are memory freed since,
/// perhaps resident (pages a trim released still count as free, so the
/// free bytes alone would trim again and again for nothing). A burst that
/// took free space and gave it back between two looks leaves the free
/// bytes as they were, but the pages it touched resident again: the
/// resident size grown beyond what the last trim left says so. A quiet
/// server moves neither and is not trimmed.
#[derive(Debug)]
pub struct Trimmer {
    threshold: usize,
    free_mark: usize,
    resident_mark: usize,
}

impl Trimmer {
    /// Trims when either reading grew by more than `threshold` bytes.
    pub fn new(threshold: usize) -> Trimmer {
        Trimmer {
            threshold,
            free_mark: 0,
            resident_mark: 0,
        }
    }

    /// Takes the readings and trims if they ask for it; true when it
    /// trimmed.
    pub fn tick(&mut self) -> bool {
        let wants = self.look(glibc::free_bytes(), glibc::anonymous_resident());
        if wants {
            glibc::trim();
            self.trimmed(glibc::free_bytes(), glibc::anonymous_resident());
        }
        wants
    }

    /// Whether the readings `free` and `resident` ask for a trim.
    fn look(&mut self, free: usize, resident: usize) -> bool {
        let freed = free > self.free_mark.saturating_add(self.threshold);
        let grown = resident > self.resident_mark.saturating_add(self.threshold);
        // Memory taken again lowers the marks, so that freeing it once
        // more counts.
        self.free_mark = self.free_mark.min(free);
        self.resident_mark = self.resident_mark.min(resident);
        freed || grown
    }

    /// Records what a trim left free and resident.
    fn trimmed(&mut self, free: usize, resident: usize) {
        self.free_mark = free;
        self.resident_mark = resident;
    }
}

/// Starts the thread that looks every [`TRIM_INTERVAL`] for the life of
/// the process. Fails only if the operating system refuses a thread.
pub fn start_trimmer() -> std::io::Result<()> {
    let mut trimmer = Trimmer::new(TRIM_THRESHOLD);
    std::thread::Builder::new()
        .name("memory-trim".into())
        .spawn(move || {
            loop {
                std::thread::sleep(TRIM_INTERVAL);
                if trimmer.tick() {
                    tracing::debug!("freed memory returned to the operating system");
                }
            }
        })?;
    Ok(())
}

#[cfg(all(test, target_os = "linux", target_env = "gnu"))]
mod tests {
    use super::*;

    /// This process's resident bytes.
    fn resident() -> usize {
        glibc::resident_and_shared().0
    }

    const MIB: usize = 1 << 20;

    /// Looks with `free` and `resident` MiB and, if asked, records a trim
    /// that left `left` MiB resident (and the free bytes as they were:
    /// released pages still count); whether it trimmed.
    fn look(trimmer: &mut Trimmer, free: usize, resident: usize, left: usize) -> bool {
        let wants = trimmer.look(free * MIB, resident * MIB);
        if wants {
            trimmer.trimmed(free * MIB, left * MIB);
        }
        wants
    }

    #[test]
    fn a_quiet_server_is_trimmed_once_then_left_alone() {
        let mut trimmer = Trimmer::new(MIB);
        assert!(
            look(&mut trimmer, 2, 8, 7),
            "the first look has nothing to compare with"
        );
        for _ in 0..5 {
            assert!(!look(&mut trimmer, 2, 7, 7));
        }
    }

    #[test]
    fn memory_freed_a_little_at_a_time_is_trimmed_once_it_adds_up() {
        let mut trimmer = Trimmer::new(4 * MIB);
        look(&mut trimmer, 2, 8, 8);
        for free in 3..=6 {
            assert!(!look(&mut trimmer, free, 8, 8), "{free} MiB free");
        }
        assert!(look(&mut trimmer, 7, 8, 8), "5 MiB freed since the trim");
    }

    #[test]
    fn memory_freed_since_the_last_trim_is_trimmed() {
        let mut trimmer = Trimmer::new(MIB);
        look(&mut trimmer, 2, 8, 8);
        assert!(look(&mut trimmer, 20, 26, 10), "18 MiB freed");
        assert!(!look(&mut trimmer, 20, 10, 10));
        assert!(
            look(&mut trimmer, 23, 10, 9),
            "3 MiB more freed, resident unchanged"
        );
    }

    #[test]
    fn a_burst_between_two_looks_that_gave_back_what_it_took_is_trimmed() {
        let mut trimmer = Trimmer::new(MIB);
        look(&mut trimmer, 2, 8, 8);
        assert!(look(&mut trimmer, 20, 26, 10));
        // The next burst reused the free space and freed it again: the
        // free bytes are as before, the pages are resident again.
        assert!(look(&mut trimmer, 20, 24, 11));
        assert!(!look(&mut trimmer, 20, 11, 11));
    }

    #[test]
    fn memory_in_use_that_grew_is_trimmed_once_per_growth() {
        let mut trimmer = Trimmer::new(MIB);
        look(&mut trimmer, 2, 8, 8);
        // Slivers added: less free, more resident, nothing to return.
        assert!(look(&mut trimmer, 1, 12, 12));
        assert!(!look(&mut trimmer, 1, 12, 12));
        assert!(!look(&mut trimmer, 1, 12, 12));
    }

    #[test]
    fn a_resident_size_that_fell_counts_its_growth_back() {
        let mut trimmer = Trimmer::new(MIB);
        look(&mut trimmer, 2, 20, 20);
        assert!(!look(&mut trimmer, 2, 12, 12), "a large block unmapped");
        assert!(look(&mut trimmer, 2, 16, 12), "grown back by 4 MiB");
    }

    #[test]
    fn the_arenas_are_bounded_unless_the_environment_says_otherwise() {
        assert_eq!(
            bound_arenas(),
            std::env::var_os("MALLOC_ARENA_MAX").is_none()
        );
        assert!(glibc::set_arena_max(MAX_ARENAS));
    }

    #[test]
    fn the_thread_caches_are_switched_off_beside_other_tunables_unless_set() {
        let without = |current: Option<&str>| {
            tunables_without_thread_caches(current.map(std::ffi::OsStr::new))
        };
        assert_eq!(
            without(None).as_deref(),
            Some("glibc.malloc.tcache_count=0")
        );
        assert_eq!(
            without(Some("")).as_deref(),
            Some("glibc.malloc.tcache_count=0")
        );
        assert_eq!(
            without(Some("glibc.malloc.arena_max=2")).as_deref(),
            Some("glibc.malloc.arena_max=2:glibc.malloc.tcache_count=0")
        );
        assert_eq!(
            without(Some("glibc.malloc.tcache_count=3")),
            None,
            "the operator's value stands"
        );
        assert_eq!(
            without(Some("glibc.malloc.arena_max=2:glibc.malloc.tcache_count=0")),
            None
        );
        assert_eq!(
            without(Some("glibc.malloc.tcache_count_other=1")).as_deref(),
            Some("glibc.malloc.tcache_count_other=1:glibc.malloc.tcache_count=0"),
            "only the tunable itself counts"
        );
        use std::os::unix::ffi::OsStrExt;
        assert_eq!(
            tunables_without_thread_caches(Some(std::ffi::OsStr::from_bytes(b"\xff"))),
            None,
            "a value that is not text is left alone"
        );
    }

    #[test]
    fn memory_freed_in_the_arenas_is_returned_once() {
        let mut trimmer = Trimmer::new(8 << 20);
        trimmer.tick();
        // Mid-sized blocks (below the mmap threshold, so they live in an
        // arena), every other one freed so the free space cannot merge
        // into the top of the heap and leave by itself.
        let blocks: Vec<Vec<u8>> = (0..4096).map(|_| vec![1u8; 16 << 10]).collect();
        let kept: Vec<Vec<u8>> = blocks
            .into_iter()
            .enumerate()
            .filter_map(|(i, b)| (i % 2 == 0).then_some(b))
            .collect();
        let before = resident();
        assert!(trimmer.tick(), "32 MiB freed and not trimmed");
        let after = resident();
        assert!(
            before.saturating_sub(after) > 8 << 20,
            "resident {before} -> {after} bytes"
        );
        assert!(!trimmer.tick(), "trimmed again with nothing new freed");
        drop(kept);
    }
}
