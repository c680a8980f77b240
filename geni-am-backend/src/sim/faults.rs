//! Failures of the simulated cloud: the seeded boot-failure draw (the same
//! seed, tag and boot number always give the same outcome, whatever the
//! order of calls) and failures injected by tests.

use crate::BackendError;
use std::collections::HashMap;

/// Failure rate, seed and injected failures.
#[derive(Debug, Clone, Default)]
pub struct Faults {
    rate: f64,
    seed: u64,
    boot_failures: HashMap<String, String>,
    transient_calls: u32,
}

impl Faults {
    /// Boots fail with probability `rate`, drawn from `seed`.
    pub fn new(rate: f64, seed: u64) -> Faults {
        Faults {
            rate,
            seed,
            ..Faults::default()
        }
    }

    /// Makes the next boot of the VM tagged `tag` fail with `message`.
    pub fn inject_boot_failure(&mut self, tag: &str, message: &str) {
        self.boot_failures
            .insert(tag.to_owned(), message.to_owned());
    }

    /// Makes the next `calls` operations fail as transient errors.
    pub fn inject_transient(&mut self, calls: u32) {
        self.transient_calls = calls;
    }

    /// Consumes one injected transient failure, if any are left.
    pub fn take_transient(&mut self, operation: &str) -> Result<(), BackendError> {
        if self.transient_calls == 0 {
            return Ok(());
        }
        self.transient_calls -= 1;
        Err(BackendError::Unreachable(format!(
            "simulated cloud unreachable during {operation} (injected)"
        )))
    }

    /// The failure message of boot number `boot` of `tag`, if it fails.
    pub fn boot_failure(&mut self, tag: &str, boot: u32) -> Option<String> {
        if let Some(message) = self.boot_failures.remove(tag) {
            return Some(message);
        }
        let draw = mix(self.seed ^ fnv1a(tag.as_bytes()) ^ u64::from(boot).rotate_left(32));
        // 53 random bits give a uniform float in [0, 1).
        let unit = (draw >> 11) as f64 / (1u64 << 53) as f64;
        (unit < self.rate).then(|| {
            format!("simulated boot failure of {tag} (boot {boot}): the guest did not come up")
        })
    }
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// The splitmix64 finaliser: spreads every input bit over the output.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failures(faults: &mut Faults, seed_tags: usize) -> usize {
        (0..seed_tags)
            .filter(|i| faults.boot_failure(&format!("vm{i}"), 1).is_some())
            .count()
    }

    #[test]
    fn draws_are_deterministic_and_follow_the_rate() {
        let mut a = Faults::new(0.3, 42);
        let mut b = Faults::new(0.3, 42);
        let outcomes = |f: &mut Faults| -> Vec<bool> {
            (0..200)
                .map(|i| f.boot_failure(&format!("vm{i}"), 1).is_some())
                .collect()
        };
        assert_eq!(outcomes(&mut a), outcomes(&mut b));
        let failed = failures(&mut Faults::new(0.3, 42), 2000);
        assert!((450..750).contains(&failed), "{failed} of 2000 at rate 0.3");
        assert_eq!(failures(&mut Faults::new(0.0, 1), 500), 0);
        assert_eq!(failures(&mut Faults::new(1.0, 1), 500), 500);
    }

    #[test]
    fn injected_failures_are_used_once() {
        let mut faults = Faults::new(0.0, 0);
        faults.inject_boot_failure("vm", "no bootable disk");
        assert_eq!(
            faults.boot_failure("vm", 1).as_deref(),
            Some("no bootable disk")
        );
        assert_eq!(faults.boot_failure("vm", 2), None);
        faults.inject_transient(1);
        assert!(faults.take_transient("create").unwrap_err().is_transient());
        assert!(faults.take_transient("create").is_ok());
    }
}
