//! `geni-am translate --to rspec FILE`: prints the GENI v3 request RSpec a
//! template (TOSCA, RADL, HOT; the language recognised from the document
//! or forced with `--as`) becomes, so users can inspect it or take it to
//! any other aggregate. The template is translated against the sliver
//! types and images of `--config`'s backend, or else of the example
//! configuration (deploy/geni-am.example.toml: `default-vm`, up to 4
//! cores, 8 GiB and 40 GB, Ubuntu 22.04). Exit status 1 with the refusal
//! lines, 2 when the file cannot be read.

use crate::config::{BackendKind, Config};
use clap::{Args, ValueEnum};
use geni_templates::{Inputs, Language, Offer, OfferedImage, OfferedSliverType, Scalar, Size};
use std::path::PathBuf;
use std::process::ExitCode;

/// The example configuration, whose sim inventory is the default offer.
const EXAMPLE_CONFIG: &str = include_str!("../../../deploy/geni-am.example.toml");

/// What a template is translated to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Target {
    /// A GENI v3 request RSpec.
    Rspec,
}

/// A template language `--as` can force.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum As {
    /// TOSCA Simple Profile in YAML 1.0.
    Tosca,
    /// RADL, text or JSON form.
    Radl,
    /// OpenStack Heat Orchestration Template.
    Hot,
}

/// Arguments of `geni-am translate`.
#[derive(Debug, Args)]
pub struct TranslateArgs {
    /// What to write.
    #[arg(long, value_enum, default_value_t = Target::Rspec)]
    pub to: Target,
    /// The template language, when not recognised from the document.
    #[arg(long = "as", value_enum, value_name = "LANGUAGE")]
    pub language: Option<As>,
    /// A value of a template input (repeatable): NAME=VALUE; integers,
    /// decimals, true and false are passed as such, anything else as a
    /// string.
    #[arg(long = "input", value_name = "NAME=VALUE")]
    pub inputs: Vec<String>,
    /// The aggregate's configuration, whose backend's sliver types and
    /// images the template is translated against (default: those of the
    /// example configuration).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// The template.
    pub file: PathBuf,
}

