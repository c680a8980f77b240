//! The VM template document (`one.template.info`, `<VMTEMPLATE>`) and
//! template pools (`one.templatepool.info`).

use super::DocError;
use super::element::{Element, parse_object, parse_pool};

/// What the driver reads from a VM template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateDoc {
    /// `ID`.
    pub id: i64,
    /// `NAME` (empty when absent).
    pub name: String,
    /// `TEMPLATE/CPU` as written (may be fractional, e.g. `0.5`).
    pub cpu: Option<String>,
    /// `TEMPLATE/VCPU` as written.
    pub vcpu: Option<String>,
    /// `TEMPLATE/MEMORY` in MiB, as written.
    pub memory: Option<String>,
    /// `TEMPLATE/CONTEXT`, in document order.
    pub context: Vec<(String, String)>,
    /// Each `TEMPLATE/DISK`'s attributes, in document order.
    pub disks: Vec<Vec<(String, String)>>,
    /// Each `TEMPLATE/NIC`'s attributes, in document order.
    pub nics: Vec<Vec<(String, String)>>,
}

/// Parses a `<VMTEMPLATE>` document (`one.template.info`).
pub fn parse_template(xml: &str) -> Result<TemplateDoc, DocError> {
    parse_object(xml, "VMTEMPLATE", read_template)
}

/// Parses a `<VMTEMPLATE_POOL>` document (`one.templatepool.info`).
pub fn parse_template_pool(xml: &str) -> Result<Vec<TemplateDoc>, DocError> {
    parse_pool(xml, "VMTEMPLATE_POOL", "VMTEMPLATE", read_template)
}

fn read_template(vmtemplate: Element<'_>) -> Result<TemplateDoc, DocError> {
    let body = vmtemplate.child("TEMPLATE");
    let text = |name: &str| body.and_then(|b| b.text(name));
    let vectors = |name: &str| -> Vec<Vec<(String, String)>> {
        body.map(|b| b.children(name).map(|v| v.attributes()).collect())
            .unwrap_or_default()
    };
    Ok(TemplateDoc {
        id: vmtemplate.int("ID")?,
        name: vmtemplate.text_or_empty("NAME"),
        cpu: text("CPU"),
        vcpu: text("VCPU"),
        memory: text("MEMORY"),
        context: body
            .map(|b| b.child_attributes("CONTEXT"))
            .unwrap_or_default(),
        disks: vectors("DISK"),
        nics: vectors("NIC"),
    })
}
