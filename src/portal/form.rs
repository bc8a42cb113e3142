//! A portal form: the hidden field that carries the session's CSRF token;
//! reading one back (URL-encoded, small, posted from this site and carrying
//! that token) into text, choices and JSON; and showing one again as it was
//! sent, with why it was refused at its field.

use std::collections::HashMap;

use actix_web::{HttpRequest, http::header, web};
use serde::de::DeserializeOwned;

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

/// A select's value read as the API names its choices (`subject`, `hold`);
/// empty reads as absent.
pub fn chosen<T: DeserializeOwned>(fields: &Fields, name: &str) -> Result<Option<T>, Problem> {
    text(fields, name)
        .map(|v| {
            serde_json::from_value(serde_json::Value::String(v.to_string()))
                .map_err(|e| Problem::invalid(name, e.to_string()))
        })
        .transpose()
}

/// A text box of JSON: empty reads as absent; anything but one JSON value
/// is refused at `name`.
pub fn json(fields: &Fields, name: &str) -> Result<Option<serde_json::Value>, Problem> {
    text(fields, name)
        .map(|t| body::json_field(name, t))
        .transpose()
}

/// The hidden field that carries the session's CSRF token in every form.
pub fn token_field(token: &str) -> maud::Markup {
    maud::html! { input type="hidden" name=(csrf::FIELD) value=(token); }
}

/// A form shown again: what it sent, where it was refused and why, and
/// what a filter test made of its sample. Empty for a page as saved.
#[derive(Debug, Default)]
pub struct Draft {
    pub fields: Fields,
    pub refusal: Option<Refusal>,
    pub tested: Option<crate::http::partner::filters::FilterTested>,
}

/// A refusal of the form `form`, shown at `at` (a form field's name, or
/// the form's id for one that names no field).
#[derive(Debug)]
pub struct Refusal {
    pub form: String,
    pub at: String,
    /// Where inside the value, as the API names it (`filter/and/0/gt`).
    pub field: Option<String>,
    pub detail: String,
    /// The refusal's HTTP status, which the page answers with.
    pub status: u16,
}

impl Draft {
    /// `fields` of the form `form` refused with `p`: shown at the form
    /// field the problem names (`filter/and/0` and `event_types[2]` are
    /// `filter` and `event_types`), else at the form.
    pub fn refused(fields: Fields, p: &Problem, form: &str) -> Draft {
        let at = p
            .field
            .as_deref()
            .map_or(form, |f| f.split(['/', '[', '.']).next().unwrap_or(f));
        Draft {
            fields,
            refusal: Some(Refusal {
                form: form.to_string(),
                at: at.to_string(),
                field: p.field.clone(),
                detail: p.detail.clone(),
                status: p.status,
            }),
            tested: None,
        }
    }

    /// The value of `name` as sent, else `saved`.
    pub fn value(&self, name: &str, saved: String) -> String {
        self.fields.get(name).cloned().unwrap_or(saved)
    }

    /// The page's status: the refusal's, or 200.
    pub fn status(&self) -> actix_web::http::StatusCode {
        self.refusal
            .as_ref()
            .and_then(|r| actix_web::http::StatusCode::from_u16(r.status).ok())
            .unwrap_or(actix_web::http::StatusCode::OK)
    }

    /// Whether the refusal is of one of `forms`.
    pub fn refused_in(&self, forms: &[&str]) -> bool {
        self.refusal
            .as_ref()
            .is_some_and(|r| forms.contains(&r.form.as_str()))
    }

    /// `aria-invalid` of the field `name`: `true` when it was refused.
    pub fn invalid(&self, name: &str) -> Option<&'static str> {
        self.refusal
            .as_ref()
            .is_some_and(|r| r.at == name)
            .then_some("true")
    }

    /// Why the value at `at` was refused, if it was.
    pub fn error_at(&self, at: &str) -> maud::Markup {
        match self.refusal.as_ref().filter(|r| r.at == at) {
            Some(r) => refusal(at, r),
            None => maud::html! {},
        }
    }

    /// Why the form `form` was refused, when the refusal is not at one of
    /// the fields `placed` (which show their own).
    pub fn form_error(&self, form: &str, placed: &[&str]) -> maud::Markup {
        match self
            .refusal
            .as_ref()
            .filter(|r| r.form == form && !placed.contains(&r.at.as_str()))
        {
            Some(r) => refusal(form, r),
            None => maud::html! {},
        }
    }
}

fn refusal(at: &str, r: &Refusal) -> maud::Markup {
    maud::html! {
        p.error role="alert" id={ (at) "-error" } {
            @if let Some(f) = &r.field { code { (f) } ": " }
            (r.detail)
        }
    }
}
