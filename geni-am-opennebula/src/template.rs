//! The extra templates the driver sends (instantiate, updateconf), written
//! in OpenNebula's XML template syntax (the OpenNebula Virtual Machine Template reference): the root is
//! `<TEMPLATE>`, each attribute one element holding a single XML-escaped
//! text node, each vector an element of such children. Attribute names are
//! checked against `[A-Z0-9_]+`; values holding `]]>` (which oned would
//! re-emit unescaped inside CDATA) or control characters other than
//! newline and tab are refused, and empty values (which oned silently
//! drops) too — so no value, however hostile, can end, break or extend
//! the template.

use std::fmt::Write;

/// One top-level attribute: a single value or a vector of named values.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Attribute {
    Single(String),
    Vector(Vec<(String, String)>),
}

/// An extra template under construction; every value is checked as it is added.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExtraTemplate {
    attributes: Vec<(String, Attribute)>,
}

/// A name or value the template syntax cannot carry safely.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TemplateError {
    /// An attribute name other than upper-case letters, digits and `_`.
    #[error("`{0}` is not an OpenNebula attribute name")]
    Name(String),
    /// A value with `]]>` or a control character, or an empty one.
    #[error("the value of {name} cannot be sent to OpenNebula: {problem}")]
    Value {
        /// The attribute (`CONTEXT/USERNAME` for a vector entry).
        name: String,
        /// What is wrong with it.
        problem: &'static str,
    },
}

impl ExtraTemplate {
    /// An empty template.
    pub fn new() -> ExtraTemplate {
        ExtraTemplate::default()
    }

    /// Adds `NAME = value`.
    pub fn single(&mut self, name: &str, value: &str) -> Result<&mut Self, TemplateError> {
        check_name(name)?;
        check_value(name, value)?;
        self.attributes
            .push((name.to_owned(), Attribute::Single(value.to_owned())));
        Ok(self)
    }

    /// Adds `NAME = [ KEY = value, … ]`, entries in the order given.
    pub fn vector<K: AsRef<str>, V: AsRef<str>>(
        &mut self,
        name: &str,
        entries: &[(K, V)],
    ) -> Result<&mut Self, TemplateError> {
        check_name(name)?;
        let mut checked = Vec::with_capacity(entries.len());
        for (key, value) in entries {
            let (key, value) = (key.as_ref(), value.as_ref());
            check_name(key)?;
            check_value(&format!("{name}/{key}"), value)?;
            checked.push((key.to_owned(), value.to_owned()));
        }
        self.attributes
            .push((name.to_owned(), Attribute::Vector(checked)));
        Ok(self)
    }

    /// The template as the XML text oned parses (its first byte is `<`).
    pub fn to_xml(&self) -> String {
        let mut xml = String::from("<TEMPLATE>");
        for (name, attribute) in &self.attributes {
            match attribute {
                Attribute::Single(value) => element(&mut xml, name, value),
                Attribute::Vector(entries) => {
                    let _ = write!(xml, "<{name}>");
                    for (key, value) in entries {
                        element(&mut xml, key, value);
                    }
                    let _ = write!(xml, "</{name}>");
                }
            }
        }
        xml.push_str("</TEMPLATE>");
        xml
    }
}

fn element(xml: &mut String, name: &str, value: &str) {
    let _ = write!(xml, "<{name}>");
    for c in value.chars() {
        match c {
            '&' => xml.push_str("&amp;"),
            '<' => xml.push_str("&lt;"),
            '>' => xml.push_str("&gt;"),
            _ => xml.push(c),
        }
    }
    let _ = write!(xml, "</{name}>");
}

/// Attribute names: `[A-Z0-9_]+`, not starting with a digit (oned rewrites those).
fn check_name(name: &str) -> Result<(), TemplateError> {
    let valid = !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
    if valid {
        Ok(())
    } else {
        Err(TemplateError::Name(name.to_owned()))
    }
}

fn check_value(name: &str, value: &str) -> Result<(), TemplateError> {
    let problem = if value.is_empty() {
        Some("it is empty")
    } else if value.contains("]]>") {
        Some("it contains `]]>`")
    } else if value
        .chars()
        .any(|c| c.is_control() && c != '\n' && c != '\t')
    {
        Some("it contains a control character")
    } else {
        None
    };
    match problem {
        Some(problem) => Err(TemplateError::Value {
            name: name.to_owned(),
            problem,
        }),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::parse_extra_template;

    #[test]
    fn singles_and_vectors_are_elements_in_order() {
        let mut template = ExtraTemplate::new();
        template
            .single("CPU", "0.5")
            .unwrap()
            .vector("NIC", &[("NETWORK_ID", "3"), ("IP", "10.0.0.5")])
            .unwrap();
        assert_eq!(
            template.to_xml(),
            "<TEMPLATE><CPU>0.5</CPU><NIC><NETWORK_ID>3</NETWORK_ID><IP>10.0.0.5</IP></NIC></TEMPLATE>"
        );
    }

    #[test]
    fn hostile_values_stay_one_text_node() {
        let hostile = [
            "a\"b",
            "x]y",
            "</NAME><CPU>64</CPU><NAME>",
            "$USER[PASSWORD]",
            "line1\nline2",
            "&amp; &lt;",
            "NAME=\"x\"]\nRAW=[DATA=\"evil\"",
        ];
        for value in hostile {
            let mut template = ExtraTemplate::new();
            template
                .vector("CONTEXT", &[("SET_HOSTNAME", value)])
                .unwrap()
                .single("MEMORY", "256")
                .unwrap();
            let parsed = parse_extra_template(&template.to_xml());
            assert_eq!(
                parsed,
                [
                    ("CONTEXT/SET_HOSTNAME".to_owned(), value.to_owned()),
                    ("MEMORY".to_owned(), "256".to_owned())
                ],
                "{value:?}"
            );
        }
    }

    #[test]
    fn unsafe_values_and_names_are_refused() {
        let mut template = ExtraTemplate::new();
        for value in ["a]]>b", "bell\u{7}", "cr\r", "", "nul\0"] {
            let err = template.single("NAME", value).unwrap_err();
            assert!(matches!(err, TemplateError::Value { .. }), "{value:?}");
        }
        for name in ["lower", "A-B", "", "1ST", "A B", "A>"] {
            assert_eq!(
                template.single(name, "x").unwrap_err(),
                TemplateError::Name(name.to_owned())
            );
            assert!(template.vector("CONTEXT", &[(name, "x")]).is_err());
        }
        let err = template
            .vector("CONTEXT", &[("USERNAME", "x]]>")])
            .unwrap_err();
        assert!(err.to_string().contains("CONTEXT/USERNAME"), "{err}");
        assert_eq!(template.to_xml(), "<TEMPLATE></TEMPLATE>");
    }
}
