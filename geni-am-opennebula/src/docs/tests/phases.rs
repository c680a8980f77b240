//! The classification against the Virtual Machine States tables (every row
//! of both state tables and the "Classification" lists, read from the
//! digest the recorded test data comes with)
//! and against the transitions recorded from a 7.4.0 oned (`states.txt`).

use super::super::*;
use super::recorded;
use std::path::PathBuf;

/// The state tables of the digest, up to the HISTORY/ACTION table.
fn state_section() -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/docs/OPENNEBULA.md");
    let doc = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let start = doc.find("### 3.4 State tables").expect("§3.4 present");
    let end = start + doc[start..].find("`HISTORY/ACTION`").expect("end of §3.4");
    doc[start..end].to_string()
}

/// The table rows of the state tables as (number, cells after the number).
fn table_rows(section: &str) -> Vec<(i64, Vec<String>)> {
    section
        .lines()
        .filter_map(|line| {
            let cells: Vec<String> = line
                .trim()
                .strip_prefix('|')?
                .strip_suffix('|')?
                .split('|')
                .map(|c| c.trim().to_string())
                .collect();
            Some((cells.first()?.parse().ok()?, cells[1..].to_vec()))
        })
        .collect()
}

/// What the STATE table's name and meaning say.
fn expected_for_state(name: &str, meaning: &str) -> Option<VmPhase> {
    Some(if name.contains("FAIL") {
        VmPhase::Failed
    } else if meaning.contains("LCM_STATE") {
        return None;
    } else if meaning.contains("gone") {
        VmPhase::Done
    } else if meaning.contains("hold") {
        VmPhase::Held
    } else if meaning.contains("transient") || meaning.contains("waiting") {
        VmPhase::Pending
    } else if ["saved", "paused", "off"]
        .iter()
        .any(|w| meaning.contains(w))
    {
        VmPhase::Stopped
    } else {
        panic!("STATE row {name} ({meaning}) says nothing this test knows")
    })
}

/// The phases the LCM_STATE table's class column allows.
fn allowed_for_lcm(name: &str, class: &str) -> Vec<VmPhase> {
    use VmPhase::*;
    if class.starts_with("**running**") {
        vec![Running]
    } else if class.starts_with("running") {
        vec![Busy]
    } else if class.starts_with("booting") {
        vec![Booting]
    } else if class.starts_with("**failed/unknown**") {
        vec![Unknown]
    } else if class.starts_with("**failed**") {
        vec![Failed]
    } else if class.starts_with("shutting down") || class.starts_with("stopping") {
        vec![ShuttingDown]
    } else if class.starts_with("off, busy") || class.starts_with("paused, busy") {
        vec![Stopped]
    } else if class.starts_with("migrating") {
        // Cold migration: not up until it boots on the new host, or stays
        // off/paused when it was.
        vec![Booting, Stopped]
    } else if class.starts_with("legacy") || class.starts_with("never used") {
        vec![Busy, ShuttingDown, Failed]
    } else {
        panic!("LCM_STATE row {name} ({class}) says nothing this test knows")
    }
}

#[test]
fn every_row_of_both_state_tables_is_classified_as_the_table_says() {
    let rows = table_rows(&state_section());
    let (states, lcm_states): (Vec<_>, Vec<_>) = rows.into_iter().partition(|(_, c)| c.len() == 3);
    assert_eq!(states.len(), 12, "STATE rows 0–11");
    assert_eq!(lcm_states.len(), 72, "LCM_STATE rows 0–71");
    for (number, cells) in &states {
        if let Some(expected) = expected_for_state(&cells[0], &cells[2]) {
            assert_eq!(phase(*number, 0), expected, "STATE {number} {}", cells[0]);
        }
    }
    for (number, cells) in &lcm_states {
        let got = phase(3, *number);
        let allowed = allowed_for_lcm(&cells[0], &cells[1]);
        assert!(
            allowed.contains(&got),
            "LCM {number} {}: {got:?}, table allows {allowed:?}",
            cells[0]
        );
    }
}

/// The LCM numbers of the `(3, a|b|c–d, …)` groups in `text`.
fn active_groups(text: &str) -> Vec<Vec<i64>> {
    text.match_indices("(3,")
        .map(|(at, _)| {
            let inner = &text[at + 3..at + text[at..].find(')').unwrap()];
            inner
                .split(['|', ','])
                .map(str::trim)
                .filter(|t| !t.is_empty())
                .flat_map(|t| match t.split_once('–') {
                    Some((a, b)) => (a.parse().unwrap()..=b.parse().unwrap()).collect::<Vec<i64>>(),
                    None => vec![t.parse().unwrap()],
                })
                .collect()
        })
        .collect()
}

