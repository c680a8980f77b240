//! End to end: `geni-am admin`, run as the built binary on a configuration
//! written by `geni-am dev init` whose store the core fills in this process
//! (as a running `serve` would): every command as a table and as JSON, the
//! actions recorded with the operator's name, commands while this process
//! keeps writing the store, backups, and bad input (exit 1 naming an
//! unknown slice or sliver, exit 2 for usage and configuration).

mod core_support;

use chrono::{TimeDelta, Utc};
use core_support::*;
use geni_am::core::{Aggregate, overview};
use geni_am::model::{AllocationState, JobKind, OperationalState};
use geni_am::store::Store;
use serde_json::Value;
use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// A development configuration whose store the core of this process fills.
struct Site {
    config: PathBuf,
    f: Fixture,
}

impl Site {
    /// A configuration written by `geni-am dev init` in a fresh directory,
    /// its SQLite store opened here with two 4-CPU hosts and a clock at
    /// the real time (the binary reads the real clock).
    fn new() -> Site {
        let dir = tempfile::tempdir().unwrap();
        let url = dir.path().join("geni-am.sqlite").display().to_string();
        Site::on(dir, url)
    }

    /// The same on a fresh PostgreSQL database (kept by the guard), or
    /// None when `DATABASE_URL` is not set.
    fn postgres(test: &str) -> Option<(Site, PgDatabase)> {
        let db = PgDatabase::create(test)?;
        let site = Site::on(tempfile::tempdir().unwrap(), db.url.clone());
        Some((site, db))
    }

    /// The development configuration in `dir` with its store at `url`.
    fn on(dir: tempfile::TempDir, url: String) -> Site {
        let made = run_plain(&["dev", "init", "--dir", dir.path().to_str().unwrap()]);
        assert_eq!(made.status.code(), Some(0), "{made:?}");
        let config = dir.path().join("geni-am.toml");
        let text = std::fs::read_to_string(&config).unwrap();
        let text = text.replace("url = \"geni-am.sqlite\"", &format!("url = \"{url}\""));
        std::fs::write(&config, text).unwrap();
        let clock = TestClock::new();
        clock.advance(Utc::now() - clock.now());
        let am = open(&url, &[host("h1", 4), host("h2", 4)], &clock);
        Site {
            config,
            f: Fixture {
                am,
                clock,
                dir,
                url,
            },
        }
    }

    fn am(&self) -> &Aggregate {
        &self.f.am
    }

    /// Runs `geni-am admin --config <this> ARGS` as operator `tester`.
    fn admin(&self, args: &[&str]) -> Output {
        self.admin_env(args, &[("USER", "tester")])
    }

    /// Runs `geni-am admin --config <this> ARGS` with `env` set (and
    /// `SUDO_USER` removed unless given).
    fn admin_env(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        let mut command = Command::new(env!("CARGO_BIN_EXE_geni-am"));
        command
            .args(["admin", "--config", self.config.to_str().unwrap()])
            .args(args)
            .env_remove("SUDO_USER")
            .env_remove("RUST_LOG");
        for (key, value) in env {
            command.env(key, value);
        }
        command.output().expect("run geni-am")
    }

    /// The standard output of a successful `admin ARGS`.
    fn ok(&self, args: &[&str]) -> String {
        let out = self.admin(args);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
        String::from_utf8(out.stdout).unwrap()
    }

    /// The JSON printed by a successful `admin --json ARGS`.
    fn json(&self, args: &[&str]) -> Value {
        let mut all = vec!["--json"];
        all.extend_from_slice(args);
        serde_json::from_str(&self.ok(&all)).expect("JSON")
    }

    /// Allocates and provisions one node per client id into [`SLICE`].
    fn provisioned(&self, client_ids: &[&str]) -> Vec<String> {
        let p = self.principal();
        let a = self
            .am()
            .allocate(&p, SLICE, &request(client_ids, "default-vm"))
            .unwrap();
        self.am()
            .provision(&p, &slice(), &Default::default())
            .unwrap();
        a.slivers.into_iter().map(|s| s.urn).collect()
    }

    /// A principal of [`SLICE`] whose credential lasts 30 days from now.
    fn principal(&self) -> geni_am::model::Principal {
        let mut p = principal(30);
        p.credential_expires = Utc::now() + TimeDelta::days(30);
        p
    }

    /// Marks the sliver `urn` running, as the jobs would.
    fn ready(&self, urn: &str) {
        let store = self.am().store();
        store
            .set_operational_state(urn, OperationalState::Ready, Utc::now())
            .unwrap();
    }
}

