//! Request RSpecs for the suites: unbound VMs of the development
//! aggregate's sliver type, and corpus files read through [`corpus`].

/// The sliver type `geni-am dev init` configures.
pub const SLIVER_TYPE: &str = "default-vm";

/// A GENI v3 request for unbound VMs named `client_ids`, each with one
/// interface, plus an element of an unknown extension namespace that the
/// manifest must keep.
pub fn vms(client_ids: &[&str]) -> String {
    request(client_ids, false)
}

/// [`vms`] with every interface on one LAN `lan0`, the n-th node asking
/// for the address [`lan_address`]`(n)`.
pub fn vms_on_lan(client_ids: &[&str]) -> String {
    request(client_ids, true)
}

/// The address the node at `index` of [`vms_on_lan`] asks for.
pub fn lan_address(index: usize) -> String {
    format!("10.1.1.{}", index + 1)
}

fn request(client_ids: &[&str], lan: bool) -> String {
    let nodes: String = client_ids
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let ip = if lan {
                format!(
                    "<ip address=\"{}\" netmask=\"255.255.255.0\" type=\"ipv4\"/>",
                    lan_address(i)
                )
            } else {
                String::new()
            };
            format!(
                "  <node client_id=\"{c}\" exclusive=\"false\">\n    <sliver_type name=\"{SLIVER_TYPE}\"/>\n    <interface client_id=\"{c}:if0\">{ip}</interface>\n    <e2e:note xmlns:e2e=\"urn:example:e2e\">kept</e2e:note>\n  </node>\n"
            )
        })
        .collect();
    let link = if lan {
        let refs: String = client_ids
            .iter()
            .map(|c| format!("    <interface_ref client_id=\"{c}:if0\"/>\n"))
            .collect();
        format!("  <link client_id=\"lan0\">\n{refs}  </link>\n")
    } else {
        String::new()
    };
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<rspec xmlns=\"http://www.geni.net/resources/rspec/3\" xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" xsi:schemaLocation=\"http://www.geni.net/resources/rspec/3 http://www.geni.net/resources/rspec/3/request.xsd\" type=\"request\">\n{nodes}{link}</rspec>\n"
    )
}

/// The text of a corpus file (`rspec/bad/…`, `rspec/manifest/…`).
pub fn corpus(relative: &str) -> String {
    let path = crate::corpus_dir().join(relative);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("corpus file {}: {e}", path.display()))
}

/// The `client_id` values of the `<node>` elements of an RSpec, in order.
pub fn node_client_ids(rspec: &str) -> Vec<String> {
    attribute_values(rspec, "<node", "client_id")
}

/// The `sliver_id` values of the `<node>` elements of an RSpec, in order.
pub fn node_sliver_ids(rspec: &str) -> Vec<String> {
    attribute_values(rspec, "<node", "sliver_id")
}

/// The values of `attribute` on every start tag beginning with `tag`.
fn attribute_values(rspec: &str, tag: &str, attribute: &str) -> Vec<String> {
    let needle = format!(" {attribute}=\"");
    rspec
        .match_indices(tag)
        .filter(|(at, _)| {
            rspec[at + tag.len()..]
                .chars()
                .next()
                .is_some_and(char::is_whitespace)
        })
        .filter_map(|(at, _)| {
            let end = rspec[at..].find('>')? + at;
            let head = &rspec[at..end];
            let start = head.find(&needle)? + needle.len();
            let len = head[start..].find('"')?;
            Some(head[start..start + len].to_owned())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_attributes_are_read_from_start_tags_only() {
        let doc = "<rspec><node client_id=\"a\" sliver_id=\"s1\"><nodex client_id=\"no\"/></node>\n<node\n client_id=\"b\"/></rspec>";
        assert_eq!(node_client_ids(doc), ["a", "b"]);
        assert_eq!(node_sliver_ids(doc), ["s1"]);
    }

    #[test]
    fn the_vm_request_names_every_node() {
        assert_eq!(node_client_ids(&vms(&["x", "y"])), ["x", "y"]);
    }
}
