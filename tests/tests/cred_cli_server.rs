//! `geni-am cred verify` judges exactly as the running aggregate does: the
//! same callers (trusted, untrusted, expired, not yet valid, speaking for
//! someone with and without a speaks-for statement) and the same
//! credentials (good, expired, another slice's, an untrusted signer's) go
//! once through the real server over TLS and once through the command
//! line, and both must agree on accepted, refused at the connection, or
//! refused with the same GENI code.

use chrono::{Duration, Utc};
use geni_am::client::Client;
use geni_am_tests::aggregate::{ALICE, Aggregate, DEMO_SLICE};
use geni_am_tests::calls::{envelope, s, sfa, st, strs, with_version};
use geni_am_tests::creds::{DevAuthority, Stranger};
use geni_am_tests::database::Store;
use geni_xmlrpc::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// What became of a call.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Outcome {
    /// Authorised (the call may still fail for other reasons).
    Accepted,
    /// The caller's certificate was refused before any credential was read.
    CallerRefused,
    /// Refused with this GENI code.
    Refused(i32),
}

/// A caller and what it presents.
struct Case {
    name: &'static str,
    cert: PathBuf,
    key: PathBuf,
    speaking_for: Option<&'static str>,
    credentials: Vec<String>,
}

/// The GENI codes of the refusal labels the command prints.
const LABELS: &[(&str, i32)] = &[
    ("FORBIDDEN", 3),
    ("CREDENTIAL_INVALID", 20),
    ("CREDENTIAL_EXPIRED", 21),
    ("CREDENTIAL_MISMATCH", 22),
    ("CREDENTIAL_SIGNER_UNTRUSTED", 23),
];

/// Describe of the demo slice through the server.
fn through_server(aggregate: &Aggregate, case: &Case) -> Outcome {
    let mut client = Client::new(
        &aggregate.url(3),
        &case.cert,
        &case.key,
        Some(&aggregate.file("ca-cert.pem")),
    )
    .expect("client set-up");
    // Wrapped as clients wrap them: speaks-for statements as geni_abac 1.
    let credentials = Value::Array(
        case.credentials
            .iter()
            .map(|xml| {
                if xml.contains("<type>abac</type>") {
                    st(vec![
                        ("geni_type", s("geni_abac")),
                        ("geni_version", s("1")),
                        ("geni_value", s(xml)),
                    ])
                } else {
                    sfa(xml)
                }
            })
            .collect(),
    );
    let mut options = vec![];
    if let Some(user) = case.speaking_for {
        options.push(("geni_speaking_for", s(user)));
    }
    let params = [strs(&[DEMO_SLICE]), credentials, with_version(options)];
    match client.call("Describe", &params) {
        Err(_) => Outcome::CallerRefused,
        Ok(Err(fault)) => panic!("{}: XML-RPC fault {fault:?}", case.name),
        Ok(Ok(raw)) => {
            let answer = envelope(raw);
            if LABELS.iter().any(|(_, code)| *code == answer.code) {
                Outcome::Refused(answer.code)
            } else {
                Outcome::Accepted
            }
        }
    }
}

/// The same check through `geni-am cred verify`.
fn through_cli(aggregate: &Aggregate, dir: &Path, case: &Case) -> Outcome {
    let mut command = Command::new(geni_am_tests::geni_am_bin());
    command
        .args(["cred", "verify", "--roots"])
        .arg(aggregate.file("trusted"))
        .arg("--caller")
        .arg(&case.cert)
        .args(["--target", DEMO_SLICE, "--privilege", "getsliceresources"]);
    if let Some(user) = case.speaking_for {
        command.args(["--speaking-for", user]);
    }
    for (i, xml) in case.credentials.iter().enumerate() {
        let file = dir.join(format!("{}-{i}.xml", case.name.replace(' ', "-")));
        std::fs::write(&file, xml).unwrap();
        command.arg(file);
    }
    let output = command.output().expect("geni-am cred verify runs");
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    match output.status.code() {
        Some(0) => Outcome::Accepted,
        Some(1) => {
            let caller_line = text
                .lines()
                .find(|line| line.starts_with(&case.cert.display().to_string()));
            match caller_line {
                Some(line) if line.contains("the caller's certificate") => Outcome::CallerRefused,
                _ => Outcome::Refused(refusal_code(&text)),
            }
        }
        other => panic!("{}: exit {other:?}: {output:?}", case.name),
    }
}

