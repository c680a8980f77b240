//! Cinder volumes attached to servers: each adds its size to its
//! server's disk; one unattached, attached twice, or made from another
//! cloud's data is refused.

use super::functions::{Val, show};
use super::{Ctx, Kind};
use crate::yaml::Problems;
use std::collections::HashMap;

/// Volume sizes attached to each server.
pub(crate) fn attachments(
    ctx: &Ctx<'_>,
    extra: &mut HashMap<String, u64>,
    problems: &mut Problems,
) {
    let mut sizes: HashMap<String, (u64, bool)> = HashMap::new();
    for volume in ctx.resources.iter().filter(|r| r.kind == Kind::Volume) {
        for existing in ["image", "snapshot_id", "source_volid", "backup_id"] {
            if volume.prop(existing, ctx, problems) != Val::Unset {
                problems.refuse(volume.line, format!("volume '{}': {existing}: a volume made from another cloud's data: not supported by this aggregate", volume.name));
            }
        }
        match volume.prop("size", ctx, problems) {
            Val::Yaml(v) if v.as_i64().is_some_and(|n| n >= 1) => {
                sizes.insert(volume.name.clone(), (v.as_i64().unwrap_or(1) as u64, false));
            }
            v => problems.refuse(
                volume.line,
                format!(
                    "volume '{}': size {} is not a whole number of GB",
                    volume.name,
                    show(&v)
                ),
            ),
        }
    }
    for attachment in ctx.resources.iter().filter(|r| r.kind == Kind::Attachment) {
        let server = match attachment.prop("instance_uuid", ctx, problems) {
            Val::Unset => attachment.prop("server", ctx, problems),
            v => v,
        };
        let volume = attachment.prop("volume_id", ctx, problems);
        match (server, volume) {
            (Val::Resource(s), Val::Resource(v)) if ctx.resource(&s).is_some_and(|r| r.kind == Kind::Server) => {
                match sizes.get_mut(&v) {
                    Some((gb, attached)) if !*attached => {
                        *attached = true;
                        *extra.entry(s).or_default() += *gb;
                    }
                    Some(_) => problems.refuse(attachment.line, format!("volume '{v}' is attached twice")),
                    None => problems.refuse(attachment.line, format!("attachment '{}': '{v}' is not a volume of the template", attachment.name)),
                }
            }
            _ => problems.refuse(
                attachment.line,
                format!("attachment '{}' must attach a volume of the template to a server of the template", attachment.name),
            ),
        }
    }
    for (name, (_, attached)) in sizes {
        if !attached {
            let line = ctx.resource(&name).map_or(0, |r| r.line);
            problems.refuse(line, format!("volume '{name}' is attached to no server: the aggregate gives disks only to VMs"));
        }
    }
}
