//! Requests in a template language (TOSCA, RADL, HOT; `geni-templates`):
//! the document's language is recognised from the document itself, a
//! template is translated against what the aggregate offers (the
//! components table's sliver types, sizes and images, as advertised) and
//! becomes the GENI v3 request RSpec that then takes the one request path
//! (`allocate::parse_request`). An RSpec, or a document in no language,
//! passes through unchanged.

use super::{Aggregate, CoreError};
use crate::store::components::{self, ComponentRow, SliverTypeSpec};
use geni_templates::{Inputs, Language, Offer, OfferedImage, OfferedSliverType, Size};
use std::borrow::Cow;

/// The name a template is given in refusals.
const SOURCE: &str = "template";

impl Aggregate {
    /// `text` as a request RSpec: itself when it is one (or no template),
    /// else its translation against the aggregate's offer with `inputs`.
    pub fn request_rspec<'a>(
        &self,
        text: &'a str,
        inputs: &Inputs,
    ) -> Result<Cow<'a, str>, CoreError> {
        let Some(translate) = Language::detect(text).and_then(Language::translator) else {
            return Ok(Cow::Borrowed(text));
        };
        let offer = self.offer()?;
        let request = translate(SOURCE, text, inputs, &offer)
            .map_err(|refusals| CoreError::TemplateRefused(refusals.to_string()))?;
        Ok(Cow::Owned(request.to_rspec()))
    }

    /// What templates are translated against: every sliver type of the
    /// components table, once, in inventory order.
    pub fn offer(&self) -> Result<Offer, CoreError> {
        let inventory = self
            .store
            .read(|conn| Ok::<_, CoreError>(components::all(conn)?))?;
        Ok(offer_of(&inventory))
    }
}

/// The offer of `inventory`: each sliver type named once, with its
/// largest size and images (the default one first).
pub fn offer_of(inventory: &[ComponentRow]) -> Offer {
    let mut offer = Offer::default();
    for spec in inventory.iter().flat_map(|c| &c.details.sliver_types) {
        if offer.sliver_types.iter().any(|t| t.name == spec.name) {
            continue;
        }
        offer.sliver_types.push(offered(spec));
    }
    offer
}

fn offered(spec: &SliverTypeSpec) -> OfferedSliverType {
    let cores = spec.max_cores.or(spec.cores).unwrap_or(spec.cpus);
    let ram_mb = spec.max_ram_mb.unwrap_or(spec.memory_mb);
    let max_size = match (u32::try_from(cores), u64::try_from(ram_mb)) {
        (Ok(cores), Ok(ram_mb)) => Some(Size {
            cores,
            ram_mb,
            disk_gb: spec.max_disk_gb.and_then(|d| u64::try_from(d).ok()),
        }),
        _ => None,
    };
    let own_cores = spec.cores.unwrap_or(spec.cpus);
    let default_size = Size {
        cores: u32::try_from(own_cores).unwrap_or(1),
        ram_mb: u64::try_from(spec.memory_mb).unwrap_or(0),
        disk_gb: None,
    };
    let mut images: Vec<_> = spec.disk_images.iter().collect();
    images.sort_by_key(|i| !i.default);
    OfferedSliverType {
        name: spec.name.clone(),
        max_size,
        default_size,
        images: images
            .into_iter()
            .map(|i| OfferedImage {
                name: i.name.clone(),
                os: i.os.clone(),
                version: i.version.clone(),
                description: i.description.clone(),
            })
            .collect(),
    }
}
