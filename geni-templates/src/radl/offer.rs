//! Choosing what a RADL `system` gets from what the aggregate offers: the
//! smallest size that satisfies its `cpu.count` and `memory.size`
//! comparisons, a sliver type (the `instance_type` named, or the first
//! offered one that can give that size and image) and a disk image (the
//! one `disk.0.image.url` names, else the one `disk.0.os.*` describes).

use super::ast::Op;
use crate::{Offer, OfferedImage, OfferedSliverType, Size};

/// One `feature op number` bound.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Bound {
    pub op: Op,
    pub value: u64,
}

impl Bound {
    /// The smallest amount satisfying the bound, `default` when it allows it.
    fn smallest(self, default: u64) -> Option<u64> {
        match self.op {
            Op::Eq => Some(self.value),
            Op::Ge => Some(self.value.max(1)),
            Op::Gt => Some(self.value + 1),
            Op::Le => (self.value >= 1).then(|| default.min(self.value)),
            Op::Lt => (self.value >= 2).then(|| default.min(self.value - 1)),
            Op::Contains => None,
        }
    }
}

/// What a system asks of its VM.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Wants {
    pub cores: Option<Bound>,
    pub ram_mb: Option<Bound>,
    pub disk_gb: Option<Bound>,
    pub instance_type: Option<String>,
    /// `disk.0.image.url` (each of a comma-separated list).
    pub image_urls: Vec<String>,
    pub os_name: Option<String>,
    pub os_flavour: Option<String>,
    pub os_version: Option<(Op, String)>,
}

/// What the system gets.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Choice {
    pub sliver_type: String,
    pub size: Option<Size>,
    pub image: Option<String>,
}

impl Wants {
    /// The size asked of a type whose own size is `default`: the smallest
    /// satisfying each bound, the type's own where none is given; `None`
    /// when nothing is constrained. `Err` names the bound nothing
    /// satisfies.
    fn size(&self, default: Size) -> Result<Option<Size>, &'static str> {
        if self.cores.is_none() && self.ram_mb.is_none() && self.disk_gb.is_none() {
            return Ok(None);
        }
        let cores = match self.cores {
            Some(b) => b.smallest(u64::from(default.cores)).ok_or("cpu.count")?,
            None => u64::from(default.cores),
        };
        let ram_mb = match self.ram_mb {
            Some(b) => b.smallest(default.ram_mb).ok_or("memory.size")?,
            None => default.ram_mb,
        };
        let disk_gb = match self.disk_gb {
            Some(b) => Some(b.smallest(1).ok_or("disk.0.size")?),
            None => None,
        };
        Ok(Some(Size {
            cores: u32::try_from(cores).map_err(|_| "cpu.count")?,
            ram_mb,
            disk_gb,
        }))
    }

    /// Chooses sliver type, size and image from `offer`, or says why none
    /// fits.
    pub fn choose(&self, offer: &Offer) -> Result<Choice, String> {
        let candidates: Vec<&OfferedSliverType> = match &self.instance_type {
            Some(name) => {
                let named = offer
                    .sliver_types
                    .iter()
                    .find(|t| t.name.eq_ignore_ascii_case(name));
                match named {
                    Some(t) => vec![t],
                    None => {
                        return Err(format!(
                            "instance_type '{name}' is not offered; offered sliver types: {}",
                            type_list(offer)
                        ));
                    }
                }
            }
            None => offer.sliver_types.iter().collect(),
        };
        if candidates.is_empty() {
            return Err("this aggregate offers no sliver type".into());
        }
        let mut sized: Vec<(&OfferedSliverType, Option<Size>)> = Vec::new();
        let mut asked = None;
        for kind in &candidates {
            let size = self
                .size(kind.default_size)
                .map_err(|feature| format!("{feature}: no size satisfies this bound"))?;
            asked = asked.or(size);
            if fit(kind, size) {
                sized.push((kind, size));
            }
        }
        let Some(&(_, _)) = sized.first() else {
            let size = asked.unwrap_or_default();
            return Err(format!(
                "{} cores, {} MiB{} asked; {}",
                size.cores,
                size.ram_mb,
                size.disk_gb
                    .map(|d| format!(", {d} GB disk"))
                    .unwrap_or_default(),
                if candidates.len() == 1 {
                    format!(
                        "sliver type {} gives at most {}",
                        candidates[0].name,
                        bounds(candidates[0])
                    )
                } else {
                    format!(
                        "no offered sliver type gives that much ({})",
                        type_list(offer)
                    )
                }
            ));
        };
        for (kind, size) in &sized {
            if let Some(image) = self.image(kind) {
                return Ok(Choice {
                    sliver_type: kind.name.clone(),
                    size: *size,
                    image,
                });
            }
        }
        let images: Vec<String> = sized
            .iter()
            .flat_map(|(t, _)| t.images.iter().map(describe_image))
            .collect();
        Err(format!(
            "no offered image matches {}; offered images: {}",
            self.image_wish(),
            if images.is_empty() {
                "none".to_owned()
            } else {
                images.join(", ")
            }
        ))
    }

    /// The image of `kind` this system boots: `Some(None)` for the type's
    /// default, `None` when the type has no image that matches.
    fn image(&self, kind: &OfferedSliverType) -> Option<Option<String>> {
        if let Some(image) = self
            .image_urls
            .iter()
            .find_map(|url| kind.images.iter().find(|i| names(i, url)))
        {
            return Some(Some(image.name.clone()));
        }
        let described =
            self.os_name.is_some() || self.os_flavour.is_some() || self.os_version.is_some();
        if !described {
            // An image of another cloud with no description cannot be
            // told apart from any other: only a named one would do.
            return self.image_urls.is_empty().then_some(None);
        }
        // A URL of another cloud names that cloud's image: its os.*
        // describe it, and the version is a preference; without a URL,
        // os.* are the requirements.
        let foreign = !self.image_urls.is_empty();
        let matching: Vec<&OfferedImage> = kind
            .images
            .iter()
            .filter(|i| self.os_matches(i) && (foreign || self.version_matches(i)))
            .collect();
        let best = matching
            .iter()
            .find(|i| self.version_matches(i))
            .or(matching.first())?;
        Some(Some(best.name.clone()))
    }

    fn os_matches(&self, image: &OfferedImage) -> bool {
        let text = image_text(image);
        let name_ok = self.os_name.as_deref().is_none_or(|name| {
            let name = name.to_ascii_lowercase();
            if name == "linux" {
                !(text.contains("windows") || text.contains("mac os"))
            } else {
                text.contains(&name)
            }
        });
        let flavour_ok = self
            .os_flavour
            .as_deref()
            .is_none_or(|f| text.contains(&f.to_ascii_lowercase()));
        name_ok && flavour_ok
    }

    fn version_matches(&self, image: &OfferedImage) -> bool {
        let Some((op, wanted)) = &self.os_version else {
            return true;
        };
        let Some(have) = image.version.as_deref().filter(|v| !v.is_empty()) else {
            return false;
        };
        let order = compare_versions(have, wanted);
        match op {
            Op::Eq => have == wanted || have.starts_with(&format!("{wanted}.")),
            Op::Ge => order.is_ge(),
            Op::Gt => order.is_gt(),
            Op::Le => order.is_le(),
            Op::Lt => order.is_lt(),
            Op::Contains => have.contains(wanted.as_str()),
        }
    }

    /// The image wish in RADL terms, for messages.
    fn image_wish(&self) -> String {
        let mut parts = Vec::new();
        for url in &self.image_urls {
            parts.push(format!("disk.0.image.url = '{url}'"));
        }
        if let Some(name) = &self.os_name {
            parts.push(format!("disk.0.os.name = '{name}'"));
        }
        if let Some(flavour) = &self.os_flavour {
            parts.push(format!("disk.0.os.flavour = '{flavour}'"));
        }
        if let Some((op, version)) = &self.os_version {
            parts.push(format!("disk.0.os.version {} '{version}'", op.symbol()));
        }
        parts.join(" and ")
    }
}

