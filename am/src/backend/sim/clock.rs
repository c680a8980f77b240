//! Time as the simulated cloud sees it: the real monotonic clock, or a
//! manual clock tests advance by hand so transitions need no sleeping.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// The simulated cloud's clock; cheap to clone, clones share the time.
#[derive(Debug, Clone)]
pub struct SimClock(Source);

#[derive(Debug, Clone)]
enum Source {
    Real(Instant),
    Manual(Arc<Mutex<Duration>>),
}

impl SimClock {
    /// The real monotonic clock, starting now.
    pub fn real() -> SimClock {
        SimClock(Source::Real(Instant::now()))
    }

    /// A clock that stands still until [`SimClock::advance`] moves it.
    pub fn manual() -> SimClock {
        SimClock(Source::Manual(Arc::new(Mutex::new(Duration::ZERO))))
    }

    /// Time elapsed since the clock started.
    pub fn now(&self) -> Duration {
        match &self.0 {
            Source::Real(start) => start.elapsed(),
            Source::Manual(now) => *now.lock().unwrap_or_else(PoisonError::into_inner),
        }
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
    fn the_real_clock_ignores_advance() {
        let clock = SimClock::real();
        clock.advance(Duration::from_secs(3600));
        assert!(clock.now() < Duration::from_secs(3600));
    }
}
