//! Address pools of the simulated cloud: one per network (the control
//! network and one per link), handing out IPv4 addresses and the MAC
//! addresses derived from them the way OpenNebula does (`02:00` + the IP).
//! A link network is a plain layer-2 segment: an address the request asks
//! for is leased as asked when no other NIC on it holds it, also outside
//! the pool's subnet (experimenters choose their own addressing).

use super::config::Subnet;
use crate::backend::{BackendError, NetHandle, NicAddress};
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

    /// Leases `asked` when it is an IPv4 address no NIC holds, else the
    /// lowest free address of the subnet.
    pub fn lease_asked(&mut self, asked: Option<&str>) -> Result<NicAddress, BackendError> {
        let Some(ip) = asked.and_then(|a| a.trim().parse::<Ipv4Addr>().ok()) else {
            return self.lease();
        };
        match self.offset_of(ip) {
            Some(offset) if self.leased.insert(offset) => Ok(self.nic(ip, true)),
            None if self.asked.insert(ip) => Ok(self.nic(ip, false)),
            _ => self.lease(),
        }
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
        let taken = pool.lease_asked(Some("10.10.0.100")).unwrap();
        assert_eq!(
            taken.ip, "192.168.5.2",
            "a held address is not leased twice"
        );
        assert_eq!(
            pool.lease_asked(Some("not an ip")).unwrap().ip,
            "192.168.5.3"
        );
        pool.release("10.10.0.100");
        assert_eq!(
            pool.lease_asked(Some("10.10.0.100")).unwrap().ip,
            "10.10.0.100"
        );
        assert_eq!(
            pool.lease_asked(Some("192.168.5.40")).unwrap().ip,
            "192.168.5.4"
        );
    }
}
