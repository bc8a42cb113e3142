//! What an endpoint presents to its receiver, for the operator: the names
//! of its static headers, its OAuth2 token URL and client id, its client
//! certificate's subject and expiry, and the schemes (with `v1a` public
//! keys) it signs with. No secret is read to draw it: header values and the
//! client secret show as `[redacted]`.

use maud::{Markup, html};

use super::when::when;
use crate::{
    domain::receiver_auth::REDACTED,
    store::{endpoints::SigningShown, receiver_auth::Shown},
};

pub fn credentials(auth: &Shown, signing: &[SigningShown], now_ms: i64) -> Markup {
    html! {
        dl.facts #credentials {
            dt { "Signed with" } dd #signing {
                @for (i, k) in signing.iter().enumerate() {
                    @if i > 0 { " · " }
                    b { (k.scheme) }
                    @if let Some(p) = &k.public_key { " " code { (p) } }
                    @match k.expires_at {
                        Some(t) => { " (previous, signs until " (when(now_ms, t)) ")" }
                        None => { " (current)" }
                    }
                }
                @if signing.is_empty() { "no key signs now" }
            }
            dt { "Static headers" } dd #auth-headers {
                @if auth.header_names.is_empty() { "none" }
                @for name in &auth.header_names { code { (name) ": " (REDACTED) } " " }
            }
            dt { "OAuth2 client" } dd #auth-oauth2 {
                @match &auth.oauth2 {
                    Some((token_url, client_id, _, _)) => {
                        "token URL " code { (token_url) } " · client id " code { (client_id) }
                        " · client secret " code { (REDACTED) }
                    }
                    None => { "none" }
                }
            }
            dt { "Client certificate" } dd #auth-certificate {
                @match &auth.client_cert {
                    Some((subject, not_after)) => { (subject) " · expires " (when(now_ms, *not_after)) }
                    None => { "none" }
                }
            }
        }
    }
}
