//! Feeding one text to every `oned` document parser, shared by the
//! OpenNebula fuzz targets and the parser property tests.

use geni_am_opennebula::docs::{
    parse_host, parse_host_pool, parse_image, parse_image_pool, parse_template,
    parse_template_pool, parse_user, parse_user_pool, parse_vm, parse_vm_pool, parse_vnet,
    parse_vnet_pool,
};

/// Feeds `xml` to every document parser; each must return `Ok` or a typed
/// error. At most one parser accepts a given text, since each expects its
/// own root element; returns how many did (0 or 1).
pub fn parse_with_every_parser(xml: &str) -> usize {
    let accepted = [
        parse_vm(xml).is_ok(),
        parse_vm_pool(xml).is_ok(),
        parse_host(xml).is_ok(),
        parse_host_pool(xml).is_ok(),
        parse_image(xml).is_ok(),
        parse_image_pool(xml).is_ok(),
        parse_template(xml).is_ok(),
        parse_template_pool(xml).is_ok(),
        parse_user(xml).is_ok(),
        parse_user_pool(xml).is_ok(),
        parse_vnet(xml).is_ok(),
        parse_vnet_pool(xml).is_ok(),
    ];
    let count = accepted.iter().filter(|a| **a).count();
    assert!(count <= 1, "two parsers accept one text");
    count
}
