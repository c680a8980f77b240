//! Names the driver gives OpenNebula objects and reads back: VM names from
//! `client_id`s (no URNs: oned refuses `:` and friends), link
//! network names that carry their tag, the label that marks this
//! aggregate's VMs, and URN-safe component names from host names.

/// Characters oned refuses in object names (the OpenNebula XML-RPC API reference, `one.template.instantiate`).
const FORBIDDEN_IN_NAMES: &[char] = &[
    '&', '|', ':', '\\', '"', ';', '/', '\'', '#', '{', '}', '$', '<', '>',
];

/// The longest object name oned accepts.
const MAX_NAME: usize = 128;

/// A valid OpenNebula VM name from a `client_id`: forbidden characters,
/// blanks and control characters become `-`, at most 128 characters;
/// `geni-vm` when nothing is left. Names need not be unique.
pub fn vm_name(client_id: &str) -> String {
    let name: String = client_id
        .chars()
        .map(|c| {
            if FORBIDDEN_IN_NAMES.contains(&c) || c.is_whitespace() || c.is_control() {
                '-'
            } else {
                c
            }
        })
        .take(MAX_NAME)
        .collect();
    let name = name.trim_matches('-');
    if name.is_empty() {
        "geni-vm".to_owned()
    } else {
        name.to_owned()
    }
}

/// The `LABELS` entry that marks the VM of `tag` as this aggregate's.
pub fn vm_label(label: &str, tag: &str) -> String {
    format!("{label}/{tag}")
}

/// The tag of a VM from its `LABELS` (comma-separated), when one entry is
/// this aggregate's.
pub fn tag_from_labels<'l>(label: &str, labels: &'l str) -> Option<&'l str> {
    labels.split(',').find_map(|entry| {
        entry
            .trim()
            .strip_prefix(label)
            .and_then(|rest| rest.strip_prefix('/'))
            .filter(|tag| !tag.is_empty())
    })
}

/// The name of the link network of `tag`: the label, the tag's last URN
/// part reduced to safe characters and a hash of the whole tag, so that
/// it is unique per tag and found again by name.
pub fn network_name(label: &str, tag: &str) -> String {
    let last = tag.rsplit(['+', ':']).next().unwrap_or_default();
    let readable: String = last
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        .take(48)
        .collect();
    format!("{label}-link-{readable}-{:016x}", fnv1a(tag))
}

/// A host NAME as the last part of a component URN: letters, digits, `.`,
/// `-` and `_` kept, anything else becomes `-`.
pub fn component_name(host_name: &str) -> String {
    let name = geni_am_backend::naming::urn_name(host_name);
    if name.is_empty() {
        "host".to_owned()
    } else {
        name
    }
}

/// 64-bit FNV-1a: a stable hash (unlike `DefaultHasher`, fixed across
/// releases), enough to tell tags apart in names.
fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vm_names_are_valid_opennebula_names() {
        assert_eq!(vm_name("node-0"), "node-0");
        assert_eq!(
            vm_name("urn:publicid:IDN+x+node+a"),
            "urn-publicid-IDN+x+node+a"
        );
        assert_eq!(vm_name("a\"b;c$d{e}\n"), "a-b-c-d-e");
        assert_eq!(vm_name("$$$"), "geni-vm");
        assert_eq!(vm_name(&"x".repeat(300)).len(), 128);
        for c in FORBIDDEN_IN_NAMES {
            assert!(!vm_name(&format!("a{c}b")).contains(*c));
        }
    }

    #[test]
    fn labels_carry_the_tag_and_the_aggregate() {
        let tag = "urn:publicid:IDN+am.example+sliver+12";
        let labels = format!("other,{},x/y", vm_label("geni-am", tag));
        assert_eq!(tag_from_labels("geni-am", &labels), Some(tag));
        assert_eq!(tag_from_labels("geni-am2", &labels), None);
        assert_eq!(tag_from_labels("geni-am", "geni-am/"), None);
    }

    #[test]
    fn network_names_are_safe_and_unique_per_tag() {
        let a = network_name("geni-am", "urn:publicid:IDN+am.example+sliver+7");
        let b = network_name("geni-am", "urn:publicid:IDN+am.example2+sliver+7");
        assert!(a.starts_with("geni-am-link-7-"), "{a}");
        assert_ne!(a, b);
        assert_eq!(vm_name(&a), a, "a valid OpenNebula name");
        assert_eq!(component_name("node 1.example"), "node-1.example");
    }
}
