//! The read-only dashboard, rendered on the server: the front page
//! (backend and drain state, capacity per host, slivers by state, slices
//! expiring within a day, the slices, the job queue, recent errors and
//! events) and a page per slice (its slivers, its manifest as Describe
//! renders it, its events). Everything comes from the operator's views of
//! the store ([`overview`]); long lists are cut to their first rows.

mod layout;

use super::{Page, Sources};
use crate::core::overview::{self, StateFilter};
use crate::core::{CoreError, SliceReport};
use crate::model::{OperationalState, Selector};
use crate::store::listing;
use crate::time;
use actix_web::http::StatusCode;
use chrono::{DateTime, TimeDelta, Utc};
use layout::{
    badge, more, section, short_urn, slice_link, slice_name_link, state_class, table, usage,
};
use maud::{Markup, html};

/// Most rows of a list on the front page.
const FRONT_ROWS: usize = 25;
/// Most slices listed on the front page.
const SLICE_ROWS: usize = 200;
/// Most events on a slice's page.
const SLICE_EVENTS: usize = 100;

/// The front page.
pub(super) fn front(sources: &Sources) -> Page {
    match front_page(sources) {
        Ok(body) => Page::html(StatusCode::OK, body),
        Err(error) => unavailable(&error),
    }
}

/// The page of slice `urn`.
pub(super) fn slice(sources: &Sources, urn: &str) -> Page {
    match slice_page(sources, urn) {
        Ok(Some(body)) => Page::html(StatusCode::OK, body),
        Ok(None) => Page::html(
            StatusCode::NOT_FOUND,
            layout::page(
                "unknown slice",
                urn,
                html! {},
                section(
                    "Not found",
                    true,
                    html! { p { "No slice " (urn) " is known here. " a href="/" { "Back" } } },
                ),
            ),
        ),
        Err(error) => unavailable(&error),
    }
}

/// A 503 page naming why the store could not be read.
fn unavailable(error: &CoreError) -> Page {
    Page::text(
        StatusCode::SERVICE_UNAVAILABLE,
        format!("the store does not answer: {error}\n"),
    )
}

/// `time` as the AM writes it, with how far away it is.
fn when(at: DateTime<Utc>, now: DateTime<Utc>) -> Markup {
    let delta = at - now;
    let (amount, future) = (delta.abs(), delta > TimeDelta::zero());
    let span = if amount.num_days() > 0 {
        format!("{}d {}h", amount.num_days(), amount.num_hours() % 24)
    } else if amount.num_hours() > 0 {
        format!("{}h {}m", amount.num_hours(), amount.num_minutes() % 60)
    } else if amount.num_minutes() > 0 {
        format!("{}m", amount.num_minutes())
    } else {
        format!("{}s", amount.num_seconds())
    };
    let relative = if future {
        format!("in {span}")
    } else {
        format!("{span} ago")
    };
    html! { span title=(time::format(&at)) { (relative) } }
}

/// The badges of the title bar: backend and drain state.
fn status_badges(sources: &Sources, now: DateTime<Utc>) -> Result<Markup, CoreError> {
    let store = sources.store();
    let outage = store.outage()?;
    let drain = overview::drain(store)?;
    Ok(html! {
        @match &outage {
            None => (badge("ok", "backend answering")),
            Some(outage) => span title=(outage.detail) {
                (badge("bad", &format!("backend away since {}", time::format(&outage.since))))
            },
        }
        @if drain.draining {
            span title=(drain.reason.clone().unwrap_or_default()) {
                (badge("warn", &format!("draining ({})", drain.operator.clone().unwrap_or_default())))
            }
        } @else {
            (badge("ok", "accepting new slivers"))
        }
        span.badge.muted { (time::format(&now)) }
        @if let Some(outage) = &outage {
            span.sub.bad { (outage.detail) " (" (when(outage.since, now)) ")" }
        }
    })
}

