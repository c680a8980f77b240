//! Which language a request document is written in, recognised from the
//! document itself: XML is an RSpec; a YAML mapping with
//! `tosca_definitions_version` is TOSCA, one with `heat_template_version`
//! a HOT template; anything else that opens with a RADL keyword (`network`,
//! `system`, `configure`, `deploy`, `description`, `contextualize`) or is a
//! JSON list of RADL objects is RADL.

use crate::{Inputs, Offer, Refusals, Request};

/// A request language the aggregate accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Language {
    /// A GENI v3 request RSpec.
    Rspec,
    /// An OASIS TOSCA Simple Profile in YAML 1.0 service template.
    Tosca,
    /// A RADL document, text or JSON form.
    Radl,
    /// An OpenStack Heat Orchestration Template.
    Hot,
}

/// A template translator: `(source, text, inputs, offer)`.
pub type Translator = fn(&str, &str, &Inputs, &Offer) -> Result<Request, Refusals>;

impl Language {
    /// The three template languages, in the order GetVersion lists them.
    pub const TEMPLATES: [Language; 3] = [Language::Tosca, Language::Radl, Language::Hot];

    /// The language of `text`, or `None` when it is none of the four.
    pub fn detect(text: &str) -> Option<Language> {
        let text = text.trim_start_matches('\u{feff}').trim_start();
        if text.starts_with('<') {
            return Some(Language::Rspec);
        }
        if text.starts_with('[') {
            return Some(Language::Radl);
        }
        for line in text.lines() {
            let key = line
                .trim_start_matches(['{', ' ', '\t'])
                .trim_start_matches(['"', '\''])
                .split(['"', '\'', ':', ' '])
                .next()
                .unwrap_or("");
            match key {
                "tosca_definitions_version" => return Some(Language::Tosca),
                "heat_template_version" => return Some(Language::Hot),
                _ => {}
            }
        }
        let first_word = text
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty() && !l.starts_with('#'))?
            .split(|c: char| c.is_whitespace() || c == '(')
            .next()?;
        crate::radl::KEYWORDS
            .contains(&first_word)
            .then_some(Language::Radl)
    }

    /// The language named `name` (`rspec`, `tosca`, `radl`, `hot`; any case).
    pub fn from_name(name: &str) -> Option<Language> {
        match name.to_ascii_lowercase().as_str() {
            "rspec" | "geni" => Some(Language::Rspec),
            "tosca" => Some(Language::Tosca),
            "radl" => Some(Language::Radl),
            "hot" | "heat" => Some(Language::Hot),
            _ => None,
        }
    }

    /// The translator of a template language; `None` for RSpec, which
    /// needs none.
    pub fn translator(self) -> Option<Translator> {
        match self {
            Language::Rspec => None,
            Language::Tosca => Some(crate::tosca::translate),
            Language::Radl => Some(crate::radl::translate),
            Language::Hot => Some(crate::hot::translate),
        }
    }

    /// The `type` of its GetVersion `geni_request_rspec_versions` entry.
    pub fn version_type(self) -> &'static str {
        match self {
            Language::Rspec => "GENI",
            Language::Tosca => "TOSCA",
            Language::Radl => "RADL",
            Language::Hot => "HOT",
        }
    }

    /// The `version` of that entry.
    pub fn version(self) -> &'static str {
        match self {
            Language::Rspec => "3",
            Language::Tosca => "1.0",
            Language::Radl => "1.1",
            Language::Hot => "2013-05-23",
        }
    }

    /// The `namespace` of that entry: the URI that names the language.
    pub fn namespace(self) -> &'static str {
        match self {
            Language::Rspec => "http://www.geni.net/resources/rspec/3",
            Language::Tosca => "http://docs.oasis-open.org/tosca/ns/simple/yaml/1.0",
            Language::Radl => "http://www.grycap.upv.es/im/radl",
            Language::Hot => "http://docs.openstack.org/heat/template_guide/hot_spec",
        }
    }

    /// The `schema` of that entry: where the language is specified.
    pub fn schema(self) -> &'static str {
        match self {
            Language::Rspec => "http://www.geni.net/resources/rspec/3/request.xsd",
            Language::Tosca => {
                "http://docs.oasis-open.org/tosca/TOSCA-Simple-Profile-YAML/v1.0/TOSCA-Simple-Profile-YAML-v1.0.html"
            }
            Language::Radl => "https://imdocs.readthedocs.io/en/latest/radl.html",
            Language::Hot => "https://docs.openstack.org/heat/latest/template_guide/hot_spec.html",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_language_is_recognised_from_the_document() {
        assert_eq!(
            Language::detect("<?xml version=\"1.0\"?><rspec/>"),
            Some(Language::Rspec)
        );
        assert_eq!(
            Language::detect("# c\ntosca_definitions_version: tosca_simple_yaml_1_0\n"),
            Some(Language::Tosca)
        );
        assert_eq!(
            Language::detect("description: x\nheat_template_version: 2013-05-23\n"),
            Some(Language::Hot)
        );
        assert_eq!(
            Language::detect("{\"heat_template_version\": \"2015-04-30\"}"),
            Some(Language::Hot)
        );
        assert_eq!(
            Language::detect("## Ubuntu\n\ndescription d (kind = 'images')\n"),
            Some(Language::Radl)
        );
        assert_eq!(Language::detect("system front(\n)"), Some(Language::Radl));
        assert_eq!(
            Language::detect(" [{\"class\": \"system\", \"id\": \"a\"}]"),
            Some(Language::Radl)
        );
        assert_eq!(Language::detect("hello: world\n"), None);
        assert_eq!(Language::detect(""), None);
    }
}
