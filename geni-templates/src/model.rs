//! The one request model every front end translates into, what the
//! aggregate offers to translate against, and the refusals a translation
//! ends with. A [`Request`] holds exactly what a GENI v3 request RSpec of
//! this aggregate can say: nodes (sliver type, Emulab `xen` size, disk
//! image, interfaces with IPv4 addresses, install and execute services),
//! links between interfaces, and the template's outputs.

use std::collections::BTreeMap;
use std::fmt;

/// What the aggregate offers, as its advertisement says: the sliver types
/// with their largest size and bootable images. Front ends choose sliver
/// types and images from it and name what it offers in their refusals.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Offer {
    /// The advertised sliver types, in advertisement order.
    pub sliver_types: Vec<OfferedSliverType>,
}

/// One advertised sliver type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OfferedSliverType {
    /// The `sliver_type` name.
    pub name: String,
    /// The largest size a request may ask for, when the type can be sized.
    pub max_size: Option<Size>,
    /// The size a VM of the type gets when a request does not size it;
    /// a template that sizes only some of cores and memory gets the rest
    /// from here.
    pub default_size: Size,
    /// The images it boots, the default first.
    pub images: Vec<OfferedImage>,
}

/// One advertised disk image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OfferedImage {
    /// The image's `name` (a URN) as the advertisement gives it.
    pub name: String,
    /// Operating system, e.g. `Linux` or `Ubuntu`.
    pub os: Option<String>,
    /// Operating system version.
    pub version: Option<String>,
    /// One line for people.
    pub description: Option<String>,
}

/// Values for a template's inputs or parameters, by name, as the caller
/// passed them (the Allocate option `geni_template_inputs`).
pub type Inputs = BTreeMap<String, Scalar>;

/// One input value.
#[derive(Debug, Clone, PartialEq)]
pub enum Scalar {
    /// A string.
    Str(String),
    /// An integer.
    Int(i64),
    /// A floating-point number.
    Float(f64),
    /// A boolean.
    Bool(bool),
}

/// A request, in the terms of a GENI v3 request RSpec.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Request {
    /// The VMs, in document order.
    pub nodes: Vec<Node>,
    /// The links between the nodes' interfaces.
    pub links: Vec<Link>,
    /// The template's outputs, reported back in the manifest.
    pub outputs: Vec<Output>,
}

/// One VM.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Node {
    /// The template's name for it (node template, RADL system, HOT
    /// resource), the `client_id` in the RSpec and manifest; a RADL
    /// `deploy` of several gets `name-1`, `name-2`, ….
    pub client_id: String,
    /// The sliver type; `None` lets the aggregate choose.
    pub sliver_type: Option<String>,
    /// The size asked for (Emulab `xen`); `None` takes the sliver type's.
    pub size: Option<Size>,
    /// The disk image's name as offered; `None` boots the default.
    pub image: Option<String>,
    /// The network interfaces, in order.
    pub interfaces: Vec<Interface>,
    /// Files to unpack before the execute services run.
    pub installs: Vec<Install>,
    /// Commands to run at boot.
    pub executes: Vec<Execute>,
}

/// A VM size: the Emulab `xen` element's `cores`, `ram` and `disk`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Size {
    /// Virtual CPUs.
    pub cores: u32,
    /// Memory in MiB.
    pub ram_mb: u64,
    /// Disk in GB; `None` when the image decides.
    pub disk_gb: Option<u64>,
}

/// One network interface of a node.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Interface {
    /// Its `client_id`, unique in the request (`node:ifN` unless the
    /// template names it).
    pub client_id: String,
    /// The IPv4 address asked for, if any.
    pub ipv4: Option<Ipv4Address>,
}

/// An IPv4 address with its netmask, as the RSpec `ip` element holds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ipv4Address {
    /// The address.
    pub address: std::net::Ipv4Addr,
    /// The netmask, e.g. 255.255.255.0.
    pub netmask: std::net::Ipv4Addr,
}

/// A link (a template's network) joining interfaces of nodes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Link {
    /// Its `client_id`: the template's name for the network.
    pub client_id: String,
    /// The `client_id`s of the interfaces it joins.
    pub interfaces: Vec<String>,
}

/// An `install` service: an archive unpacked at boot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Install {
    /// Where the archive is fetched from.
    pub url: String,
    /// Where it is unpacked.
    pub install_path: String,
}

/// An `execute` service: a command run at boot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Execute {
    /// The shell, e.g. `sh` or `bash`.
    pub shell: String,
    /// The command or script text.
    pub command: String,
}

/// One template output, reported in the manifest.
#[derive(Debug, Clone, PartialEq)]
pub struct Output {
    /// The output's name in the template.
    pub name: String,
    /// Its description, if the template gives one.
    pub description: Option<String>,
    /// What it evaluates to.
    pub value: OutputValue,
}

/// What an output evaluates to.
#[derive(Debug, Clone, PartialEq)]
pub enum OutputValue {
    /// A value known when the template is translated.
    Literal(String),
    /// An address of a node, known once it runs: of the named interface,
    /// or the node's first (control) address when `interface` is `None`.
    Address {
        /// The node's `client_id`.
        node: String,
        /// The interface's `client_id`, if one is meant.
        interface: Option<String>,
    },
}

/// Why a document cannot be served, one construct at a time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// 1-based line of the construct in the document (0 when unknown).
    pub line: usize,
    /// 1-based column, when the parser knows it.
    pub column: Option<usize>,
    /// What is refused and why, naming the construct, e.g. `node 'db' of
    /// type tosca.nodes.Database: not supported by this aggregate`.
    pub message: String,
}

/// Every refusal of one translation, in document order.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct Refusals {
    /// The document's name in messages (`tosca.yml`, or the file name).
    pub document: String,
    /// The refusals; never empty.
    pub refusals: Vec<Refusal>,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.column {
            Some(column) => write!(f, "{}:{}: {}", self.line, column, self.message),
            None => write!(f, "{}: {}", self.line, self.message),
        }
    }
}

impl fmt::Display for Refusals {
    /// One `source:line: message` line per refusal.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, refusal) in self.refusals.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{}:{refusal}", self.document)?;
        }
        Ok(())
    }
}