/// The code of the verdict (`call: refused (LABEL)`) or of the caller's
/// refusal in `text`.
fn refusal_code(text: &str) -> i32 {
    let verdict = text
        .lines()
        .find(|line| line.starts_with("call: refused (") || line.contains(": refused ("))
        .unwrap_or_else(|| panic!("no refusal in {text}"));
    let verdict = text
        .lines()
        .find(|line| line.starts_with("call: "))
        .unwrap_or(verdict);
    LABELS
        .iter()
        .find(|(label, _)| verdict.contains(&format!("refused ({label})")))
        .map(|(_, code)| *code)
        .unwrap_or_else(|| panic!("no GENI label in {verdict:?}"))
}

#[test]
fn the_command_line_and_the_server_agree_on_every_caller_and_credential() {
    let store = Store::for_test("sqlite", "cred_cli_server").expect("SQLite");
    let aggregate = Aggregate::start(store);
    let dir = tempfile::tempdir().unwrap();
    let dev = DevAuthority::open(aggregate.dir());
    let (alice_cert, alice_key) = (
        aggregate.file("alice-cert.pem"),
        aggregate.file("alice-key.pem"),
    );
    let (_, good) = dev.slice_credential("demo", Utc::now() + Duration::days(7));
    let (_, expired) = dev.slice_credential("demo", Utc::now() - Duration::hours(1));
    let (_, other_slice) = dev.slice_credential("other", Utc::now() + Duration::days(7));
    let untrusted_signer = Stranger::new().credential_for(&dev, "demo");
    let (tool_cert, tool_key, statement) = dev.speaking_tool(dir.path(), "portal");
    let (mallory_cert, mallory_key) = Stranger::new().write_user(dir.path());
    let (old_cert, old_key) = dev.user_valid(
        dir.path(),
        "olduser",
        Utc::now() - Duration::days(10),
        Utc::now() - Duration::days(1),
    );
    let (future_cert, future_key) = dev.user_valid(
        dir.path(),
        "futureuser",
        Utc::now() + Duration::days(1),
        Utc::now() + Duration::days(10),
    );
    let alice = |name, credentials: Vec<&String>| Case {
        name,
        cert: alice_cert.clone(),
        key: alice_key.clone(),
        speaking_for: None,
        credentials: credentials.into_iter().cloned().collect(),
    };
    let cases = vec![
        alice("good slice credential", vec![&good]),
        alice("expired slice credential", vec![&expired]),
        alice("credential of another slice", vec![&other_slice]),
        alice("untrusted signer", vec![&untrusted_signer]),
        alice(
            "altered credential",
            vec![&good.replacen("<expires>", "<foo/><expires>", 1)],
        ),
        alice("an expired and a good one", vec![&expired, &good]),
        Case {
            name: "tool speaking for alice",
            cert: tool_cert.clone(),
            key: tool_key.clone(),
            speaking_for: Some(ALICE),
            credentials: vec![good.clone(), statement.clone()],
        },
        Case {
            name: "tool speaking for alice without a statement",
            cert: tool_cert.clone(),
            key: tool_key.clone(),
            speaking_for: Some(ALICE),
            credentials: vec![good.clone()],
        },
        Case {
            name: "tool presenting alice's credential as itself",
            cert: tool_cert,
            key: tool_key,
            speaking_for: None,
            credentials: vec![good.clone(), statement],
        },
        Case {
            name: "untrusted caller",
            cert: mallory_cert,
            key: mallory_key,
            speaking_for: None,
            credentials: vec![good.clone()],
        },
        Case {
            name: "expired caller",
            cert: old_cert,
            key: old_key,
            speaking_for: None,
            credentials: vec![good.clone()],
        },
        Case {
            name: "caller not yet valid",
            cert: future_cert,
            key: future_key,
            speaking_for: None,
            credentials: vec![good.clone()],
        },
    ];
    let mut seen = Vec::new();
    for case in &cases {
        let server = through_server(&aggregate, case);
        let cli = through_cli(&aggregate, dir.path(), case);
        assert_eq!(
            cli, server,
            "{}: the command line and the server disagree",
            case.name
        );
        seen.push(server);
    }
    // The cases cover every kind of outcome, so agreement means something.
    for expected in [
        Outcome::Accepted,
        Outcome::CallerRefused,
        Outcome::Refused(21),
        Outcome::Refused(22),
        Outcome::Refused(23),
    ] {
        assert!(
            seen.contains(&expected),
            "no case gave {expected:?}: {seen:?}"
        );
    }
}
