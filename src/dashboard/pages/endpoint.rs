//! One endpoint: what it is, what it presents to its receiver (redacted),
//! its routing (ordering, filter, held subjects with Replay and Skip), its
//! health timeline (created, failing since, warned, notices announced,
//! operator actions), its one status and circuit (see `dashboard::health`),
//! its recent attempts, the forms to enable, disable and recover it, and
//! those of its secret and test send (`secrets`).

use maud::{Markup, html};

use super::{
    Forms, Nav, at, badges, csrf_field, href, object_page,
    overview::avg_attempt,
    pager::keyset_links,
    search_href,
    when::{when, when_or_dash},
    with_query,
};
use crate::{
    dashboard::{
        charts::Unit,
        health::{self, Health, Source},
        paging::Keyset,
        reads::attempts::Measured,
    },
    delivery::report::ActorReport,
    domain::event::format_time,
    store::{
        audit::Recorded,
        endpoint_views::{Notice, Standing},
        endpoints::SigningShown,
        entity::attempt,
        receiver_auth::Shown,
        scoped::DeliveryRow,
    },
};

/// Everything the endpoint page shows.
pub struct EndpointView<'a> {
    pub endpoint: &'a Standing,
    /// Its actor in this instance, if one runs here.
    pub actor: Option<&'a ActorReport>,
    /// A page of its attempts, newest first.
    pub attempts: &'a Keyset<attempt::Model>,
    /// Its attempts sent in the last hour.
    pub measured: Option<&'a Measured>,
    /// Newest first.
    pub notices: &'a [Notice],
    /// Operator actions on it, newest first.
    pub audit: &'a [Recorded],
    /// What it presents to its receiver (nothing secret).
    pub credentials: &'a Shown,
    /// The keys that sign now, newest first.
    pub signing: &'a [SigningShown],
    /// Its ordering, filter and held subjects.
    pub routing: &'a super::routing::Routing,
    pub now_ms: i64,
    pub forms: &'a Forms,
    /// The test delivery the last action sent (when it is this endpoint's).
    pub test: Option<&'a DeliveryRow>,
    /// The key a rotation just made: shown on this answer only.
    pub rotated: Option<&'a super::secrets::Rotated>,
}

/// The timeline's entries, newest first: (time, what, link).
fn timeline(v: &EndpointView) -> Vec<(i64, String, Option<String>)> {
    let e = v.endpoint;
    let mut out = vec![(e.created_at, "created".to_string(), None)];
    if let Some(t) = e.failing_since {
        out.push((
            t,
            "started failing (every attempt since has failed)".into(),
            None,
        ));
    }
    if let Some(t) = e.warned_at {
        out.push((t, "warned: endpoint.failing announced".into(), None));
    }
    for n in v.notices {
        let published = n.published_at.map_or_else(
            || "not yet published".to_string(),
            |p| format!("published {}", at(p)),
        );
        let link = href("/dashboard/events", &n.event_id);
        out.push((
            n.created_at,
            format!("notice {} ({published})", n.event_type),
            Some(link),
        ));
    }
    for a in v.audit {
        let reason = a.detail["reason"]
            .as_str()
            .map(|r| format!(": \u{201c}{r}\u{201d}"))
            .unwrap_or_default();
        out.push((
            a.at,
            format!(
                "{} via {} by {} from {}{reason}",
                a.action, a.via, a.key_id, a.remote_addr
            ),
            None,
        ));
    }
    out.sort_by_key(|entry| std::cmp::Reverse(entry.0));
    out
}

fn facts(e: &Standing, h: &Health, now_ms: i64) -> Markup {
    html! {
        dl.facts #facts {
            dt { "Endpoint" } dd { code { (e.id) } }
            dt { "Partner" } dd { code { (e.partner_id) } " · "
                a href=(with_query("/dashboard/endpoints", &[("partner_id", &e.partner_id)])) { "its endpoints" } }
            dt { "URL" } dd #url { (e.url) }
            @if !e.description.is_empty() { dt { "Description" } dd { (e.description) } }
            dt { "Kind" } dd { (e.kind) }
            dt { "Status" } dd #status { (badges::status(h.status)) }
            @if let Some(r) = &e.disabled_reason { dt { "Disabled because" } dd #disabled-reason { (r) } }
            dt { "Failing since" } dd #failing-since { (when_or_dash(now_ms, e.failing_since)) }
            dt { "Warned" } dd { (when_or_dash(now_ms, e.warned_at)) }
            dt { "Holds" } dd #backlog { (e.waiting) " waiting · " (e.paused) " paused · "
                a href=(search_href(&[("endpoint_id", &e.id)])) { "its deliveries" } }
        }
    }
}