fn run_plain(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_geni-am"))
        .args(args)
        .output()
        .expect("run geni-am")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Asserts `out` exited with `code` and its standard error names `what`.
fn fails(out: &Output, code: i32, what: &str) {
    assert_eq!(out.status.code(), Some(code), "{out:?}");
    assert!(stderr(out).contains(what), "{what} not in: {}", stderr(out));
}

#[test]
fn slices_are_listed_with_their_slivers_by_state_as_a_table_and_as_json() {
    let site = Site::new();
    site.provisioned(&["n1", "n2"]);
    let table = site.ok(&["slices"]);
    let lines: Vec<&str> = table.lines().collect();
    assert!(
        lines[0].starts_with("SLICE ") && lines[0].contains("NEXT EXPIRY"),
        "{table}"
    );
    assert!(lines[1].starts_with(SLICE), "{table}");
    assert!(lines[1].contains("2 geni_pending_allocation"), "{table}");
    assert_eq!(
        lines[0].find("LIVE"),
        lines[1].find(" 2 ").map(|i| i + 1),
        "columns line up: {table}"
    );
    let json = site.json(&["slices"]);
    assert_eq!(json[0]["urn"], SLICE);
    assert_eq!(json[0]["live_slivers"], 2);
    assert_eq!(json[0]["by_state"]["geni_pending_allocation"], 2);
    assert_eq!(json[0]["shut_down"], Value::Null);

    site.am().delete(&site.principal(), &slice()).unwrap();
    assert_eq!(site.ok(&["slices"]), "no slices\n", "nothing live");
    let all = site.json(&["slices", "--all"]);
    assert_eq!(all[0]["urn"], SLICE);
    assert_eq!(all[0]["live_slivers"], 0);
}

#[test]
fn slivers_are_filtered_by_slice_and_state() {
    let site = Site::new();
    let urns = site.provisioned(&["n1", "n2"]);
    site.ready(&urns[0]);
    let all = site.json(&["slivers", "--slice", SLICE]);
    assert_eq!(all.as_array().unwrap().len(), 2);
    assert_eq!(all[0]["client_id"], "n1");
    assert_eq!(all[0]["allocation_state"], "geni_provisioned");
    assert!(all[0]["host"] == "h1" || all[0]["host"] == "h2", "{all}");
    let ready = site.json(&["slivers", "--state", "ready"]);
    assert_eq!(ready.as_array().unwrap().len(), 1);
    assert_eq!(ready[0]["urn"], urns[0].as_str());
    let table = site.ok(&["slivers", "--state", "geni_pending_allocation"]);
    assert!(
        table.contains(&urns[1]) && !table.contains(&urns[0]),
        "{table}"
    );
    assert_eq!(
        site.ok(&["slivers", "--state", "geni_failed"]),
        "no slivers\n"
    );
}

#[test]
fn the_job_queue_and_the_failed_jobs_are_shown() {
    let site = Site::new();
    let urns = site.provisioned(&["n1", "n2"]);
    let queue = site.json(&["jobs"]);
    assert_eq!(queue["queued"], 2);
    assert_eq!(queue["running"], 0);
    assert!(queue["oldest_queued_age_secs"].as_i64().unwrap() >= 0);
    assert_eq!(queue["jobs"][0]["kind"], "provision");
    let table = site.ok(&["jobs"]);
    assert!(
        table.starts_with("2 queued, 0 running, oldest queued "),
        "{table}"
    );
    assert!(table.contains("provision"), "{table}");

    let store = site.am().store();
    let claimed = store
        .claim_jobs("w", Utc::now(), TimeDelta::seconds(60), 1)
        .unwrap();
    store
        .fail_job(&claimed[0].id, "w", "the cloud said no", Utc::now())
        .unwrap();
    let failed = site.json(&["jobs", "--failed"]);
    assert_eq!(failed["jobs"].as_array().unwrap().len(), 1);
    assert_eq!(failed["jobs"][0]["state"], "failed");
    assert_eq!(failed["jobs"][0]["last_error"], "the cloud said no");
    assert!(
        urns.iter()
            .any(|u| failed["jobs"][0]["sliver_urn"] == u.as_str())
    );
    assert_eq!(failed["queued"], 1);
    assert!(site.ok(&["jobs", "--failed"]).contains("the cloud said no"));
}

#[test]
fn events_are_read_back_by_slice_and_time() {
    let site = Site::new();
    site.provisioned(&["n1"]);
    let events = site.json(&["events", "--slice", SLICE]);
    let kinds: Vec<&str> = events
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["allocate", "provision"], "{events}");
    assert_eq!(events[0]["slice_urn"], SLICE);
    let later = time_text(Utc::now() + TimeDelta::hours(1));
    assert_eq!(
        site.json(&["events", "--since", &later]),
        Value::Array(vec![])
    );
    let earlier = time_text(Utc::now() - TimeDelta::hours(1));
    let table = site.ok(&["events", "--since", &earlier, "--limit", "1"]);
    assert_eq!(table.lines().count(), 2, "{table}");
    assert!(table.contains("provision"), "the newest: {table}");
}

