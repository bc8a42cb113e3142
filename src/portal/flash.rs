//! What an action did, said once on the page it redirects to: the action
//! answers `303 See Other` with the outcome sealed for the session in a
//! short-lived cookie (`web::seal`), and the next page of the portal shows
//! it and clears the cookie. Sealed, it can be neither read (a new secret
//! travels in it) nor forged into showing other text; bound to the
//! session, it shows nowhere else. A reload shows the page without it and
//! posts nothing again.

use actix_web::{
    HttpRequest,
    cookie::{Cookie, time::Duration as CookieAge},
};
use maud::{Markup, html};
use serde::{Deserialize, Serialize};

use crate::web::{chrome, seal};

/// The cookie that carries the outcome across the redirect.
pub const COOKIE: &str = "hookd_portal_flash";
/// The seal's purpose, apart from any other use of the session key.
const PURPOSE: &str = "portal-flash";
/// Long enough for a redirect on a slow link; a flash not shown by then
/// is stale.
const LIFETIME_S: i64 = 120;

/// What an action did, in the words of the page it redirects to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Flash {
    pub said: String,
    /// A secret (or `v1a` public key) the action made, shown this once.
    pub secret: Option<String>,
}

impl Flash {
    pub fn said(text: impl Into<String>) -> Flash {
        Flash {
            said: text.into(),
            secret: None,
        }
    }

    pub fn with_secret(text: impl Into<String>, secret: String) -> Flash {
        Flash {
            said: text.into(),
            secret: Some(secret),
        }
    }
}

/// The cookie that carries `flash` to session `session_id`'s next page.
pub fn cookie(key: &[u8; 32], session_id: &str, flash: &Flash) -> Cookie<'static> {
    let json = serde_json::to_vec(flash).unwrap_or_default();
    let sealed = seal::seal(key, PURPOSE, session_id, &json);
    chrome::session_cookie(COOKIE, "/portal", sealed, CookieAge::seconds(LIFETIME_S))
}

/// The cookie that removes a shown flash.
pub fn cleared() -> Cookie<'static> {
    chrome::session_cookie(COOKIE, "/portal", String::new(), CookieAge::ZERO)
}

/// Whether the request carries a flash (shown or not, it is then cleared).
pub fn carried(req: &HttpRequest) -> bool {
    req.cookie(COOKIE).is_some_and(|c| !c.value().is_empty())
}

/// The flash the request carries for session `session_id`, if genuine.
pub fn read(req: &HttpRequest, key: &[u8; 32], session_id: &str) -> Option<Flash> {
    let c = req.cookie(COOKIE)?;
    let json = seal::open(key, PURPOSE, session_id, c.value())?;
    serde_json::from_slice(&json).ok()
}

/// A flash as the page shows it: what was done, and a new secret once.
pub fn shown(flash: Option<&Flash>) -> Markup {
    html! {
        @if let Some(f) = flash {
            div.flash #flash role="status" {
                p.done { (f.said) }
                @if let Some(secret) = &f.secret { (secret_box(secret)) }
            }
        }
    }
}

/// A secret, shown this once; or a `v1a` public key, which stays listed
/// on the endpoint's page.
pub fn secret_box(secret: &str) -> Markup {
    let said = if secret.starts_with("whpk_") {
        "Receivers verify deliveries with this public key (v1a); it is listed on this page."
    } else {
        "Copy this signing secret now; it is not shown again."
    };
    html! {
        p.note { (said) }
        p.secret #secret { (secret) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: [u8; 32] = [9; 32];

    #[test]
    fn a_flash_is_shown_with_its_secret_escaped() {
        let f = Flash::with_secret("Secret <rotated>.", "whsec_x".into());
        let html = shown(Some(&f)).into_string();
        assert!(html.contains("Secret &lt;rotated&gt;."), "{html}");
        assert!(
            html.contains(r#"<p class="secret" id="secret">whsec_x</p>"#),
            "{html}"
        );
        assert_eq!(shown(None).into_string(), "");
    }

    #[test]
    fn the_cookie_is_sealed_short_lived_and_scoped_to_the_portal() {
        let c = cookie(&KEY, "s1", &Flash::with_secret("x", "whsec_abc".into()));
        assert!(!c.value().contains("whsec_abc"), "the secret is sealed");
        assert_eq!(c.path(), Some("/portal"));
        assert_eq!(c.http_only(), Some(true));
        assert_eq!(c.max_age(), Some(CookieAge::seconds(LIFETIME_S)));
    }
}
