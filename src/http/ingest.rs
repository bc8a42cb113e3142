//! `POST /v1/events`: one event or a batch, idempotent on `event_id`, all or
//! nothing. Nothing is written unless every event is valid.

use std::collections::HashMap;

use actix_web::{HttpRequest, HttpResponse, post, web};
use serde_json::value::RawValue;

use super::{AppState, auth, body, problem::Problem};
use crate::{
    catalog::{Catalog, DataError},
    config::IngestConfig,
    delivery::fresh,
    domain::event::{EventInput, FieldError, FieldErrorKind, NewEvent, envelope_json},
    store::{self, keys::Role},
};

/// Parses and validates the request into events, deduplicating repeats of
/// the same event within the batch; `true` with them if it was a batch.
/// Pure: the fuzz example drives it with arbitrary bodies.
pub fn parse(
    body: &[u8],
    now_ms: i64,
    limits: &IngestConfig,
    catalog: &Catalog,
) -> Result<(Vec<NewEvent>, bool), Problem> {
    let batch = body.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[');
    body::strict(body).map_err(|mut p| {
        // A batch names its events as `events[i]`, like every other field.
        if let Some(field) = p.field.as_mut().filter(|f| batch && f.starts_with('[')) {
            *field = format!("events{field}");
            p.detail = format!("the key `{field}` appears more than once; send each key once");
        }
        p
    })?;
    let not_json =
        |e: serde_json::Error| Problem::malformed_json(format!("the body is not JSON: {e}"));
    // Each event stays raw text until it is read into an `EventInput`, so
    // its `data` keeps the producer's exact bytes.
    let items: Vec<&RawValue> = if batch {
        serde_json::from_slice(body).map_err(not_json)?
    } else {
        vec![serde_json::from_slice(body).map_err(not_json)?]
    };
    if items.iter().any(|item| !item.get().starts_with('{')) {
        return Err(Problem::malformed_json(
            "send one event (an object) or a batch (an array of events)",
        ));
    }
    let max = limits.max_batch;
    if items.is_empty() {
        return Err(Problem::invalid("events", "the batch is empty"));
    }
    if items.len() > max {
        return Err(Problem::too_large(
            Some("events".into()),
            format!(
                "the batch has {} events; at most {max} are allowed",
                items.len()
            ),
        ));
    }
    let prefix = |i: usize| {
        if batch {
            format!("events[{i}].")
        } else {
            String::new()
        }
    };
    let mut events: Vec<NewEvent> = Vec::with_capacity(items.len());
    let mut seen: HashMap<String, usize> = HashMap::new();
    for (i, item) in items.into_iter().enumerate() {
        let input: EventInput = serde_json::from_str(item.get()).map_err(|e| {
            Problem::invalid(
                prefix(i).trim_end_matches('.').to_string(),
                format!("{}{e}", prefix(i)),
            )
        })?;
        let event = input
            .validate(now_ms, limits.max_payload_bytes, catalog)
            .map_err(|e| refusal(e, batch.then_some(i)))?;
        match seen.get(event.id.as_str()) {
            Some(&j) if events[j].same_content_as(&event) => continue,
            Some(_) => {
                return Err(Problem::conflict(format!(
                    "event {} appears twice in the batch with different content",
                    event.id
                ))
                .with_event(event.id.as_str()));
            }
            None => {
                seen.insert(event.id.as_str().to_string(), events.len());
                events.push(event);
            }
        }
    }
    Ok((events, batch))
}

/// The answer to one event's refusal; `index` is its place in a batch.
fn refusal(e: FieldError, index: Option<usize>) -> Problem {
    let (field, pointer) = match index {
        Some(i) => (
            format!("events[{i}].{}", e.field),
            format!("/events/{i}/data"),
        ),
        None => (e.field.clone(), "/data".to_string()),
    };
    let detail = format!("{field} {}", e.problem);
    match e.kind {
        FieldErrorKind::Invalid => Problem::invalid(field, detail),
        FieldErrorKind::TooLarge => Problem::too_large(Some(field), detail),
        FieldErrorKind::UnknownType => Problem::unknown_event_type(field, detail),
        FieldErrorKind::InvalidData(errors) => {
            let errors = errors
                .into_iter()
                .map(|d| DataError {
                    pointer: format!("{pointer}{}", d.pointer),
                    message: d.message,
                })
                .collect();
            Problem::invalid_data(field, detail, errors)
        }
    }
}

enum Stored {
    /// Every event, in request order, and how many were new.
    Done(Vec<NewEvent>, usize),
    /// Another request inserted one of these ids meanwhile: look again.
    Raced,
}

async fn store_events(
    state: &AppState,
    events: &[NewEvent],
    now_ms: i64,
) -> Result<Stored, Problem> {
    let db = &state.shared.db;
    let mut partner_ids: Vec<&str> = events.iter().map(|e| e.partner_id.as_str()).collect();
    partner_ids.sort_unstable();
    partner_ids.dedup();
    let known = store::partners::existing(db, &partner_ids).await?;
    if let Some(unknown) = partner_ids.iter().find(|p| !known.contains(**p)) {
        return Err(Problem::invalid(
            "partner_id",
            format!("partner {unknown} does not exist"),
        ));
    }
    let ids: Vec<&str> = events.iter().map(|e| e.id.as_str()).collect();
    let existing: HashMap<String, NewEvent> = store::outbox::find(db, &ids)
        .await?
        .into_iter()
        .map(|e| (e.id.as_str().to_string(), e))
        .collect();
    let mut fresh = Vec::new();
    let mut result = Vec::with_capacity(events.len());
    for e in events {
        match existing.get(e.id.as_str()) {
            Some(stored) if e.same_content_as(stored) => result.push(stored.clone()),
            Some(_) => {
                return Err(Problem::conflict(format!(
                    "event {} already exists with different content",
                    e.id
                ))
                .with_event(e.id.as_str()));
            }
            None => {
                fresh.push(e.clone());
                result.push(e.clone());
            }
        }
    }
    let created = fresh.len();
    // The fast path for a few events: stored with their deliveries in the
    // next group commit (see `delivery::committer`) and handed to the actors
    // after it. A large batch is stored alone, answered first, and fanned out
    // behind the answer.
    let stored = match created {
        0 => Ok(()),
        n if n <= fresh::MAX_EVENTS => state.engine.commit_fresh(fresh, now_ms).await,
        _ => store_batch(&state.shared, &fresh, now_ms).await,
    };
    match stored {
        Ok(()) if created > fresh::MAX_EVENTS => state.engine.wake(),
        Ok(()) => {}
        Err(store::StoreError::Db(e)) if is_unique_violation(&e) => return Ok(Stored::Raced),
        Err(e) => return Err(e.into()),
    }
    Ok(Stored::Done(result, created))
}

/// A large batch in a transaction of its own; the fanout publishes it.
async fn store_batch(
    shared: &crate::delivery::Shared,
    events: &[NewEvent],
    now_ms: i64,
) -> Result<(), store::StoreError> {
    use sea_orm::TransactionTrait;
    let _turn = shared.write_turn().await;
    let txn = shared.db.begin().await?;
    store::outbox::insert(&txn, events, now_ms).await?;
    txn.commit().await?;
    shared.metrics.events_ingested.inc_by(events.len() as u64);
    Ok(())
}

fn is_unique_violation(e: &sea_orm::DbErr) -> bool {
    matches!(
        e.sql_err(),
        Some(sea_orm::SqlErr::UniqueConstraintViolation(_))
    )
}

/// A batch's answer: every event as delivered, and how many were new.
#[derive(serde::Serialize)]
struct BatchOut {
    data: Vec<Box<RawValue>>,
    created: usize,
}

/// Publish one event (an object) or a batch (an array of up to 500), all or
/// nothing, idempotent on `event_id`.
#[utoipa::path(tag = "ingest", security(("service_key" = [])),
    request_body(content = Object, description = "One event, or an array of events", content_type = "application/json"),
    responses((status = 201, description = "Created: the stored event (or `{data, created}` for a batch)", body = Object),
              (status = 200, description = "Every event already existed with this content", body = Object),
              super::problem::IngestErrors))]
