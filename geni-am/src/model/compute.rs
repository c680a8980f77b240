//! Vocabulary the compute backend speaks as well: users' SSH keys and the
//! address ranges links are reserved from.

use serde::{Deserialize, Serialize};

/// One user's SSH keys (`geni_users` entries).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserKeys {
    /// The user's URN.
    pub urn: String,
    /// OpenSSH public keys; may be empty (locks the user out).
    pub keys: Vec<String>,
}

/// A range of IPv4 addresses, first to last inclusive: one address range
/// of the network links are reserved from, so a link's requested
/// addresses can be checked at Allocate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct AddressRange {
    /// The first address of the range.
    pub first: std::net::Ipv4Addr,
    /// The last address of the range.
    pub last: std::net::Ipv4Addr,
}

impl AddressRange {
    /// The `size` addresses from `first` (`None` when `size` is 0 or the
    /// range would run past 255.255.255.255).
    pub fn starting_at(first: std::net::Ipv4Addr, size: u32) -> Option<AddressRange> {
        let last = u32::from(first).checked_add(size.checked_sub(1)?)?;
        Some(AddressRange {
            first,
            last: last.into(),
        })
    }

    /// Whether `ip` lies in the range.
    pub fn contains(&self, ip: std::net::Ipv4Addr) -> bool {
        (self.first..=self.last).contains(&ip)
    }
}

impl std::fmt::Display for AddressRange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.first == self.last {
            write!(f, "{}", self.first)
        } else {
            write!(f, "{}–{}", self.first, self.last)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_range_holds_its_first_and_last_address_only() {
        let ip = |text: &str| text.parse::<std::net::Ipv4Addr>().unwrap();
        let range = AddressRange::starting_at(ip("10.1.1.1"), 100).unwrap();
        assert_eq!(range.last, ip("10.1.1.100"));
        assert!(range.contains(ip("10.1.1.1")) && range.contains(ip("10.1.1.100")));
        assert!(!range.contains(ip("10.1.1.101")) && !range.contains(ip("10.1.1.0")));
        assert_eq!(range.to_string(), "10.1.1.1–10.1.1.100");
        assert_eq!(AddressRange::starting_at(ip("10.1.1.1"), 0), None);
        assert_eq!(AddressRange::starting_at(ip("255.255.255.255"), 2), None);
    }
}