/// Whether `kind` can give `size` (any type can give its own).
fn fit(kind: &OfferedSliverType, size: Option<Size>) -> bool {
    let Some(size) = size else {
        return true;
    };
    let Some(max) = kind.max_size else {
        return size == kind.default_size;
    };
    size.cores <= max.cores
        && size.ram_mb <= max.ram_mb
        && match (size.disk_gb, max.disk_gb) {
            (Some(want), Some(most)) => want <= most,
            (Some(_), None) => false,
            (None, _) => true,
        }
}

/// Whether `url` (or its last path segment) names `image`.
fn names(image: &OfferedImage, url: &str) -> bool {
    let url = url.trim();
    let id = url.rsplit('/').next().unwrap_or(url);
    let short = image
        .name
        .rsplit(['+', '/', ':'])
        .next()
        .unwrap_or(&image.name);
    !id.is_empty()
        && (image.name == url
            || image.name.eq_ignore_ascii_case(id)
            || short.eq_ignore_ascii_case(id))
}

/// Name, OS and description of `image`, lower case, for matching.
fn image_text(image: &OfferedImage) -> String {
    [
        Some(image.name.as_str()),
        image.os.as_deref(),
        image.description.as_deref(),
    ]
    .into_iter()
    .flatten()
    .collect::<Vec<_>>()
    .join(" ")
    .to_ascii_lowercase()
}

/// Dotted versions compared number by number (`16.04 < 22.04`).
fn compare_versions(a: &str, b: &str) -> std::cmp::Ordering {
    let parts = |v: &str| -> Vec<u64> {
        v.split(['.', '-'])
            .map(|p| p.trim().parse().unwrap_or(0))
            .collect()
    };
    parts(a).cmp(&parts(b))
}

/// `name (OS version)` of an image, for messages.
fn describe_image(image: &OfferedImage) -> String {
    let what: Vec<&str> = [image.os.as_deref(), image.version.as_deref()]
        .into_iter()
        .flatten()
        .filter(|s| !s.is_empty())
        .collect();
    if what.is_empty() {
        image.name.clone()
    } else {
        format!("{} ({})", image.name, what.join(" "))
    }
}

/// A sliver type's largest size, for messages.
fn bounds(kind: &OfferedSliverType) -> String {
    match kind.max_size {
        Some(max) => format!(
            "{} cores, {} MiB{}",
            max.cores,
            max.ram_mb,
            max.disk_gb
                .map(|d| format!(", {d} GB disk"))
                .unwrap_or_default()
        ),
        None => "its own fixed size".into(),
    }
}

/// The offered sliver types with their bounds, for messages.
fn type_list(offer: &Offer) -> String {
    offer
        .sliver_types
        .iter()
        .map(|t| format!("{} (at most {})", t.name, bounds(t)))
        .collect::<Vec<_>>()
        .join(", ")
}