impl TranslateArgs {
    /// Runs the command.
    pub fn run(self) -> ExitCode {
        let text = match std::fs::read_to_string(&self.file) {
            Ok(text) => text,
            Err(e) => {
                eprintln!(
                    "geni-am translate: cannot read {}: {e}",
                    self.file.display()
                );
                return ExitCode::from(2);
            }
        };
        let inputs = match inputs(&self.inputs) {
            Ok(inputs) => inputs,
            Err(message) => {
                eprintln!("geni-am translate: {message}");
                return ExitCode::from(2);
            }
        };
        let offer = match &self.config {
            None => Config::parse(EXAMPLE_CONFIG).map(|c| offer(&c)),
            Some(path) => std::fs::read_to_string(path)
                .map_err(|e| format!("cannot read {}: {e}", path.display()))
                .and_then(|text| Config::parse(&text))
                .map(|c| offer(&c)),
        };
        let offer = match offer {
            Ok(offer) => offer,
            Err(message) => {
                eprintln!("geni-am translate: configuration: {message}");
                return ExitCode::from(2);
            }
        };
        let language = match self.language {
            Some(As::Tosca) => Some(Language::Tosca),
            Some(As::Radl) => Some(Language::Radl),
            Some(As::Hot) => Some(Language::Hot),
            None => Language::detect(&text),
        };
        let Some(translate) = language.and_then(Language::translator) else {
            eprintln!(
                "geni-am translate: {} is not a TOSCA, RADL or HOT template (give --as tosca|radl|hot to say which it is)",
                self.file.display()
            );
            return ExitCode::from(1);
        };
        let source = self.file.file_name().map_or_else(
            || self.file.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        match translate(&source, &text, &inputs, &offer) {
            Ok(request) => {
                print!("{}", request.to_rspec());
                ExitCode::SUCCESS
            }
            Err(refusals) => {
                eprintln!("{refusals}");
                ExitCode::from(1)
            }
        }
    }
}

/// `NAME=VALUE` pairs as inputs.
fn inputs(pairs: &[String]) -> Result<Inputs, String> {
    pairs
        .iter()
        .map(|pair| {
            let (name, value) = pair
                .split_once('=')
                .ok_or_else(|| format!("--input {pair}: expected NAME=VALUE"))?;
            let scalar = if let Ok(i) = value.parse::<i64>() {
                Scalar::Int(i)
            } else if let Ok(f) = value.parse::<f64>() {
                Scalar::Float(f)
            } else if let Ok(b) = value.parse::<bool>() {
                Scalar::Bool(b)
            } else {
                Scalar::Str(value.to_owned())
            };
            Ok((name.trim().to_owned(), scalar))
        })
        .collect()
}

/// The sliver types and images `config`'s backend offers. OpenNebula
/// images are the configured names (an empty list offers the cloud's
/// default image only, as the pool is not read here).
fn offer(config: &Config) -> Offer {
    let text = |s: &str| (!s.is_empty()).then(|| s.to_owned());
    let sliver_types = match config.backend.kind {
        BackendKind::Sim => config
            .backend
            .sim
            .iter()
            .flat_map(|sim| &sim.sliver_types)
            .map(|t| {
                let images = t.disk_images.iter().map(|i| OfferedImage {
                    name: i.name.clone(),
                    os: text(&i.os),
                    version: text(&i.version),
                    description: text(&i.description),
                });
                let own = (t.cpus, t.memory_mb);
                let most = (t.max_cores, t.max_ram_mb, t.max_disk_gb);
                offered(&t.name, own, most, images.collect())
            })
            .collect(),
        BackendKind::OpenNebula => config
            .backend
            .opennebula
            .iter()
            .flat_map(|one| one.sliver_types.iter().map(move |t| (one, t)))
            .map(|(one, t)| {
                let images = one.images.iter().map(|name| OfferedImage {
                    name: name.clone(),
                    os: None,
                    version: None,
                    description: None,
                });
                let own = (t.vcpu, t.memory_mb);
                let most = (t.max_cores, t.max_ram_mb, t.max_disk_gb);
                offered(&t.name, own, most, images.collect())
            })
            .collect(),
    };
    Offer { sliver_types }
}

/// A sliver type of its own `(cores, MiB)` and configured bounds
/// `(max_cores, max_ram_mb, max_disk_gb)`, each defaulting to its own.
fn offered(
    name: &str,
    (cores, ram_mb): (u32, u64),
    (max_cores, max_ram_mb, max_disk_gb): (Option<u32>, Option<u64>, Option<u64>),
    images: Vec<OfferedImage>,
) -> OfferedSliverType {
    OfferedSliverType {
        name: name.to_owned(),
        max_size: Some(Size {
            cores: max_cores.unwrap_or(cores),
            ram_mb: max_ram_mb.unwrap_or(ram_mb),
            disk_gb: max_disk_gb,
        }),
        default_size: Size {
            cores,
            ram_mb,
            disk_gb: None,
        },
        images,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_offer_is_the_example_configurations_sim_inventory() {
        let offer = offer(&Config::parse(EXAMPLE_CONFIG).unwrap());
        assert_eq!(offer.sliver_types[0].name, "default-vm");
        assert_eq!(
            offer.sliver_types[0].max_size,
            Some(Size {
                cores: 4,
                ram_mb: 8192,
                disk_gb: Some(40)
            })
        );
        assert_eq!(
            offer.sliver_types[0].images[0].version.as_deref(),
            Some("22.04")
        );
    }

    #[test]
    fn inputs_keep_their_types() {
        let inputs = inputs(&[
            "n=2".into(),
            "f=0.5".into(),
            "b=true".into(),
            "s=a=b".into(),
        ])
        .unwrap();
        assert_eq!(inputs["n"], Scalar::Int(2));
        assert_eq!(inputs["f"], Scalar::Float(0.5));
        assert_eq!(inputs["b"], Scalar::Bool(true));
        assert_eq!(inputs["s"], Scalar::Str("a=b".into()));
        assert!(super::inputs(&["novalue".into()]).is_err());
    }
}
