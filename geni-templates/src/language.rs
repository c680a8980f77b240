//! Which language a request document is written in, recognised from the
//! document itself: XML is an RSpec; a YAML mapping with
//! `tosca_definitions_version` is TOSCA, one with `heat_template_version`
//! a HOT template; anything else that opens with a RADL keyword (`network`,
//! `system`, `configure`, `deploy`, `description`, `contextualize`) or is a
//! JSON list of RADL objects is RADL.

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
