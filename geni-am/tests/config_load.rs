//! Loading the configuration: the one `geni-am dev init` writes loads with
//! paths resolved against its directory, and each kind of mistake stops
//! the load with a message naming the file and the key.

use geni_am::cli::dev::pki::{DevPki, InitOptions, ServerKey, init};
use geni_am::config::{Config, ConfigError, TlsIdentity};
use openssl::pkey::Id;
use std::path::Path;

/// `dev init` for `host:port` into `dir`.
fn dev_init(dir: &Path, host: &str, port: u16) -> DevPki {
    dev_init_with(dir, host, port, ServerKey::default())
}

/// `dev init` with a server key of the given kind.
fn dev_init_with(dir: &Path, host: &str, port: u16, server_key: ServerKey) -> DevPki {
    init(&InitOptions {
        dir: dir.to_owned(),
        host: host.into(),
        port,
        operator_port: 9464,
        force: false,
        server_key,
    })
    .unwrap()
}

/// A development PKI and configuration in a fresh directory.
fn dev_dir() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let pki = dev_init(dir.path(), "localhost", 8443);
    let text = std::fs::read_to_string(&pki.config).unwrap();
    (dir, text)
}

/// Writes `text` as a configuration in `dir` and loads it.
fn load(dir: &Path, text: &str) -> Result<Config, ConfigError> {
    let path = dir.join("test.toml");
    std::fs::write(&path, text).unwrap();
    Config::load(&path)
}

#[test]
fn the_dev_configuration_loads_with_paths_resolved_against_its_directory() {
    let (dir, text) = dev_dir();
    let config = load(dir.path(), &text).unwrap();
    assert_eq!(config.server.cert, dir.path().join("am-cert.pem"));
    assert_eq!(config.server.trust_roots, dir.path().join("trusted"));
    assert_eq!(
        config.store.url,
        dir.path().join("geni-am.sqlite").display().to_string()
    );
    let sim = config.backend.sim.as_ref().unwrap();
    assert_eq!(
        sim.state_file.as_deref(),
        Some(dir.path().join("geni-am-sim.json").as_path()),
        "the simulated cloud is saved next to the configuration"
    );
    assert_eq!(config.server.body_limit, 16 << 20);
    assert_eq!(
        (
            config.server.request_timeout_secs,
            config.server.max_connections,
            config.server.max_connections_per_client
        ),
        (30, 256, 32),
        "the transport's limits have their defaults"
    );
    assert_eq!(config.server.api_url(2), "https://localhost:8443/am/2");
    assert_eq!(
        config.aggregate.urn,
        "urn:publicid:IDN+geni-am.test+authority+am"
    );
    let core = geni_am::service::aggregate_config(&config);
    assert_eq!(core.am_urn, config.aggregate.urn);
    assert_eq!(
        core.policy.allocation_timeout,
        chrono::TimeDelta::minutes(10)
    );
    assert_eq!(core.policy.max_lease, chrono::TimeDelta::days(30));
    assert_eq!(config.jobs, geni_am::config::JobsConfig::default());
}

