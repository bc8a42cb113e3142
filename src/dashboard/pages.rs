//! The dashboard's pages: pure functions from what is shown to HTML. maud
//! escapes every interpolated value, so ids and names from the database
//! cannot become markup.

use maud::{DOCTYPE, Markup, html};

use crate::{
    http::observe::{Actors, EndpointHealth},
    store::backlog::Waiting,
};

const STYLE: &str = "
body{font:14px/1.4 system-ui,sans-serif;margin:0;color:#1b1f24;background:#f6f7f9}
header{display:flex;justify-content:space-between;align-items:center;padding:12px 24px;background:#1b1f24;color:#fff}
header h1{font-size:16px;margin:0}
main{padding:16px 24px}
.cards{display:flex;gap:12px;flex-wrap:wrap;margin-bottom:16px}
.card{background:#fff;border:1px solid #d8dde3;border-radius:6px;padding:10px 14px;min-width:140px}
.card b{display:block;font-size:22px}
table{border-collapse:collapse;width:100%;background:#fff}
th,td{border-bottom:1px solid #e3e7eb;padding:6px 8px;text-align:left;white-space:nowrap}
th{background:#eef1f4;font-weight:600}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.circuit{padding:1px 8px;border-radius:10px;font-size:12px}
.circuit.closed{background:#dff3e4}.circuit.open{background:#fbd9d9}.circuit.half_open{background:#fff1c7}
.status.disabled,.status.paused{color:#9a3412}
.error{color:#b91c1c}
form.inline{display:inline}
";

fn layout(title: &str, refresh: bool, body: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                @if refresh { meta http-equiv="refresh" content="5"; }
                title { (title) " · hookd" }
                style { (maud::PreEscaped(STYLE)) }
            }
            body { (body) }
        }
    }
}

/// The login form, with an error when the last try failed.
pub fn login(error: Option<&str>) -> Markup {
    layout(
        "Sign in",
        false,
        html! {
            header { h1 { "hookd · operator dashboard" } }
            main {
                form method="post" action="/dashboard/login" {
                    p { label for="key" { "Operator key" } }
                    p { input id="key" name="key" type="password" autocomplete="off" size="60" required; }
                    @if let Some(e) = error { p.error role="alert" { (e) } }
                    p { button type="submit" { "Sign in" } }
                }
            }
        },
    )
}

/// The circuit as kept on the endpoint row: the same from every instance.
fn circuit_cell(e: &EndpointHealth) -> Markup {
    let name = serde_json::to_value(e.circuit)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    html! {
        td {
            span class={ "circuit " (name) } { (name.replace('_', " ")) }
            @if let Some(until) = &e.open_until { " until " (until) }
        }
    }
}

/// Every instance of the cluster on this database.
fn instances_table(actors: &Actors) -> Markup {
    html! {
        table #instances {
            thead { tr {
                th { "Instance" } th { "Host" } th { "Listen" } th { "Started" }
                th { "Heartbeat" } th { "Endpoints" } th { "Actors" } th { "In flight" }
            } }
            tbody {
                @for i in &actors.instances {
                    tr data-instance=(i.id) class=(if i.alive { "alive" } else { "dead" }) {
                        td { code { (i.id) } @if i.id == actors.instance_id { " (this one)" } }
                        td { (i.host) " · pid " (i.pid) }
                        td { code { (i.listen) } }
                        td { (i.started_at) }
                        td.num.heartbeat {
                            (format!("{:.1} s ago", i.heartbeat_age_ms as f64 / 1000.0))
                            @if !i.alive { " (dead)" } @else if i.draining { " (stopping)" }
                        }
                        td.num.owned { (i.endpoints_owned) }
                        td.num { (i.actors) }
                        td.num { (i.in_flight) }
                    }
                }
            }
        }
    }
}

/// The overview: totals, then every endpoint with work or an actor.
pub fn overview(actors: &Actors, waiting: Waiting, partner: Option<&str>) -> Markup {
    layout(
        "Actors",
        true,
        html! {
            header {
                h1 { "hookd · operator dashboard" }
                form.inline method="post" action="/dashboard/logout" { button type="submit" { "Sign out" } }
            }
            main {
                div.cards {
                    div.card #actors-running { b { (actors.running_in_cluster) } "endpoint actors running"
                        br; small { (actors.running) " in this instance" } }
                    div.card #instance-count { b { (actors.instances.iter().filter(|i| i.alive).count()) } "instances alive" }
                    div.card #outbox { b { (actors.outbox_unpublished) } "events waiting for fanout"
                        @if let Some(t) = &actors.oldest_unpublished_at { br; small { "oldest " (t) } } }
                    div.card #pending { b { (waiting.pending) } "deliveries pending" }
                    div.card #failed { b { (waiting.failed) } "waiting to retry" }
                    div.card #delivering { b { (waiting.delivering) } "being delivered" }
                }
                (instances_table(actors))
                form method="get" action="/dashboard" {
                    label for="partner_id" { "Partner " }
                    input id="partner_id" name="partner_id" value=[partner];
                    " " button type="submit" { "Filter" }
                }
                table #endpoints {
                    thead { tr {
                        th { "Endpoint" } th { "Partner" } th { "Status" } th { "Waiting" }
                        th { "Next attempt" } th { "Circuit" } th { "Failures" }
                        th { "In flight" } th { "Owner" } th { "Queued here" } th { "Avg attempt" }
                    } }
                    tbody {
                        @for e in &actors.data {
                            tr data-endpoint=(e.endpoint_id) {
                                td { code { (e.endpoint_id) } }
                                td { code { (e.partner_id) } }
                                td { span class={ "status " (e.status) } { (e.status) } }
                                td.num.waiting { (e.waiting) }
                                td { (e.next_attempt_at.as_deref().unwrap_or("–")) }
                                (circuit_cell(e))
                                td.num.failures { (e.consecutive_failures) }
                                td.num.in-flight { (e.in_flight) }
                                td.owner { code { (e.owner.as_deref().unwrap_or("–")) } }
                                @match &e.actor {
                                    Some(a) => {
                                        td.num { (a.report.queued) }
                                        td.num { (format!("{:.0} ms", a.report.attempt_ms)) }
                                    }
                                    None => { td {} td {} }
                                }
                            }
                        }
                        @if actors.data.is_empty() { tr { td colspan="11" { "No endpoints." } } }
                    }
                }
            }
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::observe::EndpointHealth;

    #[test]
    fn values_from_the_database_are_escaped() {
        let actors = Actors {
            instance_id: "ins_1".into(),
            running: 0,
            running_in_cluster: 0,
            instances: Vec::new(),
            outbox_unpublished: 0,
            oldest_unpublished_at: None,
            data: vec![EndpointHealth {
                endpoint_id: "ep_<script>alert(1)</script>".into(),
                partner_id: "ptn_\"onmouseover=x".into(),
                status: "active".into(),
                waiting: 0,
                next_attempt_at: None,
                in_flight: 0,
                owner: Some("ins_\"<i>".into()),
                circuit: crate::delivery::report::Circuit::Closed,
                consecutive_failures: 0,
                open_until: None,
                actor: None,
            }],
        };
        let page = overview(&actors, Waiting::default(), Some("\"><b>")).into_string();
        assert!(!page.contains("<script>alert"), "{page}");
        assert!(page.contains("ep_&lt;script&gt;"), "{page}");
        assert!(!page.contains("\"onmouseover"), "{page}");
        assert!(
            page.contains(r#"value="&quot;&gt;&lt;b&gt;""#),
            "the filter is echoed escaped: {page}"
        );
    }
}
