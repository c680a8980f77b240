//! Interop with a client nobody here wrote: `tests/python/test_genilib.py`
//! drives the real binary with geni-lib (its `geni.minigcf` v3 and v2
//! clients and `geni.rspec.pg` requests with raw PCs, Xen VMs and a LAN,
//! and a TOSCA template through Allocate)
//! over TLS, verifying the server certificate against the development CA.
//! The Python is `GENI_AM_PYTHON` (a venv with geni-lib, six and pytest,
//! as `scripts/test.sh` makes); without it the test is skipped loudly,
//! or fails under `GENI_AM_REQUIRE_ALL=1`.

use geni_am_tests::aggregate::{Aggregate, DEMO_SLICE, set};
use geni_am_tests::database::Store;
use std::process::Command;

#[test]
fn genilib_lifecycles_pass() {
    let Some(python) = std::env::var_os("GENI_AM_PYTHON") else {
        geni_am_tests::missing_prerequisite("GENI_AM_PYTHON is not set (scripts/test.sh sets it)");
        return;
    };
    let aggregate = Aggregate::start_with(Store::Sqlite, |config| {
        // The flavours geni-lib's RawPC and XenVM request by name.
        let flavours = ["default-vm", "raw", "emulab-xen"].map(|name| {
            let mut image = toml::Table::new();
            image.insert(
                "name".into(),
                "urn:publicid:IDN+geni-am.test+image+ubuntu-22.04".into(),
            );
            let mut flavour = toml::Table::new();
            flavour.insert("name".into(), name.into());
            flavour.insert("cpus".into(), 1.into());
            flavour.insert("memory_mb".into(), 1024.into());
            flavour.insert("disk_images".into(), toml::Value::Array(vec![image.into()]));
            toml::Value::Table(flavour)
        });
        set(
            config,
            &["backend", "sim", "sliver_types"],
            toml::Value::Array(flavours.into()),
        );
    });
    let base = aggregate.url(3).trim_end_matches("/am/3").to_owned();
    let script = geni_am_tests::workspace_root().join("tests/python/test_genilib.py");
    let output = Command::new(python)
        .args(["-m", "pytest", "-v", "-p", "no:cacheprovider"])
        .arg(&script)
        .env("GENI_AM_URL", &base)
        .env("GENI_AM_DIR", aggregate.dir())
        .env("GENI_AM_SLICE_URN", DEMO_SLICE)
        .output()
        .expect("python runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    println!("{stdout}{}", String::from_utf8_lossy(&output.stderr));
    assert!(
        output.status.success(),
        "geni-lib tests failed:\n{stdout}\n--- aggregate log ---\n{}",
        aggregate.log()
    );
    assert!(
        stdout.contains("test_v2_lifecycle PASSED"),
        "the geni-lib v2 lifecycle passed"
    );
    assert!(
        stdout.contains("test_v3_lifecycle PASSED"),
        "the geni-lib v3 lifecycle passed"
    );
    assert!(
        stdout.contains("test_v3_tosca_template PASSED"),
        "geni-lib allocated a TOSCA template"
    );
}