/// Each edit of the dev configuration and the words its refusal must contain.
const MISTAKES: &[(&str, &str, &[&str])] = &[
    (
        "listen = \"127.0.0.1:8443\"",
        "listen = \"localhost\"",
        &["server.listen", "is not a socket address"],
    ),
    (
        "public_url = \"https://localhost:8443\"",
        "public_url = \"localhost:8443/am\"",
        &["server.public_url", "not an absolute URL"],
    ),
    (
        "public_url = \"https://localhost:8443\"",
        "public_url = \"https:///x\"",
        &["server.public_url", "names no host"],
    ),
    (
        "cert = \"am-cert.pem\"",
        "cert = \"missing.pem\"",
        &["server.cert", "missing.pem", "No such file"],
    ),
    (
        "key = \"am-key.pem\"",
        "key = \"alice-key.pem\"",
        &[
            "server.cert / server.key",
            "does not belong to the certificate",
        ],
    ),
    (
        "key = \"am-key.pem\"",
        "key = \"am-cert.pem\"",
        &["server.cert / server.key", "no PEM private key"],
    ),
    (
        "trust_roots = \"trusted\"",
        "trust_roots = \"nowhere\"",
        &["server.trust_roots", "nowhere"],
    ),
    (
        "urn = \"urn:publicid:IDN+geni-am.test+authority+am\"",
        "urn = \"urn:publicid:IDN+geni-am.test\"",
        &["aggregate.urn", "urn:publicid:IDN+geni-am.test"],
    ),
    (
        "cm_urn = \"urn:publicid:IDN+geni-am.test+authority+cm\"",
        "cm_urn = \"urn:publicid:IDN+other.test+authority+cm\"",
        &["aggregate.cm_urn", "not in the aggregate's authority"],
    ),
    (
        "cm_urn = \"urn:publicid:IDN+geni-am.test+authority+cm\"",
        "cm_urn = \"urn:publicid:IDN+geni-am.test+node+cm\"",
        &["aggregate.cm_urn", "must be an authority URN"],
    ),
    (
        "url = \"geni-am.sqlite\"",
        "url = \"no/such/dir/am.sqlite\"",
        &["store.url", "does not exist"],
    ),
    (
        "url = \"geni-am.sqlite\"",
        "url = \"am.sqlite\"\npool_size = 0",
        &["store.pool_size", "at least 1"],
    ),
    (
        "max_vms = 4",
        "max_vms = 0",
        &["backend.sim.hosts[0].max_vms", "at least 1"],
    ),
    (
        "kind = \"sim\"",
        "kind = \"openstack\"",
        &["unknown variant `openstack`", "backend.kind"],
    ),
    (
        "kind = \"sim\"",
        "kind = \"opennebula\"",
        &["backend.opennebula", "needs a [backend.opennebula] section"],
    ),
    (
        "[store]",
        "[store]\nsize = 3",
        &["unknown field `size`", "store"],
    ),
    (
        "[aggregate]",
        "[aggregate]\nmax_slivers_per_slice = 0",
        &["aggregate.max_slivers_per_slice", "at least 1"],
    ),
    (
        "[aggregate]",
        "[aggregate]\ndefault_lease_secs = 100\nmax_lease_secs = 10",
        &[
            "aggregate.max_lease_secs",
            "shorter than aggregate.default_lease_secs",
        ],
    ),
    (
        "[server]",
        "[server]\nbody_limit = 0",
        &["server.body_limit", "at least 1"],
    ),
    (
        "[store]",
        "[store]\nretention_days = 4000000000",
        &["store.retention_days", "at most 36500"],
    ),
    (
        "[aggregate]",
        "[aggregate]\ndefault_sliver_type = \"huge-vm\"",
        &[
            "aggregate.default_sliver_type",
            "`huge-vm` is not an advertised sliver type",
            "default-vm",
        ],
    ),
    (
        "[server]",
        "[server]\nrequest_timeout_secs = 0",
        &["server.request_timeout_secs", "at least 1"],
    ),
    (
        "[server]",
        "[server]\ncall_threads = 0",
        &["server.call_threads", "at least 1"],
    ),
    (
        "[server]",
        "[server]\nmax_connections = 0",
        &["server.max_connections", "at least 1"],
    ),
    (
        "[server]",
        "[server]\nmax_connections = 8\nmax_connections_per_client = 9",
        &[
            "server.max_connections_per_client",
            "more than server.max_connections",
        ],
    ),
];

#[test]
fn an_advertised_default_sliver_type_reaches_the_core() {
    let (dir, text) = dev_dir();
    let unset = load(dir.path(), &text).unwrap();
    assert_eq!(
        geni_am::service::aggregate_config(&unset)
            .policy
            .default_sliver_type,
        None
    );
    let edited = text.replacen(
        "[aggregate]",
        "[aggregate]\ndefault_sliver_type = \"default-vm\"",
        1,
    );
    let config = load(dir.path(), &edited).unwrap();
    assert_eq!(
        geni_am::service::aggregate_config(&config)
            .policy
            .default_sliver_type
            .as_deref(),
        Some("default-vm")
    );
}

#[test]
fn every_mistake_is_refused_naming_file_and_key() {
    let (dir, text) = dev_dir();
    for (from, to, words) in MISTAKES {
        assert!(text.contains(from), "the dev configuration has no {from:?}");
        let edited = text.replacen(from, to, 1);
        let error = load(dir.path(), &edited).expect_err(to).to_string();
        assert!(error.contains("test.toml"), "{to:?}: {error}");
        for word in *words {
            assert!(error.contains(word), "{to:?}: {error} (expected {word:?})");
        }
    }
}

