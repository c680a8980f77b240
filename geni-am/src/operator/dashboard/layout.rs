//! The frame every dashboard page shares: the document head (refreshing
//! itself every ten seconds, the style inline: nothing is fetched from
//! anywhere), the title bar, and the small pieces the pages are made of
//! (sections with scrolling tables, state badges, usage bars, slice
//! links). maud escapes every value written into the page.

use maud::{DOCTYPE, Markup, html};
use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};

/// Seconds between two reloads of a page.
const REFRESH_SECS: u32 = 10;

/// The style: readable on a laptop and on a phone (tables scroll sideways
/// inside their section rather than widen the page).
const STYLE: &str = r#"
:root { color-scheme: light dark; --fg:#1d2330; --muted:#5d6675; --bg:#f5f6f8; --card:#fff;
  --line:#dde1e7; --ok:#1b7f3b; --warn:#a15c00; --bad:#b3261e; --bar:#3a6fd8; }
@media (prefers-color-scheme: dark) { :root { --fg:#e6e9ef; --muted:#9aa3b2; --bg:#14171c;
  --card:#1d2128; --line:#2e343d; --ok:#5cc47e; --warn:#e3a33b; --bad:#f07a72; --bar:#6c9cf0; } }
* { box-sizing: border-box; }
body { margin:0; font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;
  color:var(--fg); background:var(--bg); }
header { padding:12px 16px; background:var(--card); border-bottom:1px solid var(--line);
  display:flex; flex-wrap:wrap; gap:8px 16px; align-items:baseline; }
header h1 { font-size:18px; margin:0; }
header .sub { color:var(--muted); font-size:13px; overflow-wrap:anywhere; }
main { padding:12px; display:grid; gap:12px; grid-template-columns:repeat(auto-fit,minmax(min(100%,460px),1fr)); max-width:1600px; margin:0 auto; }
section { background:var(--card); border:1px solid var(--line); border-radius:8px; padding:10px 12px; min-width:0; }
section.wide { grid-column:1/-1; }
h2 { font-size:15px; margin:0 0 8px; }
.scroll { overflow-x:auto; -webkit-overflow-scrolling:touch; }
table { border-collapse:collapse; width:100%; font-size:13px; }
th, td { text-align:left; padding:4px 8px 4px 0; border-bottom:1px solid var(--line); vertical-align:top; }
th { color:var(--muted); font-weight:600; white-space:nowrap; }
td.num, th.num { text-align:right; font-variant-numeric:tabular-nums; white-space:nowrap; }
td.urn { overflow-wrap:anywhere; min-width:14em; }
td.when, td.id { white-space:nowrap; }
td.id { font-family:ui-monospace,monospace; font-size:12px; }
td.err { color:var(--bad); overflow-wrap:anywhere; min-width:12em; }
.empty { color:var(--muted); font-size:13px; margin:4px 0; }
.badges { display:flex; flex-wrap:wrap; gap:6px; }
.badge { display:inline-block; padding:1px 8px; border-radius:10px; font-size:12px; font-weight:600;
  border:1px solid currentColor; white-space:nowrap; }
.ok { color:var(--ok); } .warn { color:var(--warn); } .bad { color:var(--bad); } .muted { color:var(--muted); }
.bar { position:relative; height:6px; background:var(--line); border-radius:3px; margin-top:3px; min-width:60px; }
.bar > span { position:absolute; left:0; top:0; bottom:0; background:var(--bar); border-radius:3px; }
.stats { display:flex; flex-wrap:wrap; gap:8px 24px; margin-bottom:6px; }
.stat b { display:block; font-size:20px; font-variant-numeric:tabular-nums; }
.stat > span { color:var(--muted); font-size:12px; }
pre { margin:0; padding:8px; background:var(--bg); border-radius:6px; overflow:auto; max-height:60vh;
  font-size:12px; line-height:1.35; white-space:pre-wrap; overflow-wrap:anywhere; }
a { color:var(--bar); }
@media (max-width:520px) { body { font-size:14px; } main { padding:8px; gap:8px; }
  th, td { padding:3px 6px 3px 0; } td.urn { min-width:11em; } td.err { min-width:9em; } }
"#;

/// A whole page titled `title` with `subtitle` under the title and `body`.
pub(super) fn page(title: &str, subtitle: &str, badges: Markup, body: Markup) -> String {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                meta http-equiv="refresh" content=(REFRESH_SECS);
                title { (title) }
                style { (maud::PreEscaped(STYLE)) }
            }
            body {
                header {
                    h1 { a href="/" { "geni-am" } " · " (title) }
                    span.sub { (subtitle) }
                    div.badges { (badges) }
                }
                main { (body) }
            }
        }
    }
    .into_string()
}

/// A section headed `title`.
pub(super) fn section(title: &str, wide: bool, content: Markup) -> Markup {
    html! {
        section class=[wide.then_some("wide")] {
            h2 { (title) }
            (content)
        }
    }
}

/// A table that scrolls sideways on a narrow screen, or `empty` when it
/// has no rows.
pub(super) fn table(rows: usize, empty: &str, head: Markup, body: Markup) -> Markup {
    html! {
        @if rows == 0 {
            p.empty { (empty) }
        } @else {
            div.scroll { table { thead { tr { (head) } } tbody { (body) } } }
        }
    }
}

/// A badge of `class` (`ok`, `warn`, `bad`, `muted`).
pub(super) fn badge(class: &str, text: &str) -> Markup {
    html! { span class={ "badge " (class) } { (text) } }
}

/// The badge class of a sliver state.
pub(super) fn state_class(state: &str) -> &'static str {
    match state {
        "geni_ready" | "geni_provisioned" => "ok",
        "geni_failed" => "bad",
        "geni_notready" | "geni_stopping" | "geni_configuring" | "geni_allocated" => "warn",
        _ => "muted",
    }
}

/// `used` of `total` with a bar.
pub(super) fn usage(used: i64, total: i64) -> Markup {
    let percent = if total > 0 {
        (used.clamp(0, total) * 100) / total
    } else {
        0
    };
    html! {
        (used) " / " (total)
        div.bar { span style={ "width:" (percent) "%" } {} }
    }
}

/// The path of the page of slice `urn`.
pub(super) fn slice_path(urn: &str) -> String {
    format!("/slices/{}", utf8_percent_encode(urn, NON_ALPHANUMERIC))
}

/// A link to the page of slice `urn`.
pub(super) fn slice_link(urn: &str) -> Markup {
    html! { a href=(slice_path(urn)) { (urn) } }
}

/// A link to the page of slice `urn` by its name, the whole URN on hover
/// (for lists where the slice is one column of many).
pub(super) fn slice_name_link(urn: &str) -> Markup {
    let name = urn.rsplit('+').next().unwrap_or(urn);
    html! { a href=(slice_path(urn)) title=(urn) { (name) } }
}

/// A sliver (or other) URN by its name part, the whole URN on hover.
pub(super) fn short_urn(urn: &str) -> Markup {
    let name = urn.rsplit('+').next().unwrap_or(urn);
    html! { span title=(urn) { (name) } }
}

/// A note that `total - shown` rows were left out, nothing when none was.
pub(super) fn more(total: usize, shown: usize) -> Markup {
    html! {
        @if total > shown {
            p.empty { "… and " (total - shown) " more (geni-am admin lists them all)" }
        }
    }
}
