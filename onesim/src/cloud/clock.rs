//! The simulator's clock: the system clock, or a time a test pinned (in
//! milliseconds since the epoch), and the `ctime` form oned writes dates in.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The system clock unless a test pinned it.
#[derive(Debug, Clone, Copy, Default)]
pub struct Clock {
    pinned: Option<i64>,
}

impl Clock {
    /// The current time in ms since the epoch.
    pub fn now_ms(self) -> i64 {
        self.pinned.unwrap_or_else(|| {
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        })
    }

    /// The pinned time in ms, if the clock is pinned.
    pub fn pinned_ms(self) -> Option<i64> {
        self.pinned
    }

    /// Pins the clock to `ms` since the epoch.
    pub fn pin_ms(&mut self, ms: i64) {
        self.pinned = Some(ms);
    }

    /// Moves the clock forward, pinning it at the current time first.
    pub fn advance(&mut self, by: Duration) {
        self.pinned = Some(self.now_ms().saturating_add(millis(by)));
    }
}

/// A duration in whole milliseconds, saturating.
pub fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

/// `ctime`-style UTC date as oned writes into ERROR and SCHED_MESSAGE.
pub fn ctime(secs: i64) -> String {
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Civil-from-days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{} {} {:02} {:02}:{:02}:{:02} {year}",
        DAYS[days.rem_euclid(7) as usize],
        MONTHS[(month - 1) as usize],
        day,
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_dates_like_oned() {
        assert_eq!(ctime(1_795_282_686), "Sat Nov 21 17:38:06 2026");
    }

    #[test]
    fn advancing_pins_the_clock() {
        let mut clock = Clock::default();
        clock.pin_ms(5_000);
        clock.advance(Duration::from_millis(1_500));
        assert_eq!(clock.now_ms(), 6_500);
        assert_eq!(clock.pinned_ms(), Some(6_500));
    }
}
