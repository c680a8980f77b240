//! How `geni-am admin` shows each view: an aligned table (or one line for
//! actions) for people, or JSON with the stable keys of the
//! `core::overview` structs for scripts.

use super::table::Table;
use crate::core::overview::{
    DrainState, EventSummary, HostCapacity, JobQueue, SliceSummary, SliverSummary,
};
use crate::model::SliverInfo;
use crate::time::format as time;
use serde::Serialize;
use std::path::Path;

/// `value` as pretty JSON, ending in a newline.
fn json<T: Serialize + ?Sized>(value: &T) -> String {
    match serde_json::to_string_pretty(value) {
        Ok(text) => text + "\n",
        Err(e) => format!("{{\"error\": \"{e}\"}}\n"),
    }
}

/// `table`, or `none` when it has no row.
fn table_or(table: &Table, none: &str) -> String {
    if table.is_empty() {
        format!("{none}\n")
    } else {
        table.render()
    }
}

/// A duration in seconds for people: `45s`, `12m 5s`, `3h 20m`, `2d 4h`.
fn age(secs: i64) -> String {
    let (d, h, m, s) = (
        secs / 86_400,
        secs % 86_400 / 3600,
        secs % 3600 / 60,
        secs % 60,
    );
    match (d, h, m) {
        (0, 0, 0) => format!("{s}s"),
        (0, 0, _) => format!("{m}m {s}s"),
        (0, _, _) => format!("{h}h {m}m"),
        _ => format!("{d}d {h}h"),
    }
}

/// The slices.
pub fn slices(slices: &[SliceSummary], as_json: bool) -> String {
    if as_json {
        return json(slices);
    }
    let mut t = Table::new(&["SLICE", "LIVE", "STATES", "NEXT EXPIRY", "SHUT DOWN"]);
    for s in slices {
        let states: Vec<String> = s.by_state.iter().map(|(k, n)| format!("{n} {k}")).collect();
        let shut_down = s.shut_down.as_ref().map_or(String::new(), |d| {
            let by = d.by.as_deref().unwrap_or("yes");
            match &d.reason {
                Some(reason) => format!("{by}: {reason}"),
                None => by.to_owned(),
            }
        });
        t.row(vec![
            s.urn.clone(),
            s.live_slivers.to_string(),
            states.join(", "),
            s.next_expiry.as_ref().map(time).unwrap_or_default(),
            shut_down,
        ]);
    }
    table_or(&t, "no slices")
}

/// The slivers.
pub fn slivers(slivers: &[SliverSummary], as_json: bool) -> String {
    if as_json {
        return json(slivers);
    }
    let mut t = Table::new(&[
        "SLIVER",
        "SLICE",
        "CLIENT",
        "ALLOCATION",
        "OPERATIONAL",
        "EXPIRES",
        "HOST",
        "VM",
        "ERROR",
    ]);
    for s in slivers {
        t.row(vec![
            s.urn.clone(),
            s.slice_urn.clone(),
            s.client_id.clone(),
            s.allocation_state.to_string(),
            s.operational_state.to_string(),
            time(&s.expires),
            s.host.clone(),
            s.vm.clone().unwrap_or_default(),
            s.error.clone(),
        ]);
    }
    table_or(&t, "no slivers")
}

/// The job queue or its failures.
pub fn jobs(queue: &JobQueue, as_json: bool) -> String {
    if as_json {
        return json(queue);
    }
    let oldest = queue
        .oldest_queued_age_secs
        .map_or("none waiting".to_owned(), |s| {
            format!("oldest queued {}", age(s))
        });
    let mut out = format!(
        "{} queued, {} running, {oldest}\n",
        queue.queued, queue.running
    );
    let mut t = Table::new(&[
        "JOB",
        "KIND",
        "STATE",
        "ATTEMPTS",
        "AGE",
        "SLIVER",
        "LAST ERROR",
    ]);
    for j in &queue.jobs {
        t.row(vec![
            j.id.clone(),
            j.kind.to_string(),
            j.state.to_string(),
            j.attempts.to_string(),
            age(j.age_secs),
            j.sliver_urn.clone().unwrap_or_default(),
            j.last_error.clone(),
        ]);
    }
    if !t.is_empty() {
        out.push_str(&t.render());
    }
    out
}

