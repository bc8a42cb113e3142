//! `POST /v1/events`: one event or a batch, idempotent on `event_id`, all or
//! nothing. Nothing is written unless every event is valid.

use std::collections::{HashMap, HashSet};

use actix_web::{HttpRequest, HttpResponse, post, web};
use sea_orm::DatabaseConnection;
use serde_json::value::RawValue;

use super::{
    AppState, auth, body,
    problem::{Problem, ProblemError},
};
use crate::{
    catalog::Catalog,
    config::IngestConfig,
    delivery::fresh,
    domain::{
        event::{EventInput, FieldError, FieldErrorKind, NewEvent, envelope_json},
        secret_screen::SecretScreen,
        trace::TraceContext,
    },
    store::{self, keys::Role},
    telemetry::spans,
};

/// A request's events, validated, each once, in request order.
pub struct Parsed {
    pub events: Vec<NewEvent>,
    /// Each event's place in the batch (0 for a single event).
    pub places: Vec<usize>,
    /// Whether the request was a batch (an array).
    pub batch: bool,
    /// How many events the request holds, repeats included.
    pub count: usize,
}

/// Parses and validates the request into events, deduplicating repeats of
/// the same event within the batch; `true` with them if it was a batch.
/// Pure: the fuzz example drives it with arbitrary bodies. The secret
/// screen is the bundled one.
pub fn parse(
    body: &[u8],
    now_ms: i64,
    limits: &IngestConfig,
    catalog: &Catalog,
) -> Result<(Vec<NewEvent>, bool), Problem> {
    parse_request(body, now_ms, limits, catalog, SecretScreen::bundled())
        .map(|p| (p.events, p.batch))
}