fn time_text(t: chrono::DateTime<Utc>) -> String {
    geni_am::time::format(&t)
}

#[test]
fn capacity_is_what_the_aggregate_counts() {
    let site = Site::new();
    site.provisioned(&["n1", "n2", "n3"]);
    let hosts = site.json(&["capacity"]);
    let counted = overview::capacity(site.am().store(), Utc::now()).unwrap();
    assert_eq!(hosts, serde_json::to_value(&counted).unwrap());
    let used: i64 = hosts
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["vms_used"].as_i64().unwrap())
        .sum();
    assert_eq!(used, 3);
    let table = site.ok(&["capacity"]);
    assert!(table.starts_with("HOST "), "{table}");
    assert!(table.contains("h1") && table.contains("h2"), "{table}");
}

#[test]
fn shutdown_stops_the_slice_and_records_the_operator_and_reason() {
    let site = Site::new();
    let urns = site.provisioned(&["n1", "n2"]);
    site.ready(&urns[0]);
    let said = site.ok(&[
        "shutdown",
        SLICE,
        "--reason",
        "abuse report 42",
        "--operator",
        "carol",
    ]);
    assert!(
        said.contains("operator carol") && said.contains("1 running"),
        "{said}"
    );
    let slices = site.json(&["slices"]);
    assert_eq!(slices[0]["shut_down"]["by"], "operator carol");
    assert_eq!(slices[0]["shut_down"]["reason"], "abuse report 42");
    let jobs = site.am().store().jobs_of_sliver(&urns[0]).unwrap();
    assert_eq!(jobs.last().unwrap().kind, JobKind::Stop);
    let events = site.json(&["events", "--slice", SLICE]);
    assert!(
        events
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["kind"] == "shutdown" && e["detail"] == "operator carol: abuse report 42"),
        "{events}"
    );
    let refused = site
        .am()
        .renew(
            &site.principal(),
            &slice(),
            Utc::now() + TimeDelta::days(2),
            Default::default(),
        )
        .unwrap_err();
    assert!(refused.to_string().contains("operator carol"), "{refused}");
}

#[test]
fn delete_removes_slivers_through_the_jobs_and_names_the_operator_from_the_environment() {
    let site = Site::new();
    let urns = site.provisioned(&["n1", "n2", "n3"]);
    let out = site.admin_env(
        &["delete", &urns[0], &urns[1], "--reason", "stuck"],
        &[("USER", "root"), ("SUDO_USER", "dave")],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    for urn in &urns[..2] {
        let row = site.am().store().sliver(urn).unwrap().unwrap();
        assert_eq!(row.allocation_state, AllocationState::Unallocated);
        let jobs = site.am().store().jobs_of_sliver(urn).unwrap();
        assert_eq!(jobs.last().unwrap().kind, JobKind::Destroy, "{jobs:?}");
    }
    let events = site.json(&["events"]);
    let details: Vec<&str> = events
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "delete")
        .map(|e| e["detail"].as_str().unwrap())
        .collect();
    assert_eq!(details, ["by operator dave: stuck"; 2]);
    let out = site.admin_env(&["--json", "delete", &urns[2]], &[("USER", "erin")]);
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["operator"], "erin");
    assert_eq!(json["deleted"][0], urns[2].as_str());
}

#[test]
fn deleting_an_unknown_or_deleted_sliver_exits_1_naming_it_and_deletes_nothing() {
    let site = Site::new();
    let urns = site.provisioned(&["n1"]);
    let unknown = format!("urn:publicid:IDN+{AUTHORITY}+sliver+nosuch");
    fails(&site.admin(&["delete", &urns[0], &unknown]), 1, &unknown);
    let row = site.am().store().sliver(&urns[0]).unwrap().unwrap();
    assert_eq!(
        row.allocation_state,
        AllocationState::Provisioned,
        "all or none"
    );
    site.ok(&["delete", &urns[0]]);
    fails(&site.admin(&["delete", &urns[0]]), 1, &urns[0]);
}

