//! Helpers shared by the end-to-end suites in `tests/tests/`: locating (and
//! building) the `geni-am` binary and the shared corpus, starting the real
//! aggregate on a loopback port ([`aggregate`], the port picked where no
//! client connection takes it: [`ports`]) on SQLite or on a fresh
//! PostgreSQL database ([`database`]), issuing credentials with its
//! development authority ([`creds`]), building requests ([`requests`]) and
//! calling the AM API over TLS ([`calls`]) or speaking raw HTTP to it
//! ([`raw`]); the OpenNebula backend on a
//! simulator started in the test process ([`opennebula`]); the operator's
//! endpoint over plain HTTP and in headless Chromium ([`operator`]).

pub mod aggregate;
pub mod calls;
pub mod creds;
pub mod database;
pub mod flows;
pub mod opennebula;
pub mod operator;
pub mod ports;
pub mod raw;
pub mod requests;

use std::path::PathBuf;
use std::sync::OnceLock;

/// The `geni-am` binary built by cargo for this workspace: `GENI_AM_BIN`
/// when set, else the workspace's debug binary, built once per test
/// process (`cargo build -p geni-am --bin geni-am`) so the suites never run a
/// stale one.
pub fn geni_am_bin() -> PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        if let Some(bin) = std::env::var_os("GENI_AM_BIN") {
            return PathBuf::from(bin);
        }
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let status = std::process::Command::new(cargo)
            .current_dir(workspace_root())
            .args(["build", "--quiet", "-p", "geni-am", "--bin", "geni-am"])
            .status()
            .expect("cargo runs");
        assert!(status.success(), "building geni-am failed");
        let target = std::env::var_os("CARGO_TARGET_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| workspace_root().join("target"));
        target.join("debug").join("geni-am")
    })
    .clone()
}

/// A prerequisite of an optional half of a suite is missing (`what` says
/// which): with `GENI_AM_REQUIRE_ALL=1` (as `scripts/test.sh` sets) the
/// test fails; otherwise a loud notice says the half did not run, and the
/// caller skips it.
pub fn missing_prerequisite(what: &str) {
    assert!(
        std::env::var("GENI_AM_REQUIRE_ALL").as_deref() != Ok("1"),
        "GENI_AM_REQUIRE_ALL=1 but {what}"
    );
    eprintln!("\n*** {what}: this part of the test did NOT run ***\n");
}

/// The root of this workspace.
pub fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests crate sits inside the workspace")
        .to_path_buf()
}

/// The shared corpus (`../shared/corpus` beside the checkout, or
/// `GENI_CORPUS` when set).
pub fn corpus_dir() -> PathBuf {
    std::env::var_os("GENI_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("../shared/corpus"))
}

/// Defines, for each named function `fn NAME(store: Store)`, a module
/// `NAME` with the tests `sqlite` and `postgres` running it on a SQLite
/// file and on a fresh PostgreSQL database (skipped with a notice when
/// `DATABASE_URL` is unset, unless `GENI_AM_REQUIRE_ALL=1`).
#[macro_export]
macro_rules! on_both_stores {
    ($($name:ident),* $(,)?) => {$(
        mod $name {
            #[test]
            fn sqlite() {
                let store = $crate::database::Store::for_test("sqlite", stringify!($name));
                super::$name(store.expect("SQLite is always available"));
            }

            #[test]
            fn postgres() {
                if let Some(store) = $crate::database::Store::for_test("postgres", stringify!($name)) {
                    super::$name(store);
                }
            }
        }
    )*};
}
