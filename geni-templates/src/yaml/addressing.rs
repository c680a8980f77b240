//! Addresses for the interfaces of one link: those the template gives
//! are kept (and must lie in the link's network); the others are handed
//! out in order from the allocation pool (`start_ip`…`end_ip`, or the
//! network's hosts), skipping the gateway and the addresses taken.

use super::values::Cidr;
use std::collections::BTreeSet;
use std::net::Ipv4Addr;

/// The addresses of one network still free.
#[derive(Debug, Clone)]
pub(crate) struct Pool {
    cidr: Cidr,
    next: u32,
    last: u32,
    taken: BTreeSet<Ipv4Addr>,
}

impl Pool {
    /// The pool of `cidr` from `start` to `end` (default: its hosts),
    /// never handing out `gateway`.
    pub fn new(
        cidr: Cidr,
        start: Option<Ipv4Addr>,
        end: Option<Ipv4Addr>,
        gateway: Option<Ipv4Addr>,
    ) -> Result<Pool, String> {
        let (first, last) = cidr.hosts();
        for (what, address) in [("start", start), ("end", end), ("gateway", gateway)] {
            if let Some(a) = address.filter(|a| !cidr.holds(*a)) {
                return Err(format!(
                    "the {what} address {a} is not a host of {}/{}",
                    cidr.network, cidr.prefix
                ));
            }
        }
        let pool = Pool {
            cidr,
            next: u32::from(start.unwrap_or(first)),
            last: u32::from(end.unwrap_or(last)),
            taken: gateway.into_iter().collect(),
        };
        Ok(pool)
    }

    /// The network.
    pub fn cidr(&self) -> Cidr {
        self.cidr
    }

    /// Takes `address`, given by the template; refused when it is outside
    /// the network or taken twice.
    pub fn take(&mut self, address: Ipv4Addr) -> Result<(), String> {
        if !self.cidr.holds(address) {
            return Err(format!(
                "{address} is not a host of {}/{}",
                self.cidr.network, self.cidr.prefix
            ));
        }
        if !self.taken.insert(address) {
            return Err(format!("{address} is given to two interfaces"));
        }
        Ok(())
    }

    /// The next free address of the pool.
    pub fn next(&mut self) -> Result<Ipv4Addr, String> {
        while self.next <= self.last {
            let address = Ipv4Addr::from(self.next);
            self.next += 1;
            if self.taken.insert(address) {
                return Ok(address);
            }
        }
        Err(format!(
            "the allocation pool of {}/{} has no address left",
            self.cidr.network, self.cidr.prefix
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_come_from_the_pool_skipping_the_gateway_and_those_taken() {
        let cidr = Cidr::parse("10.0.0.0/24").unwrap();
        let mut pool = Pool::new(cidr, None, None, Some(Ipv4Addr::new(10, 0, 0, 1))).unwrap();
        pool.take(Ipv4Addr::new(10, 0, 0, 2)).unwrap();
        assert_eq!(pool.next().unwrap(), Ipv4Addr::new(10, 0, 0, 3));
        assert!(pool.take(Ipv4Addr::new(10, 0, 0, 3)).is_err());
        assert!(pool.take(Ipv4Addr::new(10, 0, 1, 3)).is_err());
    }

    #[test]
    fn a_pool_runs_out_at_its_end_address() {
        let cidr = Cidr::parse("10.0.0.0/24").unwrap();
        let start = Some(Ipv4Addr::new(10, 0, 0, 100));
        let mut pool = Pool::new(cidr, start, start, None).unwrap();
        assert_eq!(pool.next().unwrap(), Ipv4Addr::new(10, 0, 0, 100));
        assert!(pool.next().unwrap_err().contains("no address left"));
        assert!(Pool::new(cidr, Some(Ipv4Addr::new(10, 1, 0, 1)), None, None).is_err());
    }
}
