//! Writes the signed inputs of the credentials fuzz targets: a development
//! authority valid 2025–2045 (`fixtures/dev-root.crt`), a tool certificate
//! it issued (`fixtures/dev-tool.crt`), alice's speaks-for credential for
//! that tool (`seeds/speaksfor/`) and her slice credential
//! (`seeds/sfa/`), both expiring in 2044. The targets verify them at a
//! fixed time against fixed roots, so they stay valid seeds. No private key
//! is written. Run from the repository root:
//! `cargo run -p geni-credentials --example fuzz_fixtures -- geni-credentials/fuzz`.

use chrono::{DateTime, TimeZone, Utc};
use geni_credentials::Urn;
use geni_credentials::devca::{Authority, CertSpec};
use geni_credentials::privilege::Privilege;
use geni_credentials::sign::{self, Algorithms, CredentialSpec};
use std::path::{Path, PathBuf};

fn utc(year: i32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(year, 1, 1, 0, 0, 0)
        .single()
        .expect("a valid date")
}

fn write(path: PathBuf, text: &str) -> Result<(), Box<dyn std::error::Error>> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(&path, text)?;
    println!("wrote {}", path.display());
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let out = PathBuf::from(
        std::env::args()
            .nth(1)
            .ok_or("usage: fuzz_fixtures OUT_DIR")?,
    );
    let (from, to) = (utc(2025), utc(2045));
    let mut spec = CertSpec::new(
        Urn::from_parts("fuzz.example.org", "authority", "sa")?,
        "fuzz.example.org",
    )
    .valid(from, to);
    spec.is_ca = true;
    let root = Authority::root_from_spec(spec)?;
    let issue = |kind: &str, name: &str| root.issue(root.spec_for(kind, name)?.valid(from, to));
    let (alice, tool, slice) = (
        issue("user", "alice")?,
        issue("tool", "portal")?,
        issue("slice", "s1")?,
    );
    write(fixture(&out, "dev-root.crt"), &root.identity().chain_pem())?;
    write(fixture(&out, "dev-tool.crt"), &tool.chain_pem())?;
    let expires = utc(2044);
    let speaks_for = sign::speaks_for(
        &alice.signing_key(),
        tool.cert(),
        expires,
        Algorithms::default(),
    )?;
    write(
        out.join("seeds/speaksfor/alice-for-portal.xml"),
        &speaks_for,
    )?;
    let (owner, target) = (alice.chain(), slice.chain());
    let privileges = [Privilege::new("*", true)];
    let credential = CredentialSpec {
        owner: &owner,
        target: &target,
        expires,
        privileges: &privileges,
    };
    let slice_credential = sign::issue(
        &credential,
        &root.identity().signing_key(),
        Algorithms::default(),
    )?;
    write(out.join("seeds/sfa/dev-alice-slice.xml"), &slice_credential)?;
    Ok(())
}

fn fixture(out: &Path, name: &str) -> PathBuf {
    out.join("fixtures").join(name)
}
