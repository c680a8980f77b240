//! Unit tests of editing: exact bytes written after each kind of edit.

use super::super::*;

const GENI: &str = "http://www.geni.net/resources/rspec/3";
const EMULAB: &str = "http://www.protogeni.net/resources/rspec/ext/emulab/1";
const JFED: &str = "http://jfed.iminds.be/rspec/ext/jfed/1";

fn doc(s: &str) -> Document {
    Document::parse(s.as_bytes()).unwrap()
}

fn written(d: &Document) -> String {
    String::from_utf8(d.to_bytes()).unwrap()
}

/// Asserts the edited document reads back with the same bytes.
fn reparses(d: &Document) -> Document {
    let bytes = d.to_bytes();
    let again = Document::parse(&bytes).unwrap();
    assert_eq!(again.to_bytes(), bytes);
    again
}

#[test]
fn set_attribute_replaces_in_place_keeping_quote_and_escapes() {
    let mut d = doc("<a x='1'  y=\"2\"/>");
    d.set_attribute(d.root(), "x", "it's <&>");
    assert_eq!(written(&d), "<a x='it&apos;s &lt;&amp;>'  y=\"2\"/>");
    assert_eq!(
        reparses(&d).attribute(d.root(), "x").as_deref(),
        Some("it's <&>")
    );
}

#[test]
fn set_attribute_appends_with_the_spacing_of_the_last_attribute() {
    let mut d = doc("<a\n   x=\"1\"\n   y=\"2\">\n</a>");
    d.set_attribute(d.root(), "z", "a\"b");
    assert_eq!(
        written(&d),
        "<a\n   x=\"1\"\n   y=\"2\"\n   z=\"a&quot;b\">\n</a>"
    );
    let mut d = doc("<a/>");
    d.set_attribute(d.root(), "z", "1");
    assert_eq!(written(&d), "<a z=\"1\"/>");
    assert_eq!(d.attribute(d.root(), "z").as_deref(), Some("1"));
}

#[test]
fn remove_attribute_drops_it_and_its_spacing() {
    let mut d = doc("<a x='1' y='2' z='3'><b/></a>");
    assert!(d.remove_attribute(d.root(), "y"));
    assert!(!d.remove_attribute(d.root(), "y"));
    assert_eq!(written(&d), "<a x='1' z='3'><b/></a>");
}

#[test]
fn set_attribute_ns_reuses_an_in_scope_prefix() {
    let mut d = doc(&format!("<r xmlns='{GENI}' xmlns:e='{EMULAB}'><node/></r>"));
    let node = d.elements(d.root()).next().unwrap();
    d.set_attribute_ns(node, EMULAB, "emulab", "routable", "true");
    assert_eq!(
        written(&d),
        format!("<r xmlns='{GENI}' xmlns:e='{EMULAB}'><node e:routable=\"true\"/></r>")
    );
    assert_eq!(
        d.attribute_ns(node, EMULAB, "routable").as_deref(),
        Some("true")
    );
    d.set_attribute_ns(node, EMULAB, "emulab", "routable", "false");
    assert_eq!(d.attributes(node).count(), 1);
    assert_eq!(
        d.attribute_ns(node, EMULAB, "routable").as_deref(),
        Some("false")
    );
}

#[test]
fn set_attribute_ns_declares_a_fresh_prefix_when_needed() {
    let mut d = doc("<r xmlns:emulab='urn:other'><emulab:x/></r>");
    let x = d.elements(d.root()).next().unwrap();
    d.set_attribute_ns(x, EMULAB, "emulab", "a", "1");
    let out = written(&d);
    assert_eq!(
        out,
        format!(
            "<r xmlns:emulab='urn:other'><emulab:x xmlns:emulab1=\"{EMULAB}\" emulab1:a=\"1\"/></r>"
        )
    );
    let again = reparses(&d);
    let x = again.elements(again.root()).next().unwrap();
    assert_eq!(again.namespace(x), Some("urn:other"));
    assert_eq!(again.attribute_ns(x, EMULAB, "a").as_deref(), Some("1"));
}

#[test]
fn append_element_follows_the_indentation_of_siblings() {
    let mut d = doc(&format!("<rspec xmlns=\"{GENI}\">\n  <node/>\n</rspec>\n"));
    let link = d.append_element(d.root(), GENI, "", "link");
    d.set_attribute(link, "client_id", "l1");
    assert_eq!(
        written(&d),
        format!("<rspec xmlns=\"{GENI}\">\n  <node/>\n  <link client_id=\"l1\"/>\n</rspec>\n")
    );
    assert_eq!(d.parent(link), Some(d.root()));
    assert_eq!(d.line(link), 0);
}

#[test]
fn append_element_indents_the_first_child_of_an_empty_element() {
    let mut d = doc(&format!("<rspec xmlns=\"{GENI}\">\n  <node/>\n</rspec>"));
    let node = d.elements(d.root()).next().unwrap();
    let loc = d.append_element(node, JFED, "jfed", "location");
    d.set_attribute(loc, "x", "1");
    assert_eq!(
        written(&d),
        format!(
            "<rspec xmlns=\"{GENI}\">\n  <node>\n    <jfed:location xmlns:jfed=\"{JFED}\" x=\"1\"/>\n  </node>\n</rspec>"
        )
    );
    let again = reparses(&d);
    let loc = again.descendants(again.root()).nth(1).unwrap();
    assert!(again.is_element(loc, JFED, "location"));
}

