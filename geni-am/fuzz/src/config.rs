//! The TOML configuration: parsing and validating an operator's file.
//! Validation reads the files the configuration names, so the target runs
//! against a directory laid out like `deploy/geni-am.example.toml` expects
//! ([`write_base`]) and skips validation of texts naming absolute paths,
//! which would read whatever the input points at.

use geni_am::config::Config;
use geni_credentials::devca::Authority;
use std::path::Path;

/// `config`: parsing `text` never panics and a refusal names what is
/// wrong; a text that parses is resolved against `base` and validated
/// without panicking, and every refusal names the file. Returns whether the configuration validated.
pub fn config(data: &[u8], base: &Path) -> bool {
    let Ok(text) = std::str::from_utf8(data) else {
        return false;
    };
    let parsed = match Config::parse(text) {
        Ok(parsed) => parsed,
        Err(message) => {
            assert!(!message.trim().is_empty(), "a refusal must say why");
            return false;
        }
    };
    if names_an_absolute_path(&parsed) {
        return false;
    }
    match Config::from_text(text, "fuzz.toml", base) {
        Ok(_) => true,
        Err(e) => {
            assert!(
                e.to_string().starts_with("fuzz.toml: "),
                "{e} must name the file"
            );
            false
        }
    }
}

/// True when a file path of `config` is absolute (relative ones stay
/// inside the base directory).
fn names_an_absolute_path(config: &Config) -> bool {
    let server = [
        &config.server.cert,
        &config.server.key,
        &config.server.trust_roots,
    ];
    let sim = config
        .backend
        .sim
        .iter()
        .flat_map(|s| s.state_file.as_ref());
    let one = config
        .backend
        .opennebula
        .iter()
        .flat_map(|o| o.one_auth.iter().chain(o.ca_file.iter()));
    server
        .into_iter()
        .chain(sim)
        .chain(one)
        .any(|p| p.is_absolute())
        || (!config.store.is_postgres() && Path::new(&config.store.url).is_absolute())
}

/// Writes into `dir` the files the example configuration names: a
/// development TLS identity (`tls/server-cert.pem`, `tls/server-key.pem`),
/// its root in `trusted-roots/`, and an OpenNebula `one_auth` file.
pub fn write_base(dir: &Path) -> Result<(), String> {
    let root = Authority::root("fuzz.example.org", "sa").map_err(|e| e.to_string())?;
    let server = root
        .server("am", &["localhost"])
        .map_err(|e| e.to_string())?;
    for sub in ["tls", "trusted-roots"] {
        std::fs::create_dir_all(dir.join(sub)).map_err(|e| e.to_string())?;
    }
    server
        .write_pem(&dir.join("tls"), "server")
        .map_err(|e| e.to_string())?;
    root.identity()
        .write_pem(&dir.join("trusted-roots"), "ca")
        .map_err(|e| e.to_string())?;
    std::fs::remove_file(dir.join("trusted-roots/ca-key.pem")).map_err(|e| e.to_string())?;
    std::fs::write(dir.join("one_auth"), "oneadmin:fuzz-secret\n").map_err(|e| e.to_string())
}
