//! Address pools of the simulated cloud: one per network (the control
//! network and one per link), handing out IPv4 addresses, and the NICs
//! that hold them, with the MAC addresses derived from the IPs the way
//! OpenNebula does (`02:00` + the IP). A link network is a plain layer-2
//! segment: an address the request asks for is leased as asked when no
//! other NIC on it holds it, also outside the pool's subnet
//! (experimenters choose their own addressing).

use super::config::Subnet;
use crate::{BackendError, NetHandle, NicAddress};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::net::Ipv4Addr;

/// The addresses of one network and which of them are leased.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AddressPool {
    subnet: Subnet,
    leased: BTreeSet<u32>,
    /// Addresses outside the subnet leased because a request asked for them.
    #[serde(default)]
    asked: BTreeSet<Ipv4Addr>,
    /// Every offset below it is leased: where the search for a free one
    /// starts.
    #[serde(skip)]
    free_from: u32,
}

/// One NIC of a simulated VM as the VM keeps it for its life, in ten
/// bytes: a hundred thousand VMs held their addresses as three strings
/// and a network handle each (docs/PERFORMANCE.md, "Memory"). The MAC
/// address and the netmask are derived when the NIC is reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Nic {
    /// The slot of the link network; `None` on the control network.
    pub link: Option<u16>,
    /// The address.
    pub ip: Ipv4Addr,
    /// The prefix length of the pool's subnet, when the address is in it.
    pub prefix: Option<u8>,
}

impl Nic {
    /// The NIC as the cloud reports it.
    pub fn address(&self) -> NicAddress {
        NicAddress {
            network: self.link.map(|slot| NetHandle(slot.to_string())),
            ip: self.ip.to_string(),
            mac: mac_of(self.ip),
            netmask: self.prefix.map(|prefix| {
                Ipv4Addr::from(u32::MAX << (32 - u32::from(prefix.min(32)))).to_string()
            }),
        }
    }

    /// The NIC a reported address describes (state files keep them so);
    /// an error names what does not parse.
    pub fn from_address(nic: &NicAddress) -> Result<Nic, String> {
        let link = match &nic.network {
            None => None,
            Some(net) => Some(
                net.0
                    .parse()
                    .map_err(|_| format!("`{}` is not a simulated network", net.0))?,
            ),
        };
        let ip = nic
            .ip
            .parse()
            .map_err(|_| format!("`{}` is not an IPv4 address", nic.ip))?;
        let prefix = match &nic.netmask {
            None => None,
            Some(mask) => {
                let bits = mask
                    .parse::<Ipv4Addr>()
                    .map(u32::from)
                    .ok()
                    .filter(|bits| bits.leading_ones() + bits.trailing_zeros() == 32)
                    .ok_or_else(|| format!("`{mask}` is not a netmask"))?;
                u8::try_from(bits.leading_ones()).ok()
            }
        };
        Ok(Nic { link, ip, prefix })
    }
}

impl AddressPool {
    /// A pool over `subnet`.
    pub fn new(subnet: Subnet) -> AddressPool {
        AddressPool {
            subnet,
            leased: BTreeSet::new(),
            asked: BTreeSet::new(),
            free_from: 0,
        }
    }

    /// The same subnet with nothing leased.
    pub fn emptied(&self) -> AddressPool {
        AddressPool::new(self.subnet)
    }

    /// Marks `ip` leased, as a NIC holding it was leased it.
    pub fn hold(&mut self, ip: Ipv4Addr) {
        match self.offset_of(ip) {
            Some(offset) => {
                self.leased.insert(offset);
            }
            None => {
                self.asked.insert(ip);
            }
        }
    }

