//! The operator's side of the real binary: the metrics of `/metrics` move
//! by exactly the calls made and the sliver gauges match the slice, each
//! call is one JSON log line with its request id, method, caller, slice,
//! code and duration, `/readyz` goes 503 while the cloud is away and 200
//! when it is back, a token file makes the endpoint answer 401 without
//! it, a malformed `[operator]` stops `serve` naming the key, and the
//! dashboard, rendered by headless Chromium, shows the slice and its
//! slivers and never a key, a certificate or a signature (screenshots at
//! laptop and phone widths are left in target/ for a person to look at).

use geni_am_tests::aggregate::{ALICE, Aggregate, DEMO_SLICE, set};
use geni_am_tests::calls::{call, creds, st, strs, with_version};
use geni_am_tests::database::Store;
use geni_am_tests::flows::urns;
use geni_am_tests::opennebula::demo_slice;
use geni_am_tests::operator::{Metrics, get, get_tls, run_chromium};
use geni_am_tests::requests;
use std::time::{Duration, Instant};

#[test]
fn the_call_counters_move_by_exactly_the_calls_made_and_the_sliver_gauges_match() {
    let aggregate = Aggregate::start(Store::Sqlite);
    let metrics = aggregate.operator_url("/metrics");
    let mut client = aggregate.client(3);
    let user_credential = aggregate.read("alice-user-cred.xml");
    call(&mut client, "GetVersion", vec![]).ok();
    let before = Metrics::scrape(&metrics);

    call(&mut client, "GetVersion", vec![]).ok();
    call(&mut client, "GetVersion", vec![]).ok();
    call(
        &mut client,
        "ListResources",
        vec![creds(&user_credential), with_version(vec![])],
    )
    .ok();
    let unknown = "urn:publicid:IDN+geni-am.test+slice+nothing-here";
    let missing = call(
        &mut client,
        "Describe",
        vec![strs(&[unknown]), creds(&user_credential), st(vec![])],
    );
    assert_ne!(missing.code, 0);
    let anonymous = call(
        &mut client,
        "ListResources",
        vec![geni_xmlrpc::Value::Array(vec![]), with_version(vec![])],
    );
    assert_eq!(anonymous.code, 3, "no credential: FORBIDDEN");
    let mut slice = demo_slice(&aggregate, &mut client);
    slice.allocate(&requests::vms(&["one", "two"]));
    slice.provision(&[DEMO_SLICE]);
    let after = Metrics::scrape(&metrics);

    let moved = |method: &str, code: &str| {
        let labels = [("method", method), ("code", code)];
        after.sum("geni_am_calls_total", &labels) - before.sum("geni_am_calls_total", &labels)
    };
    assert_eq!(moved("GetVersion", "0"), 2.0, "{}", after.0);
    assert_eq!(moved("ListResources", "0"), 1.0);
    let describe_code = missing.code.to_string();
    assert_eq!(moved("Describe", &describe_code), 1.0);
    assert_eq!(moved("Allocate", "0"), 1.0);
    assert_eq!(moved("Provision", "0"), 1.0);
    let all = after.sum("geni_am_calls_total", &[]) - before.sum("geni_am_calls_total", &[]);
    assert_eq!(moved("ListResources", "3"), 1.0);
    assert_eq!(all, 7.0, "no other call was counted");
    let refusals = |m: &Metrics| m.sum("geni_am_refusals_total", &[("reason", "forbidden")]);
    assert_eq!(
        refusals(&after) - refusals(&before),
        1.0,
        "the refusal by class"
    );
    let timed = after.sum(
        "geni_am_call_duration_seconds_count",
        &[("method", "GetVersion")],
    ) - before.sum(
        "geni_am_call_duration_seconds_count",
        &[("method", "GetVersion")],
    );
    assert_eq!(timed, 2.0);

    let provisioned = [("allocation_state", "geni_provisioned")];
    assert_eq!(
        after.sum("geni_am_slivers", &provisioned),
        2.0,
        "{}",
        after.0
    );
    assert_eq!(after.sum("geni_am_slivers", &[]), 2.0);
    let used_vms = after.sum("geni_am_host_used", &[("resource", "vms")]);
    assert_eq!(used_vms, 2.0, "{}", after.0);
    assert_eq!(after.sum("geni_am_backend_up", &[]), 1.0);
    assert_eq!(after.sum("geni_am_draining", &[]), 0.0);
    assert!(
        after
            .0
            .contains("geni_am_store_connections{state=\"idle\"}")
    );

    aggregate.admin(&["drain", "on", "--reason", "maintenance <tonight>"]);
    let drained = Metrics::scrape(&metrics);
    assert_eq!(drained.sum("geni_am_draining", &[]), 1.0);
    let front = get(&aggregate.operator_url("/"), &[]).body;
    assert!(front.contains("draining (operator-test)"), "{front}");
    assert!(
        front.contains("maintenance &lt;tonight&gt;"),
        "the reason, escaped"
    );
}

