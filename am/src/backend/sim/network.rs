//! Address pools of the simulated cloud: one per network (the control
//! network and one per link), handing out IPv4 addresses and the MAC
//! addresses derived from them the way OpenNebula does (`02:00` + the IP).

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
}

impl AddressPool {
    /// A pool over `subnet`; `network` is `None` for the control network.
    pub fn new(subnet: Subnet, network: Option<NetHandle>) -> AddressPool {
        AddressPool {
            subnet,
            network,
            leased: BTreeSet::new(),
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
        let ip = self.subnet.address(free);
        Ok(NicAddress {
            network: self.network.clone(),
            ip: ip.to_string(),
            mac: mac_of(ip),
        })
    }

    /// Returns an address to the pool; unknown addresses are ignored.
    pub fn release(&mut self, ip: &str) {
        if let Ok(ip) = ip.parse::<Ipv4Addr>() {
            let offset = u32::from(ip).wrapping_sub(u32::from(self.subnet.address(0)));
            self.leased.remove(&offset);
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
}
