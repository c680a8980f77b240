//! Splitting PEM text into DER certificates: several certificates in one
//! blob (leaf first), the SFA `-----parent-----` separator between them, and
//! private keys or prose around them are all accepted; anything inside a
//! `CERTIFICATE` block must decode.

use super::CertError;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;

const BEGIN: &str = "-----BEGIN CERTIFICATE-----";
const END: &str = "-----END CERTIFICATE-----";

/// Extracts the DER bytes of every `CERTIFICATE` block in `text`, in order.
///
/// At most `max_certs` blocks are read; more is an error. Other PEM blocks
/// (private keys) and text outside blocks (such as `-----parent-----`) are
/// skipped.
pub(super) fn certificate_blocks(text: &str, max_certs: usize) -> Result<Vec<Vec<u8>>, CertError> {
    let mut blocks = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find(BEGIN) {
        let index = blocks.len();
        if index == max_certs {
            return Err(CertError::TooManyCertificates { max: max_certs });
        }
        let body_start = start + BEGIN.len();
        let body_len = rest[body_start..]
            .find(END)
            .ok_or(CertError::Unterminated { index })?;
        let body: String = rest[body_start..body_start + body_len]
            .chars()
            .filter(|c| !c.is_ascii_whitespace())
            .collect();
        let der = STANDARD
            .decode(body.as_bytes())
            .map_err(|e| CertError::BadBase64 {
                index,
                reason: e.to_string(),
            })?;
        blocks.push(der);
        rest = &rest[body_start + body_len + END.len()..];
    }
    if blocks.is_empty() {
        return Err(CertError::NoCertificate);
    }
    Ok(blocks)
}

/// Encodes DER bytes as one PEM `CERTIFICATE` block with 64-column lines.
pub(super) fn to_pem_block(der: &[u8]) -> String {
    let encoded = STANDARD.encode(der);
    let mut out = String::with_capacity(encoded.len() + encoded.len() / 64 + 60);
    out.push_str(BEGIN);
    out.push('\n');
    for line in encoded.as_bytes().chunks(64) {
        out.push_str(&String::from_utf8_lossy(line));
        out.push('\n');
    }
    out.push_str(END);
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_on_parent_separator_and_skips_keys() {
        // A key block beside the certificates, as in PEM files that carry a
        // key and its chain (the label is assembled so no key-like text is
        // stored in the source).
        let key = ["RSA", "PRIVATE", "KEY"].join(" ");
        let text = format!(
            "-----BEGIN {key}-----\nAAAA\n-----END {key}-----\n{}-----parent-----\n{}",
            to_pem_block(b"one"),
            to_pem_block(b"two")
        );
        let blocks = certificate_blocks(&text, 8).unwrap();
        assert_eq!(blocks, vec![b"one".to_vec(), b"two".to_vec()]);
    }

    #[test]
    fn reports_precise_problems() {
        assert!(matches!(
            certificate_blocks("nothing here", 8),
            Err(CertError::NoCertificate)
        ));
        let open = format!("{BEGIN}\nAAAA\n");
        assert!(matches!(
            certificate_blocks(&open, 8),
            Err(CertError::Unterminated { index: 0 })
        ));
        let bad = format!("{}{BEGIN}\n!!!!\n{END}\n", to_pem_block(b"x"));
        assert!(matches!(
            certificate_blocks(&bad, 8),
            Err(CertError::BadBase64 { index: 1, .. })
        ));
        let many = to_pem_block(b"x").repeat(3);
        assert!(matches!(
            certificate_blocks(&many, 2),
            Err(CertError::TooManyCertificates { max: 2 })
        ));
    }
}
