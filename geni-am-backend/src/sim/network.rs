//! Address pools of the simulated cloud: one per network (the control
//! network and one per link), handing out IPv4 addresses and the MAC
//! addresses derived from them the way OpenNebula does (`02:00` + the IP).
//! A link network is a plain layer-2 segment: an address the request asks
//! for is leased as asked when no other NIC on it holds it, also outside
//! the pool's subnet (experimenters choose their own addressing).

use super::config::Subnet;
use crate::{BackendError, NetHandle, NicAddress};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::net::Ipv4Addr;

/// The addresses of one network and which of them are leased.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AddressPool {
    subnet: Subnet,
    network: Option<NetHandle>,
    leased: BTreeSet<u32>,
    /// Addresses outside the subnet leased because a request asked for them.
    #[serde(default)]
    asked: BTreeSet<Ipv4Addr>,
}

impl AddressPool {
    /// A pool over `subnet`; `network` is `None` for the control network.
    pub fn new(subnet: Subnet, network: Option<NetHandle>) -> AddressPool {
        AddressPool {
            subnet,
            network,
            leased: BTreeSet::new(),
            asked: BTreeSet::new(),
        }
    }

    /// Leases `asked` (the lowest free address of the subnet when `None`).
    /// An asked address that is not IPv4 or that a NIC already holds is
    /// refused, never replaced by another: a VM must not come up with an
    /// address its experimenter did not ask for.
    pub fn lease_asked(&mut self, asked: Option<&str>) -> Result<NicAddress, BackendError> {
        let Some(text) = asked else {
            return self.lease();
        };
        let ip = text.trim().parse::<Ipv4Addr>().map_err(|_| {
            BackendError::Permanent(format!(
                "the requested address `{text}` is not an IPv4 address"
            ))
        })?;
        let fresh = match self.offset_of(ip) {
            Some(offset) => self.leased.insert(offset),
            None => self.asked.insert(ip),
        };
        if !fresh {
            return Err(BackendError::Permanent(format!(
                "the requested address {ip} is already held by another VM of simulated network {}/{}",
                self.subnet.base, self.subnet.prefix
            )));
        }
        Ok(self.nic(ip, self.offset_of(ip).is_some()))
    }

    /// Leases the lowest free address.
    pub fn lease(&mut self) -> Result<NicAddress, BackendError> {
        let free = (0..self.subnet.capacity())
            .find(|i| !self.leased.contains(i))
            .ok_or_else(|| {
                BackendError::Capacity(format!(
                    "simulated network {}/{} has no free address",
                    self.subnet.base, self.subnet.prefix
                ))
            })?;
        self.leased.insert(free);
        Ok(self.nic(self.subnet.address(free), true))
    }

    /// Returns an address to the pool; unknown addresses are ignored.
    pub fn release(&mut self, ip: &str) {
        if let Ok(ip) = ip.parse::<Ipv4Addr>() {
            match self.offset_of(ip) {
                Some(offset) => self.leased.remove(&offset),
                None => self.asked.remove(&ip),
            };
        }
    }

    /// The pool offset of `ip`, when it is one of the subnet's VM addresses.
    fn offset_of(&self, ip: Ipv4Addr) -> Option<u32> {
        let offset = u32::from(ip).checked_sub(u32::from(self.subnet.address(0)))?;
        (offset < self.subnet.capacity()).then_some(offset)
    }

    /// The NIC holding `ip` on this network; the netmask is the subnet's
    /// when the address is in it.
    fn nic(&self, ip: Ipv4Addr, in_subnet: bool) -> NicAddress {
        let mask = u32::MAX << (32 - u32::from(self.subnet.prefix));
        NicAddress {
            network: self.network.clone(),
            ip: ip.to_string(),
            mac: mac_of(ip),
            netmask: in_subnet.then(|| Ipv4Addr::from(mask).to_string()),
        }
    }
}

/// `02:00:` followed by the four bytes of the address, in hex.
fn mac_of(ip: Ipv4Addr) -> String {
    let [a, b, c, d] = ip.octets();
    format!("02:00:{a:02x}:{b:02x}:{c:02x}:{d:02x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leases_are_unique_reused_after_release_and_bounded() {
        let mut pool = AddressPool::new(Subnet::parse("192.168.5.0/30").unwrap(), None);
        let first = pool.lease().unwrap();
        assert_eq!(first.ip, "192.168.5.2");
        assert_eq!(first.mac, "02:00:c0:a8:05:02");
        let err = pool.lease().unwrap_err();
        assert!(matches!(err, BackendError::Capacity(_)), "{err}");
        pool.release(&first.ip);
        assert_eq!(pool.lease().unwrap().ip, "192.168.5.2");
    }

    #[test]
    fn asked_addresses_are_leased_when_free() {
        let mut pool = AddressPool::new(Subnet::parse("192.168.5.0/24").unwrap(), None);
        let inside = pool.lease_asked(Some("192.168.5.40")).unwrap();
        assert_eq!(inside.ip, "192.168.5.40");
        assert_eq!(inside.netmask.as_deref(), Some("255.255.255.0"));
        let outside = pool.lease_asked(Some("10.10.0.100")).unwrap();
        assert_eq!(outside.ip, "10.10.0.100");
        assert_eq!(outside.mac, "02:00:0a:0a:00:64");
        assert_eq!(outside.netmask, None);
        pool.release("10.10.0.100");
        assert_eq!(
            pool.lease_asked(Some("10.10.0.100")).unwrap().ip,
            "10.10.0.100"
        );
    }

    #[test]
    fn an_asked_address_that_is_held_or_not_ipv4_is_refused_not_replaced() {
        let mut pool = AddressPool::new(Subnet::parse("192.168.5.0/24").unwrap(), None);
        pool.lease_asked(Some("192.168.5.40")).unwrap();
        pool.lease_asked(Some("10.10.0.100")).unwrap();
        for (asked, says) in [
            ("192.168.5.40", "already held"),
            ("10.10.0.100", "already held"),
            ("not an ip", "not an IPv4 address"),
        ] {
            let err = pool.lease_asked(Some(asked)).unwrap_err();
            assert!(
                matches!(&err, BackendError::Permanent(m) if m.contains(says)),
                "{asked}: {err}"
            );
        }
        assert_eq!(
            pool.lease().unwrap().ip,
            "192.168.5.2",
            "nothing else was leased"
        );
    }
}
