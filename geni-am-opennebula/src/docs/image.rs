//! The IMAGE document (`one.image.info`) and image pools
//! (`one.imagepool.info`), as the OpenNebula XML-RPC
//! API reference describes them.

use super::DocError;
use super::element::{Element, parse_object, parse_pool};

/// What the driver reads from an image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageDoc {
    /// `ID`.
    pub id: i64,
    /// `NAME` (empty when absent).
    pub name: String,
    /// `STATE`: 0 INIT, 1 READY, 2 USED, 3 DISABLED, 4 LOCKED, 5 ERROR,
    /// 6 CLONE, 7 DELETE, 8 USED_PERS, 9 LOCKED_USED, 10 LOCKED_USED_PERS.
    pub state: i64,
    /// `TYPE` as written: a number in info documents (0 OS, 1 CDROM,
    /// 2 DATABLOCK, …), empty when absent.
    pub kind: String,
    /// `TEMPLATE/DESCRIPTION`.
    pub description: Option<String>,
}

impl ImageDoc {
    /// Whether the image is an OS disk (`TYPE` 0, or `OS` as some pools write it).
    pub fn is_os(&self) -> bool {
        matches!(self.kind.as_str(), "0" | "OS")
    }

    /// Whether a VM can boot it now: an OS image that is READY or USED.
    pub fn is_bootable(&self) -> bool {
        self.is_os() && matches!(self.state, 1 | 2)
    }
}

/// Parses an `<IMAGE>` document (`one.image.info`).
pub fn parse_image(xml: &str) -> Result<ImageDoc, DocError> {
    parse_object(xml, "IMAGE", read_image)
}

/// Parses an `<IMAGE_POOL>` document (`one.imagepool.info`).
pub fn parse_image_pool(xml: &str) -> Result<Vec<ImageDoc>, DocError> {
    parse_pool(xml, "IMAGE_POOL", "IMAGE", read_image)
}

fn read_image(image: Element<'_>) -> Result<ImageDoc, DocError> {
    Ok(ImageDoc {
        id: image.int("ID")?,
        name: image.text_or_empty("NAME"),
        state: image.int("STATE")?,
        kind: image.text_or_empty("TYPE"),
        description: image.child("TEMPLATE").and_then(|t| t.text("DESCRIPTION")),
    })
}
