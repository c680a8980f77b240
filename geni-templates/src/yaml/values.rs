//! Reading the values templates write: sizes with units (`4 GB`,
//! `512 MB`), operating system versions, IPv4 networks in CIDR notation.
//!
//! Sizes: the aggregate counts memory in MiB and disk in GB (as the
//! Emulab `xen` element does), and clouds name their flavours in binary
//! sizes, so TOSCA's decimal units are read as their binary counterparts:
//! `4 GB` is 4096 MiB, `1 GB` of disk is one GB of disk. Fractions round
//! up to the next whole MiB or GB.

use std::net::Ipv4Addr;

/// A size in bytes from `text` (`4 GB`, `512MiB`, `1024 kB`, `10 B`).
pub(crate) fn bytes(text: &str) -> Result<f64, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: f64 = number
        .parse()
        .map_err(|_| format!("'{text}' is not a size such as '4 GB'"))?;
    let factor: f64 = match unit.trim().to_ascii_lowercase().as_str() {
        "b" => 1.0,
        "kb" | "kib" => 1024.0,
        "mb" | "mib" => 1024.0 * 1024.0,
        "gb" | "gib" => 1024.0 * 1024.0 * 1024.0,
        "tb" | "tib" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        "" => {
            return Err(format!(
                "'{text}' has no unit (B, kB, MB, GB, TB, or KiB … TiB)"
            ));
        }
        other => return Err(format!("'{text}': unknown size unit '{other}'")),
    };
    Ok(number * factor)
}

/// `bytes` in whole MiB, rounded up.
pub(crate) fn mib(bytes: f64) -> u64 {
    (bytes / (1024.0 * 1024.0)).ceil() as u64
}

/// `bytes` in whole GB, rounded up.
pub(crate) fn gb(bytes: f64) -> u64 {
    (bytes / (1024.0 * 1024.0 * 1024.0)).ceil() as u64
}

/// Whether the version a template asks for (`16.04`, `7`, `18.0`) is
/// that of an offered image (`16.04`, `7.9`, `18`): each component asked
/// for equals the offered one, numerically when both are numbers, an
/// offered component left out counting as 0.
pub(crate) fn version_matches(wanted: &str, offered: &str) -> bool {
    let offered: Vec<&str> = offered.trim().split(['.', '-']).collect();
    wanted.trim().split(['.', '-']).enumerate().all(|(i, w)| {
        let o = offered.get(i).copied().unwrap_or("0");
        match (w.parse::<u64>(), o.parse::<u64>()) {
            (Ok(w), Ok(o)) => w == o,
            _ => w.eq_ignore_ascii_case(o),
        }
    })
}

/// An IPv4 network, `192.168.0.0/24`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Cidr {
    /// The network address (host bits cleared).
    pub network: Ipv4Addr,
    /// The prefix length.
    pub prefix: u8,
}

impl Cidr {
    /// Parses `a.b.c.d/n` (IPv4 only).
    pub fn parse(text: &str) -> Result<Cidr, String> {
        let bad = || format!("'{text}' is not an IPv4 network such as 192.168.0.0/24");
        let (address, prefix) = text.trim().split_once('/').ok_or_else(bad)?;
        let address: Ipv4Addr = address.parse().map_err(|_| bad())?;
        let prefix: u8 = prefix.parse().map_err(|_| bad())?;
        if prefix > 30 {
            return Err(format!(
                "'{text}' leaves no room for hosts (prefix at most /30)"
            ));
        }
        let cidr = Cidr {
            network: address,
            prefix,
        };
        Ok(Cidr {
            network: Ipv4Addr::from(u32::from(address) & cidr.mask_bits()),
            prefix,
        })
    }

    fn mask_bits(&self) -> u32 {
        u32::MAX
            .checked_shl(32 - u32::from(self.prefix))
            .unwrap_or(0)
    }

    /// The netmask, e.g. 255.255.255.0.
    pub fn netmask(&self) -> Ipv4Addr {
        Ipv4Addr::from(self.mask_bits())
    }

    /// Whether `address` is a host address of the network (neither the
    /// network nor the broadcast address).
    pub fn holds(&self, address: Ipv4Addr) -> bool {
        let a = u32::from(address);
        let n = u32::from(self.network);
        a & self.mask_bits() == n && a != n && a != self.broadcast()
    }

    fn broadcast(&self) -> u32 {
        u32::from(self.network) | !self.mask_bits()
    }

    /// The first and last host addresses.
    pub fn hosts(&self) -> (Ipv4Addr, Ipv4Addr) {
        (
            Ipv4Addr::from(u32::from(self.network) + 1),
            Ipv4Addr::from(self.broadcast() - 1),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_units_are_read_as_binary_and_round_up() {
        assert_eq!(mib(bytes("4 GB").unwrap()), 4096);
        assert_eq!(mib(bytes("512 MB").unwrap()), 512);
        assert_eq!(mib(bytes("4096 kB").unwrap()), 4);
        assert_eq!(mib(bytes("1 kB").unwrap()), 1);
        assert_eq!(gb(bytes("10 GB").unwrap()), 10);
        assert_eq!(gb(bytes("1.5 GiB").unwrap()), 2);
        assert!(bytes("4").unwrap_err().contains("no unit"));
        assert!(
            bytes("4 parsecs")
                .unwrap_err()
                .contains("unknown size unit")
        );
    }

    #[test]
    fn versions_match_component_by_component() {
        assert!(version_matches("16.04", "16.04"));
        assert!(version_matches("7", "7.9"));
        assert!(version_matches("18.0", "18"));
        assert!(!version_matches("6.5", "22.04"));
        assert!(!version_matches("16.04", "16.10"));
    }

    #[test]
    fn networks_give_their_netmask_and_hosts() {
        let c = Cidr::parse("192.168.1.7/24").unwrap();
        assert_eq!(c.network, Ipv4Addr::new(192, 168, 1, 0));
        assert_eq!(c.netmask(), Ipv4Addr::new(255, 255, 255, 0));
        assert_eq!(c.hosts().1, Ipv4Addr::new(192, 168, 1, 254));
        assert!(c.holds(Ipv4Addr::new(192, 168, 1, 1)));
        assert!(!c.holds(Ipv4Addr::new(192, 168, 1, 255)));
        assert!(Cidr::parse("fd00::/64").is_err());
    }
}
