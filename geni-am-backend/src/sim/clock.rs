//! Time as the simulated cloud sees it: the wall clock (time since the Unix
//! epoch, so instants saved in a state file keep their meaning after a
//! restart), or a manual clock tests advance by hand so transitions need
//! no sleeping.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime};

/// The simulated cloud's clock; cheap to clone, clones share the time.
#[derive(Debug, Clone)]
pub struct SimClock(Source);

#[derive(Debug, Clone)]
enum Source {
    Real,
    Manual(Arc<Mutex<Duration>>),
}

impl SimClock {
    /// The wall clock.
    pub fn real() -> SimClock {
        SimClock(Source::Real)
    }

    /// A clock that stands still until [`SimClock::advance`] moves it.
    pub fn manual() -> SimClock {
        SimClock(Source::Manual(Arc::new(Mutex::new(Duration::ZERO))))
    }

    /// Time elapsed since the clock started (the Unix epoch for the wall
    /// clock; zero if the system clock is set before it).
    pub fn now(&self) -> Duration {
        match &self.0 {
            Source::Real => SystemTime::now()
                .duration_since(SystemTime::UNIX_EPOCH)
                .unwrap_or_default(),
            Source::Manual(now) => *now.lock().unwrap_or_else(PoisonError::into_inner),
        }
    }

    /// True for the wall clock.
    pub fn is_real(&self) -> bool {
        matches!(self.0, Source::Real)
    }

    /// Moves a manual clock forward; the real clock ignores it.
    pub fn advance(&self, by: Duration) {
        if let Source::Manual(now) = &self.0 {
            *now.lock().unwrap_or_else(PoisonError::into_inner) += by;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_manual_clock_moves_only_when_advanced_and_clones_share_it() {
        let clock = SimClock::manual();
        let other = clock.clone();
        assert_eq!(clock.now(), Duration::ZERO);
        other.advance(Duration::from_millis(1500));
        assert_eq!(clock.now(), Duration::from_millis(1500));
    }

    #[test]
    fn the_real_clock_ignores_advance_and_counts_from_the_epoch() {
        let clock = SimClock::real();
        let before = clock.now();
        assert!(before > Duration::from_secs(1_600_000_000), "{before:?}");
        clock.advance(Duration::from_secs(3600));
        assert!(clock.now() < before + Duration::from_secs(3600));
    }
}
