//! The USER document (`one.user.info`, also for the caller with id -1) and
//! user pools, with the user's groups and quotas.

use super::DocError;
use super::element::{Element, parse_object, parse_pool};
use super::quota::{Quotas, read_quotas};

/// What the driver reads from a user.
#[derive(Debug, Clone, PartialEq)]
pub struct UserDoc {
    /// `ID`.
    pub id: i64,
    /// `NAME` (empty when absent).
    pub name: String,
    /// `GID`, the primary group; -1 for 2.x bodies, which predate groups.
    pub gid: i64,
    /// `GROUPS/ID`: every group, the primary one included (empty for 2.x/3.x
    /// bodies, which have no secondary groups).
    pub groups: Vec<i64>,
    /// `GNAME`, the primary group's name (empty when absent).
    pub group_name: String,
    /// `VM_QUOTA` and `NETWORK_QUOTA` (none set when absent or empty).
    pub quotas: Quotas,
}

impl UserDoc {
    /// Whether the user belongs to the `oneadmin` group (id 0), whose
    /// members may use restricted attributes.
    pub fn in_oneadmin_group(&self) -> bool {
        self.gid == 0 || self.groups.contains(&0)
    }
}

/// Parses a `<USER>` document (`one.user.info`).
pub fn parse_user(xml: &str) -> Result<UserDoc, DocError> {
    parse_object(xml, "USER", read_user)
}

/// Parses a `<USER_POOL>` document (`one.userpool.info`).
pub fn parse_user_pool(xml: &str) -> Result<Vec<UserDoc>, DocError> {
    parse_pool(xml, "USER_POOL", "USER", read_user)
}

fn read_user(user: Element<'_>) -> Result<UserDoc, DocError> {
    let groups = match user.child("GROUPS") {
        Some(groups) => groups.id_list()?,
        None => Vec::new(),
    };
    Ok(UserDoc {
        id: user.int("ID")?,
        name: user.text_or_empty("NAME"),
        gid: user.int_or("GID", -1)?,
        groups,
        group_name: user.text_or_empty("GNAME"),
        quotas: read_quotas(user)?,
    })
}
