//! Property: whatever text the AM's annotations carry (quotes, ampersands,
//! angle brackets, white space, non-ASCII), the manifest parses, writes
//! back byte for byte, and the views read every value back unchanged.

use geni_rspec::Document;
use geni_rspec::RSpec;
use geni_rspec::manifest::{
    self, Annotations, InterfaceAnnotation, IpAddress, Login, NodeAnnotation, SshUser,
};
use proptest::prelude::*;

const CM: &str = "urn:publicid:IDN+a.example+authority+cm";
const REQUEST: &str = "<rspec xmlns=\"http://www.geni.net/resources/rspec/3\" type=\"request\">\n  \
    <node client_id=\"n\">\n    <interface client_id=\"n:if0\"/>\n  </node>\n</rspec>\n";

/// Text XML 1.0 can carry: printable ASCII, tab, line feed, and a spread of
/// non-ASCII characters.
fn text() -> impl Strategy<Value = String> {
    "[ -~\t\né€😀<>&\"']{1,24}"
}

proptest! {
    #[test]
    fn annotation_values_survive_the_manifest(
        sliver in text(), host in text(), user in text(), key in text(), mac in text(), address in text()
    ) {
        let request = Document::parse(REQUEST.as_bytes()).unwrap();
        let mut annotations = Annotations::default();
        annotations.nodes.insert("n".into(), NodeAnnotation {
            sliver_id: sliver.clone(),
            hostname: Some(host.clone()),
            logins: vec![Login::ssh(&host, 22, &user)],
            users: vec![SshUser { login: user.clone(), user_urn: None, public_keys: vec![key.clone()] }],
            ..NodeAnnotation::default()
        });
        annotations.interfaces.insert("n:if0".into(), InterfaceAnnotation {
            mac_address: Some(mac.clone()),
            ips: vec![IpAddress::ipv4(&address, "255.255.255.0")],
            ..InterfaceAnnotation::default()
        });
        let bytes = manifest::build(&request, CM, &annotations).unwrap().to_bytes();
        let doc = Document::parse(&bytes).unwrap();
        prop_assert_eq!(doc.to_bytes(), bytes.clone());
        let rspec = RSpec::new(&doc).unwrap();
        let node = rspec.node("n").unwrap();
        prop_assert_eq!(node.sliver_id().map(|v| v.into_owned()), Some(sliver.clone()));
        prop_assert_eq!(node.hosts().next().map(|v| v.into_owned()), Some(host.clone()));
        let services = node.services().unwrap();
        let login = services.logins().next().unwrap();
        prop_assert_eq!(login.hostname().map(|v| v.into_owned()), Some(host.clone()));
        prop_assert_eq!(login.username().map(|v| v.into_owned()), Some(user.clone()));
        let entry = services.users().next().unwrap();
        prop_assert_eq!(entry.login().map(|v| v.into_owned()), Some(user.clone()));
        prop_assert_eq!(entry.public_keys(), vec![key.trim().to_owned()]);
        let interface = node.interfaces().next().unwrap();
        prop_assert_eq!(interface.mac_address().map(|v| v.into_owned()), Some(mac.clone()));
        let ip = interface.ips().next().unwrap();
        prop_assert_eq!(ip.address().map(|v| v.into_owned()), Some(address.clone()));
    }
}
