//! The seeded documents the simulator starts from: the objects recorded
//! from a real oned 7.4.0 (host, network, image, template, user,
//! datastores, cluster, configuration).

use crate::xml::{self, Element};

/// HOST "localhost" as `one.host.info` returned it.
pub const HOST: &str = include_str!("../../seed/host.xml");
/// VNET "geni-net" as `one.vn.info` returned it before any lease.
pub const VNET: &str = include_str!("../../seed/vnet.xml");
/// IMAGE "geni-img".
pub const IMAGE: &str = include_str!("../../seed/image.xml");
/// VMTEMPLATE "geni-small".
pub const TEMPLATE: &str = include_str!("../../seed/template.xml");
/// USER oneadmin.
pub const USER: &str = include_str!("../../seed/user.xml");
/// The datastore pool (the dummy system, image and file datastores).
pub const DATASTORE_POOL: &str = include_str!("../../seed/datastorepool.xml");
/// The cluster pool (cluster "default").
pub const CLUSTER_POOL: &str = include_str!("../../seed/clusterpool.xml");
/// oned.conf as `one.system.config` returned it.
pub const CONFIG: &str = include_str!("../../seed/config.xml");

/// A seed document as an element tree. The seeds are constants of this
/// crate, checked by its tests, so a parse failure is a build defect.
pub(crate) fn element(text: &str) -> Element {
    xml::parse(text).unwrap_or_else(|e| panic!("seed document does not parse: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_seed_parses() {
        for text in [
            HOST,
            VNET,
            IMAGE,
            TEMPLATE,
            USER,
            DATASTORE_POOL,
            CLUSTER_POOL,
            CONFIG,
        ] {
            assert!(xml::parse(text).is_ok());
        }
    }
}
