//! Choosing what a templated VM gets from what the aggregate offers: a
//! sliver type that holds the size asked for and boots the image asked
//! for, and that image.
//!
//! The first offered sliver type (in advertisement order) that holds the
//! size and offers a matching image is chosen. An image is named
//! (matched against the offered name or the last part of its URN), or
//! described by an operating system: its family (`linux`), distribution
//! (`ubuntu`) and version (`16.04`), each matched against the words of
//! the offered image's `os`, `version`, name and description (`rhel` and
//! `redhat` are one distribution; a Linux distribution's name implies
//! `linux`). Nothing matching is a refusal listing what is offered, never
//! a silent substitute.

use super::values::version_matches;
use crate::{Offer, OfferedImage, OfferedSliverType, Size};

/// What a template asks of one VM.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Wanted {
    /// A sliver type asked for by name.
    pub sliver_type: Option<String>,
    /// Virtual CPUs.
    pub cores: Option<u32>,
    /// Memory in MiB.
    pub ram_mb: Option<u64>,
    /// Root disk in GB.
    pub disk_gb: Option<u64>,
    /// GB of attached volumes, added to the root disk.
    pub extra_disk_gb: u64,
    /// The image.
    pub image: ImageWanted,
}

/// The image a template asks for.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) enum ImageWanted {
    /// Any: the sliver type's default.
    #[default]
    Any,
    /// One named.
    Name(String),
    /// One running this operating system.
    Os {
        /// Family, e.g. `linux`.
        family: Option<String>,
        /// Distribution, e.g. `ubuntu`.
        distribution: Option<String>,
        /// Version, e.g. `16.04`.
        version: Option<String>,
    },
}

/// What a VM gets.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Chosen {
    /// The sliver type, when the template asked for anything.
    pub sliver_type: Option<String>,
    /// The size, when the template sized it.
    pub size: Option<Size>,
    /// The image, when the template asked for one.
    pub image: Option<String>,
}

const LINUX_DISTRIBUTIONS: &[&str] = &[
    "ubuntu",
    "debian",
    "centos",
    "rhel",
    "redhat",
    "fedora",
    "cirros",
    "rocky",
    "almalinux",
    "alma",
    "suse",
    "opensuse",
    "sles",
    "alpine",
    "arch",
    "scientific",
    "oracle",
];

impl Wanted {
    fn sized(&self) -> bool {
        self.cores.is_some()
            || self.ram_mb.is_some()
            || self.disk_gb.is_some()
            || self.extra_disk_gb > 0
    }
}

/// Chooses the sliver type, size and image of a VM asking `wanted`.
pub(crate) fn choose(offer: &Offer, wanted: &Wanted) -> Result<Chosen, String> {
    if wanted == &Wanted::default() {
        return Ok(Chosen::default());
    }
    let types: Vec<&OfferedSliverType> = match &wanted.sliver_type {
        Some(name) => {
            let t = offer
                .sliver_types
                .iter()
                .find(|t| &t.name == name)
                .ok_or_else(|| {
                    format!(
                        "no sliver type '{name}' is offered; the sliver types offered are: {}",
                        type_names(offer)
                    )
                })?;
            vec![t]
        }
        None => offer.sliver_types.iter().collect(),
    };
    let mut with_image = Vec::new();
    for t in &types {
        let image = match &wanted.image {
            ImageWanted::Any => None,
            want => match t.images.iter().find(|i| image_matches(want, i)) {
                Some(i) => Some(i.name.clone()),
                None => continue,
            },
        };
        with_image.push(*t);
        if let Ok(size) = size_in(t, wanted) {
            return Ok(Chosen {
                sliver_type: Some(t.name.clone()),
                size,
                image,
            });
        }
    }
    match with_image.first() {
        None => Err(format!(
            "no offered image matches {}; the images offered are: {}",
            describe_image(&wanted.image),
            image_list(&types)
        )),
        Some(first) => Err(size_in(first, wanted)
            .err()
            .unwrap_or_else(|| "no offered sliver type holds it".to_owned())),
    }
}

