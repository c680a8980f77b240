//! The XML-DSig algorithms this crate accepts, by URI: canonicalization
//! (inclusive and exclusive C14N 1.0, with or without comments), digests
//! (SHA-1, SHA-256), signatures (RSA PKCS#1 v1.5 with SHA-1 or SHA-256) and
//! the enveloped-signature transform. Anything else is unsupported.

use openssl::hash::MessageDigest;

/// The XML-DSig namespace.
pub const DSIG_NS: &str = "http://www.w3.org/2000/09/xmldsig#";
/// Exclusive C14N namespace (for `InclusiveNamespaces`).
pub const EXC_C14N_NS: &str = "http://www.w3.org/2001/10/xml-exc-c14n#";
/// The enveloped-signature transform.
pub const ENVELOPED: &str = "http://www.w3.org/2000/09/xmldsig#enveloped-signature";

/// A canonicalization algorithm.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum C14nMethod {
    /// Canonical XML 1.0, comments dropped.
    Inclusive,
    /// Canonical XML 1.0 with comments.
    InclusiveWithComments,
    /// Exclusive XML Canonicalization 1.0, comments dropped.
    Exclusive,
    /// Exclusive XML Canonicalization 1.0 with comments.
    ExclusiveWithComments,
}

impl C14nMethod {
    const TABLE: [(Self, &'static str); 4] = [
        (
            Self::Inclusive,
            "http://www.w3.org/TR/2001/REC-xml-c14n-20010315",
        ),
        (
            Self::InclusiveWithComments,
            "http://www.w3.org/TR/2001/REC-xml-c14n-20010315#WithComments",
        ),
        (Self::Exclusive, "http://www.w3.org/2001/10/xml-exc-c14n#"),
        (
            Self::ExclusiveWithComments,
            "http://www.w3.org/2001/10/xml-exc-c14n#WithComments",
        ),
    ];

    /// The algorithm named by `uri`.
    pub fn from_uri(uri: &str) -> Option<Self> {
        Self::TABLE.iter().find(|(_, u)| *u == uri).map(|(m, _)| *m)
    }

    /// The algorithm's URI.
    pub fn uri(self) -> &'static str {
        Self::TABLE
            .iter()
            .find(|(m, _)| *m == self)
            .map_or("", |(_, u)| u)
    }

    /// Whether this is exclusive C14N.
    pub fn exclusive(self) -> bool {
        matches!(self, Self::Exclusive | Self::ExclusiveWithComments)
    }

    /// Whether comments are kept.
    pub fn with_comments(self) -> bool {
        matches!(
            self,
            Self::InclusiveWithComments | Self::ExclusiveWithComments
        )
    }

    /// The same algorithm with comments dropped (same-document references
    /// by bare name never include comments).
    pub fn without_comments(self) -> Self {
        if self.exclusive() {
            Self::Exclusive
        } else {
            Self::Inclusive
        }
    }
}

/// A digest algorithm.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum DigestMethod {
    /// SHA-1.
    Sha1,
    /// SHA-256.
    Sha256,
}

impl DigestMethod {
    /// The algorithm named by `uri`.
    pub fn from_uri(uri: &str) -> Option<Self> {
        match uri {
            "http://www.w3.org/2000/09/xmldsig#sha1" => Some(Self::Sha1),
            "http://www.w3.org/2001/04/xmlenc#sha256" => Some(Self::Sha256),
            _ => None,
        }
    }

    /// The algorithm's URI.
    pub fn uri(self) -> &'static str {
        match self {
            Self::Sha1 => "http://www.w3.org/2000/09/xmldsig#sha1",
            Self::Sha256 => "http://www.w3.org/2001/04/xmlenc#sha256",
        }
    }

    /// The OpenSSL digest.
    pub fn message_digest(self) -> MessageDigest {
        match self {
            Self::Sha1 => MessageDigest::sha1(),
            Self::Sha256 => MessageDigest::sha256(),
        }
    }
}

/// A signature algorithm (RSA PKCS#1 v1.5 with a digest).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SignatureMethod {
    /// `rsa-sha1`.
    RsaSha1,
    /// `rsa-sha256`.
    RsaSha256,
}

impl SignatureMethod {
    /// The algorithm named by `uri`.
    pub fn from_uri(uri: &str) -> Option<Self> {
        match uri {
            "http://www.w3.org/2000/09/xmldsig#rsa-sha1" => Some(Self::RsaSha1),
            "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256" => Some(Self::RsaSha256),
            _ => None,
        }
    }

    /// The algorithm's URI.
    pub fn uri(self) -> &'static str {
        match self {
            Self::RsaSha1 => "http://www.w3.org/2000/09/xmldsig#rsa-sha1",
            Self::RsaSha256 => "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256",
        }
    }

    /// The digest the RSA signature is computed over.
    pub fn digest(self) -> DigestMethod {
        match self {
            Self::RsaSha1 => DigestMethod::Sha1,
            Self::RsaSha256 => DigestMethod::Sha256,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_round_trip() {
        for (m, uri) in C14nMethod::TABLE {
            assert_eq!(C14nMethod::from_uri(uri), Some(m));
            assert_eq!(m.uri(), uri);
        }
        for d in [DigestMethod::Sha1, DigestMethod::Sha256] {
            assert_eq!(DigestMethod::from_uri(d.uri()), Some(d));
        }
        for s in [SignatureMethod::RsaSha1, SignatureMethod::RsaSha256] {
            assert_eq!(SignatureMethod::from_uri(s.uri()), Some(s));
        }
        assert_eq!(
            SignatureMethod::from_uri("http://www.w3.org/2000/09/xmldsig#dsa-sha1"),
            None
        );
    }
}
