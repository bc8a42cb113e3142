//! The portal's forms for an endpoint's receiver credentials: static
//! headers, OAuth2 client credentials and a client certificate, set and
//! removed through the same checks and store call as the Partner API
//! (`auth_ops`). The answer redirects to the endpoint page, which shows
//! what is now set with every secret redacted; a refused form comes back
//! empty (a secret typed is never put back into a page), with why above it.

use actix_web::{HttpRequest, HttpResponse, web};

use super::{
    actions::genuine,
    answer::{Owner, answer},
    auth_page::{HEADER_ROWS, header_fields},
    cross_site,
    flash::Flash,
    form::{self, Fields},
    views::run,
};
use crate::http::{
    AppState,
    partner::{
        auth_ops,
        auth_shapes::{AuthPart, SetOAuth2},
    },
    problem::Problem,
};

pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/portal/endpoints/{id}/auth/{part}", web::post().to(set))
        .route(
            "/portal/endpoints/{id}/auth/{part}/remove",
            web::post().to(remove),
        );
}

/// The credential a path names (`headers`, `oauth2`,
/// `client-certificate`), and the id of its form on the endpoint page.
fn part_of(name: &str) -> Option<(AuthPart, &'static str)> {
    match name {
        "headers" => Some((AuthPart::Headers, "headers-form")),
        "oauth2" => Some((AuthPart::Oauth2, "oauth2-form")),
        "client-certificate" => Some((AuthPart::ClientCertificate, "certificate-form")),
        _ => None,
    }
}

fn no_such_part() -> Problem {
    Problem::not_found("no such credential")
}

/// The header rows with a name or a value, as (name, value).
fn header_rows(fields: &Fields) -> Vec<(String, String)> {
    (0..HEADER_ROWS)
        .map(header_fields)
        .map(|(n, v)| {
            let get = |k: &str| fields.get(k).cloned().unwrap_or_default();
            (get(&n).trim().to_string(), get(&v))
        })
        .filter(|(n, v)| !n.is_empty() || !v.trim().is_empty())
        .collect()
}

/// A field as typed (untrimmed: a secret is taken as given).
fn given(fields: &Fields, name: &str) -> String {
    fields.get(name).cloned().unwrap_or_default()
}

async fn set_part(
    state: &AppState,
    partner: &str,
    id: &str,
    part: AuthPart,
    fields: &Fields,
) -> Result<&'static str, Problem> {
    match part {
        AuthPart::Headers => {
            let headers = auth_ops::checked_headers(&header_rows(fields))?;
            let change = crate::store::receiver_auth::Change::Headers(Some(&headers));
            auth_ops::change(state, partner, id, change).await?;
            Ok("Headers set.")
        }
        AuthPart::Oauth2 => {
            let input = SetOAuth2 {
                token_url: given(fields, "token_url"),
                client_id: given(fields, "client_id"),
                client_secret: given(fields, "client_secret"),
                scope: form::text(fields, "scope").map(str::to_string),
                audience: form::text(fields, "audience").map(str::to_string),
            };
            let token_url = auth_ops::checked_token_url(state, input.token_url.trim()).await?;
            let client = auth_ops::oauth2_client(token_url, input)?;
            let change = crate::store::receiver_auth::Change::OAuth2(Some(&client));
            auth_ops::change(state, partner, id, change).await?;
            Ok("OAuth2 client credentials set.")
        }
        AuthPart::ClientCertificate => {
            let now = state.shared.clock.now_ms();
            let (certificate, key) = (given(fields, "certificate"), given(fields, "private_key"));
            let cert = auth_ops::checked_certificate(&state.shared.trust, certificate, key, now)?;
            auth_ops::change(state, partner, id, cert.change()).await?;
            Ok("Client certificate set.")
        }
    }
}

async fn set(
    req: HttpRequest,
    path: web::Path<(String, String)>,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    let (id, part) = path.into_inner();
    genuine!(req, payload, state, form::PEM_LIMIT, |s, fields| {
        let (part, form) = part_of(&part).ok_or_else(no_such_part)?;
        let said = set_part(state, &s.partner_id, &id, part, &fields).await;
        let done = said.map(|said| Flash::said(said).into());
        // What was typed is not shown again: the form comes back empty.
        let typed = Fields::default();
        answer(state, &s, Owner::Endpoint(&id), form, typed, done).await
    })
}

async fn remove(
    req: HttpRequest,
    path: web::Path<(String, String)>,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    let (id, part) = path.into_inner();
    genuine!(req, payload, state, |s, fields| {
        let (part, form) = part_of(&part).ok_or_else(no_such_part)?;
        let removal = auth_ops::removal(part);
        let removed = auth_ops::change(state, &s.partner_id, &id, removal).await;
        let done = removed.map(|_| Flash::said("Removed.").into());
        answer(state, &s, Owner::Endpoint(&id), form, fields, done).await
    })
}
