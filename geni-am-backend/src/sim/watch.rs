//! Whom the simulated cloud tells that its VMs' states may have changed
//! (see [`crate::Compute::watch`]): at once after an action, and again when
//! the timed transition it began is due — on the real clock, from a
//! short-lived thread that sleeps until then. On a manual clock, tests
//! move time themselves and are told only of actions.

use super::clock::SimClock;
use crate::ChangeHook;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

/// The hooks given to [`crate::Compute::watch`].
#[derive(Default)]
pub struct Watchers {
    hooks: Mutex<Vec<ChangeHook>>,
}

impl std::fmt::Debug for Watchers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watchers")
            .field("hooks", &self.hooks().len())
            .finish()
    }
}

impl Watchers {
    /// Adds `hook`.
    pub fn add(&self, hook: ChangeHook) {
        self.hooks
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(hook);
    }

    fn hooks(&self) -> Vec<ChangeHook> {
        self.hooks
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Tells every hook now that states changed, and once more `after`
    /// (the delay of the transition just begun, if any) on the real clock.
    pub fn changed(&self, clock: &SimClock, after: Duration) {
        let hooks = self.hooks();
        if hooks.is_empty() {
            return;
        }
        call(&hooks);
        if after.is_zero() || !clock.is_real() {
            return;
        }
        let timer = std::thread::Builder::new()
            .name("sim-transition".into())
            .spawn(move || {
                std::thread::sleep(after);
                call(&hooks);
            });
        if let Err(err) = timer {
            tracing::warn!(%err, "the end of a simulated transition will not be announced");
        }
    }
}

fn call(hooks: &[ChangeHook]) {
    for hook in hooks {
        hook();
    }
}