#[test]
fn each_call_is_one_json_line_with_its_request_id_method_caller_slice_code_and_duration() {
    let aggregate = Aggregate::start_with(Store::Sqlite, |table| {
        set(table, &["log", "format"], "json".into());
    });
    let mut client = aggregate.client(3);
    let mut slice = demo_slice(&aggregate, &mut client);
    slice.allocate(&requests::vms(&["logged"]));
    // The line is written before the answer is sent.
    let log = aggregate.log();
    let lines: Vec<serde_json::Value> = log
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}")))
        .collect();
    let allocates: Vec<&serde_json::Value> = lines
        .iter()
        .filter(|line| line["span"]["method"] == "Allocate")
        .collect();
    assert_eq!(allocates.len(), 1, "one line for the call: {log}");
    let line = allocates[0];
    let span = &line["span"];
    let id = span["request_id"].as_str().expect("a request id");
    assert!(
        id.len() >= 16 && id.chars().all(|c| c.is_ascii_hexdigit()),
        "{id}"
    );
    assert_eq!(span["caller"], ALICE);
    assert_eq!(span["slice"], DEMO_SLICE);
    assert_eq!(line["code"], 0);
    assert!(
        line["duration_ms"].as_f64().is_some_and(|ms| ms > 0.0),
        "{line}"
    );
    assert_eq!(line["level"], "INFO");
}

#[test]
fn readyz_is_503_while_the_cloud_is_away_and_200_when_it_is_back() {
    let sim = geni_am_tests::opennebula::start_sim("6.10");
    let aggregate = geni_am_tests::opennebula::start_aggregate_with(Store::Sqlite, &sim, |t| {
        set(t, &["jobs", "inventory_interval_ms"], 200.into());
    });
    let readyz = aggregate.operator_url("/readyz");
    let healthz = aggregate.operator_url("/healthz");
    wait_for_status(&readyz, 200);
    sim.begin_outage(onesim::TransportFault::Drop);
    let away = wait_for_status(&readyz, 503);
    assert!(away.contains("the backend does not answer"), "{away}");
    assert_eq!(get(&healthz, &[]).status, 200, "alive all the same");
    let metrics = Metrics::scrape(&aggregate.operator_url("/metrics"));
    assert_eq!(metrics.sum("geni_am_backend_up", &[]), 0.0);
    assert!(metrics.sum("geni_am_backend_errors_total", &[("class", "unreachable")]) >= 1.0);
    sim.end_outage();
    wait_for_status(&readyz, 200);
    let log = aggregate.log();
    assert_eq!(
        log.matches("the backend does not answer").count(),
        1,
        "the outage is logged once: {log}"
    );
    assert!(log.contains("outage_secs"), "its end says how long: {log}");
}

