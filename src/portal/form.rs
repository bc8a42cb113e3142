//! A portal form: the hidden field that carries the session's CSRF token,
//! and reading one back: URL-encoded, small, posted from this site and
//! carrying that token.

use std::collections::HashMap;

use actix_web::{HttpRequest, http::header, web};

use super::Signed;
use crate::{
    http::{AppState, body, origin, problem::Problem},
    web::csrf,
};

/// A portal form is a handful of short fields.
pub const LIMIT: usize = 16 * 1024;

/// The client certificate form carries two PEM texts (the API takes up to
/// 64 KiB and 16 KiB), URL-encoded.
pub const PEM_LIMIT: usize = 256 * 1024;

pub type Fields = HashMap<String, String>;

/// The fields of a URL-encoded form of at most `limit` bytes.
pub async fn read(
    req: &HttpRequest,
    payload: web::Payload,
    state: &AppState,
    limit: usize,
) -> Result<Fields, Problem> {
    let form_type = req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| ct.starts_with("application/x-www-form-urlencoded"));
    if !form_type {
        return Err(Problem::unsupported_media_type(
            "send the form as application/x-www-form-urlencoded",
        ));
    }
    let bytes =
        body::read_bytes(req, payload, limit, state.shared.config.http.body_timeout).await?;
    serde_urlencoded::from_bytes(&bytes).map_err(|e| Problem::malformed_json(e.to_string()))
}

/// The form's fields (at most `limit` bytes) if it came from this site
/// with this session's token; `None` for a forged post (nothing is done).
pub async fn genuine(
    req: &HttpRequest,
    payload: web::Payload,
    state: &AppState,
    s: &Signed,
    limit: usize,
) -> Result<Option<Fields>, Problem> {
    if !origin::same_origin(req, &state.shared.config.http) {
        return Ok(None);
    }
    let fields = read(req, payload, state, limit).await?;
    let token = fields.get(csrf::FIELD).map(String::as_str).unwrap_or("");
    let ok = csrf::verify(state.shared.secrets.session_key(), &s.session_id, token);
    Ok(ok.then_some(fields))
}

/// A text field, trimmed; empty reads as absent.
pub fn text<'a>(fields: &'a Fields, name: &str) -> Option<&'a str> {
    fields.get(name).map(|v| v.trim()).filter(|v| !v.is_empty())
}

/// The hidden field that carries the session's CSRF token in every form.
pub fn token_field(token: &str) -> maud::Markup {
    maud::html! { input type="hidden" name=(csrf::FIELD) value=(token); }
}