#[test]
fn an_unknown_slice_exits_1_naming_it() {
    let site = Site::new();
    site.provisioned(&["n1"]);
    let other = "urn:publicid:IDN+ch.test.example:proj+slice+nosuch";
    fails(&site.admin(&["shutdown", other, "--reason", "x"]), 1, other);
    fails(&site.admin(&["slivers", "--slice", other]), 1, other);
    fails(&site.admin(&["events", "--slice", other]), 1, other);
}

#[test]
fn malformed_input_and_configuration_exit_2_naming_what_is_wrong() {
    let site = Site::new();
    fails(
        &site.admin(&["events", "--since", "yesterday"]),
        2,
        "yesterday",
    );
    fails(
        &site.admin(&["events", "--since", "2026-13-01T00:00:00Z"]),
        2,
        "2026-13-01",
    );
    fails(&site.admin(&["slivers", "--state", "bogus"]), 2, "bogus");
    fails(&site.admin(&["drain", "maybe"]), 2, "maybe");
    fails(&site.admin(&["shutdown", SLICE]), 2, "--reason");
    fails(&site.admin(&["delete"]), 2, "SLIVER");
    fails(&site.admin(&["teleport"]), 2, "teleport");
    let missing = site.f.dir.path().join("nope.toml");
    fails(
        &run_plain(&["admin", "--config", missing.to_str().unwrap(), "slices"]),
        2,
        "nope.toml",
    );
    let nameless = site.admin_env(&["drain", "on"], &[("USER", "")]);
    fails(&nameless, 2, "--operator");
    assert!(!overview::drain(site.am().store()).unwrap().draining);
}

#[test]
fn a_store_that_does_not_exist_is_not_created() {
    let site = Site::new();
    let text = std::fs::read_to_string(&site.config).unwrap();
    let elsewhere = site.f.dir.path().join("elsewhere.toml");
    std::fs::write(&elsewhere, text.replace("geni-am.sqlite", "missing.sqlite")).unwrap();
    let out = run_plain(&["admin", "--config", elsewhere.to_str().unwrap(), "slices"]);
    fails(&out, 2, "missing.sqlite");
    assert!(!site.f.dir.path().join("missing.sqlite").exists());
}

#[test]
fn drain_on_and_off_is_shown_and_recorded() {
    let site = Site::new();
    assert!(site.ok(&["drain"]).starts_with("not draining"));
    let on = site.ok(&["drain", "on", "--reason", "host upgrade"]);
    assert!(
        on.starts_with("draining since ") && on.contains("host upgrade"),
        "{on}"
    );
    let state = site.json(&["drain"]);
    assert_eq!(state["draining"], true);
    assert_eq!(state["operator"], "tester");
    assert_eq!(state["reason"], "host upgrade");
    let refused = site
        .am()
        .allocate(&site.principal(), SLICE, &request(&["n1"], "default-vm"))
        .unwrap_err()
        .answered();
    assert_eq!(refused.code.as_i32(), 11, "{}", refused.message);
    assert_eq!(site.json(&["drain", "off"])["draining"], false);
    site.provisioned(&["n1"]);
    let events = site.json(&["events"]);
    let drains: Vec<&str> = events
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "drain")
        .map(|e| e["detail"].as_str().unwrap())
        .collect();
    assert_eq!(
        drains,
        [
            "on by operator tester: host upgrade",
            "off by operator tester"
        ]
    );
}

/// The slice the [`Writer`] works in.
const WRITER_SLICE: &str = "urn:publicid:IDN+ch.test.example:proj+slice+writer";

/// Keeps allocating and deleting in [`WRITER_SLICE`] on its own
/// connection pool until stopped, as a running `serve` writes the store
/// (an Allocate refused while draining is no failure).
struct Writer {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<usize>>,
}