fn front_page(sources: &Sources) -> Result<String, CoreError> {
    let store = sources.store();
    let now = Utc::now();
    let badges = status_badges(sources, now)?;
    let capacity = overview::capacity(store, now)?;
    let counts = store.read(listing::live_counts)?;
    let mut by_state = std::collections::BTreeMap::<(String, String), i64>::new();
    for count in &counts {
        let key = (
            count.allocation_state.as_str().to_owned(),
            count.operational_state.as_str().to_owned(),
        );
        *by_state.entry(key).or_default() += count.count;
    }
    let expiring = overview::expiring(store, now, TimeDelta::days(1))?;
    let slices: Vec<_> = overview::slices(store)?
        .into_iter()
        .filter(|s| s.live_slivers > 0)
        .collect();
    // The queue's head only: the depth comes counted, however long it is.
    let queue = overview::jobs(store, now, false, Some(FRONT_ROWS))?;
    let pending = usize::try_from(queue.queued + queue.running).unwrap_or(usize::MAX);
    let failed_jobs = overview::jobs(store, now, true, None)?;
    let failed = overview::slivers(
        store,
        None,
        Some(StateFilter::Operational(OperationalState::Failed)),
    )?;
    let events = overview::events(store, None, None, FRONT_ROWS)?;
    let config = sources.aggregate.config();
    let body = html! {
        (section("Capacity per host", false, table(capacity.len(), "No hosts: the backend reported none.", html! {
            th { "Host" } th { "State" } th.num { "CPUs" } th.num { "Memory (MiB)" } th.num { "VMs" }
        }, html! {
            @for host in &capacity {
                tr {
                    td { (host.name) }
                    td { @if host.available { (badge("ok", "available")) } @else { (badge("bad", "unavailable")) } }
                    td.num { (usage(host.cpus_used, host.cpus)) }
                    td.num { (usage(host.memory_mb_used, host.memory_mb)) }
                    td.num { (usage(host.vms_used, host.vms)) }
                }
            }
        })))
        (section("Slivers by state", false, table(by_state.len(), "No live slivers.", html! {
            th { "Allocation" } th { "Operational" } th.num { "Slivers" }
        }, html! {
            @for ((allocation, operational), count) in &by_state {
                tr {
                    td { (badge(state_class(allocation), allocation)) }
                    td { (badge(state_class(operational), operational)) }
                    td.num { (count) }
                }
            }
        })))
        (section("Slices expiring within a day", false, html! { (table(expiring.len(), "None.", html! {
            th { "Slice" } th.num { "Slivers" } th { "First expiry" }
        }, html! {
            @for slice in expiring.iter().take(FRONT_ROWS) {
                tr {
                    td.urn { (slice_link(&slice.urn)) }
                    td.num { (slice.live_slivers) }
                    td { @if let Some(at) = slice.next_expiry { (when(at, now)) } }
                }
            }
        })) (more(expiring.len(), FRONT_ROWS)) }))
        (section("Job queue", false, html! {
            div.stats {
                div.stat { b { (queue.queued) } span { "queued" } }
                div.stat { b { (queue.running) } span { "running" } }
                div.stat {
                    b { (queue.oldest_queued_age_secs.map_or("–".to_owned(), |s| format!("{s}s"))) }
                    span { "oldest queued" }
                }
                div.stat { b { (failed_jobs.jobs.len()) } span { "failed (kept)" } }
            }
            (table(queue.jobs.len(), "Nothing waits.", html! {
                th { "Job" } th { "Sliver" } th { "State" } th.num { "Tries" } th { "Queued" } th { "Last error" }
            }, html! {
                @for job in queue.jobs.iter().take(FRONT_ROWS) {
                    tr {
                        td { (job.kind.as_str()) }
                        td.id { (short_urn(job.sliver_urn.as_deref().unwrap_or_default())) }
                        td { (job.state.as_str()) }
                        td.num { (job.attempts) }
                        td.when { (when(job.created, now)) }
                        td.err { (job.last_error) }
                    }
                }
            })) (more(pending, FRONT_ROWS))
        }))
        (section("Slices with live slivers", true, html! { (table(slices.len(), "None.", html! {
            th { "Slice" } th.num { "Live slivers" } th { "States" } th { "Next expiry" } th { "Credential expires" }
        }, html! {
            @for slice in slices.iter().take(SLICE_ROWS) {
                tr {
                    td.urn { (slice_link(&slice.urn)) @if slice.shut_down.is_some() { " " (badge("bad", "shut down")) } }
                    td.num { (slice.live_slivers) }
                    td { @for (state, count) in &slice.by_state { (badge(state_class(state), &format!("{state} {count}"))) " " } }
                    td { @if let Some(at) = slice.next_expiry { (when(at, now)) } }
                    td { (when(slice.credential_expires, now)) }
                }
            }
        })) (more(slices.len(), SLICE_ROWS)) }))
        (section("Recent errors", true, table(failed.len() + failed_jobs.jobs.len(), "No failed slivers or jobs.", html! {
            th { "Sliver" } th { "Slice" } th { "What" } th { "Error" }
        }, html! {
            @for sliver in failed.iter().rev().take(FRONT_ROWS) {
                tr {
                    td.id { (short_urn(&sliver.urn)) }
                    td { (slice_name_link(&sliver.slice_urn)) }
                    td { (badge("bad", "geni_failed")) }
                    td.err { (sliver.error) }
                }
            }
            @for job in failed_jobs.jobs.iter().rev().take(FRONT_ROWS) {
                tr {
                    td.id { (short_urn(job.sliver_urn.as_deref().unwrap_or_default())) }
                    td { (slice_name_link(&job.slice_urn)) }
                    td { (job.kind.as_str()) " job" }
                    td.err { (job.last_error) }
                }
            }
        })))
        (section("Last events", true, events_table(&events, now, true)))
    };
    Ok(layout::page(
        "operator dashboard",
        &config.am_urn,
        badges,
        body,
    ))
}

