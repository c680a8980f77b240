//! Writing a development PKI and a configuration that uses it: a root
//! authority (`urn:publicid:IDN+geni-am.test+authority+sa`) that issues the
//! aggregate's server certificate (subjectAltName `localhost`,
//! `127.0.0.1` and the chosen host), an experimenter `alice`, a slice
//! `demo` with a slice credential valid for weeks and a user credential.
//! The server key is ECDSA P-256 unless RSA is asked for: every GENI
//! client accepts it and it makes the server's side of a TLS handshake
//! several times cheaper (docs/PERFORMANCE.md, "TLS handshakes"); user,
//! slice and authority keys stay RSA, as GENI credentials are signed with
//! RSA (the many slices of load runs, [`slice_credentials`], have P-256
//! keys, which sign nothing).
//! Existing files are kept unless `force` is set, so re-running is safe.

use anyhow::{Context, Result};
use chrono::{Duration, Utc};
use geni_credentials::devca::{Authority, Identity, KeyType};
use geni_credentials::privilege::Privilege;
use geni_credentials::sign::{Algorithms, CredentialSpec, issue};
use std::path::{Path, PathBuf};

/// The development authority of every file written.
pub const AUTHORITY: &str = "geni-am.test";
/// The demonstration slice name.
pub const SLICE: &str = "demo";
/// The experimenter's user name.
pub const USER: &str = "alice";
/// How long the credentials written stay valid.
const CREDENTIAL_DAYS: i64 = 60;

/// What `dev init` should write.
#[derive(Debug, Clone)]
pub struct InitOptions {
    /// Directory receiving everything (created if missing).
    pub dir: PathBuf,
    /// Host name or address clients use for the aggregate.
    pub host: String,
    /// TCP port of the aggregate.
    pub port: u16,
    /// Loopback TCP port of the operator's endpoint.
    pub operator_port: u16,
    /// Replace existing files instead of keeping them.
    pub force: bool,
    /// The kind of key of the aggregate's server certificate.
    pub server_key: ServerKey,
}

/// The kind of key of the aggregate's server certificate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ServerKey {
    /// ECDSA on P-256 (prime256v1).
    #[default]
    Ecdsa,
    /// RSA, 2048 bits.
    Rsa,
}

impl From<ServerKey> for KeyType {
    fn from(key: ServerKey) -> KeyType {
        match key {
            ServerKey::Ecdsa => KeyType::EcdsaP256,
            ServerKey::Rsa => KeyType::Rsa,
        }
    }
}

/// The files of a development PKI, all inside [`InitOptions::dir`].
#[derive(Debug, Clone)]
pub struct DevPki {
    /// Root authority certificate (also the CA bundle clients verify the server with).
    pub ca_cert: PathBuf,
    /// Directory of trusted roots the configuration names.
    pub trust_roots: PathBuf,
    /// The experimenter's certificate chain.
    pub user_cert: PathBuf,
    /// The experimenter's private key.
    pub user_key: PathBuf,
    /// The slice credential of `demo`, owned by the experimenter.
    pub slice_credential: PathBuf,
    /// The experimenter's user credential.
    pub user_credential: PathBuf,
    /// The configuration file.
    pub config: PathBuf,
    /// The slice URN the slice credential names.
    pub slice_urn: String,
    /// The AM API v3 URL of the configured aggregate.
    pub url: String,
    /// Files written by this run (the others were kept).
    pub written: Vec<PathBuf>,
}

/// Writes (or completes) the development PKI and configuration.
pub fn init(options: &InitOptions) -> Result<DevPki> {
    let dir = &options.dir;
    std::fs::create_dir_all(dir.join("trusted"))
        .with_context(|| format!("cannot create {}", dir.display()))?;
    let mut written = Vec::new();
    let fresh = |path: &Path| options.force || !path.exists();

    let (ca_cert, ca_key) = (dir.join("ca-cert.pem"), dir.join("ca-key.pem"));
    let ca = if fresh(&ca_cert) || fresh(&ca_key) {
        let ca = Authority::root(AUTHORITY, "sa")?;
        ca.identity().write_pem(dir, "ca")?;
        written.extend([ca_cert.clone(), ca_key.clone()]);
        ca
    } else {
        Authority::from(Identity::read_pem(&ca_cert, &ca_key)?)
    };
    let trusted = dir.join("trusted").join("ca.pem");
    if fresh(&trusted) {
        write(&trusted, &ca.cert().to_pem(), &mut written)?;
    }

    let server_cert = dir.join("am-cert.pem");
    if fresh(&server_cert) || fresh(&dir.join("am-key.pem")) {
        let mut hosts = vec!["localhost", "127.0.0.1"];
        if !hosts.contains(&options.host.as_str()) {
            hosts.insert(0, &options.host);
        }
        ca.server_with_key("am", &hosts, options.server_key.into())?
            .write_pem(dir, "am")?;
        written.extend([server_cert, dir.join("am-key.pem")]);
    }

    let (user_cert, user_key) = (dir.join("alice-cert.pem"), dir.join("alice-key.pem"));
    let user = if fresh(&user_cert) || fresh(&user_key) {
        let user = ca.user(USER)?;
        user.write_pem(dir, USER)?;
        written.extend([user_cert.clone(), user_key.clone()]);
        user
    } else {
        Identity::read_pem(&user_cert, &user_key)?
    };

    let slice = ca.slice(SLICE)?;
    let slice_credential = dir.join("demo-slice-cred.xml");
    if fresh(&slice_credential) {
        let xml = credential(&ca, &user, &slice.chain())?;
        write(&slice_credential, &xml, &mut written)?;
    }
    let user_credential = dir.join("alice-user-cred.xml");
    if fresh(&user_credential) {
        let xml = credential(&ca, &user, &user.chain())?;
        write(&user_credential, &xml, &mut written)?;
    }

    let config = dir.join("geni-am.toml");
    if fresh(&config) {
        write(&config, &config_text(options), &mut written)?;
    }
    Ok(DevPki {
        ca_cert,
        trust_roots: dir.join("trusted"),
        user_cert,
        user_key,
        slice_credential,
        user_credential,
        config,
        slice_urn: slice.urn().to_string(),
        url: format!("https://{}:{}/am/3", options.host, options.port),
        written,
    })
}

