//! Handing freed memory back to the operating system. glibc's allocator
//! keeps what a burst of calls freed inside its arenas (one per thread that
//! allocated, up to eight per core), so after a load the resident size
//! stays near its peak although the heap is small again; the blocking
//! threads that served the burst exit, their arenas stay. A thread looks at
//! the arenas' free bytes every few seconds and, past a threshold, asks
//! glibc to return them (`malloc_trim`). Measured in docs/PERFORMANCE.md,
//! "Memory". The arenas are also bounded in number ([`bound_arenas`]): free
//! space spread over sixteen of them was half the resident size of an
//! aggregate holding many slivers. With another C library there is nothing
//! to do.

use std::time::Duration;

/// How often the free bytes are looked at.
pub const TRIM_INTERVAL: Duration = Duration::from_secs(10);

/// Free bytes in the arenas above which they are returned.
pub const TRIM_THRESHOLD: usize = 4 << 20;

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

    pub fn trim() {}
}

/// Bounds the allocator's arenas to [`MAX_ARENAS`], unless the
/// environment sets glibc's own `MALLOC_ARENA_MAX`, which then stands.
/// Called before the server starts its threads, since arenas once created
/// stay; true when the bound was set (false with another C library).
pub fn bound_arenas() -> bool {
    std::env::var_os("MALLOC_ARENA_MAX").is_none() && glibc::set_arena_max(MAX_ARENAS)
}

/// Decides when to trim: when the arenas hold more than a threshold free
/// beyond what they held right after the last trim. Pages a trim released
/// still count as free (they are only no longer resident), so the free
/// bytes alone would trim again and again for nothing.
#[derive(Debug)]
pub struct Trimmer {
    threshold: usize,
    after_last: usize,
}

impl Trimmer {
    /// Trims when more than `threshold` bytes were freed since the last trim.
    pub fn new(threshold: usize) -> Trimmer {
        Trimmer {
            threshold,
            after_last: 0,
        }
    }

    /// Looks at the free bytes and trims if enough were freed; true when
    /// it trimmed.
    pub fn tick(&mut self) -> bool {
        let free = glibc::free_bytes();
        if free > self.after_last.saturating_add(self.threshold) {
            glibc::trim();
            self.after_last = glibc::free_bytes();
            true
        } else {
            // Free memory taken again lowers the mark, so that freeing it
            // once more counts.
            self.after_last = self.after_last.min(free);
            false
        }
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