/// The events, newest first; with `slices` a column naming their slice.
fn events_table(events: &[overview::EventSummary], now: DateTime<Utc>, slices: bool) -> Markup {
    table(
        events.len(),
        "No events.",
        html! {
            th { "When" } th { "What" } @if slices { th { "Slice" } } th { "Sliver" } th { "Detail" }
        },
        html! {
            @for event in events.iter().rev() {
                tr {
                    td.when { (when(event.at, now)) }
                    td { (event.kind.as_str()) }
                    @if slices {
                        td { @if let Some(slice) = &event.slice_urn { (slice_name_link(slice)) } }
                    }
                    td.id { (short_urn(event.sliver_urn.as_deref().unwrap_or_default())) }
                    td { (event.detail) }
                }
            }
        },
    )
}

fn slice_page(sources: &Sources, urn: &str) -> Result<Option<String>, CoreError> {
    let store = sources.store();
    let now = Utc::now();
    let Some(summary) = overview::slice(store, urn)? else {
        return Ok(None);
    };
    let badges = status_badges(sources, now)?;
    let slivers = overview::slivers(store, Some(urn), None)?;
    let events = overview::events(store, Some(urn), None, SLICE_EVENTS)?;
    let SliceReport { manifest, .. } = sources
        .aggregate
        .describe(&Selector::Slice(urn.to_owned()))?;
    let body = html! {
        (section("Slice", true, html! {
            div.stats {
                div.stat { b { (summary.live_slivers) } span { "live slivers" } }
                div.stat {
                    b { @if let Some(at) = summary.next_expiry { (when(at, now)) } @else { "–" } }
                    span { "first sliver expiry" }
                }
                div.stat { b { (when(summary.credential_expires, now)) } span { "slice credential expiry" } }
                div.stat { b { (when(summary.created, now)) } span { "first seen" } }
            }
            @if let Some(shut) = &summary.shut_down {
                p.bad {
                    "Shut down"
                    @if let Some(by) = &shut.by { " by " (by) }
                    @if let Some(reason) = &shut.reason { ": " (reason) }
                }
            }
        }))
        (section("Slivers", true, table(slivers.len(), "No live slivers.", html! {
            th { "Sliver" } th { "Node" } th { "Host" } th { "Allocation" } th { "Operational" }
            th { "Expires" } th { "VM" } th { "Address" } th { "Error" }
        }, html! {
            @for sliver in &slivers {
                tr {
                    td.urn { (sliver.urn) }
                    td { (sliver.client_id) }
                    td { (sliver.host) }
                    td { (badge(state_class(sliver.allocation_state.as_str()), sliver.allocation_state.as_str())) }
                    td { (badge(state_class(sliver.operational_state.as_str()), sliver.operational_state.as_str())) }
                    td { (when(sliver.expires, now)) }
                    td { (sliver.vm.clone().unwrap_or_default()) }
                    td { (sliver.address.clone().unwrap_or_default()) }
                    td.err { (sliver.error) }
                }
            }
        })))
        (section("Manifest", true, html! { pre { (manifest) } }))
        (section("Events", true, events_table(&events, now, false)))
    };
    Ok(Some(layout::page(urn, "slice", badges, body)))
}

#[cfg(test)]
mod tests {
    use super::layout;
    use maud::html;

    #[test]
    fn a_cut_list_says_how_many_rows_were_left_out() {
        assert!(layout::more(30, 25).into_string().contains("and 5 more"));
        assert_eq!(layout::more(25, 25).into_string(), "");
    }

    #[test]
    fn hostile_names_are_escaped_and_links_encoded() {
        let hostile = "urn:publicid:IDN+ch.example+slice+<script>alert(1)</script>\"'&";
        let page = layout::page(
            hostile,
            hostile,
            layout::badge("bad", hostile),
            layout::section(
                hostile,
                true,
                html! { td { (layout::slice_link(hostile)) } },
            ),
        );
        assert!(!page.contains("<script>"), "{page}");
        assert!(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;&quot;"));
        assert!(page.contains(
            "href=\"/slices/urn%3Apublicid%3AIDN%2Bch%2Eexample%2Bslice%2B%3Cscript%3Ealert%281%29%3C%2Fscript%3E%22%27%26\""
        ), "{page}");
        assert!(page.contains("<meta http-equiv=\"refresh\" content=\"10\">"));
    }
}
