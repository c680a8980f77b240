//! Latency samples of one method (or how late an open load's lifecycles
//! started) and their percentiles.

use std::time::Duration;

/// The latencies of one method's calls, or the lags of lifecycle starts.
#[derive(Debug, Clone, Default)]
pub struct Latencies {
    samples: Vec<Duration>,
}

impl Latencies {
    /// Records one call.
    pub fn push(&mut self, latency: Duration) {
        self.samples.push(latency);
    }

    /// Adds another set's samples.
    pub fn extend(&mut self, other: Latencies) {
        self.samples.extend(other.samples);
    }

    /// The recorded latencies, in the order of the calls.
    pub fn samples(&self) -> &[Duration] {
        &self.samples
    }

    /// How many calls were recorded.
    pub fn count(&self) -> usize {
        self.samples.len()
    }

    /// The `p`-th percentile (0–100, nearest rank), zero when empty.
    pub fn percentile(&self, p: f64) -> Duration {
        let mut sorted = self.samples.clone();
        sorted.sort_unstable();
        if sorted.is_empty() {
            return Duration::ZERO;
        }
        let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
        sorted[rank.clamp(1, sorted.len()) - 1]
    }

    /// The mean, zero when empty.
    pub fn mean(&self) -> Duration {
        let total: Duration = self.samples.iter().sum();
        total
            .checked_div(self.samples.len() as u32)
            .unwrap_or(Duration::ZERO)
    }
}

impl FromIterator<Duration> for Latencies {
    fn from_iter<I: IntoIterator<Item = Duration>>(samples: I) -> Latencies {
        Latencies {
            samples: samples.into_iter().collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(values: &[u64]) -> Latencies {
        values.iter().map(|v| Duration::from_millis(*v)).collect()
    }

    #[test]
    fn percentiles_use_the_nearest_rank() {
        let l = ms(&[5, 1, 4, 2, 3, 6, 7, 8, 9, 10]);
        assert_eq!(l.percentile(50.0), Duration::from_millis(5));
        assert_eq!(l.percentile(90.0), Duration::from_millis(9));
        assert_eq!(l.percentile(100.0), Duration::from_millis(10));
        assert_eq!(l.percentile(0.0), Duration::from_millis(1));
        assert_eq!(l.mean(), Duration::from_micros(5500));
    }

    #[test]
    fn empty_latencies_are_zero() {
        let l = Latencies::default();
        assert_eq!(l.percentile(99.0), Duration::ZERO);
        assert_eq!(l.mean(), Duration::ZERO);
        assert_eq!(l.count(), 0);
    }
}
