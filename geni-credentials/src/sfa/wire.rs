//! How credentials arrive in AM API calls (GENI AM API v3 specification,
//! section "Credentials"): v3 wrapper
//! structs `{geni_type, geni_version, geni_value}` (type compared
//! case-insensitively) and, from v2 callers and old clients, bare XML
//! strings whose kind is sniffed from `<type>` as gcf does. Types this
//! aggregate does not understand are ignored, never refused.

/// The credential types this aggregate accepts, as advertised in
/// `GetVersion`'s `geni_credential_types` (`geni_type`, `geni_version`).
pub const CREDENTIAL_TYPES: &[(&str, &str)] =
    &[("geni_sfa", "2"), ("geni_sfa", "3"), ("geni_abac", "1")];

/// What a presented credential is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CredentialKind {
    /// An SFA privilege credential (`geni_sfa`).
    Sfa,
    /// An ABAC speaks-for statement (`geni_abac`).
    Abac,
}

/// Classifies a v3 wrapper struct; `None` for a type or version this
/// aggregate does not understand.
pub fn classify_wrapped(geni_type: &str, geni_version: &str) -> Option<CredentialKind> {
    let version = geni_version.trim();
    CREDENTIAL_TYPES
        .iter()
        .find(|(t, v)| t.eq_ignore_ascii_case(geni_type.trim()) && *v == version)
        .map(|(t, _)| {
            if *t == "geni_abac" {
                CredentialKind::Abac
            } else {
                CredentialKind::Sfa
            }
        })
}

/// Classifies a bare XML credential by its first `<type>`: `privilege` is
/// SFA, `abac` is a speaks-for statement; `None` otherwise.
pub fn classify_bare(xml: &str) -> Option<CredentialKind> {
    let start = xml.find("<type>")? + "<type>".len();
    let end = xml[start..].find("</type>")? + start;
    match xml[start..end].trim() {
        "privilege" => Some(CredentialKind::Sfa),
        "abac" => Some(CredentialKind::Abac),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrapped_types_are_case_insensitive_and_versioned() {
        assert_eq!(classify_wrapped("GENI_SFA", "3"), Some(CredentialKind::Sfa));
        assert_eq!(classify_wrapped("geni_sfa", "2"), Some(CredentialKind::Sfa));
        assert_eq!(
            classify_wrapped("geni_abac", "1"),
            Some(CredentialKind::Abac)
        );
        assert_eq!(classify_wrapped("geni_sfaBROKEN", "3"), None);
        assert_eq!(classify_wrapped("geni_sfa", "4"), None);
    }

    #[test]
    fn bare_strings_are_sniffed_from_their_type() {
        let corpus = crate::corpus().join("creds");
        let sfa =
            std::fs::read_to_string(corpus.join("credentials/ofelia-ocf__topdomain.cred")).unwrap();
        assert_eq!(classify_bare(&sfa), Some(CredentialKind::Sfa));
        let abac =
            std::fs::read_to_string(corpus.join("templates/geni-ch__abac_credential.xml")).unwrap();
        assert_eq!(classify_bare(&abac), Some(CredentialKind::Abac));
        assert_eq!(classify_bare("<x/>"), None);
    }
}