#[test]
fn append_element_uses_the_default_namespace_or_undeclares_it() {
    let mut d = doc(&format!("<r xmlns=\"{GENI}\"><a/></r>"));
    d.append_element(d.root(), GENI, "g", "b");
    d.append_element(d.root(), "", "", "c");
    assert_eq!(
        written(&d),
        format!("<r xmlns=\"{GENI}\"><a/><b/><c xmlns=\"\"/></r>")
    );
    let again = reparses(&d);
    let names: Vec<_> = again
        .elements(again.root())
        .map(|e| again.namespace(e))
        .collect();
    assert_eq!(names, [Some(GENI), Some(GENI), None]);
}

#[test]
fn insert_element_before_repeats_the_preceding_whitespace() {
    let mut d = doc("<r>\n  <a/>\n  <b/>\n</r>");
    let b = d.elements(d.root()).nth(1).unwrap();
    d.insert_element_before(b, "", "", "x");
    assert_eq!(written(&d), "<r>\n  <a/>\n  <x/>\n  <b/>\n</r>");
    let names: Vec<_> = d.elements(d.root()).map(|e| d.local_name(e)).collect();
    assert_eq!(names, ["a", "x", "b"]);
}

#[test]
fn text_edits_escape_and_open_self_closing_elements() {
    let mut d = doc("<r><a/><b>old<i/></b></r>");
    let a = d.elements(d.root()).next().unwrap();
    let b = d.elements(d.root()).nth(1).unwrap();
    d.append_text(a, "x < y & z");
    d.set_text(b, "new");
    assert_eq!(written(&d), "<r><a>x &lt; y &amp; z</a><b>new</b></r>");
    assert_eq!(d.text(a), "x < y & z");
    d.set_text(a, "");
    assert_eq!(written(&d), "<r><a/><b>new</b></r>");
}

#[test]
fn remove_detaches_a_subtree_and_its_leading_whitespace() {
    let mut d = doc("<r>\n  <a><x/></a>\n  <b/>\n</r>");
    let a = d.elements(d.root()).next().unwrap();
    d.remove(a);
    assert_eq!(written(&d), "<r>\n  <b/>\n</r>");
    assert_eq!(d.parent(a), None);
    assert_eq!(d.node_to_bytes(a), b"<a><x/></a>");
    let root = d.root();
    d.remove(root);
    assert_eq!(written(&d), "<r>\n  <b/>\n</r>");
}

#[test]
fn declare_namespace_adds_once() {
    let mut d = doc("<r xmlns:a='urn:a'/>");
    d.declare_namespace(d.root(), "a", "urn:other");
    d.declare_namespace(d.root(), "b", "urn:b");
    d.declare_namespace(d.root(), "b", "urn:b");
    assert_eq!(written(&d), "<r xmlns:a='urn:a' xmlns:b=\"urn:b\"/>");
    let decls: Vec<_> = d.namespace_declarations(d.root()).collect();
    assert_eq!(decls, [(Some("a"), "urn:a"), (Some("b"), "urn:b")]);
}

#[test]
fn elements_created_outside_an_element_stay_detached() {
    let mut d = doc("<r>text</r>");
    let root = d.root();
    let before_root = d.insert_element_before(root, "", "", "x");
    assert_eq!(d.parent(before_root), None);
    let text = d.children(root).next().unwrap();
    let under_text = d.append_element(text, "", "", "y");
    assert_eq!(d.parent(under_text), None);
    assert_eq!(written(&d), "<r>text</r>");
}

#[test]
fn edited_strings_stay_right_as_their_buffer_grows_and_a_copy_edits_apart() {
    let mut d = doc(&format!("<r xmlns='{GENI}'><node/></r>"));
    let root = d.root();
    let node = d.append_element(root, JFED, "jfed", "location");
    for i in 0..2_000 {
        d.set_attribute(node, "x", &i.to_string());
    }
    d.set_attribute_ns(node, EMULAB, "emulab", "vnode", "pc1");
    let mut copy = d.clone();
    copy.set_attribute(node, "x", "copied");
    copy.set_attribute_ns(node, EMULAB, "emulab", "vnode", "pc2 é…");
    let location = format!("<jfed:location xmlns:jfed=\"{JFED}\"");
    let original = written(&d);
    assert!(original.contains(&location), "{original}");
    assert!(
        original.contains(&format!(
            " x=\"1999\" xmlns:emulab=\"{EMULAB}\" emulab:vnode=\"pc1\"/>"
        )),
        "{original}"
    );
    let copied = written(&copy);
    assert!(
        copied.contains(&format!(
            " x=\"copied\" xmlns:emulab=\"{EMULAB}\" emulab:vnode=\"pc2 é…\"/>"
        )),
        "{copied}"
    );
    assert_eq!(
        reparses(&d).attribute_ns(node, EMULAB, "vnode").as_deref(),
        Some("pc1")
    );
}
