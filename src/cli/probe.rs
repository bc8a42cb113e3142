//! `hookd endpoint test`, `check`, `checks` and `recover`: a test event
//! queued, the conformance suite sent and its stored scorecards listed,
//! failed deliveries of a time range queued again, each as the API does it
//! (`endpoint_acts`, `checks`), on the partner's behalf; what changes
//! something is audited `via: cli`.

use serde_json::json;

use super::{
    check::{Outbound, verdict},
    ctx::Ctx,
    endpoint_view::find,
    exit::{self, from_problem},
    out::{self, emit},
    page::PageArgs,
};
use crate::{
    conformance::{CHECK_INTERVAL, host_slots::HostSlots},
    domain::clock::SystemClock,
    http::partner::{
        checks::{CheckOut, CheckWith, check_now, checks_page},
        endpoint_acts,
        endpoint_shapes::{ListQuery, Recover, Recovered, TestSent},
        time,
    },
    store::audit::Action,
};

/// `hookd endpoint test`: queues a `webhook.test` event for the endpoint
/// only, as POST /v1/endpoints/{id}/test does; a running `serve` sends it.
pub async fn test(ctx: &Ctx, id: &str, json: bool) -> anyhow::Result<()> {
    let e = find(ctx, id).await?;
    let (event_id, delivery_id) =
        endpoint_acts::send_test(&ctx.db, (&e.partner_id, &e.id), ctx.now())
            .await
            .map_err(from_problem)?;
    ctx.announce(&e.id).await;
    let detail = json!({"event_id": event_id, "delivery_id": delivery_id});
    ctx.audit(Action::EndpointTest, &e.id, Some(&e.partner_id), detail)
        .await?;
    let shown = TestSent {
        event_id,
        delivery_id,
    };
    emit(json, &shown, || {
        format!(
            "queued test event {} for endpoint {id} (delivery {}): a running `hookd serve` \
             sends it; see how it went with: hookd delivery get {}",
            shown.event_id, shown.delivery_id, shown.delivery_id
        )
    })
}

/// `hookd endpoint recover`: every failed or dead delivery of the endpoint
/// created in [since, until) gets a manual attempt, as
/// POST /v1/admin/endpoints/{id}/recover does.
pub async fn recover(
    ctx: &Ctx,
    id: &str,
    since: String,
    until: Option<String>,
    json: bool,
) -> anyhow::Result<()> {
    let e = find(ctx, id).await?;
    let input = Recover { since, until };
    let (since, until, replayed) = endpoint_acts::recover(
        &ctx.db,
        &ctx.config.api,
        (&e.partner_id, &e.id),
        &input,
        ctx.now(),
    )
    .await
    .map_err(from_problem)?;
    ctx.announce(&e.id).await;
    let detail = json!({"since": time(since), "until": time(until), "replayed": replayed});
    ctx.audit(Action::EndpointRecover, &e.id, Some(&e.partner_id), detail)
        .await?;
    emit(json, &Recovered { replayed }, || {
        format!(
            "endpoint {id}: {replayed} failed or dead deliveries created from {} to {} queued \
             for a manual attempt (a running `hookd serve` sends them)",
            time(since),
            time(until)
        )
    })
}

/// `hookd endpoint check`: the conformance suite sent to the endpoint,
/// signed with its stored secret, as POST /v1/endpoints/{id}/check does;
/// the scorecard is stored with the endpoint's checks. Exit 1 when a case
/// failed.
pub async fn check(ctx: &Ctx, id: &str, json: bool) -> anyhow::Result<()> {
    let e = find(ctx, id).await?;
    if !ctx.dev && ctx.needs_dev(&e.url) {
        return Err(exit::usage(format!(
            "endpoint {id}'s URL {} is refused by the egress settings; add --dev for a receiver \
             on this machine (as `serve --dev` delivers to it)",
            e.url
        )));
    }
    let secrets = ctx.secrets()?;
    let out = Outbound::of(&ctx.config, ctx.dev)?;
    let clock = SystemClock;
    let wire = out.wire(&ctx.config, &clock);
    let hosts = HostSlots::new(CHECK_INTERVAL);
    let with = CheckWith {
        db: &ctx.db,
        secrets: &secrets,
        rules: &out.rules,
        hosts: &hosts,
        wire: &wire,
    };
    let stored = check_now(&with, &e.partner_id, &e.id, ctx.now())
        .await
        .map_err(from_problem)?;
    let detail = json!({"check_id": stored.id, "passed": stored.scorecard.passed});
    ctx.audit(Action::EndpointCheck, &e.id, Some(&e.partner_id), detail)
        .await?;
    let shown = CheckOut::from(stored);
    emit(json, &shown, || {
        format!(
            "check {} of endpoint {id} ({})\n{}",
            shown.id,
            e.url,
            shown.scorecard.table()
        )
    })?;
    verdict(&shown.scorecard)
}

/// `hookd endpoint checks`: the endpoint's stored checks, newest first, as
/// GET /v1/endpoints/{id}/checks answers.
pub async fn checks(ctx: &Ctx, id: &str, page: &PageArgs, json: bool) -> anyhow::Result<()> {
    let e = find(ctx, id).await?;
    let q = ListQuery {
        after: page.after.clone(),
        limit: page.limit,
    };
    let shown = checks_page(&ctx.db, &ctx.config.api, &e.partner_id, &e.id, &q)
        .await
        .map_err(from_problem)?;
    emit(json, &shown, || {
        let rows: Vec<Vec<String>> = shown
            .data
            .iter()
            .map(|c| {
                let failed = c.scorecard.cases.iter().filter(|k| !k.passed).count();
                vec![
                    c.scorecard.checked_at.clone(),
                    c.id.clone(),
                    if c.scorecard.passed {
                        "passed".into()
                    } else {
                        format!("{failed} failed")
                    },
                ]
            })
            .collect();
        out::table(&["CHECKED", "ID", "RESULT"], &rows) + &out::more(shown.next_cursor.as_deref())
    })
}
