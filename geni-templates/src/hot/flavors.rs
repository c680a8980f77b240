//! OpenStack's classic flavour names, for templates that name a flavour
//! the aggregate does not offer as a sliver type: the sizes of the
//! flavours Nova used to create by default.
//!
//! | flavour | cores | memory (MB) | disk (GB) |
//! |---|---|---|---|
//! | m1.tiny | 1 | 512 | 1 |
//! | m1.small | 1 | 2048 | 20 |
//! | m1.medium | 2 | 4096 | 40 |
//! | m1.large | 4 | 8192 | 80 |
//! | m1.xlarge | 8 | 16384 | 160 |

/// The flavours, as (name, cores, memory in MB, disk in GB).
pub(crate) const FLAVORS: &[(&str, u32, u64, u64)] = &[
    ("m1.tiny", 1, 512, 1),
    ("m1.small", 1, 2048, 20),
    ("m1.medium", 2, 4096, 40),
    ("m1.large", 4, 8192, 80),
    ("m1.xlarge", 8, 16384, 160),
];

/// The size of flavour `name`, if it is one of [`FLAVORS`].
pub(crate) fn size(name: &str) -> Option<(u32, u64, u64)> {
    FLAVORS
        .iter()
        .find(|(n, ..)| *n == name)
        .map(|(_, cores, ram, disk)| (*cores, *ram, *disk))
}

/// The flavour names, for messages.
pub(crate) fn names() -> String {
    FLAVORS
        .iter()
        .map(|(n, ..)| *n)
        .collect::<Vec<_>>()
        .join(", ")
}
