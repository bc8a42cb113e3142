//! `/v1/endpoints/{id}/check` and `/checks`: run the receiver conformance
//! suite against the partner's endpoint now, at most once a minute per
//! endpoint and once a minute per target host, and read the stored
//! scorecards back.

use actix_web::{HttpRequest, HttpResponse, get, post, web};
use sea_orm::DatabaseConnection;
use serde::Serialize;

use super::{endpoint_ops::not_found, endpoint_shapes::ListQuery};
use crate::{
    conformance::{
        CHECK_INTERVAL, Scorecard,
        host_slots::{self, HostSlots},
        send,
        suite::{Script, Target},
    },
    domain::ids::{EventId, new_id},
    egress::{
        host::Host,
        url_check::{EgressRules, check_url},
    },
    http::{
        AppState, auth, body,
        page::Page,
        problem::{Errors, Problem},
    },
    secret::SecretBox,
    store::{
        checks::{Slot, StoredCheck},
        endpoints::signing_keys,
        scoped::for_partner,
    },
};

/// A stored check: the scorecard with its id and endpoint.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct CheckOut {
    pub id: String,
    pub endpoint_id: String,
    #[serde(flatten)]
    pub scorecard: Scorecard,
}

impl From<StoredCheck> for CheckOut {
    fn from(c: StoredCheck) -> CheckOut {
        CheckOut {
            id: c.id,
            endpoint_id: c.endpoint_id,
            scorecard: c.scorecard,
        }
    }
}

/// Check a receiver: send the conformance suite to this endpoint now, signed
/// with its current secret, and answer the scorecard. Once a minute per endpoint,
/// and once a minute per target host (whichever endpoint names it).
///
/// The suite: a valid `webhook.check` event (2xx within 5 s, a warning above
/// 2 s); the same webhook-id again (2xx); a wrong signature, no signature, a
/// timestamp 10 minutes old and a body changed after signing (each a 4xx);
/// an unknown event type (2xx); 256 KiB of data (2xx). Every request carries
/// `webhook-check: conformance`: route it to no business handler.
#[utoipa::path(tag = "endpoints", params(("id" = String, Path)), security(("partner_key" = [])),
    responses((status = 200, description = "The scorecard: each case of the suite with what the receiver answered and a hint", body = CheckOut), Errors))]
#[post("/v1/endpoints/{id}/check")]
pub async fn check_endpoint(
    req: HttpRequest,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    let partner = auth::partner(&req, &state).await?;
    let shared = &state.shared;
    let wire = send::Wire::new(
        &state.engine.resolver,
        shared.tls.clone(),
        &shared.limits,
        shared.route.clone(),
        shared.clock.as_ref(),
    );
    let with = CheckWith {
        db: &shared.db,
        secrets: &shared.secrets,
        rules: &shared.rules,
        hosts: &state.check_hosts,
        wire: &wire,
    };
    let stored = check_now(&with, &partner, &id, shared.clock.now_ms()).await?;
    Ok(HttpResponse::Ok().json(CheckOut::from(stored)))
}

/// What a check runs with: the database and the key of the secrets, the
/// egress rules the URL is judged by, the per-host slots of this process,
/// and the wire the suite goes out on.
pub(crate) struct CheckWith<'a> {
    pub db: &'a DatabaseConnection,
    pub secrets: &'a SecretBox,
    pub rules: &'a EgressRules,
    pub hosts: &'a HostSlots,
    pub wire: &'a send::Wire<'a>,
}

