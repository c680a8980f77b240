//! What a test injects to make the simulator misbehave: transport faults
//! (a dropped connection, a delayed answer, an HTTP 500), outages during
//! which every request meets one of them, answers held back after the work
//! is done, boots that fail and a quota on VMs. Capacity limits are the
//! hosts' own sizes, set through the inventory.

use std::collections::VecDeque;
use std::time::Duration;

/// A transport fault applied to the next request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TransportFault {
    /// Close the connection without answering.
    Drop,
    /// Answer after this delay.
    Delay(Duration),
    /// Answer `500 Internal Server Error`.
    Http500,
}

/// Faults met by requests before (or after) they reach the cloud.
#[derive(Debug, Default)]
pub struct Transport {
    /// Faults for coming requests, in order.
    queued: VecDeque<TransportFault>,
    /// The fault every request meets while oned is down, if it is.
    outage: Option<TransportFault>,
    /// Methods whose next call is answered late: (method, delay).
    late_answers: Vec<(String, Duration)>,
}

impl Transport {
    /// Queues `fault` for a coming request.
    pub fn queue(&mut self, fault: TransportFault) {
        self.queued.push_back(fault);
    }

    /// Takes oned down (`Some`) or brings it back (`None`).
    pub fn set_outage(&mut self, fault: Option<TransportFault>) {
        self.outage = fault;
    }

    /// Holds back the answer to the next call of `method` by `delay`.
    pub fn answer_late(&mut self, method: &str, delay: Duration) {
        self.late_answers.push((method.to_owned(), delay));
    }

    /// The fault the request just read meets: the outage's, else the next queued one.
    pub fn next_fault(&mut self) -> Option<TransportFault> {
        self.outage.or_else(|| self.queued.pop_front())
    }

    /// Whether some answer is to be held back (saves parsing the call when none is).
    pub fn holds_answers(&self) -> bool {
        !self.late_answers.is_empty()
    }

    /// The delay set for the next call of `method`, taken.
    pub fn take_late_answer(&mut self, method: &str) -> Option<Duration> {
        let at = self
            .late_answers
            .iter()
            .position(|(name, _)| name == method)?;
        Some(self.late_answers.remove(at).1)
    }
}

/// Failures injected into the cloud itself.
#[derive(Debug, Default)]
pub struct Injected {
    /// How many coming boots fail.
    failing_boots: u32,
    /// The most VMs (not DONE) that may exist.
    vm_quota: Option<usize>,
}

impl Injected {
    /// The next `count` VMs created fail to boot.
    pub fn fail_next_boots(&mut self, count: u32) {
        self.failing_boots = count;
    }

    /// Whether the VM being created is one of those whose boot fails (counts it).
    pub fn take_boot_failure(&mut self) -> bool {
        let fails = self.failing_boots > 0;
        self.failing_boots = self.failing_boots.saturating_sub(1);
        fails
    }

    /// Limits how many VMs (not DONE) may exist; `None` lifts the limit.
    pub fn set_vm_quota(&mut self, limit: Option<usize>) {
        self.vm_quota = limit;
    }

    /// The quota a new VM would exceed when `live` VMs exist, if it would.
    pub fn exceeded_vm_quota(&self, live: usize) -> Option<usize> {
        self.vm_quota.filter(|limit| live >= *limit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_outage_outlasts_queued_faults() {
        let mut transport = Transport::default();
        transport.queue(TransportFault::Http500);
        transport.set_outage(Some(TransportFault::Drop));
        assert_eq!(transport.next_fault(), Some(TransportFault::Drop));
        assert_eq!(transport.next_fault(), Some(TransportFault::Drop));
        transport.set_outage(None);
        assert_eq!(transport.next_fault(), Some(TransportFault::Http500));
        assert_eq!(transport.next_fault(), None);
    }

    #[test]
    fn a_late_answer_is_taken_once() {
        let mut transport = Transport::default();
        transport.answer_late("one.vm.allocate", Duration::from_secs(1));
        assert!(transport.holds_answers());
        assert_eq!(transport.take_late_answer("one.vm.info"), None);
        assert_eq!(
            transport.take_late_answer("one.vm.allocate"),
            Some(Duration::from_secs(1))
        );
        assert!(!transport.holds_answers());
    }

    #[test]
    fn boot_failures_and_quota_count_down() {
        let mut injected = Injected::default();
        injected.fail_next_boots(1);
        assert!(injected.take_boot_failure());
        assert!(!injected.take_boot_failure());
        assert_eq!(injected.exceeded_vm_quota(5), None);
        injected.set_vm_quota(Some(2));
        assert_eq!(injected.exceeded_vm_quota(1), None);
        assert_eq!(injected.exceeded_vm_quota(2), Some(2));
    }
}