/// The size `wanted` gets as type `t`, or why `t` cannot hold it.
fn size_in(t: &OfferedSliverType, wanted: &Wanted) -> Result<Option<Size>, String> {
    if !wanted.sized() {
        return Ok(None);
    }
    let Some(max) = t.max_size else {
        return Err(format!(
            "sliver type '{}' cannot be sized, and the template sizes the VM",
            t.name
        ));
    };
    let base = wanted.disk_gb.or(t.default_size.disk_gb);
    let disk = match (base, wanted.extra_disk_gb) {
        (base, 0) => base,
        (Some(base), extra) => Some(base + extra),
        (None, extra) => {
            return Err(format!(
                "{extra} GB of volumes are attached, but the VM's own disk size is not known: give it a disk size"
            ));
        }
    };
    let size = Size {
        cores: wanted.cores.unwrap_or(t.default_size.cores),
        ram_mb: wanted.ram_mb.unwrap_or(t.default_size.ram_mb),
        disk_gb: disk,
    };
    let over = |what: &str, asked: u64, most: Option<u64>| match most {
        Some(most) if asked <= most => Ok(()),
        Some(most) => Err(format!(
            "asks for {asked} {what}; sliver type '{}' offers at most {most} {what}",
            t.name
        )),
        None => Err(format!(
            "asks for {asked} {what}; sliver type '{}' does not size {what}",
            t.name
        )),
    };
    over("cores", u64::from(size.cores), Some(u64::from(max.cores)))?;
    over("MB of memory", size.ram_mb, Some(max.ram_mb))?;
    if let Some(disk) = size
        .disk_gb
        .filter(|_| wanted.disk_gb.is_some() || wanted.extra_disk_gb > 0)
    {
        over("GB of disk", disk, max.disk_gb)?;
    }
    Ok(Some(size))
}

fn words(image: &OfferedImage) -> Vec<String> {
    let name = image.name.rsplit('+').next().unwrap_or(&image.name);
    [
        image.os.as_deref(),
        image.version.as_deref(),
        Some(name),
        image.description.as_deref(),
    ]
    .into_iter()
    .flatten()
    .flat_map(|s| {
        s.split(|c: char| !(c.is_ascii_alphanumeric() || c == '.'))
            .map(|w| w.trim_matches('.').to_ascii_lowercase())
            .filter(|w| !w.is_empty())
            .collect::<Vec<_>>()
    })
    .collect()
}

fn same_distribution(a: &str, b: &str) -> bool {
    let norm = |s: &str| match s {
        "redhat" => "rhel".to_owned(),
        s => s.to_owned(),
    };
    norm(a) == norm(b)
}

/// Whether offered `image` is what `wanted` asks for.
pub(crate) fn image_matches(wanted: &ImageWanted, image: &OfferedImage) -> bool {
    match wanted {
        ImageWanted::Any => true,
        ImageWanted::Name(name) => {
            let last = image.name.rsplit('+').next().unwrap_or(&image.name);
            image.name.eq_ignore_ascii_case(name) || last.eq_ignore_ascii_case(name)
        }
        ImageWanted::Os {
            family,
            distribution,
            version,
        } => {
            let words = words(image);
            let family_ok = family.as_deref().is_none_or(|f| {
                let f = f.to_ascii_lowercase();
                words.contains(&f)
                    || (f == "linux"
                        && words
                            .iter()
                            .any(|w| LINUX_DISTRIBUTIONS.contains(&w.as_str())))
            });
            let distribution_ok = distribution.as_deref().is_none_or(|d| {
                let d = d.to_ascii_lowercase();
                words.iter().any(|w| same_distribution(w, &d))
            });
            let version_ok = version.as_deref().is_none_or(|v| {
                image
                    .version
                    .iter()
                    .map(String::as_str)
                    .chain(
                        words
                            .iter()
                            .map(String::as_str)
                            .filter(|w| w.starts_with(|c: char| c.is_ascii_digit())),
                    )
                    .any(|o| version_matches(v, o))
            });
            family_ok && distribution_ok && version_ok
        }
    }
}

fn describe_image(wanted: &ImageWanted) -> String {
    match wanted {
        ImageWanted::Any => "any image".to_owned(),
        ImageWanted::Name(name) => format!("the image '{name}'"),
        ImageWanted::Os {
            family,
            distribution,
            version,
        } => {
            let parts: Vec<String> = [
                ("type", family),
                ("distribution", distribution),
                ("version", version),
            ]
            .into_iter()
            .filter_map(|(k, v)| v.as_ref().map(|v| format!("{k} {v}")))
            .collect();
            format!("the operating system {}", parts.join(", "))
        }
    }
}

fn type_names(offer: &Offer) -> String {
    let names: Vec<&str> = offer.sliver_types.iter().map(|t| t.name.as_str()).collect();
    if names.is_empty() {
        "none".to_owned()
    } else {
        names.join(", ")
    }
}

