//! Link reservations from the parent network: the block of addresses a
//! link with requested addresses must reserve (`one.vn.reserve` with `IP`
//! and `SIZE`), and the reservation template.

use super::ExtraTemplate;
use geni_am_backend::{AddressRange, BackendError};

/// The addresses a link reservation starts at and spans: from the lowest
/// requested address, at least the configured size and far enough to hold
/// the highest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct AddressBlock {
    first: std::net::Ipv4Addr,
    last: std::net::Ipv4Addr,
    /// How many addresses to reserve from `first`.
    pub(super) size: u32,
}

/// The template of a reservation `name` of `size` addresses, from the
/// first of `block` when given (else where OpenNebula chooses).
pub(super) fn reservation(
    name: &str,
    size: u32,
    block: Option<&AddressBlock>,
) -> Result<String, BackendError> {
    let mut template = ExtraTemplate::new();
    template
        .single("NAME", name)?
        .single("SIZE", &size.to_string())?;
    if let Some(block) = block {
        template.single("IP", &block.first.to_string())?;
    }
    Ok(template.to_xml())
}

impl AddressBlock {
    /// How many addresses from the first requested to the last.
    pub(super) fn span(&self) -> u32 {
        u32::from(self.last) - u32::from(self.first) + 1
    }

    /// The block for `addresses` (`None` when there are none), refusing a
    /// text that is not an IPv4 address.
    pub(super) fn holding(
        addresses: &[String],
        size: u32,
    ) -> Result<Option<AddressBlock>, BackendError> {
        let mut parsed = Vec::with_capacity(addresses.len());
        for text in addresses {
            let ip = text.trim().parse::<std::net::Ipv4Addr>().map_err(|_| {
                BackendError::Permanent(format!(
                    "the requested link address `{text}` is not an IPv4 address"
                ))
            })?;
            parsed.push(u32::from(ip));
        }
        let (Some(low), Some(high)) = (parsed.iter().min(), parsed.iter().max()) else {
            return Ok(None);
        };
        Ok(Some(AddressBlock {
            first: (*low).into(),
            last: (*high).into(),
            size: size.max(high - low + 1),
        }))
    }
}

impl std::fmt::Display for AddressBlock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        AddressRange {
            first: self.first,
            last: self.last,
        }
        .fmt(f)
    }
}