/// Slices `names` of the development authority whose files are in `dir`
/// (written by [`init`]), each with a credential for its user: the slice
/// URN and the credential (XML). Load runs make many slices this way. A
/// slice's key signs nothing (the authority signs its certificate and
/// credential), so it is a P-256 key, made in microseconds where an RSA
/// one takes a tenth of a second: a hundred slices are issued at once.
pub fn slice_credentials(
    dir: &Path,
    names: impl IntoIterator<Item = impl AsRef<str>>,
) -> Result<Vec<(String, String)>> {
    let ca = Authority::from(Identity::read_pem(
        &dir.join("ca-cert.pem"),
        &dir.join("ca-key.pem"),
    )?);
    let user = Identity::read_pem(
        &dir.join(format!("{USER}-cert.pem")),
        &dir.join(format!("{USER}-key.pem")),
    )?;
    names
        .into_iter()
        .map(|name| {
            let mut spec = ca.spec_for("slice", name.as_ref())?;
            spec.key_type = KeyType::EcdsaP256;
            let slice = ca.issue(spec)?;
            let xml = credential(&ca, &user, &slice.chain())?;
            Ok((slice.urn().to_string(), xml))
        })
        .collect()
}

/// A credential for `owner` over `target` with every default privilege,
/// signed by the authority.
fn credential(
    ca: &Authority,
    owner: &Identity,
    target: &[geni_credentials::GeniCert],
) -> Result<String> {
    let spec = CredentialSpec {
        owner: &owner.chain(),
        target,
        expires: Utc::now() + Duration::days(CREDENTIAL_DAYS),
        privileges: &[Privilege::new("*", true)],
    };
    Ok(issue(
        &spec,
        &ca.identity().signing_key(),
        Algorithms::default(),
    )?)
}

/// Writes a text file and records it.
fn write(path: &Path, text: &str, written: &mut Vec<PathBuf>) -> Result<()> {
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))?;
    written.push(path.to_owned());
    Ok(())
}

/// The configuration of the development aggregate (paths relative to it).
fn config_text(options: &InitOptions) -> String {
    let listen_ip = if matches!(options.host.as_str(), "localhost" | "127.0.0.1") {
        "127.0.0.1"
    } else {
        "0.0.0.0"
    };
    format!(
        r#"# Development configuration written by `geni-am dev init`; every key is
# documented in deploy/geni-am.example.toml.

[server]
listen = "{listen_ip}:{port}"
public_url = "https://{host}:{port}"
cert = "am-cert.pem"
key = "am-key.pem"
trust_roots = "trusted"

[operator]
listen = "127.0.0.1:{operator_port}"

[aggregate]
authority = "{AUTHORITY}"
urn = "urn:publicid:IDN+{AUTHORITY}+authority+am"
cm_urn = "urn:publicid:IDN+{AUTHORITY}+authority+cm"

[store]
url = "geni-am.sqlite"

[backend]
kind = "sim"

[backend.sim]
boot_delay_ms = 2000
state_file = "geni-am-sim.json"

[[backend.sim.hosts]]
name = "host1"
cpus = 8
memory_mb = 16384
max_vms = 4

[[backend.sim.hosts]]
name = "host2"
cpus = 8
memory_mb = 16384
max_vms = 4

[[backend.sim.sliver_types]]
name = "default-vm"
cpus = 1
memory_mb = 1024

[[backend.sim.sliver_types.disk_images]]
name = "urn:publicid:IDN+{AUTHORITY}+image+ubuntu-22.04"
os = "Linux"
version = "22.04"
description = "Ubuntu 22.04 LTS"
"#,
        host = options.host,
        port = options.port,
        operator_port = options.operator_port,
    )
}
