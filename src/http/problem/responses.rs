//! The problem answers as the OpenAPI document describes them: the error
//! answers every route may give, and those of ingest.

use std::collections::BTreeMap;

use utoipa::openapi::{RefOr, response::Response};

/// The error answers every route may give, for the OpenAPI document.
pub struct Errors;

/// An `application/problem+json` answer described as `description`.
fn problem_response(description: &str) -> RefOr<Response> {
    use utoipa::openapi::{ContentBuilder, Ref, ResponseBuilder};
    ResponseBuilder::new()
        .description(description)
        .content(
            "application/problem+json",
            ContentBuilder::new()
                .schema(Some(Ref::from_schema_name("Problem")))
                .build(),
        )
        .build()
        .into()
}

impl utoipa::IntoResponses for Errors {
    fn responses() -> BTreeMap<String, RefOr<Response>> {
        [
            (
                "400",
                "hookd cannot read the request: the body is not one JSON value \
                 (`malformed-json`), or a key is given twice in the body or the query \
                 (`duplicate-key`, `field` names it)",
            ),
            ("401", "Missing, unknown or revoked API key"),
            ("403", "The key's role may not use this route"),
            ("408", "The body did not arrive within http.body_timeout"),
            (
                "404",
                "Not found (another partner's object is not found either)",
            ),
            ("409", "Conflict"),
            ("413", "Too large"),
            (
                "414",
                "The request target is longer than http.max_uri_bytes",
            ),
            ("415", "Not application/json"),
            (
                "422",
                "A value breaks a rule; `field` names it: `unknown-field` (in the body or \
                 the query), `invalid-type`, `out-of-range` (also a value not in its list), \
                 `invalid-cursor`, `invalid-url`, `validation` (a missing field, a control \
                 character)",
            ),
            ("429", "Rate limited; see Retry-After"),
            ("500", "Internal error"),
            ("503", "The database is unavailable"),
        ]
        .into_iter()
        .map(|(code, d)| (code.to_string(), problem_response(d)))
        .collect()
    }
}

/// The error answers of `POST /v1/events`: the common ones, with the 422
/// spelt out for the event catalog's refusals.
pub struct IngestErrors;

impl utoipa::IntoResponses for IngestErrors {
    fn responses() -> BTreeMap<String, RefOr<Response>> {
        let mut responses = <Errors as utoipa::IntoResponses>::responses();
        responses.insert(
            "422".into(),
            problem_response(
                "Nothing was stored. `errors` lists every refused event of a batch (up to 20 \
                 errors in all; `more_errors` counts the rest), each with the JSON pointer of \
                 the value in the request (`/events/3/data/balance`); `type`, `field` and \
                 `detail` describe the first. `unknown-event-type`: the catalog does not name \
                 the type. `invalid-data`: `data` fails its version's JSON Schema (one entry \
                 per failure). `secret-in-data`: `data` holds what looks like a key, a token or \
                 a credential (one entry per field, naming the rule, never the value). `unknown-field`: a field events do not have. `validation`: \
                 another field is missing or malformed, the partner does not exist, or \
                 `schema_version` names no version of the type.",
            ),
        );
        responses
    }
}