/// Polls `url` until it answers `status`; the body.
fn wait_for_status(url: &str, status: u16) -> String {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let answer = get(url, &[]);
        if answer.status == status {
            return answer.body;
        }
        assert!(
            Instant::now() < deadline,
            "{url} still {} ({}), not {status}",
            answer.status,
            answer.body
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn with_a_token_file_the_endpoint_answers_401_without_the_token() {
    let token = "0123456789abcdef-operator-token";
    let mut file = None;
    let aggregate = Aggregate::start_with(Store::Sqlite, |table| {
        let path = std::env::temp_dir().join(format!("geni-am-token-{}", std::process::id()));
        std::fs::write(&path, format!("{token}\n")).expect("token written");
        set(
            table,
            &["operator", "token_file"],
            path.display().to_string().into(),
        );
        file = Some(path);
    });
    let metrics = aggregate.operator_url("/metrics");
    let refused = get(&metrics, &[]);
    assert_eq!(refused.status, 401, "{}", refused.body);
    assert!(
        refused
            .headers
            .to_ascii_lowercase()
            .contains("www-authenticate: bearer")
    );
    let wrong = get(
        &metrics,
        &["Authorization: Bearer 0123456789abcdef-wrong-token"],
    );
    assert_eq!(wrong.status, 401);
    let header = format!("Authorization: Bearer {token}");
    assert_eq!(get(&metrics, &[&header]).status, 200);
    assert_eq!(get(&aggregate.operator_url("/"), &[&header]).status, 200);
    if let Some(path) = file {
        let _ = std::fs::remove_file(path);
    }
}

#[test]
fn with_tls_and_client_roots_only_clients_of_those_roots_are_answered() {
    let aggregate = Aggregate::start_with(Store::Sqlite, |table| {
        for (key, value) in [
            ("tls_cert", "am-cert.pem"),
            ("tls_key", "am-key.pem"),
            ("client_roots", "trusted"),
        ] {
            set(table, &["operator", key], value.into());
        }
    });
    let (port, ca) = (aggregate.operator_port(), aggregate.file("ca-cert.pem"));
    let (cert, key) = (
        aggregate.file("alice-cert.pem"),
        aggregate.file("alice-key.pem"),
    );
    let answer = get_tls(port, &ca, Some((&cert, &key)), "/metrics").expect("alice is admitted");
    assert_eq!(answer.status, 200);
    assert!(
        answer.body.contains("geni_am_backend_up 1"),
        "{}",
        answer.body
    );
    let stranger = get_tls(port, &ca, None, "/healthz");
    assert!(
        stranger.is_err(),
        "a client without a certificate is not answered: {stranger:?}"
    );
}

#[test]
fn a_malformed_operator_section_stops_serve_naming_the_key() {
    let aggregate = Aggregate::start(Store::Sqlite);
    for (key, value, named) in [
        ("listen", toml::Value::from("localhost"), "operator.listen"),
        (
            "tls_key",
            toml::Value::from("missing.pem"),
            "operator.tls_cert",
        ),
        ("colour", toml::Value::from("blue"), "colour"),
    ] {
        let mut table: toml::Table = aggregate
            .read("geni-am.toml")
            .parse()
            .expect("configuration is TOML");
        set(&mut table, &["operator", key], value);
        let config = aggregate.file("bad-operator.toml");
        std::fs::write(&config, table.to_string()).expect("configuration written");
        let output = std::process::Command::new(geni_am_tests::geni_am_bin())
            .arg("serve")
            .arg("--config")
            .arg(&config)
            .output()
            .expect("geni-am serve runs");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{key}: served: {stderr}");
        assert!(stderr.contains(named), "{key}: {stderr}");
    }
}

#[test]
fn the_dashboard_shows_the_slice_and_its_slivers_in_chromium_and_no_secret() {
    let aggregate = Aggregate::start(Store::Sqlite);
    let mut client = aggregate.client(3);
    let mut slice = demo_slice(&aggregate, &mut client);
    let slivers = urns(&slice.allocate(&requests::vms(&["web", "db"])).slivers());
    slice.provision(&[DEMO_SLICE]);
    slice.action(&[DEMO_SLICE], "geni_start").ok();
    slice.wait_ready(&[DEMO_SLICE]);

    let front = get(&aggregate.operator_url("/"), &[]);
    assert_eq!(front.status, 200);
    let slice_path = format!(
        "/slices/{}",
        DEMO_SLICE
            .bytes()
            .map(|b| if b.is_ascii_alphanumeric() {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            })
            .collect::<String>()
    );
    assert!(
        front.body.contains(&slice_path),
        "the front page links the slice"
    );
    let page = get(&aggregate.operator_url(&slice_path), &[]);
    assert_eq!(page.status, 200, "{}", page.body);
    let metrics = get(&aggregate.operator_url("/metrics"), &[]).body;
    for text in [&front.body, &page.body, &metrics] {
        for secret in ["BEGIN", "SignatureValue", "X509Certificate", "<credential"] {
            assert!(!text.contains(secret), "{secret} shown");
        }
    }
    assert!(
        !page.body.contains(&slice.credential[..64]),
        "the credential is never shown"
    );

    let Some(chromium) = geni_am_tests::operator::chromium() else {
        geni_am_tests::missing_prerequisite("chromium is not installed");
        return;
    };
    let profile = tempfile::tempdir().expect("a profile directory");
    let url = aggregate.operator_url(&slice_path);
    let dom = run_chromium(&chromium, profile.path(), &url, &["--dump-dom"]);
    assert!(dom.contains(DEMO_SLICE), "the slice is shown: {dom}");
    for urn in &slivers {
        assert!(dom.contains(urn.as_str()), "sliver {urn} shown");
    }
    assert!(dom.contains("geni_ready"), "their state is shown");
    assert!(dom.contains("&lt;rspec"), "the manifest is shown as text");
    let front_dom = run_chromium(
        &chromium,
        profile.path(),
        &aggregate.operator_url("/"),
        &["--dump-dom"],
    );
    assert!(
        front_dom.contains(DEMO_SLICE),
        "the front page lists the slice"
    );
    assert!(front_dom.contains("host1"), "and the hosts' capacity");
    let target = geni_am_tests::workspace_root().join("target");
    for (name, url, size) in [
        ("dashboard.png", aggregate.operator_url("/"), "1366,1400"),
        ("dashboard-slice.png", url.clone(), "1366,1200"),
        (
            "dashboard-phone.png",
            aggregate.operator_url("/"),
            "390,2400",
        ),
    ] {
        let file = target.join(name);
        let _ = std::fs::remove_file(&file);
        run_chromium(
            &chromium,
            profile.path(),
            &url,
            &[
                &format!("--screenshot={}", file.display()),
                &format!("--window-size={size}"),
            ],
        );
        assert!(file.is_file(), "{name} saved");
    }
}