#[post("/v1/events")]
pub async fn ingest(
    req: HttpRequest,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    auth::require(&req, &state, Role::Service).await?;
    if state.shared.is_draining() {
        return Err(Problem::stopping());
    }
    let http = &state.shared.config.http;
    let body = body::read(&req, payload, http.max_body_bytes, http.body_timeout).await?;
    let now_ms = state.shared.clock.now_ms();
    let (events, batch) = parse(
        &body,
        now_ms,
        &state.shared.config.ingest,
        &state.shared.catalog,
    )?;
    // A concurrent request may insert one of these ids between our read and
    // our insert; reading again then answers it as a repeat (or a conflict).
    let mut tries = 0;
    let (stored, created) = loop {
        match store_events(&state, &events, now_ms).await? {
            Stored::Done(stored, created) => break (stored, created),
            Stored::Raced if tries < 3 => tries += 1,
            Stored::Raced => {
                return Err(Problem::conflict(
                    "the same events are being published concurrently; retry",
                ));
            }
        }
    };
    let mut response = if created > 0 {
        HttpResponse::Created()
    } else {
        HttpResponse::Ok()
    };
    Ok(if batch {
        response.json(BatchOut {
            data: stored.iter().map(envelope_json).collect(),
            created,
        })
    } else {
        response.json(envelope_json(&stored[0]))
    })
}
