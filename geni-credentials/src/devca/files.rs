//! Writing and reading development-CA identities as PEM files: a chain file
//! (certificate, then issuers) and a PKCS#8 private key file readable by the
//! owner only.

use super::{DevCaError, Identity};
use crate::cert::parse_chain;
use openssl::pkey::PKey;
use std::path::{Path, PathBuf};

fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> DevCaError + '_ {
    move |source| DevCaError::Io {
        path: path.display().to_string(),
        source,
    }
}

impl Identity {
    /// Writes `<dir>/<stem>-cert.pem` (the chain) and `<dir>/<stem>-key.pem`
    /// (mode 0600 on Unix) and returns both paths.
    pub fn write_pem(&self, dir: &Path, stem: &str) -> Result<(PathBuf, PathBuf), DevCaError> {
        let cert_path = dir.join(format!("{stem}-cert.pem"));
        let key_path = dir.join(format!("{stem}-key.pem"));
        std::fs::write(&cert_path, self.chain_pem()).map_err(io_error(&cert_path))?;
        write_private(&key_path, self.key_pem()?.as_bytes())?;
        Ok((cert_path, key_path))
    }

    /// Reads an identity written by [`Identity::write_pem`] (or any PEM chain
    /// and matching private key).
    pub fn read_pem(cert_path: &Path, key_path: &Path) -> Result<Identity, DevCaError> {
        let chain = parse_chain(&std::fs::read(cert_path).map_err(io_error(cert_path))?)?;
        let key_bytes = std::fs::read(key_path).map_err(io_error(key_path))?;
        let key = PKey::private_key_from_pem(&key_bytes)?;
        let mut certs = chain.into_iter();
        let cert = certs.next().ok_or(crate::cert::CertError::NoCertificate)?;
        let matches = cert
            .x509()
            .public_key()
            .map(|public| public.public_eq(&key))
            .unwrap_or(false);
        if !matches {
            return Err(DevCaError::KeyMismatch {
                cert_path: cert_path.display().to_string(),
                key_path: key_path.display().to_string(),
            });
        }
        Identity::new(cert, key, certs.collect())
    }
}

#[cfg(unix)]
fn write_private(path: &Path, bytes: &[u8]) -> Result<(), DevCaError> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .map_err(io_error(path))?;
    file.write_all(bytes).map_err(io_error(path))
}

#[cfg(not(unix))]
fn write_private(path: &Path, bytes: &[u8]) -> Result<(), DevCaError> {
    std::fs::write(path, bytes).map_err(io_error(path))
}
