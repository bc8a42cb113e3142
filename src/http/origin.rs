//! The origin hookd is reached at, and the pages' cross-site check (the
//! dashboard's and the portal's): a form post is accepted only when its
//! `Origin` (scheme, host and port) is the origin hookd is reached at. That
//! origin is `http.public_url` when set; otherwise the `Host` header with
//! plain http, or, behind a proxy named in `http.trust_proxy`, what that
//! proxy reports in `X-Forwarded-Proto`/`-Host` or `Forwarded`. A client's
//! own forwarding headers are never believed.

use actix_web::{HttpRequest, http::header};

use super::door::gate::canonical;
use crate::config::{HttpConfig, Origin};

fn first(req: &HttpRequest, name: &str) -> Option<String> {
    let value = req.headers().get(name)?.to_str().ok()?;
    let first = value.split(',').next()?.trim();
    (!first.is_empty()).then(|| first.to_string())
}

/// `proto` and `host` of the first `Forwarded` element.
fn forwarded(req: &HttpRequest) -> (Option<String>, Option<String>) {
    let Some(element) = first(req, "forwarded") else {
        return (None, None);
    };
    let mut out = (None, None);
    for pair in element.split(';') {
        if let Some((name, value)) = pair.split_once('=') {
            let value = value.trim().trim_matches('"').to_string();
            match name.trim().to_ascii_lowercase().as_str() {
                "proto" => out.0 = Some(value),
                "host" => out.1 = Some(value),
                _ => {}
            }
        }
    }
    out
}

/// The origin this request reached hookd at, as a browser would name it.
pub fn expected(req: &HttpRequest, config: &HttpConfig) -> Option<Origin> {
    if let Some(public) = &config.public_url {
        return Some(public.clone());
    }
    let host = req.headers().get(header::HOST)?.to_str().ok()?.to_string();
    let from_trusted_proxy = req.peer_addr().is_some_and(|peer| {
        let peer = canonical(peer.ip());
        config.trust_proxy.iter().any(|net| net.contains(&peer))
    });
    let (scheme, host) = if from_trusted_proxy {
        let (proto, fwd_host) = forwarded(req);
        let scheme = first(req, "x-forwarded-proto").or(proto);
        let host = first(req, "x-forwarded-host").or(fwd_host).unwrap_or(host);
        (scheme.unwrap_or_else(|| "http".into()), host)
    } else {
        ("http".to_string(), host)
    };
    Origin::parse(&format!("{scheme}://{host}"))
}

/// Whether a form post may be taken: its `Origin` is the expected one. A
/// post without `Origin` (not a browser, which always sends it on posts) is
/// taken unless `Sec-Fetch-Site` says it crossed sites.
pub fn same_origin(req: &HttpRequest, config: &HttpConfig) -> bool {
    let headers = req.headers();
    match headers.get(header::ORIGIN) {
        None => headers
            .get("sec-fetch-site")
            .and_then(|v| v.to_str().ok())
            .is_none_or(|site| site == "same-origin" || site == "none"),
        Some(origin) => {
            let sent = origin.to_str().ok().and_then(Origin::parse);
            sent.is_some() && sent == expected(req, config)
        }
    }
}
