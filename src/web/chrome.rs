//! The response every page is built on: no script, no framing, no caching,
//! no referrer leaving the site with ids in it, and session cookies that
//! script cannot read and other sites cannot send.

use actix_web::{
    HttpResponse, HttpResponseBuilder,
    cookie::{Cookie, SameSite, time::Duration as CookieAge},
    http::{StatusCode, header},
};
use maud::{DOCTYPE, Markup, html};

/// `same-origin`, not `no-referrer`, which would make the browser send
/// `Origin: null` on the page's own form posts.
pub fn page(status: StatusCode) -> HttpResponseBuilder {
    let mut res = HttpResponse::build(status);
    res.insert_header((
        header::CONTENT_SECURITY_POLICY,
        "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    ))
    .insert_header((header::X_FRAME_OPTIONS, "DENY"))
    .insert_header((header::REFERRER_POLICY, "same-origin"))
    .insert_header((header::CACHE_CONTROL, "no-store"))
    .insert_header((header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
    .content_type("text/html; charset=utf-8");
    res
}

pub fn html(status: StatusCode, markup: Markup) -> HttpResponse {
    page(status).body(markup.into_string())
}

pub fn see_other(to: &str) -> HttpResponseBuilder {
    let mut res = page(StatusCode::SEE_OTHER);
    res.insert_header((header::LOCATION, to));
    res
}

/// A session cookie for the pages under `path`. Always `Secure`: behind a
/// TLS proxy hookd may not know the scheme, and browsers keep Secure cookies
/// on `http://localhost` and `127.0.0.1` anyway.
pub fn session_cookie(
    name: &'static str,
    path: &'static str,
    value: String,
    age: CookieAge,
) -> Cookie<'static> {
    Cookie::build(name, value)
        .path(path)
        .http_only(true)
        .same_site(SameSite::Strict)
        .secure(true)
        .max_age(age)
        .finish()
}

/// An HTML document: `title` (suffixed with `suffix`), the page's own
/// style sheet, an optional reload every `refresh` seconds, and `body`.
pub fn document(
    title: &str,
    suffix: &str,
    style: &str,
    refresh: Option<u32>,
    body: Markup,
) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                @if let Some(s) = refresh { meta http-equiv="refresh" content=(s); }
                title { (title) (suffix) }
                style { (maud::PreEscaped(style)) }
            }
            body { (body) }
        }
    }
}