#[test]
fn the_classification_lists_of_the_document_hold() {
    let section = state_section();
    let list = &section[section.find("Classification a GENI driver").unwrap()..];
    let bullets: Vec<String> = list
        .split("\n* ")
        .skip(1)
        .map(|b| b.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect();
    let bullet = |key: &str| bullets.iter().find(|b| b.starts_with(key)).unwrap().clone();
    let check = |groups: &[Vec<i64>], expected: VmPhase| {
        for lcm in groups.iter().flatten() {
            assert_eq!(phase(3, *lcm), expected, "LCM {lcm}");
        }
    };
    let running = active_groups(&bullet("**ready / running**"));
    assert_eq!(running[0], vec![3]);
    check(&running[..1], VmPhase::Running);
    check(&running[1..], VmPhase::Busy);
    check(&active_groups(&bullet("**booting")), VmPhase::Booting);
    let failed = active_groups(&bullet("**failed**"));
    check(&failed[..1], VmPhase::Failed);
    assert_eq!(failed[1], vec![16]);
    check(&failed[1..], VmPhase::Unknown);
    check(
        &active_groups(&bullet("**shutting down**")),
        VmPhase::ShuttingDown,
    );
    for state in [0, 1, 10] {
        assert_eq!(phase(state, 0), VmPhase::Pending);
    }
    assert_eq!(phase(2, 0), VmPhase::Held);
    assert_eq!(phase(11, 0), VmPhase::Failed);
    for state in [4, 5, 8, 9] {
        assert_eq!(phase(state, 0), VmPhase::Stopped);
    }
    assert_eq!(phase(6, 0), VmPhase::Done);
}

#[test]
fn numbers_nobody_defined_are_unknown() {
    assert_eq!(phase(12, 0), VmPhase::Unknown);
    assert_eq!(phase(-1, 0), VmPhase::Unknown);
    assert_eq!(phase(3, 72), VmPhase::Unknown);
    assert_eq!(phase(3, -1), VmPhase::Unknown);
    // LCM_STATE only counts while ACTIVE.
    assert_eq!(phase(8, 36), VmPhase::Stopped);
}

/// The phase each (STATE/LCM) name seen in `states.txt` means.
fn recorded_meaning(names: &str) -> VmPhase {
    match names {
        "PENDING/LCM_INIT" => VmPhase::Pending,
        "ACTIVE/PROLOG" | "ACTIVE/BOOT" | "ACTIVE/BOOT_POWEROFF" => VmPhase::Booting,
        "ACTIVE/RUNNING" => VmPhase::Running,
        "ACTIVE/SHUTDOWN" | "ACTIVE/SHUTDOWN_POWEROFF" | "ACTIVE/EPILOG" => VmPhase::ShuttingDown,
        "POWEROFF/LCM_INIT" => VmPhase::Stopped,
        "ACTIVE/BOOT_FAILURE" => VmPhase::Failed,
        "DONE/LCM_INIT" => VmPhase::Done,
        other => panic!("states.txt names {other}, which this test does not know"),
    }
}

#[test]
fn recorded_transitions_classify_as_their_state_names_and_reach_their_target() {
    let log = recorded("oned-7.4.0/states.txt");
    let mut last_of_run: Vec<(String, VmPhase)> = Vec::new();
    for line in log.lines().filter(|l| !l.trim().is_empty()) {
        let field = |key: &str| -> i64 {
            let rest = &line[line.find(key).unwrap() + key.len()..];
            rest.split_whitespace().next().unwrap().parse().unwrap()
        };
        let (state, lcm) = (field("STATE="), field("LCM_STATE="));
        let names = line.split_whitespace().last().unwrap();
        let got = phase(state, lcm);
        assert_eq!(got, recorded_meaning(names), "{line}");
        let run = line[line.find('[').unwrap()..=line.find(']').unwrap()].to_string();
        match last_of_run.last_mut() {
            Some((r, p)) if *r == run => *p = got,
            _ => last_of_run.push((run, got)),
        }
    }
    assert!(last_of_run.len() >= 8, "{last_of_run:?}");
    for (run, reached) in &last_of_run {
        let target = run.rsplit("->").next().unwrap().trim_end_matches(']');
        let expected = match target {
            "RUNNING" => Some(VmPhase::Running),
            "DONE" => Some(VmPhase::Done),
            "BOOT_FAILURE" => Some(VmPhase::Failed),
            _ => None,
        };
        if let Some(expected) = expected {
            assert_eq!(*reached, expected, "{run}");
        }
    }
}
