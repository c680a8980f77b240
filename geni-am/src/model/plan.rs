//! The node plan of a sliver: what its VM needs from the request besides
//! the size and image on the sliver itself — its NICs on this aggregate's
//! link networks (with the addresses the request asks for) and its
//! `<install>` and `<execute>` services (GENI RSpec v3, "services"). The
//! core writes it at Allocate, as JSON beside the sliver; the workers read
//! it and never the request text.

use serde::{Deserialize, Serialize};

/// What one node of a request asks for besides its VM.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodePlan {
    /// Its NICs on link networks, in interface order.
    pub nics: Vec<PlannedNic>,
    /// Its `<install>` services, in order.
    pub install: Vec<InstallService>,
    /// Its `<execute>` services, in order.
    pub execute: Vec<ExecuteService>,
}

/// One interface of a node on a link network.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlannedNic {
    /// The interface's `client_id`.
    pub interface: String,
    /// The link it is on.
    pub link: LinkSliver,
    /// The IPv4 address the request asks for.
    pub ip: Option<String>,
    /// The netmask the request gives with it.
    pub netmask: Option<String>,
}

/// One link sliver: the network of one link of a request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinkSliver {
    /// The link's sliver URN, the tag its network is created with.
    pub urn: String,
    /// The link's `client_id`, the network's name.
    pub client_id: String,
    /// The IPv4 addresses the request asks for on the link's interfaces
    /// (of every node), in the order of its `interface_ref`s: the link's
    /// network must hold them.
    pub addresses: Vec<String>,
}

/// One `<install>` service: an archive to unpack into the VM.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InstallService {
    /// Where the archive is.
    pub url: String,
    /// Where in the VM it is unpacked.
    pub install_path: String,
}

/// One `<execute>` service: a command run when the VM boots.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecuteService {
    /// The shell it runs in.
    pub shell: String,
    /// The command.
    pub command: String,
}