    /// Leases `asked` (the lowest free address of the subnet when `None`)
    /// to a NIC on `link` (`None`: the control network). An asked address
    /// that is not IPv4 or that a NIC already holds is refused, never
    /// replaced by another: a VM must not come up with an address its
    /// experimenter did not ask for.
    pub fn lease_asked(
        &mut self,
        link: Option<u16>,
        asked: Option<&str>,
    ) -> Result<Nic, BackendError> {
        let Some(text) = asked else {
            return self.lease(link);
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
        Ok(self.nic(link, ip))
    }

    /// Leases the lowest free address to a NIC on `link`.
    pub fn lease(&mut self, link: Option<u16>) -> Result<Nic, BackendError> {
        // The first offset from `free_from` on that is not leased, walking
        // the set in order: a hundred thousand leases took a lookup per
        // offset, from the first, each.
        let mut free = self.free_from;
        for leased in self.leased.range(free..) {
            if *leased != free {
                break;
            }
            free += 1;
        }
        if free >= self.subnet.capacity() {
            return Err(BackendError::Capacity(format!(
                "simulated network {}/{} has no free address",
                self.subnet.base, self.subnet.prefix
            )));
        }
        self.leased.insert(free);
        self.free_from = free + 1;
        Ok(self.nic(link, self.subnet.address(free)))
    }

    /// Returns an address to the pool; unknown addresses are ignored.
    pub fn release(&mut self, ip: Ipv4Addr) {
        match self.offset_of(ip) {
            Some(offset) => {
                self.leased.remove(&offset);
                self.free_from = self.free_from.min(offset);
            }
            None => {
                self.asked.remove(&ip);
            }
        }
    }

    /// The pool offset of `ip`, when it is one of the subnet's VM addresses.
    fn offset_of(&self, ip: Ipv4Addr) -> Option<u32> {
        let offset = u32::from(ip).checked_sub(u32::from(self.subnet.address(0)))?;
        (offset < self.subnet.capacity()).then_some(offset)
    }

    /// The NIC on `link` holding `ip`, with the subnet's prefix when the
    /// address is in it.
    fn nic(&self, link: Option<u16>, ip: Ipv4Addr) -> Nic {
        Nic {
            link,
            ip,
            prefix: self.offset_of(ip).map(|_| self.subnet.prefix),
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
        let mut pool = AddressPool::new(Subnet::parse("192.168.5.0/30").unwrap());
        let first = pool.lease(None).unwrap().address();
        assert_eq!(first.ip, "192.168.5.2");
        assert_eq!(first.mac, "02:00:c0:a8:05:02");
        assert_eq!(first.netmask.as_deref(), Some("255.255.255.252"));
        assert_eq!(first.network, None);
        let err = pool.lease(None).unwrap_err();
        assert!(matches!(err, BackendError::Capacity(_)), "{err}");
        pool.release(Ipv4Addr::new(192, 168, 5, 2));
        assert_eq!(pool.lease(None).unwrap().address().ip, "192.168.5.2");
    }

    #[test]
    fn asked_addresses_are_leased_when_free() {
        let mut pool = AddressPool::new(Subnet::parse("192.168.5.0/24").unwrap());
        let inside = pool
            .lease_asked(Some(7), Some("192.168.5.40"))
            .unwrap()
            .address();
        assert_eq!(inside.network, Some(NetHandle("7".into())));
        assert_eq!(inside.ip, "192.168.5.40");
        assert_eq!(inside.netmask.as_deref(), Some("255.255.255.0"));
        let outside = pool
            .lease_asked(Some(7), Some("10.10.0.100"))
            .unwrap()
            .address();
        assert_eq!(outside.ip, "10.10.0.100");
        assert_eq!(outside.mac, "02:00:0a:0a:00:64");
        assert_eq!(outside.netmask, None);
        pool.release(Ipv4Addr::new(10, 10, 0, 100));
        assert_eq!(
            pool.lease_asked(Some(7), Some("10.10.0.100")).unwrap().ip,
            Ipv4Addr::new(10, 10, 0, 100)
        );
    }

    #[test]
    fn an_asked_address_that_is_held_or_not_ipv4_is_refused_not_replaced() {
        let mut pool = AddressPool::new(Subnet::parse("192.168.5.0/24").unwrap());
        pool.lease_asked(None, Some("192.168.5.40")).unwrap();
        pool.lease_asked(None, Some("10.10.0.100")).unwrap();
        for (asked, says) in [
            ("192.168.5.40", "already held"),
            ("10.10.0.100", "already held"),
            ("not an ip", "not an IPv4 address"),
        ] {
            let err = pool.lease_asked(None, Some(asked)).unwrap_err();
            assert!(
                matches!(&err, BackendError::Permanent(m) if m.contains(says)),
                "{asked}: {err}"
            );
        }
        assert_eq!(
            pool.lease(None).unwrap().ip,
            Ipv4Addr::new(192, 168, 5, 2),
            "nothing else was leased"
        );
    }

    #[test]
    fn the_lowest_free_address_is_leased_first() {
        let mut pool = AddressPool::new(Subnet::parse("10.1.0.0/24").unwrap());
        let leased: Vec<Ipv4Addr> = (0..5).map(|_| pool.lease(None).unwrap().ip).collect();
        assert_eq!(leased[4], Ipv4Addr::new(10, 1, 0, 6));
        pool.release(leased[3]);
        pool.release(leased[1]);
        assert_eq!(pool.lease(None).unwrap().ip, leased[1]);
        assert_eq!(pool.lease(None).unwrap().ip, leased[3]);
        assert_eq!(pool.lease(None).unwrap().ip, Ipv4Addr::new(10, 1, 0, 7));
    }

    #[test]
    fn a_nic_reads_back_from_the_address_it_reports() {
        let mut pool = AddressPool::new(Subnet::parse("192.168.5.0/24").unwrap());
        for nic in [
            pool.lease(None).unwrap(),
            pool.lease(Some(255)).unwrap(),
            pool.lease_asked(Some(3), Some("10.0.0.9")).unwrap(),
        ] {
            assert_eq!(Nic::from_address(&nic.address()), Ok(nic));
        }
        let mut odd = pool.lease(None).unwrap().address();
        odd.netmask = Some("255.0.255.0".into());
        assert!(Nic::from_address(&odd).unwrap_err().contains("netmask"));
    }
}
