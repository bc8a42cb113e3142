//! Payload filters through the Partner API: reading a filter given with an
//! endpoint (refused with where in it and why, including a `data` path no
//! subscribed type of the catalog can hold), and trying one against a
//! sample event (`POST /v1/endpoints/{id}/filter-test`). The portal and the
//! command line check and try filters with the same functions.

use actix_web::{HttpRequest, HttpResponse, post, web};
use sea_orm::DatabaseConnection;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

use crate::{
    catalog::{Catalog, paths::impossible_path},
    domain::filter::{EventView, Filter, FilterError, Verdict},
    http::{
        AppState, auth,
        problem::{Errors, Problem},
    },
    store::{endpoints::Endpoint, scoped::for_partner},
};

/// A filter given for an endpoint that takes `event_types`, parsed and
/// checked against `catalog`; a 422 names where it fails (`filter/and/1/gt`).
/// The API, the portal and the command line check filters with it.
pub(crate) fn check_filter(
    catalog: &Catalog,
    event_types: &[String],
    given: &Value,
) -> Result<Filter, Problem> {
    let refused = |e: FilterError| {
        Problem::invalid(format!("filter{}", e.at.trim_end_matches('/')), e.message)
    };
    let filter = Filter::parse(given).map_err(refused)?;
    if let Some(p) = impossible_path(catalog, event_types, &filter) {
        return Err(refused(p.into()));
    }
    Ok(filter)
}

/// The filter a change leaves `current` with, checked against the types it
/// leaves it with (`types`, when they change): a new filter, its removal
/// (`Some(None)`), or, when only the types change, the current filter
/// checked again. `None`: the filter stays as it is.
pub(crate) fn filter_after(
    catalog: &Catalog,
    current: &Endpoint,
    types: Option<&[String]>,
    given: Option<Option<&Value>>,
) -> Result<Option<Option<Filter>>, Problem> {
    let checked_types = types.unwrap_or(&current.event_types);
    match (given, &current.filter) {
        (Some(None), _) => Ok(Some(None)),
        (Some(Some(given)), _) => Ok(Some(Some(check_filter(catalog, checked_types, given)?))),
        (None, Some(f)) if types.is_some() => {
            check_filter(catalog, checked_types, &f.to_json())?;
            Ok(None)
        }
        (None, _) => Ok(None),
    }
}

/// For a field that may be absent (leave it), `null` (remove it) or a value.
pub(crate) fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Option<Value>>, D::Error> {
    Option::<Value>::deserialize(d).map(Some)
}

/// An event to try a filter on: its envelope's `type`, `subject` and
/// `data`, or the id of one of your events.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct FilterTest {
    /// A sample envelope (`type`, optional `subject`, `data`); other
    /// envelope fields are allowed and ignored.
    #[schema(value_type = Option<Object>)]
    pub event: Option<Value>,
    /// One of your events, instead of a sample.
    pub event_id: Option<String>,
    /// A filter to try instead of the endpoint's own (to test before saving).
    #[schema(value_type = Option<Object>)]
    pub filter: Option<Value>,
}

/// What the filter made of the event.
#[derive(Debug, Serialize, ToSchema)]
pub struct FilterTested {
    /// Whether the event would get a delivery at this endpoint.
    pub matched: bool,
    /// Why not: `no_match`, `missing_field` or `not_comparable`.
    pub reason: Option<String>,
    /// The filter tried (null: the endpoint has none, and takes every event
    /// of its types).
    #[schema(value_type = Option<Object>)]
    pub filter: Option<Value>,
}

/// Which filter a test tries.
pub(crate) enum Trying {
    /// The endpoint's own, as saved.
    Saved,
    /// One being written (`None`: no filter, every event of the types).
    Draft(Option<Value>),
}

/// Try the endpoint's filter, or one you are writing, against a sample
/// event or one of your events.
#[utoipa::path(tag = "endpoints", params(("id" = String, Path)), request_body = FilterTest, security(("partner_key" = [])),
    responses((status = 200, description = "Whether the event passes", body = FilterTested), Errors))]
#[post("/v1/endpoints/{id}/filter-test")]
pub async fn filter_test(
    req: HttpRequest,
    id: web::Path<String>,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    let partner = auth::partner(&req, &state).await?;
    let input: FilterTest = state.read_json(&req, payload).await?;
    let trying = input
        .filter
        .map_or(Trying::Saved, |f| Trying::Draft(Some(f)));
    let shared = &state.shared;
    let tested = try_filter(
        (&shared.db, &*shared.catalog),
        (&partner, &id),
        input.event,
        input.event_id,
        trying,
    )
    .await?;
    Ok(HttpResponse::Ok().json(tested))
}

/// What `trying` makes of `event` (a sample envelope) or of `partner`'s
/// event `event_id` at its endpoint `id`, a draft filter checked against
/// `catalog`: the API's filter test, the portal's and the command line's.
pub(crate) async fn try_filter(
    (db, catalog): (&DatabaseConnection, &Catalog),
    (partner, id): (&str, &str),
    event: Option<Value>,
    event_id: Option<String>,
    trying: Trying,
) -> Result<FilterTested, Problem> {
    let scoped = for_partner(db, partner);
    let endpoint = scoped
        .endpoint(id)
        .await?
        .ok_or_else(|| Problem::not_found("no such endpoint"))?;
    let filter = match &trying {
        Trying::Saved => endpoint.filter,
        Trying::Draft(None) => None,
        Trying::Draft(Some(given)) => Some(check_filter(catalog, &endpoint.event_types, given)?),
    };
    let (event_type, subject, data) = match (event, event_id) {
        (Some(event), None) => sample(event)?,
        (None, Some(event_id)) => {
            let (e, _) = scoped
                .event(&event_id)
                .await?
                .ok_or_else(|| Problem::not_found("no such event"))?;
            let data = serde_json::from_str(&e.payload)
                .map_err(|err| Problem::internal(&format!("a stored event is not JSON: {err}")))?;
            (
                e.event_type,
                e.subject.map(|s| (s.subject_type, s.id)),
                data,
            )
        }
        _ => {
            return Err(Problem::invalid(
                "event",
                "give either `event` (a sample envelope) or `event_id` (one of your events)",
            ));
        }
    };
    let view = EventView {
        event_type: &event_type,
        subject: subject.as_ref().map(|(t, i)| (t.as_str(), i.as_str())),
        data: &data,
    };
    let verdict = filter
        .as_ref()
        .map_or(Verdict::Matched, |f| f.evaluate(&view));
    Ok(FilterTested {
        matched: verdict.is_match(),
        reason: match verdict {
            Verdict::Matched => None,
            Verdict::Filtered(r) => Some(r.as_str().to_string()),
        },
        filter: filter.map(|f| f.to_json()),
    })
}

/// A sample envelope's type, subject and data.
type Sample = (String, Option<(String, String)>, Value);

fn sample(event: Value) -> Result<Sample, Problem> {
    let text = |v: &Value, field: &str| {
        v.as_str()
            .map(str::to_string)
            .ok_or_else(|| Problem::invalid(field.to_string(), "must be a string"))
    };
    let event_type = text(&event["type"], "event.type")?;
    let subject = match &event["subject"] {
        Value::Null => None,
        s => Some((
            text(&s["type"], "event.subject.type")?,
            text(&s["id"], "event.subject.id")?,
        )),
    };
    let data = event.get("data").cloned().unwrap_or(Value::Null);
    if !data.is_object() {
        return Err(Problem::invalid("event.data", "must be an object"));
    }
    Ok((event_type, subject, data))
}