impl Writer {
    fn start(site: &Site) -> Writer {
        let stop = Arc::new(AtomicBool::new(false));
        let am = attach(&site.f.url, &site.f.clock);
        let mut p = site.principal();
        p.slice_urn = Some(WRITER_SLICE.into());
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            let mut rounds = 0;
            let whole = geni_am::model::Selector::Slice(WRITER_SLICE.into());
            while !flag.load(Ordering::SeqCst) {
                match am.allocate(&p, WRITER_SLICE, &request(&["w1", "w2"], "default-vm")) {
                    Ok(_) => {
                        am.delete(&p, &whole).expect("the writer deletes");
                        rounds += 1;
                    }
                    Err(geni_am::core::CoreError::Draining { .. }) => {}
                    Err(e) => panic!("the writer's Allocate failed beside admin: {e}"),
                }
            }
            rounds
        });
        Writer {
            stop,
            thread: Some(thread),
        }
    }

    /// Stops the writer; how many rounds it wrote.
    fn stop(mut self) -> usize {
        self.stop.store(true, Ordering::SeqCst);
        self.thread
            .take()
            .unwrap()
            .join()
            .expect("the writer never failed")
    }
}

#[test]
fn actions_succeed_while_another_process_writes_the_store() {
    actions_beside_a_writer(&Site::new());
}

#[test]
fn actions_succeed_while_another_process_writes_the_store_on_postgres() {
    if let Some((site, _db)) = Site::postgres("actions_beside_a_writer") {
        actions_beside_a_writer(&site);
    }
}

fn actions_beside_a_writer(site: &Site) {
    let other = "urn:publicid:IDN+ch.test.example:proj+slice+other";
    let mut p = site.principal();
    p.slice_urn = Some(other.into());
    let kept = site
        .am()
        .allocate(&p, other, &request(&["k1", "k2"], "default-vm"))
        .unwrap();
    let writer = Writer::start(site);
    for _ in 0..3 {
        site.ok(&["drain", "on"]);
        site.ok(&["drain", "off"]);
        site.ok(&["slices"]);
        site.ok(&["capacity"]);
    }
    site.ok(&["delete", &kept.slivers[0].urn]);
    site.ok(&["shutdown", other, "--reason", "while busy"]);
    let rounds = writer.stop();
    assert!(rounds > 0, "the writer wrote meanwhile");
    let slices = overview::slices(site.am().store()).unwrap();
    let shut = slices.iter().find(|s| s.urn == other).unwrap();
    assert_eq!(shut.live_slivers, 1);
    assert!(shut.shut_down.is_some());
}

#[test]
fn a_backup_taken_while_the_store_is_written_opens_with_its_slivers() {
    let site = Site::new();
    let urns = site.provisioned(&["n1", "n2"]);
    let writer = Writer::start(&site);
    std::thread::sleep(std::time::Duration::from_millis(100));
    let copy = site.f.dir.path().join("backup.sqlite");
    let said = site.ok(&["backup", copy.to_str().unwrap()]);
    writer.stop();
    assert!(said.starts_with("backed up the store to "), "{said}");
    let backup = Store::open(copy.to_str().unwrap(), 1).expect("the backup opens");
    let check: Vec<IntegrityCheck> = backup
        .read(|conn| {
            use diesel::RunQueryDsl;
            let geni_am::store::Conn::Sqlite(c) = conn else {
                panic!("SQLite")
            };
            Ok::<_, geni_am::store::StoreError>(
                diesel::sql_query("PRAGMA integrity_check").load(c)?,
            )
        })
        .unwrap();
    assert_eq!(check[0].integrity_check, "ok");
    for urn in &urns {
        let row = backup.sliver(urn).unwrap().expect("in the backup");
        assert_eq!(row.allocation_state, AllocationState::Provisioned);
    }
    fails(
        &site.admin(&["backup", copy.to_str().unwrap()]),
        1,
        "backup.sqlite",
    );
}

#[derive(diesel::QueryableByName)]
struct IntegrityCheck {
    #[diesel(sql_type = diesel::sql_types::Text)]
    integrity_check: String,
}

#[test]
fn a_postgres_store_is_backed_up_with_pg_dump_and_drained_for_every_process() {
    let Some((site, db)) = Site::postgres("a_postgres_store_is_backed_up_with_pg_dump") else {
        return;
    };
    let target = site.f.dir.path().join("pg-backup");
    fails(
        &site.admin(&["backup", target.to_str().unwrap()]),
        1,
        "pg_dump",
    );
    assert!(!target.exists());
    site.ok(&["drain", "on"]);
    let other = attach(&db.url, &site.f.clock);
    assert!(
        overview::drain(other.store()).unwrap().draining,
        "every process sees it"
    );
    site.ok(&["drain", "off"]);
    assert!(!overview::drain(other.store()).unwrap().draining);
    site.provisioned(&["n1"]);
    assert_eq!(site.json(&["slices"])[0]["live_slivers"], 1);
}