/// [`parse`], keeping each event's place in the request, with the
/// configured secret screen. Every refused event is reported, not only the
/// first (see [`Problem::of_many`]).
pub fn parse_request(
    body: &[u8],
    now_ms: i64,
    limits: &IngestConfig,
    catalog: &Catalog,
    screen: &SecretScreen,
) -> Result<Parsed, Problem> {
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
    if !batch && !items[0].get().starts_with('{') {
        return Err(Problem::invalid_type(
            "",
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
    let count = items.len();
    let mut parsed = Parsed {
        events: Vec::with_capacity(count),
        places: Vec::with_capacity(count),
        batch,
        count,
    };
    let mut refused = Vec::new();
    let mut seen: HashMap<String, usize> = HashMap::new();
    for (i, item) in items.into_iter().enumerate() {
        let index = batch.then_some(i);
        let event = read_event(item, index).and_then(|input| {
            // Screened before its schema is checked: a schema's message may
            // quote the value, a screen's refusal never does.
            screen_secrets(&input, screen, index)?;
            input
                .validate(now_ms, limits.max_payload_bytes, catalog)
                .map_err(|e| refusal(e, index))
        });
        let event = match event {
            Ok(event) => event,
            Err(refusal) => {
                refused.push(refusal);
                continue;
            }
        };
        match seen.get(event.id.as_str()) {
            Some(&j) if parsed.events[j].same_content_as(&event) => continue,
            Some(_) => {
                return Err(Problem::conflict(format!(
                    "event {} appears twice in the batch with different content",
                    event.id
                ))
                .with_event(event.id.as_str()));
            }
            None => {
                seen.insert(event.id.as_str().to_string(), parsed.events.len());
                parsed.events.push(event);
                parsed.places.push(i);
            }
        }
    }
    match Problem::of_many(refused, count) {
        Some(problem) => Err(problem),
        None => Ok(parsed),
    }
}

/// A refused event: its problem, and its errors as `errors` lists them.
type Refusal = (Problem, Vec<ProblemError>);

/// Reads one event's JSON into an `EventInput`; `index` is its place in a
/// batch.
fn read_event(item: &RawValue, index: Option<usize>) -> Result<EventInput, Refusal> {
    let prefix = index.map(|i| format!("events[{i}]")).unwrap_or_default();
    if !item.get().starts_with('{') {
        let p = Problem::invalid_type(
            prefix.as_str(),
            format!("{prefix} must be an event (an object)"),
        );
        return Err(listed(p, &prefix));
    }
    let mut json = serde_json::Deserializer::from_str(item.get());
    serde_path_to_error::deserialize(&mut json).map_err(|e| {
        let field = body::field_of(&prefix, e.path());
        // serde_json's position is in this event's text, not the body's.
        let message = e.into_inner().to_string();
        let message = message.split(" at line ").next().unwrap_or_default();
        let p = body::refusal(&field, message);
        let at = p.field.clone().unwrap_or(field);
        listed(p, &at)
    })
}

/// `p` with itself as its one listed error, at `field` (a batch's events
/// are `events[i]`, at `/events/i`).
fn listed(p: Problem, field: &str) -> Refusal {
    let error = ProblemError {
        kind: p.kind.clone(),
        pointer: body::pointer(field),
        message: p.detail.clone(),
    };
    (p, vec![error])
}

/// Refuses an event whose `data` (or a rendition of it) holds what looks
/// like a secret, naming each pointer and rule, never the value. Malformed
/// `data` is left to [`EventInput::validate`] to refuse.
fn screen_secrets(
    input: &EventInput,
    screen: &SecretScreen,
    index: Option<usize>,
) -> Result<(), Refusal> {
    let at = index.map(|i| format!("events[{i}].")).unwrap_or_default();
    let Some(event_type) = input.event_type.as_deref() else {
        return Ok(());
    };
    let renditions = input.renditions.iter().flatten();
    let parts = input.data.iter().map(|d| (format!("{at}data"), d));
    let parts = parts.chain(renditions.map(|(v, d)| (format!("{at}renditions.{v}"), d)));
    let mut found = Vec::new();
    for (field, raw) in parts {
        if let Ok(value) = serde_json::from_str(raw.get()) {
            let prefix = body::pointer(&field);
            let hits = screen.screen(event_type, &value);
            found.extend(
                hits.into_iter()
                    .map(|f| (format!("{prefix}{}", f.pointer), f.rule)),
            );
        }
    }
    if found.is_empty() {
        return Ok(());
    }
    let p = Problem::secret_in_data(format!("{at}data"), found);
    let errors = p.errors.clone().unwrap_or_default();
    Err((p, errors))
}

/// The answer to one event's refusal; `index` is its place in a batch.
fn refusal(e: FieldError, index: Option<usize>) -> Refusal {
    let field = match index {
        Some(i) => format!("events[{i}].{}", e.field),
        None => e.field.clone(),
    };
    let detail = format!("{field} {}", e.problem);
    let p = match e.kind {
        FieldErrorKind::Invalid => Problem::invalid(field.as_str(), detail),
        FieldErrorKind::TooLarge => Problem::too_large(Some(field.clone()), detail),
        FieldErrorKind::UnknownType => Problem::unknown_event_type(field.as_str(), detail),
        FieldErrorKind::InvalidData(errors) => {
            let prefix = body::pointer(&field);
            let p = Problem::invalid_data(field.as_str(), detail, &prefix, errors);
            let errors = p.errors.clone().unwrap_or_default();
            return (p, errors);
        }
    };
    listed(p, &field)
}

enum Stored {
    /// Every event, in request order, and how many were new.
    Done(Vec<NewEvent>, usize),
    /// Another request inserted one of these ids meanwhile: look again.
    Raced,
}

/// Refuses the events whose partner does not exist: every one of them.
pub async fn partners_exist(db: &DatabaseConnection, parsed: &Parsed) -> Result<(), Problem> {
    let known = store::partners::existing(db, &partner_ids(parsed)).await?;
    refuse_unknown_partners(parsed, &known)
}

/// The partners the events name, each once.
fn partner_ids(parsed: &Parsed) -> Vec<&str> {
    let mut partner_ids: Vec<&str> = parsed
        .events
        .iter()
        .map(|e| e.partner_id.as_str())
        .collect();
    partner_ids.sort_unstable();
    partner_ids.dedup();
    partner_ids
}

/// Refuses the events whose partner is not among `known`: every one of them.
fn refuse_unknown_partners(parsed: &Parsed, known: &HashSet<String>) -> Result<(), Problem> {
    let refused = parsed
        .events
        .iter()
        .zip(&parsed.places)
        .filter(|(e, _)| !known.contains(e.partner_id.as_str()))
        .map(|(e, &i)| {
            let field = if parsed.batch {
                format!("events[{i}].partner_id")
            } else {
                "partner_id".to_string()
            };
            let detail = format!("{field}: partner {} does not exist", e.partner_id);
            listed(Problem::invalid(field.as_str(), detail), &field)
        })
        .collect();
    match Problem::of_many(refused, parsed.count) {
        Some(problem) => Err(problem),
        None => Ok(()),
    }
}

/// The events as they stand after this request, in its order, and those
/// of them that are new: an event already stored with the same content is
/// a repeat (answered as stored); with other content, a conflict.
pub async fn sort_out(
    db: &DatabaseConnection,
    events: &[NewEvent],
) -> Result<(Vec<NewEvent>, Vec<NewEvent>), Problem> {
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
    Ok((result, fresh))
}

/// `look`: read which ids are stored already first. Without it every event
/// is taken as new: the insert itself finds a repeat (a unique violation),
/// and the request is answered by looking, as a race is.
async fn store_events(
    state: &AppState,
    events: &[NewEvent],
    now_ms: i64,
    look: bool,
) -> Result<Stored, Problem> {
    let (result, fresh) = if look {
        sort_out(&state.shared.db, events).await?
    } else {
        (events.to_vec(), events.to_vec())
    };
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
    let mut turn = shared.write_turn().await;
    let txn = store::writer::begin(&shared.db, turn.as_deref_mut()).await?;
    store::outbox::insert(&txn, events, now_ms).await?;
    txn.commit().await?;
    shared.metrics.events_ingested.inc_by(events.len() as u64);
    Ok(())
}

pub use crate::store::is_unique_violation;

/// A batch's answer: every event as delivered, and how many were new.
#[derive(serde::Serialize)]
pub struct BatchOut {
    pub data: Vec<Box<RawValue>>,
    pub created: usize,
}

/// Publish one event (an object) or a batch (an array of up to 500), all or
/// nothing, idempotent on `event_id`.
#[utoipa::path(tag = "ingest", security(("service_key" = [])),
    params(
        ("traceparent" = Option<String>, Header, description = "W3C Trace Context of the producer's span (`00-<trace id>-<span id>-<flags>`): the events' ingest, publication and attempts join this trace. Malformed: ignored (a fresh trace), never refused."),
        ("tracestate" = Option<String>, Header, description = "W3C `tracestate` that goes with `traceparent`; passed on as it came."),
    ),
    request_body(content = Object, description = "One event, or an array of events. Each event may carry its own `traceparent` (and `tracestate`) field, a W3C Trace Context string that wins over the headers for that event; a malformed one is ignored, never refused.", content_type = "application/json"),
    responses((status = 201, description = "Created: the stored event (or `{data, created}` for a batch)", body = Object),
              (status = 200, description = "Every event already existed with this content", body = Object),
              super::problem::IngestErrors))]
#[post("/v1/events")]
pub async fn ingest(
    req: HttpRequest,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    // A malformed context is no context: the events start a fresh trace.
    let producer = trace_context(&req);
    let Some(tracer) = state.shared.telemetry.tracer() else {
        // Telemetry off: no span; the producer's context is kept as it came,
        // for the events' attempts should telemetry be on when they run.
        return ingest_in(req, payload, &state, producer).await;
    };
    let span = spans::ingest(tracer, producer.as_ref(), "/v1/events");
    let joined = spans::context_of(&span).or(producer);
    let answer = ingest_in(req, payload, &state, joined).await;
    let status = match &answer {
        Ok(response) => response.status().as_u16(),
        Err(problem) => problem.status,
    };
    spans::end_ingest(span, status);
    answer
}

/// The request's W3C `traceparent` and `tracestate` headers, if they parse.
fn trace_context(req: &HttpRequest) -> Option<TraceContext> {
    let headers = req.headers();
    let traceparent = headers.get("traceparent")?.to_str().ok()?;
    // Several `tracestate` headers are one list (W3C Trace Context, 3.3.1).
    let states: Vec<&str> = headers
        .get_all("tracestate")
        .filter_map(|v| v.to_str().ok())
        .collect();
    let tracestate = (!states.is_empty()).then(|| states.join(","));
    TraceContext::parse(traceparent, tracestate.as_deref())
}

/// The ingest itself; `trace`: the context events without their own join.
async fn ingest_in(
    req: HttpRequest,
    payload: web::Payload,
    state: &AppState,
    trace: Option<TraceContext>,
) -> Result<HttpResponse, Problem> {
    auth::require(&req, state, Role::Service).await?;
    if state.shared.is_draining() {
        return Err(Problem::stopping());
    }
    let http = &state.shared.config.http;
    let body = body::read(&req, payload, http.max_body_bytes, http.body_timeout).await?;
    let now_ms = state.shared.clock.now_ms();
    let config = &state.shared.config;
    let parsed = parse_request(
        &body,
        now_ms,
        &config.ingest,
        &state.shared.catalog,
        &config.payload.screen,
    )?;
    // Partners found lately answer from memory (`known_partners`).
    let known = state
        .known_partners
        .existing(&state.shared.db, &partner_ids(&parsed))
        .await?;
    refuse_unknown_partners(&parsed, &known)?;
    let Parsed {
        mut events, batch, ..
    } = parsed;
    if trace.is_some() {
        for e in events.iter_mut().filter(|e| e.trace.is_none()) {
            e.trace.clone_from(&trace);
        }
    }
    // A few events are first taken as new, unread: a repeat is rare, and
    // the insert refuses it. A concurrent request may insert one of these
    // ids between our read and our insert; reading again then answers it as
    // a repeat (or a conflict).
    let mut tries = 0;
    let (stored, created) = loop {
        let look = tries > 0 || events.len() > fresh::MAX_EVENTS;
        match store_events(state, &events, now_ms, look).await? {
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
