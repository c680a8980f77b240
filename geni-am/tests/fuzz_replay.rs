//! Every committed fuzz input — the seeds of each target
//! (`<crate>/fuzz/seeds/<target>/`) and the inputs that once made it fail
//! (`<crate>/fuzz/regressions/<target>/`, filled by `scripts/fuzz.sh`) —
//! replayed through the target's own body, so a regression fails
//! `cargo test` without a fuzzer. The bodies are the fuzz crates' own
//! functions, included from their sources.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

#[path = "../fuzz/src/lib.rs"]
mod am_targets;
#[path = "../../geni-credentials/fuzz/src/lib.rs"]
mod credentials_targets;
#[path = "../../geni-am-opennebula/fuzz/src/lib.rs"]
mod opennebula_targets;
#[path = "../../geni-rspec/fuzz/src/lib.rs"]
mod rspec_targets;

/// The files of `dir`, sorted; none when it does not exist.
fn files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = entries
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.is_file())
        .collect();
    paths.sort();
    paths
}

/// Runs `body` on every seed and regression input of `target` in the fuzz
/// crate of `krate`; fails naming each input that panicked, or when the
/// target has no seed.
fn replay(krate: &str, target: &str, body: impl Fn(&[u8])) {
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../{krate}/fuzz"));
    let seeds = files(&fuzz.join("seeds").join(target));
    assert!(!seeds.is_empty(), "{krate}/fuzz/seeds/{target} has no seed");
    let inputs = seeds
        .into_iter()
        .chain(files(&fuzz.join("regressions").join(target)));
    let failed: Vec<String> = inputs
        .filter(|path| {
            let data = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            catch_unwind(AssertUnwindSafe(|| body(&data))).is_err()
        })
        .map(|path| path.display().to_string())
        .collect();
    assert!(failed.is_empty(), "{target} fails on {failed:#?}");
}

#[test]
fn every_xmlrpc_call_input_decodes_without_a_panic() {
    replay("geni-am", "xmlrpc_call", am_targets::xmlrpc::xmlrpc_call);
}

#[test]
fn every_config_input_parses_and_validates_without_a_panic() {
    let base = tempfile::tempdir().expect("temporary directory");
    am_targets::config::write_base(base.path()).expect("the configuration base directory");
    replay("geni-am", "config", |data| {
        am_targets::config::config(data, base.path());
    });
}

#[test]
fn the_example_configuration_seeds_validate_against_the_fuzz_base() {
    let base = tempfile::tempdir().expect("temporary directory");
    am_targets::config::write_base(base.path()).expect("the configuration base directory");
    for name in [
        "example-sim.toml",
        "example-opennebula.toml",
        "minimal-postgres.toml",
    ] {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fuzz/seeds/config")
            .join(name);
        let text = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(
            am_targets::config::config(&text, base.path()),
            "{name} does not validate"
        );
    }
}

#[test]
fn every_one_reply_input_decodes_without_a_panic() {
    replay(
        "geni-am-opennebula",
        "one_reply",
        opennebula_targets::one::one_reply,
    );
}

#[test]
fn every_one_documents_input_parses_without_a_panic() {
    replay(
        "geni-am-opennebula",
        "one_documents",
        opennebula_targets::one::one_documents,
    );
}

#[test]
fn every_sfa_input_verifies_or_is_refused_without_a_panic() {
    replay("geni-credentials", "sfa", |data| {
        credentials_targets::sfa(data);
    });
}

#[test]
fn the_signed_credential_seeds_verify_completely_at_their_fixed_time() {
    let seed = |target: &str, name: &str| {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../geni-credentials/fuzz/seeds")
            .join(target)
            .join(name);
        std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    };
    for name in [
        "dev-alice-slice.xml",
        "ofelia-ocf__topdomain.cred",
        "ofelia-ocf__topdomain.nitos.pi.user.cred",
    ] {
        assert_eq!(credentials_targets::sfa(&seed("sfa", name)), 1, "{name}");
    }
    let speaks_for = seed("speaksfor", "alice-for-portal.xml");
    assert!(credentials_targets::speaksfor(&speaks_for));
}

#[test]
fn every_speaksfor_input_verifies_or_is_refused_without_a_panic() {
    replay("geni-credentials", "speaksfor", |data| {
        credentials_targets::speaksfor(data);
    });
}

#[test]
fn every_urn_input_parses_without_a_panic() {
    replay("geni-credentials", "urn", credentials_targets::urn);
}

#[test]
fn every_cert_input_parses_without_a_panic() {
    replay("geni-credentials", "cert", credentials_targets::cert);
}

#[test]
fn every_rspec_parse_input_round_trips_without_a_panic() {
    replay("geni-rspec", "parse", rspec_targets::parse);
}

#[test]
fn every_rspec_request_input_goes_the_allocate_way_without_a_panic() {
    replay("geni-rspec", "request", rspec_targets::request);
}