/// Where the circuit shown is read from, and why the row may say otherwise.
const FROM_ACTOR: &str = "its actor in this instance, which decides what is sent";
const FROM_ROW: &str = "the endpoint row, as its owner's actor last wrote it (no actor runs for it \
     in this instance: no work here, or another instance owns it)";
const ROW_TRAILS: &str = "the actor writes its circuit to the row with the record of the attempt \
     that changed it, so the row, which other instances read, trails it by moments";

fn circuit(v: &EndpointView, h: &Health) -> Markup {
    let e = v.endpoint;
    html! {
        dl.facts #circuit {
            dt { "Circuit" } dd #circuit-shown { (badges::circuit_with_failures(h, v.now_ms))
                @if let Some(c) = e.circuit.cooldown_ms { " · cool-down " (Unit::Millis.format(c as f64)) } }
            dt { "Read from" } dd #circuit-source {
                @match h.source { Source::Actor => (FROM_ACTOR), Source::Stored => (FROM_ROW) } }
            @if let Some((phase, failures)) = h.stored_differs {
                dt { "The row says" } dd #circuit-stored {
                    (badges::circuit(phase, v.now_ms)) " · " (failures) " consecutive failures: " (ROW_TRAILS) }
            }
            dt { "Avg attempt (last hour)" } dd #avg-attempt { (avg_attempt(v.measured))
                @if let Some(m) = v.measured { small { " · " (m.attempts) " sent, from request to answer or failure" } } }
            dt { "Owner" } dd { code { (e.owner.as_deref().unwrap_or("none")) } }
            dt { "Actor here" } dd #circuit-actor {
                @match v.actor {
                    Some(a) => {
                        (a.in_flight) " in flight of " (a.concurrency.map_or_else(|| "?".to_string(), |c| c.to_string()))
                        " · " (a.queued) " queued"
                    }
                    None => { "none" }
                }
            }
        }
    }
}

fn actions(v: &EndpointView) -> Markup {
    let e = v.endpoint;
    let action = |what: &str| format!("{}/{what}", href("/dashboard/endpoints", &e.id));
    html! {
        div.actions {
            @if e.status != "active" {
                form #enable method="post" action=(action("enable")) {
                    (csrf_field(&v.forms.csrf))
                    p { "Resume sending; paused deliveries within the replay window are due at once." }
                    button type="submit" { "Enable" }
                }
            }
            @if e.status != "disabled" {
                form #disable method="post" action=(action("disable")) {
                    (csrf_field(&v.forms.csrf))
                    p { label { "Reason (the partner sees it) " input name="reason" maxlength="500" size="40"
                        placeholder="disabled by the operator"; } }
                    button type="submit" { "Disable" }
                }
            }
            form #recover method="post" action=(action("recover")) {
                (csrf_field(&v.forms.csrf))
                p { "Send again every failed or dead delivery created in (UTC, RFC 3339):" }
                p { label { "since " input name="since" size="24" value=(format_time(v.now_ms - 86_400_000)) required; } }
                p { label { "until " input name="until" size="24" placeholder="now"; } }
                button type="submit" { "Recover" }
            }
        }
    }
}

pub fn endpoint(v: &EndpointView) -> Markup {
    let e = v.endpoint;
    let h = health::of_standing(e, v.actor, v.now_ms);
    object_page(
        "Endpoint",
        &e.id,
        Nav::Endpoints,
        v.forms,
        html! {
            @if let Some(r) = v.rotated { (super::secrets::rotated(r, v.now_ms)) }
            @if let Some(d) = v.test { (super::secrets::test_delivery(d, v.now_ms)) }
            (facts(e, &h, v.now_ms))
            h2 { "Health timeline" }
            ol #timeline {
                @for (t, what, link) in timeline(v) {
                    li { (when(v.now_ms, t)) " — "
                        @match link { Some(l) => { a href=(l) { (what) } } None => { (what) } } }
                }
            }
            h2 { "Credentials" }
            (super::credentials::credentials(v.credentials, v.signing, v.now_ms))
            h2 { "Routing" }
            (super::routing::routing(v.routing, &v.forms.csrf))
            h2 { "Circuit" }
            (circuit(v, &h))
            h2 { "Actions" }
            (actions(v))
            h2 { "Signing secret and test" }
            (super::secrets::forms(&|what| format!("{}/{what}", href("/dashboard/endpoints", &e.id)), &v.forms.csrf))
            h2 { "Attempts" }
            (super::delivery::attempts_table(&v.attempts.rows, true, v.now_ms))
            (keyset_links("attempts", &href("/dashboard/endpoints", &e.id), &[], v.attempts))
        },
    )
}
