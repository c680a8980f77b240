//! The advertisement (GENI AM API v3, "ListResources"): the components table
//! minus current reservations, rendered by `geni_rspec::advert` with the
//! operational state machine of each sliver type. While the backend does
//! not answer, nothing is available: clients must not allocate into a
//! cloud that cannot provision. While the aggregate is draining
//! (`store::drain`), nothing is available either, as Allocate refuses:
//! the nodes are still listed, with `<available now="false"/>`.

use super::{Aggregate, CoreError};
use crate::store::components::{self, ComponentRow, SliverTypeSpec, Usage};
use crate::store::{drain, outage};
use chrono::TimeDelta;
use geni_rspec::VmSize;
use geni_rspec::advert::{self, DiskImage, Inventory, InventoryNode, Location, SliverOffer};
use std::collections::BTreeMap;

/// How long an advertisement may be relied on.
const AD_VALIDITY: TimeDelta = TimeDelta::hours(1);

impl Aggregate {
    /// The advertisement RSpec; with `available_only`, only components
    /// that can take at least one more sliver now.
    pub fn advertisement(&self, available_only: bool) -> Result<String, CoreError> {
        let now = self.now();
        let (inventory, usage, outage, drain) = self.store.read(|conn| {
            Ok::<_, CoreError>((
                components::all(conn)?,
                components::usage(conn, now)?,
                outage::current(conn)?,
                drain::current(conn)?,
            ))
        })?;
        let free = Usage::default();
        let allocating = outage.is_none() && drain.is_none();
        let nodes = inventory
            .iter()
            .map(|c| node(c, usage.get(&c.id).unwrap_or(&free), allocating))
            .filter(|n| n.available || !available_only)
            .collect();
        Ok(advert::build(&Inventory {
            component_manager_id: self.config.cm_urn.clone(),
            generated: now,
            expires: now + AD_VALIDITY,
            nodes,
            state_machines: BTreeMap::new(),
        }))
    }
}

/// One advertised node: available when the aggregate is `allocating`
/// (the cloud answers, no draining) and some sliver type still fits.
fn node(c: &ComponentRow, used: &Usage, allocating: bool) -> InventoryNode {
    let available = allocating
        && c.details
            .sliver_types
            .iter()
            .any(|s| c.fits(used, s.cpus, s.memory_mb, false));
    InventoryNode {
        component_id: c.id.clone(),
        component_name: c.name.clone(),
        exclusive: c.exclusive,
        available,
        hardware_types: c.details.hardware_types.clone(),
        sliver_types: c
            .details
            .sliver_types
            .iter()
            .map(|s| SliverOffer {
                name: s.name.clone(),
                max_size: max_size(s),
                disk_images: s
                    .disk_images
                    .iter()
                    .map(|d| DiskImage {
                        name: d.name.clone(),
                        os: d.os.clone(),
                        version: d.version.clone(),
                        description: d.description.clone(),
                        default: d.default,
                    })
                    .collect(),
            })
            .collect(),
        location: c.details.location.as_ref().map(|l| Location {
            country: l.country.clone(),
            latitude: l.latitude.clone(),
            longitude: l.longitude.clone(),
        }),
    }
}

/// The largest size a request may give a sliver of type `s`, advertised
/// as its `<emulab:xen>`; none for a type stored without bounds.
fn max_size(s: &SliverTypeSpec) -> Option<VmSize> {
    let cores = u32::try_from(s.max_cores?).ok()?;
    let ram_mb = u64::try_from(s.max_ram_mb?).ok()?;
    let disk_gb = s.max_disk_gb.and_then(|gb| u64::try_from(gb).ok());
    Some(VmSize {
        cores,
        ram_mb,
        disk_gb,
    })
}
