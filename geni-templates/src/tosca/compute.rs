//! What a TOSCA Compute node asks for: its size and image from the
//! `host` and `os` capabilities, how many VMs its `scalable` capability
//! makes, and the size of block storage attached to it.

use super::eval::value;
use crate::yaml::choose::{ImageWanted, Wanted};
use crate::yaml::params::Params;
use crate::yaml::values::{bytes, gb, mib};
use crate::yaml::{Problems, Yaml};
use std::collections::HashMap;

pub(super) fn storage_size(
    name: &str,
    template: &Yaml,
    params: &Params,
    problems: &mut Problems,
) -> Option<u64> {
    let props = template.get("properties");
    let prop = |key: &str, problems: &mut Problems| {
        props
            .and_then(|p| p.get(key))
            .and_then(|v| value(params, v, problems))
    };
    for existing in ["volume_id", "snapshot_id"] {
        if let Some(v) = prop(existing, problems) {
            problems.refuse(v.line, format!("block storage '{name}': {existing}: an existing volume or snapshot of another cloud: not supported by this aggregate"));
        }
    }
    match prop("size", problems) {
        Some(size) => match size.as_str().map(bytes) {
            Some(Ok(b)) => Some(gb(b)),
            _ => {
                problems.refuse(
                    size.line,
                    format!(
                        "block storage '{name}': size {} is not a size such as '10 GB'",
                        size.describe()
                    ),
                );
                None
            }
        },
        None => {
            problems.refuse(template.line, format!("block storage '{name}' has no size"));
            None
        }
    }
}

/// What a Compute node asks for in its `host` and `os` capabilities.
pub(super) fn compute_wanted(
    name: &str,
    template: &Yaml,
    params: &Params,
    problems: &mut Problems,
) -> Wanted {
    let mut wanted = Wanted::default();
    let mut os: HashMap<&str, String> = HashMap::new();
    for (key, capability) in template
        .get("capabilities")
        .map(Yaml::entries)
        .unwrap_or_default()
    {
        let cap = key.as_str().unwrap_or("");
        let props = capability
            .get("properties")
            .map(Yaml::entries)
            .unwrap_or_default();
        for (prop_key, raw) in props {
            let prop = prop_key.as_str().unwrap_or("");
            let Some(v) = value(params, raw, problems) else {
                continue;
            };
            let text = v.as_str().unwrap_or("").to_owned();
            let bad = |problems: &mut Problems, what: &str| {
                problems.refuse(
                    v.line,
                    format!("node '{name}': {cap} {prop} {} is not {what}", v.describe()),
                );
            };
            match (cap, prop) {
                ("host", "num_cpus") => match v.as_i64().and_then(|n| u32::try_from(n).ok()).filter(|n| *n >= 1) {
                    Some(n) => wanted.cores = Some(n),
                    None => bad(problems, "a whole number of at least 1"),
                },
                ("host", "mem_size" | "disk_size") => match bytes(&text) {
                    Ok(b) if prop == "mem_size" => wanted.ram_mb = Some(mib(b).max(1)),
                    Ok(b) => wanted.disk_gb = Some(gb(b).max(1)),
                    Err(why) => problems.refuse(v.line, format!("node '{name}': {cap} {prop}: {why}")),
                },
                ("host", "cpu_frequency") => {}
                ("os", "architecture") => {
                    if !matches!(text.to_ascii_lowercase().as_str(), "x86_64" | "amd64" | "x86-64") {
                        bad(problems, "x86_64, the architecture of this aggregate's VMs");
                    }
                }
                ("os", p @ ("type" | "distribution" | "version" | "image")) => {
                    os.insert(p, text);
                }
                ("os", "credential") | ("endpoint" | "scalable", _) => {}
                _ => problems.refuse(v.line, format!("node '{name}': capability {cap} property {prop}: not supported by this aggregate")),
            }
        }
        if !matches!(
            cap,
            "host" | "os" | "endpoint" | "scalable" | "binding" | "feature" | "attachment"
        ) {
            problems.refuse(
                key.line,
                format!("node '{name}': capability {cap}: not supported by this aggregate"),
            );
        }
    }
    wanted.image = match os.remove("image") {
        Some(image) => ImageWanted::Name(image),
        None if os.is_empty() => ImageWanted::Any,
        None => ImageWanted::Os {
            family: os.remove("type"),
            distribution: os.remove("distribution"),
            version: os.remove("version"),
        },
    };
    wanted
}

/// How many VMs the `scalable` capability asks for (`count`, else
/// `default_instances`, else 1).
pub(super) fn scale_count(
    name: &str,
    template: &Yaml,
    params: &Params,
    problems: &mut Problems,
) -> u32 {
    let Some(props) = template
        .get("capabilities")
        .and_then(|c| c.get("scalable"))
        .and_then(|s| s.get("properties"))
    else {
        return 1;
    };
    let raw = props
        .get("count")
        .or_else(|| props.get("default_instances"));
    match raw.and_then(|r| value(params, r, problems)) {
        None => 1,
        Some(v) => match v
            .as_i64()
            .and_then(|n| u32::try_from(n).ok())
            .filter(|n| (1..=64).contains(n))
        {
            Some(n) => n,
            None => {
                problems.refuse(
                    v.line,
                    format!(
                        "node '{name}': scalable count {} is not a whole number from 1 to 64",
                        v.describe()
                    ),
                );
                1
            }
        },
    }
}
