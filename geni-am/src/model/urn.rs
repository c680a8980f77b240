//! Slice and sliver URNs: GENI URNs (`urn:publicid:IDN+<authority>+<type>+<name>`,
//! as the GENI AM API v3 names resources) checked by geni-credentials'
//! [`Urn`] to be of their type, and how this aggregate names its slivers.

use geni_credentials::Urn;

/// Why a text is not a URN of the expected type.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UrnRefusal {
    /// The text is no URN at all.
    #[error("`{text}` is not a URN: {reason}")]
    Malformed {
        /// The text given.
        text: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A URN of another type (`…+user+…` where a sliver was expected).
    #[error("`{text}` is a {found} URN, not a {expected} URN")]
    WrongType {
        /// The text given.
        text: String,
        /// Its type.
        found: String,
        /// The type expected.
        expected: &'static str,
    },
}

/// `text` parsed as a URN of type `expected` (compared without case, as
/// URN types are).
fn checked(text: &str, expected: &'static str) -> Result<String, UrnRefusal> {
    let urn = Urn::parse(text).map_err(|e| UrnRefusal::Malformed {
        text: text.to_owned(),
        reason: e.to_string(),
    })?;
    if !urn.type_text().eq_ignore_ascii_case(expected) {
        return Err(UrnRefusal::WrongType {
            text: text.to_owned(),
            found: urn.type_text().to_owned(),
            expected,
        });
    }
    Ok(text.to_owned())
}

/// Defines a URN newtype of one URN type.
macro_rules! typed_urn {
    ($(#[$meta:meta])* $name:ident, $kind:literal) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(String);

        impl $name {
            #[doc = concat!("`text` as a `", $kind, "` URN, refused when it is not one.")]
            pub fn parse(text: &str) -> Result<Self, UrnRefusal> {
                checked(text, $kind).map(Self)
            }

            /// The URN as written.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl From<$name> for String {
            fn from(urn: $name) -> String {
                urn.0
            }
        }
    };
}

typed_urn! {
    /// The URN of a slice (`…+slice+<name>`), issued by a slice authority.
    SliceUrn, "slice"
}

typed_urn! {
    /// The URN of a sliver (`…+sliver+<id>`).
    SliverUrn, "sliver"
}

impl SliverUrn {
    /// A new sliver URN under `authority` (the aggregate's, e.g.
    /// `am.example.org`): `urn:publicid:IDN+<authority>+sliver+<uuid>`. The
    /// name is a fresh UUID, so a sliver URN is never reused.
    pub fn generate(authority: &str) -> SliverUrn {
        SliverUrn(format!(
            "urn:publicid:IDN+{authority}+sliver+{}",
            uuid::Uuid::new_v4().simple()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_sliver_urn_is_a_sliver_urn_of_the_authority() {
        let urn = SliverUrn::generate("am.example.org");
        assert!(
            urn.as_str()
                .starts_with("urn:publicid:IDN+am.example.org+sliver+")
        );
        assert_eq!(SliverUrn::parse(urn.as_str()), Ok(urn.clone()));
        assert_ne!(urn, SliverUrn::generate("am.example.org"), "never reused");
    }

    #[test]
    fn a_urn_of_another_type_is_refused_naming_its_type() {
        let user = "urn:publicid:IDN+ch.example+user+alice";
        let err = SliverUrn::parse(user).unwrap_err();
        assert!(matches!(&err, UrnRefusal::WrongType { found, .. } if found == "user"));
        assert!(matches!(
            SliceUrn::parse("not a urn"),
            Err(UrnRefusal::Malformed { .. })
        ));
        let slice = "urn:publicid:IDN+ch.example+SLICE+s1";
        assert_eq!(SliceUrn::parse(slice).unwrap().as_str(), slice);
    }
}
