//! A virtual network's address range: its stored document, the leases
//! held on it (by VMs, or by reservations carved out of it), and the
//! arithmetic from a lease's index to its IPv4 and MAC addresses.

use super::record::{Pooled, Record};
use crate::xml::Element;

/// A lease of one address of the range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lease {
    /// Address index inside the AR.
    pub index: u32,
    /// Owner: a VM id, or `-(network id) - 1` for a reservation.
    pub owner: i32,
}

impl Lease {
    /// The owner word of a lease held by reservation network `id`.
    pub fn reservation_owner(id: i32) -> i32 {
        -id - 1
    }
}

/// A virtual network: its document and its leases.
#[derive(Debug, Clone)]
pub struct Vnet {
    record: Record,
    leases: Vec<Lease>,
    next_index: u32,
    size: u32,
    ever_leased: bool,
}

impl Vnet {
    /// A network with no lease, from its stored document (TEMPLATE, AR_POOL/AR …).
    pub fn new(id: i32, doc: Element) -> Self {
        let size = doc.value_at("AR_POOL/AR/SIZE").parse().unwrap_or(0);
        Vnet {
            record: Record::new(id, doc),
            leases: Vec::new(),
            next_index: 0,
            size,
            ever_leased: false,
        }
    }

    /// Leases in use.
    pub fn leases(&self) -> &[Lease] {
        &self.leases
    }

    /// NEXT_INDEX of the AR.
    pub fn next_index(&self) -> u32 {
        self.next_index
    }

    /// Whether a lease was ever taken (pool bodies then show `ALLOCATED`).
    pub fn ever_leased(&self) -> bool {
        self.ever_leased
    }

    /// The first address of the AR.
    pub fn first_ip(&self) -> &str {
        self.doc().value_at("AR_POOL/AR/IP")
    }

    /// The first MAC address of the AR.
    pub fn first_mac(&self) -> &str {
        self.doc().value_at("AR_POOL/AR/MAC")
    }

    fn used(&self, index: u32) -> bool {
        self.leases.iter().any(|l| l.index == index)
    }

    /// Leases one address to VM `vm`: the requested IP if it is in the
    /// range and free, else (none requested) the next free index from
    /// NEXT_INDEX. Returns its index.
    pub fn lease(&mut self, vm: i32, requested_ip: Option<&str>) -> Option<u32> {
        let index = match requested_ip {
            Some(ip) => {
                let index = ip_index(self.first_ip(), ip).filter(|i| *i < self.size)?;
                (!self.used(index)).then_some(index)?
            }
            None => {
                let index = (0..self.size)
                    .map(|k| (self.next_index + k) % self.size.max(1))
                    .find(|i| !self.used(*i))?;
                self.next_index = index + 1;
                index
            }
        };
        self.leases.push(Lease { index, owner: vm });
        self.ever_leased = true;
        Some(index)
    }

    /// Whether the `size` addresses from index `first` are inside the AR and free.
    fn block_is_free(&self, first: u32, size: u32) -> bool {
        first.checked_add(size).is_some_and(|end| end <= self.size)
            && !self
                .leases
                .iter()
                .any(|l| (first..first + size).contains(&l.index))
    }

    /// The first free block of `size` addresses at or after the AR's
    /// NEXT_INDEX, wrapping to its start, as oned hands out reservations: a
    /// later reservation gets a later block even when an earlier one was freed.
    fn next_free_block(&self, size: u32) -> Option<u32> {
        let starts = self.size.max(1);
        (0..starts)
            .map(|k| (self.next_index + k) % starts)
            .find(|first| self.block_is_free(*first, size))
    }

    /// Leases `size` addresses to reservation network `owner_id`: from
    /// `requested_ip` when given, else the next free block. Returns the
    /// index of the first.
    pub fn reserve(&mut self, owner_id: i32, size: u32, requested_ip: Option<&str>) -> Option<u32> {
        let start = match requested_ip {
            Some(ip) => {
                ip_index(self.first_ip(), ip).filter(|first| self.block_is_free(*first, size))?
            }
            None => {
                let start = self.next_free_block(size)?;
                self.next_index = (start + size) % self.size.max(1);
                start
            }
        };
        let owner = Lease::reservation_owner(owner_id);
        self.leases
            .extend((start..start + size).map(|index| Lease { index, owner }));
        self.ever_leased = true;
        Some(start)
    }

    /// Whether a VM holds a lease.
    pub fn leased_to_vms(&self) -> bool {
        self.leases.iter().any(|l| l.owner >= 0)
    }

    /// Releases every lease `owner` holds.
    pub fn release(&mut self, owner: i32) {
        self.leases.retain(|l| l.owner != owner);
    }

    /// Releases the lease of address `index`.
    pub fn release_index(&mut self, index: u32) {
        self.leases.retain(|l| l.index != index);
    }
}

impl Pooled for Vnet {
    fn record(&self) -> &Record {
        &self.record
    }
}

/// The IPv4 address `index` places after `first`.
pub fn ip_at(first: &str, index: u32) -> String {
    first.parse::<std::net::Ipv4Addr>().map_or_else(
        |_| String::new(),
        |a| std::net::Ipv4Addr::from(u32::from(a) + index).to_string(),
    )
}

/// The index of `ip` in an address range starting at `first`; `None`
/// before it or when either is not an IPv4 address.
pub fn ip_index(first: &str, ip: &str) -> Option<u32> {
    let a: std::net::Ipv4Addr = first.parse().ok()?;
    let b: std::net::Ipv4Addr = ip.trim().parse().ok()?;
    u32::from(b).checked_sub(u32::from(a))
}

/// The MAC address `index` places after `first`.
pub fn mac_at(first: &str, index: u32) -> String {
    let digits: String = first.chars().filter(char::is_ascii_hexdigit).collect();
    let Ok(value) = u64::from_str_radix(&digits, 16) else {
        return String::new();
    };
    let bytes = (value + u64::from(index)).to_be_bytes();
    bytes[2..]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cloud::seed;

    #[test]
    fn addresses_from_the_address_range() {
        assert_eq!(ip_at("10.10.0.10", 2), "10.10.0.12");
        assert_eq!(mac_at("02:00:0a:0a:00:0a", 1), "02:00:0a:0a:00:0b");
    }

    #[test]
    fn leases_count_from_the_first_address() {
        assert_eq!(ip_index("10.10.0.10", "10.10.0.15"), Some(5));
        assert_eq!(ip_index("10.10.0.10", "10.10.0.9"), None);
    }

    #[test]
    fn a_reservation_takes_a_later_block_than_a_freed_one() {
        let mut vnet = Vnet::new(0, seed::element(seed::VNET));
        assert_eq!(vnet.reserve(1, 4, None), Some(0));
        vnet.release(Lease::reservation_owner(1));
        assert_eq!(vnet.reserve(2, 4, None), Some(4));
        assert_eq!(vnet.lease(7, Some("10.10.0.12")), Some(2));
        assert_eq!(vnet.lease(8, Some("10.10.0.12")), None);
        assert!(vnet.leased_to_vms());
    }
}