fn image_list(types: &[&OfferedSliverType]) -> String {
    let mut seen: Vec<String> = Vec::new();
    for image in types.iter().flat_map(|t| &t.images) {
        let about: Vec<&str> = [image.os.as_deref(), image.version.as_deref()]
            .into_iter()
            .flatten()
            .filter(|s| !s.is_empty())
            .collect();
        let mut line = image.name.clone();
        if !about.is_empty() {
            line.push_str(&format!(" ({})", about.join(" ")));
        }
        if let Some(d) = image.description.as_deref().filter(|d| !d.is_empty()) {
            line.push_str(&format!(" \"{d}\""));
        }
        if !seen.contains(&line) {
            seen.push(line);
        }
    }
    if seen.is_empty() {
        "none".to_owned()
    } else {
        seen.join(", ")
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The offer of the example configuration: `default-vm`, at most 4
    /// cores, 8192 MB and 40 GB, booting Ubuntu 22.04.
    pub(crate) fn example_offer() -> Offer {
        Offer {
            sliver_types: vec![OfferedSliverType {
                name: "default-vm".to_owned(),
                max_size: Some(Size {
                    cores: 4,
                    ram_mb: 8192,
                    disk_gb: Some(40),
                }),
                default_size: Size {
                    cores: 1,
                    ram_mb: 1024,
                    disk_gb: None,
                },
                images: vec![OfferedImage {
                    name: "urn:publicid:IDN+am.example.org+image+ubuntu-22.04".to_owned(),
                    os: Some("Linux".to_owned()),
                    version: Some("22.04".to_owned()),
                    description: Some("Ubuntu 22.04 LTS".to_owned()),
                }],
            }],
        }
    }

    fn os(family: &str, distribution: &str, version: &str) -> ImageWanted {
        let some = |s: &str| (!s.is_empty()).then(|| s.to_owned());
        ImageWanted::Os {
            family: some(family),
            distribution: some(distribution),
            version: some(version),
        }
    }

    #[test]
    fn an_operating_system_matches_the_offered_image_by_its_words() {
        let offer = example_offer();
        let image = &offer.sliver_types[0].images[0];
        assert!(image_matches(&os("linux", "ubuntu", "22.04"), image));
        assert!(image_matches(&os("Linux", "", ""), image));
        assert!(image_matches(
            &ImageWanted::Name("ubuntu-22.04".into()),
            image
        ));
        assert!(!image_matches(&os("linux", "RHEL", "6.5"), image));
        assert!(!image_matches(&os("windows", "", ""), image));
        assert!(!image_matches(&os("linux", "ubuntu", "16.04"), image));
    }

    #[test]
    fn an_unknown_image_is_refused_listing_the_images_offered() {
        let wanted = Wanted {
            image: os("linux", "RHEL", "6.5"),
            ..Wanted::default()
        };
        let err = choose(&example_offer(), &wanted).unwrap_err();
        assert_eq!(
            err,
            "no offered image matches the operating system type linux, distribution RHEL, version 6.5; the images offered are: urn:publicid:IDN+am.example.org+image+ubuntu-22.04 (Linux 22.04) \"Ubuntu 22.04 LTS\""
        );
    }

    #[test]
    fn a_partial_size_takes_the_rest_from_the_type_and_a_size_beyond_it_is_refused() {
        let wanted = Wanted {
            cores: Some(2),
            ..Wanted::default()
        };
        let chosen = choose(&example_offer(), &wanted).unwrap();
        assert_eq!(chosen.sliver_type.as_deref(), Some("default-vm"));
        assert_eq!(
            chosen.size,
            Some(Size {
                cores: 2,
                ram_mb: 1024,
                disk_gb: None
            })
        );
        let wanted = Wanted {
            ram_mb: Some(16384),
            ..Wanted::default()
        };
        let err = choose(&example_offer(), &wanted).unwrap_err();
        assert_eq!(
            err,
            "asks for 16384 MB of memory; sliver type 'default-vm' offers at most 8192 MB of memory"
        );
    }

    #[test]
    fn volumes_need_a_root_disk_size_to_add_to() {
        let wanted = Wanted {
            extra_disk_gb: 1,
            ..Wanted::default()
        };
        assert!(
            choose(&example_offer(), &wanted)
                .unwrap_err()
                .contains("disk size is not known")
        );
        let wanted = Wanted {
            disk_gb: Some(10),
            extra_disk_gb: 1,
            ..Wanted::default()
        };
        let size = choose(&example_offer(), &wanted).unwrap().size.unwrap();
        assert_eq!(size.disk_gb, Some(11));
    }
}
