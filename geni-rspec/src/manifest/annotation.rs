//! What the AM knows about its slivers that the request does not say: the
//! annotations the manifest builder writes into the request, keyed by the
//! `client_id` the experimenter chose.

use std::collections::BTreeMap;

/// Everything the AM adds to one manifest, keyed by `client_id`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Annotations {
    /// Per `<node>`.
    pub nodes: BTreeMap<String, NodeAnnotation>,
    /// Per `<interface>` (of a node of this AM).
    pub interfaces: BTreeMap<String, InterfaceAnnotation>,
    /// Per `<link>`.
    pub links: BTreeMap<String, LinkAnnotation>,
}

/// What the AM reports for one node.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NodeAnnotation {
    /// The sliver URN; the same string as `geni_sliver_urn` in the API reply.
    pub sliver_id: String,
    /// The sliver type the node got; written as `<sliver_type>` when the
    /// request left the choice to the aggregate.
    pub sliver_type: Option<String>,
    /// The size the VM got, written as the sliver type's Emulab `<xen>`.
    pub size: Option<crate::view::VmSize>,
    /// The component the node was placed on.
    pub component_id: Option<String>,
    /// That component's short name.
    pub component_name: Option<String>,
    /// Whether the node got its component to itself.
    pub exclusive: Option<bool>,
    /// The node's DNS name, written as `<host name=…>`.
    pub hostname: Option<String>,
    /// One `<login>` per account (and one for the gateway when proxied).
    pub logins: Vec<Login>,
    /// ssh-user `<services_user>` entries: who may log in with which keys.
    pub users: Vec<SshUser>,
    /// The jFed SSH proxy to reach the node through, if any.
    pub proxy: Option<Proxy>,
}

/// A `<login>` service.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Login {
    /// `authentication`, normally `ssh-keys`.
    pub authentication: String,
    /// Host to connect to.
    pub hostname: String,
    /// TCP port (22 for plain SSH).
    pub port: u16,
    /// Account name.
    pub username: Option<String>,
}

impl Login {
    /// An `ssh-keys` login on `hostname:port` as `username`.
    pub fn ssh(hostname: &str, port: u16, username: &str) -> Self {
        Self {
            authentication: "ssh-keys".to_owned(),
            hostname: hostname.to_owned(),
            port,
            username: Some(username.to_owned()),
        }
    }
}

/// An ssh-user extension entry: one login name and the keys accepted for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SshUser {
    /// Account name.
    pub login: String,
    /// URN of the GENI user the keys came from.
    pub user_urn: Option<String>,
    /// OpenSSH public keys, one per line of `authorized_keys`.
    pub public_keys: Vec<String>,
}

/// A jFed SSH proxy entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proxy {
    /// `user@gateway:port` to connect through.
    pub proxy: String,
    /// `user@node:port` the gateway leads to (the `for` attribute).
    pub target: String,
}

/// What the AM reports for one interface of one of its nodes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InterfaceAnnotation {
    /// The interface's sliver URN.
    pub sliver_id: Option<String>,
    /// The physical or virtual component it was bound to.
    pub component_id: Option<String>,
    /// MAC address, `xx:xx:xx:xx:xx:xx`.
    pub mac_address: Option<String>,
    /// Addresses configured on it. When there are any, they replace the
    /// `<ip>` elements of the request (the addresses it asked for): a
    /// manifest shows only addresses the interface really has. When there
    /// are none, the request's `<ip>` elements stay.
    pub ips: Vec<IpAddress>,
}

/// An `<ip>` of an interface.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IpAddress {
    /// The address.
    pub address: String,
    /// Netmask in dotted form (IPv4) or prefix length.
    pub netmask: Option<String>,
    /// `ipv4` or `ipv6`.
    pub kind: Option<String>,
}

impl IpAddress {
    /// An IPv4 address with its netmask.
    pub fn ipv4(address: &str, netmask: &str) -> Self {
        Self {
            address: address.to_owned(),
            netmask: Some(netmask.to_owned()),
            kind: Some("ipv4".to_owned()),
        }
    }
}

/// What the AM reports for one link.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LinkAnnotation {
    /// The link's sliver URN.
    pub sliver_id: Option<String>,
    /// The VLAN carrying it.
    pub vlantag: Option<String>,
}