/// Checks the partner's endpoint `id` now and stores the scorecard: the
/// API's check, and the command line's. At most once a minute per
/// endpoint (a slot in the database) and per target host.
pub(crate) async fn check_now(
    with: &CheckWith<'_>,
    partner: &str,
    id: &str,
    now: i64,
) -> Result<StoredCheck, Problem> {
    let scoped = for_partner(with.db, partner);
    let endpoint = scoped.endpoint(id).await?.ok_or_else(not_found)?;
    // The URL is judged by today's rules (they may have changed since it
    // was registered), before the slot is spent.
    let url = check_url(&endpoint.url, with.rules).map_err(|e| {
        Problem::conflict(format!(
            "the endpoint's URL {e}; deliveries to it are refused too: change the URL"
        ))
    })?;
    // The host is looked at before the endpoint's slot is spent (a busy
    // host spends no endpoint's slot) and taken after it (a busy endpoint
    // spends no host's).
    if let Some(wait) = with.hosts.busy_for(&url.host, now) {
        return Err(host_busy(wait, &url.host));
    }
    let every = CHECK_INTERVAL.as_millis() as i64;
    match scoped
        .claim_check(id, now, every)
        .await?
        .ok_or_else(not_found)?
    {
        Slot::Claimed => {}
        Slot::Busy { retry_after_ms } => {
            return Err(busy(retry_after_ms, "this endpoint"));
        }
    }
    with.hosts
        .claim(&url.host, now)
        .map_err(|wait| host_busy(wait, &url.host))?;
    let secret = signing_keys(with.db, with.secrets, id, now)
        .await?
        .into_iter()
        .next()
        .ok_or_else(|| Problem::conflict("the endpoint has no signing secret"))?;
    let check_id = new_id("chk");
    let script = Script::new(
        Target {
            check_id: check_id.clone(),
            partner_id: partner.to_string(),
            endpoint_id: Some(endpoint.id.clone()),
        },
        secret,
        EventId::generate,
    );
    let card = send::run(&script, &url, with.wire).await;
    Ok(scoped.record_check(&check_id, id, &card, now).await?)
}

/// 429: a check of `what` started less than the interval ago.
fn busy(wait_ms: i64, what: &str) -> Problem {
    let secs = (wait_ms.max(1) as u64).div_ceil(1000);
    let mut p = Problem::too_many_requests(secs);
    p.detail = format!(
        "a check of {what} started less than {} s ago; retry in {secs} s",
        CHECK_INTERVAL.as_secs()
    );
    p
}

/// 429: a check of a receiver on `host` started less than the interval ago.
fn host_busy(wait_ms: i64, host: &Host) -> Problem {
    busy(wait_ms, &format!("a receiver on {}", host_slots::key(host)))
}

/// List an endpoint's checks, newest first.
#[utoipa::path(tag = "endpoints", params(("id" = String, Path), ListQuery), security(("partner_key" = [])),
    responses((status = 200, description = "A page of the endpoint's checks, newest first", body = Page<CheckOut>), Errors))]
#[get("/v1/endpoints/{id}/checks")]
pub async fn list_checks(
    req: HttpRequest,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    let partner = auth::partner(&req, &state).await?;
    let q: ListQuery = body::query(req.query_string())?;
    let page = checks_page(
        &state.shared.db,
        &state.shared.config.api,
        &partner,
        &id,
        &q,
    )
    .await?;
    Ok(HttpResponse::Ok().json(page))
}

/// A page of the checks of the partner's endpoint `id`, newest first: the
/// API's answer and the command line's (`hookd endpoint checks`).
pub(crate) async fn checks_page(
    db: &DatabaseConnection,
    api: &crate::config::ApiConfig,
    partner: &str,
    id: &str,
    q: &ListQuery,
) -> Result<Page<CheckOut>, Problem> {
    let (limit, before) = q.page(api)?;
    let rows = for_partner(db, partner)
        .checks(id, before.as_ref(), limit)
        .await?
        .ok_or_else(not_found)?;
    Ok(Page::of(
        rows,
        limit,
        |c| (c.created_at, c.id.as_str()),
        CheckOut::from,
    ))
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_document_describes_both_conformance_routes_and_the_scorecard() {
        let doc = serde_json::to_value(crate::http::openapi::generate()).expect("JSON");
        let check = &doc["paths"]["/v1/endpoints/{id}/check"]["post"];
        assert_eq!(check["tags"][0], "endpoints", "{check}");
        let list = &doc["paths"]["/v1/endpoints/{id}/checks"]["get"];
        assert_eq!(list["tags"][0], "endpoints", "{list}");
        let schemas = &doc["components"]["schemas"];
        for name in ["CheckOut", "Scorecard", "CaseResult"] {
            assert!(schemas[name].is_object(), "{name} is described");
        }
    }
}