#[test]
fn a_missing_sim_section_or_file_is_named() {
    let (dir, text) = dev_dir();
    let without_sim = &text[..text.find("[backend.sim]").unwrap()];
    let error = load(dir.path(), without_sim).unwrap_err().to_string();
    assert!(
        error.contains("backend.sim") && error.contains("needs a [backend.sim] section"),
        "{error}"
    );
    let error = Config::load(&dir.path().join("absent.toml")).unwrap_err();
    assert!(matches!(error, ConfigError::Read { .. }), "{error}");
    assert!(error.to_string().contains("absent.toml"), "{error}");
    let error = load(dir.path(), "[server\n").unwrap_err().to_string();
    assert!(
        error.contains("test.toml") && error.contains("line 1"),
        "{error}"
    );
}

#[test]
fn the_dev_credentials_authorise_alice_on_the_demo_slice_and_herself() {
    use geni_credentials::TrustStore;
    use geni_credentials::Urn;
    use geni_credentials::sfa::{Request, verify};
    let dir = tempfile::tempdir().unwrap();
    let pki = dev_init(dir.path(), "am.example.org", 443);
    assert_eq!(pki.url, "https://am.example.org:443/am/3");
    let trust = TrustStore::from_dir(&pki.trust_roots).unwrap();
    let alice = Urn::parse("urn:publicid:IDN+geni-am.test+user+alice").unwrap();
    let slice = Urn::parse(&pki.slice_urn).unwrap();
    for (file, target, operation) in [
        (&pki.slice_credential, &slice, "createsliver"),
        (&pki.user_credential, &alice, "resolve"),
    ] {
        let request = Request {
            caller: &alice,
            target: Some(target),
            operation: Some(operation),
            at: chrono::Utc::now() + chrono::Duration::days(30),
        };
        let xml = std::fs::read(file).unwrap();
        let verified =
            verify(&xml, &trust, &request).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        assert_eq!(&verified.target, target);
    }
    let config = std::fs::read_to_string(&pki.config).unwrap();
    assert!(config.contains("listen = \"0.0.0.0:443\""), "{config}");
    let server = geni_credentials::GeniCert::from_pem(
        &std::fs::read(dir.path().join("am-cert.pem")).unwrap(),
    )
    .unwrap();
    assert_eq!(server.dns_names(), ["am.example.org", "localhost"]);
}

#[test]
fn a_file_of_an_earlier_release_with_max_attempts_still_loads() {
    let (dir, text) = dev_dir();
    let earlier = format!("{text}\n[jobs]\nmax_attempts = 8\n");
    let config = load(dir.path(), &earlier).expect("the retired key is accepted");
    assert_eq!(config.jobs.retired_max_attempts, Some(8));
    let current = load(dir.path(), &text).unwrap();
    assert_eq!(current.jobs.retired_max_attempts, None);
}

#[test]
fn the_dev_server_key_is_ecdsa_p256_by_default_or_rsa_on_request_and_both_load() {
    for (server_key, id) in [
        (ServerKey::default(), Id::EC),
        (ServerKey::Ecdsa, Id::EC),
        (ServerKey::Rsa, Id::RSA),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let pki = dev_init_with(dir.path(), "localhost", 8443, server_key);
        let config = Config::load(&pki.config).unwrap();
        let identity = TlsIdentity::load(&config.server.cert, &config.server.key).unwrap();
        assert_eq!(identity.key.id(), id, "{server_key:?}");
        if id == Id::EC {
            let curve = identity.key.ec_key().unwrap().group().curve_name();
            assert_eq!(curve, Some(openssl::nid::Nid::X9_62_PRIME256V1));
        }
    }
}

#[test]
fn an_ec_key_as_openssl_ecparam_writes_it_loads() {
    let dir = tempfile::tempdir().unwrap();
    let pki = dev_init_with(dir.path(), "localhost", 8443, ServerKey::Ecdsa);
    let config = Config::load(&pki.config).unwrap();
    let identity = TlsIdentity::load(&config.server.cert, &config.server.key).unwrap();
    // `openssl ecparam -name prime256v1 -genkey` writes the curve's
    // parameters, then the key in the traditional SEC1 form.
    let sec1 = identity.key.ec_key().unwrap().private_key_to_pem().unwrap();
    let params = "-----BEGIN EC PARAMETERS-----\nBggqhkjOPQMBBw==\n-----END EC PARAMETERS-----\n";
    let key = dir.path().join("ecparam-key.pem");
    std::fs::write(&key, [params.as_bytes(), &sec1].concat()).unwrap();
    let loaded = TlsIdentity::load(&config.server.cert, &key).unwrap();
    assert!(loaded.key.public_eq(&identity.key));
}
