//! Handing freed memory back to the operating system. glibc's allocator
//! keeps what a burst of calls freed inside its arenas (one per thread that
//! allocated, up to eight per core), so after a load the resident size
//! stays near its peak although the heap is small again; the blocking
//! threads that served the burst exit, their arenas stay. A thread looks at
//! the arenas' free bytes and the resident size every few seconds and, when
//! either says memory may have been freed since the last look ([`Trimmer`]),
//! asks glibc to return it (`malloc_trim`). Measured in docs/PERFORMANCE.md,
//! "Memory". The arenas are also bounded in number ([`bound_arenas`]): free
//! space spread over sixteen of them was half the resident size of an
//! aggregate holding many slivers. With another C library there is nothing
//! to do.

use std::time::Duration;

/// How often the free bytes are looked at.
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

    /// The process's anonymous resident bytes (resident less file-backed
    /// and shared), 0 when they cannot be read.
    pub fn anonymous_resident() -> usize {
        let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
        let mut pages = statm
            .split_whitespace()
            .skip(1)
            .map(|n| n.parse().unwrap_or(0));
        let (resident, shared): (usize, usize) =
            (pages.next().unwrap_or(0), pages.next().unwrap_or(0));
        resident.saturating_sub(shared) * 4096
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

/// Bounds the allocator's arenas to [`MAX_ARENAS`], unless the
/// environment sets glibc's own `MALLOC_ARENA_MAX`, which then stands.
/// Called before the server starts its threads, since arenas once created
/// stay; true when the bound was set (false with another C library).
pub fn bound_arenas() -> bool {
    std::env::var_os("MALLOC_ARENA_MAX").is_none() && glibc::set_arena_max(MAX_ARENAS)
}

/// Decides when to trim, from two readings taken at every look: the bytes
/// the arenas hold free and the anonymous resident size. Free bytes grown
/// since the last look are memory freed since, perhaps resident. A burst
/// that took free space and gave it back between two looks leaves the free
/// bytes as they were, but the pages it touched resident again: the
/// resident size grown beyond what the last trim left says so. Pages a trim
/// released still count as free, so the free bytes alone would either trim
/// again and again for nothing or, compared with a mark, miss the second
/// burst. A quiet server moves neither and is not trimmed.
#[derive(Debug)]
pub struct Trimmer {
    threshold: usize,
    free_seen: usize,
    resident_after_trim: usize,
}

impl Trimmer {
    /// Trims when either reading grew by more than `threshold` bytes.
    pub fn new(threshold: usize) -> Trimmer {
        Trimmer {
            threshold,
            free_seen: 0,
            resident_after_trim: 0,
        }
    }

    /// Takes the readings and trims if they ask for it; true when it
    /// trimmed.
    pub fn tick(&mut self) -> bool {
        let wants = self.look(glibc::free_bytes(), glibc::anonymous_resident());
        if wants {
            glibc::trim();
            self.trimmed(glibc::anonymous_resident());
        }
        wants
    }

    /// Whether the readings `free` and `resident` ask for a trim; each is
    /// remembered for the next look.
    fn look(&mut self, free: usize, resident: usize) -> bool {
        let freed = free > self.free_seen.saturating_add(self.threshold);
        let grown = resident > self.resident_after_trim.saturating_add(self.threshold);
        self.free_seen = free;
        // A resident size that fell (a large block unmapped) lowers the
        // mark, so that growing back counts.
        self.resident_after_trim = self.resident_after_trim.min(resident);
        freed || grown
    }

    /// Records what a trim left resident.
    fn trimmed(&mut self, resident: usize) {
        self.resident_after_trim = resident;
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
        let statm = std::fs::read_to_string("/proc/self/statm").expect("statm");
        let pages: usize = statm
            .split_whitespace()
            .nth(1)
            .and_then(|p| p.parse().ok())
            .expect("resident pages");
        pages * 4096
    }

    const MIB: usize = 1 << 20;

    /// Looks with `free` and `resident` MiB and, if asked, records a trim
    /// that left `left` MiB resident; whether it trimmed.
    fn look(trimmer: &mut Trimmer, free: usize, resident: usize, left: usize) -> bool {
        let wants = trimmer.look(free * MIB, resident * MIB);
        if wants {
            trimmer.trimmed(left * MIB);
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
    fn memory_freed_since_the_last_look_is_trimmed() {
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