/// The audit log.
pub fn events(events: &[EventSummary], as_json: bool) -> String {
    if as_json {
        return json(events);
    }
    let mut t = Table::new(&["AT", "KIND", "SLICE", "SLIVER", "DETAIL"]);
    for e in events {
        t.row(vec![
            time(&e.at),
            e.kind.to_string(),
            e.slice_urn.clone().unwrap_or_default(),
            e.sliver_urn.clone().unwrap_or_default(),
            e.detail.clone(),
        ]);
    }
    table_or(&t, "no events")
}

/// Capacity per host.
pub fn capacity(hosts: &[HostCapacity], as_json: bool) -> String {
    if as_json {
        return json(hosts);
    }
    let mut t = Table::new(&[
        "HOST",
        "AVAILABLE",
        "CPUS USED/ALL",
        "CPUS FREE",
        "MEMORY MB USED/ALL",
        "MEMORY MB FREE",
        "VMS USED/MAX",
        "VMS FREE",
    ]);
    for h in hosts {
        t.row(vec![
            h.name.clone(),
            if h.available { "yes" } else { "no" }.to_owned(),
            format!("{}/{}", h.cpus_used, h.cpus),
            h.cpus_free.to_string(),
            format!("{}/{}", h.memory_mb_used, h.memory_mb),
            h.memory_mb_free.to_string(),
            format!("{}/{}", h.vms_used, h.vms),
            h.vms_free.to_string(),
        ]);
    }
    table_or(&t, "no hosts")
}

/// What `shutdown` did.
pub fn shut_down(
    slice: &str,
    operator: &str,
    reason: &str,
    summary: Option<&SliceSummary>,
    as_json: bool,
) -> String {
    let stopping = summary
        .and_then(|s| s.by_state.get("geni_stopping"))
        .copied()
        .unwrap_or(0);
    if as_json {
        return json(&serde_json::json!({
            "slice": slice,
            "shut_down": true,
            "operator": operator,
            "reason": reason,
            "stopping": stopping,
        }));
    }
    format!(
        "slice {slice} shut down by operator {operator} ({reason}); {stopping} running sliver(s) stopping\n"
    )
}

/// What `delete` did.
pub fn deleted(slivers: &[SliverInfo], operator: &str, as_json: bool) -> String {
    let urns: Vec<&str> = slivers.iter().map(|s| s.urn.as_str()).collect();
    if as_json {
        return json(&serde_json::json!({ "deleted": urns, "operator": operator }));
    }
    let mut out = format!(
        "deleted {} sliver(s) as operator {operator}; their VMs are destroyed by the jobs of `geni-am serve`\n",
        urns.len()
    );
    for urn in urns {
        out.push_str(urn);
        out.push('\n');
    }
    out
}

/// The drain state.
pub fn drain(state: &DrainState, as_json: bool) -> String {
    if as_json {
        return json(state);
    }
    match (&state.since, &state.operator) {
        (Some(since), Some(operator)) if state.draining => {
            let reason = state
                .reason
                .as_deref()
                .filter(|r| !r.is_empty())
                .map(|r| format!(": {r}"))
                .unwrap_or_default();
            format!(
                "draining since {} (operator {operator}{reason}): Allocate and CreateSliver are refused, existing slivers keep working\n",
                time(since)
            )
        }
        _ => "not draining: new slivers are allocated\n".to_owned(),
    }
}

/// What `backup` wrote.
pub fn backed_up(file: &Path, as_json: bool) -> String {
    let bytes = std::fs::metadata(file).map(|m| m.len()).unwrap_or(0);
    if as_json {
        return json(&serde_json::json!({ "backup": file.display().to_string(), "bytes": bytes }));
    }
    format!(
        "backed up the store to {} ({bytes} bytes)\n",
        file.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_read_in_their_largest_units() {
        assert_eq!(age(45), "45s");
        assert_eq!(age(725), "12m 5s");
        assert_eq!(age(3 * 3600 + 20 * 60 + 7), "3h 20m");
        assert_eq!(age(2 * 86_400 + 4 * 3600), "2d 4h");
    }
}
