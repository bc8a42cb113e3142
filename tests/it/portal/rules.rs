//! The rules of the dashboard, in the portal over plain HTTP: a session
//! cookie that scripts and other sites cannot use, a strict content
//! policy, forms that do nothing without this session's token or from
//! another site, and what an action says after its redirect sealed for
//! the session that did it.

use actix_web::cookie::{Cookie, SameSite};
use serde_json::Value;

use crate::harness::{TestApp, TextAnswer, answer::header, read_text};
use hookd_test_macros::both_backends;

fn client() -> awc::Client {
    awc::Client::builder().disable_redirects().finish()
}

/// Signs in with `key`, which must be taken (a 303); returns the cookie.
async fn session(app: &TestApp, key: &str) -> Cookie<'static> {
    let res = client()
        .post(format!("{}/portal/login", app.base_url))
        .insert_header(("content-type", "application/x-www-form-urlencoded"))
        .send_body(format!("key={key}"))
        .await
        .expect("the sign-in completes");
    assert_eq!(res.status().as_u16(), 303);
    res.headers()
        .get_all("set-cookie")
        .filter_map(|v| v.to_str().ok())
        .filter_map(|v| Cookie::parse(v.to_string()).ok())
        .find(|c| c.name() == "hookd_portal")
        .expect("a portal session cookie")
        .into_owned()
}

/// `GET path` with the session `cookie`, read as text.
async fn page(app: &TestApp, cookie: &Cookie<'_>, path: &str) -> TextAnswer {
    let sent = client()
        .get(format!("{}{path}", app.base_url))
        .insert_header(("cookie", format!("{}={}", cookie.name(), cookie.value())))
        .send()
        .await;
    read_text(sent.expect("the page loads")).await
}

/// The partner signed in to the portal with `key`, and the page of a new
/// endpoint of its, `id`, as that session loaded it.
struct EndpointPage {
    key: String,
    id: String,
    cookie: Cookie<'static>,
    page: TextAnswer,
}

/// Makes an `EndpointPage`: signs in and loads the new endpoint's page.
async fn endpoint_page(app: &TestApp) -> EndpointPage {
    let key = app.partner_key().await;
    let (id, _) = app.endpoint("http://127.0.0.1:9/x").await;
    let cookie = session(app, &key).await;
    let page = page(app, &cookie, &format!("/portal/endpoints/{id}")).await;
    EndpointPage {
        key,
        id,
        cookie,
        page,
    }
}

/// What a form post was answered: its status, where it redirects, and
/// the flash cookie it sets.
struct Posted {
    status: u16,
    location: Option<String>,
    flash: Option<Cookie<'static>>,
}

/// POSTs the form `body` to `path` with the session `cookie` (and `origin`, if any).
async fn post_form(
    app: &TestApp,
    cookie: &Cookie<'_>,
    path: &str,
    body: &str,
    origin: Option<&str>,
) -> Posted {
    let mut req = client()
        .post(format!("{}{path}", app.base_url))
        .insert_header(("cookie", format!("{}={}", cookie.name(), cookie.value())))
        .insert_header(("content-type", "application/x-www-form-urlencoded"));
    if let Some(o) = origin {
        req = req.insert_header(("origin", o));
    }
    let res = req
        .send_body(body.to_string())
        .await
        .expect("the post completes");
    let (status, _, headers) = read_text(res).await;
    Posted {
        status,
        location: header(&headers, "location").map(str::to_string),
        flash: headers
            .get_all("set-cookie")
            .filter_map(|v| v.to_str().ok())
            .filter_map(|v| Cookie::parse(v.to_string()).ok())
            .find(|c| c.name() == "hookd_portal_flash")
            .map(Cookie::into_owned),
    }
}

/// POSTs the form `body` to `path` with the session `cookie` (and `origin`, if any): the status.
async fn post(
    app: &TestApp,
    cookie: &Cookie<'_>,
    path: &str,
    body: &str,
    origin: Option<&str>,
) -> u16 {
    post_form(app, cookie, path, body, origin).await.status
}

#[both_backends]
async fn the_portals_session_cookie_is_http_only_secure_same_site_strict_and_scoped_to_it(
    app: TestApp,
) {
    let key = app.partner_key().await;
    let cookie = session(&app, &key).await;
    assert_eq!(cookie.http_only(), Some(true));
    assert_eq!(cookie.secure(), Some(true));
    assert_eq!(cookie.same_site(), Some(SameSite::Strict));
    assert_eq!(cookie.path(), Some("/portal"));
}

#[both_backends]
async fn a_portal_page_loads_nothing_from_elsewhere_and_cannot_be_framed(app: TestApp) {
    let (status, _, headers) = endpoint_page(&app).await.page;
    assert_eq!(status, 200);
    let csp = header(&headers, "content-security-policy").unwrap_or("");
    assert!(
        csp.contains("default-src 'none'") && csp.contains("frame-ancestors 'none'"),
        "{csp}"
    );
}

#[both_backends]
async fn a_form_without_this_sessions_token_or_from_another_site_changes_nothing(app: TestApp) {
    let EndpointPage {
        key,
        id,
        cookie,
        page: (_, html, _),
    } = endpoint_page(&app).await;
    let token = token_of(&html);
    let disable = format!("/portal/endpoints/{id}/disable");
    let status_of = || async {
        app.request("GET", &format!("/v1/endpoints/{id}"), &key, None)
            .await
            .1["status"]
            .clone()
    };

    assert_eq!(
        post(&app, &cookie, &disable, "", None).await,
        403,
        "no token"
    );
    assert_eq!(
        post(&app, &cookie, &disable, "csrf=forged", None).await,
        403,
        "a wrong token"
    );
    let other = session(&app, &key).await;
    assert_eq!(
        post(&app, &other, &disable, &format!("csrf={token}"), None).await,
        403,
        "another session's token"
    );
    assert_eq!(
        post(
            &app,
            &cookie,
            &disable,
            &format!("csrf={token}"),
            Some("https://evil.example")
        )
        .await,
        403,
        "from another site"
    );
    assert_eq!(status_of().await, Value::from("active"), "nothing was done");
    assert_eq!(
        post(&app, &cookie, &disable, &format!("csrf={token}"), None).await,
        303
    );
    assert_eq!(
        status_of().await,
        Value::from("disabled"),
        "with its own token it works"
    );
}

/// The CSRF token of the forms of `html`.
fn token_of(html: &str) -> String {
    html.split("name=\"csrf\" value=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("the page's forms carry a token")
        .to_string()
}

/// `GET path` with the session `cookie` and the flash cookie `flash`.
async fn page_with_flash(app: &TestApp, cookie: &Cookie<'_>, path: &str, flash: &str) -> String {
    let sent = client()
        .get(format!("{}{path}", app.base_url))
        .insert_header((
            "cookie",
            format!(
                "{}={}; hookd_portal_flash={flash}",
                cookie.name(),
                cookie.value()
            ),
        ))
        .send()
        .await;
    read_text(sent.expect("the page loads")).await.1
}

#[both_backends]
async fn what_an_action_says_after_its_redirect_is_sealed_for_its_session_and_cannot_be_forged(
    app: TestApp,
) {
    let EndpointPage {
        key,
        id,
        cookie,
        page: (_, html, _),
    } = endpoint_page(&app).await;
    let disable = format!("/portal/endpoints/{id}/disable");
    let done = post_form(
        &app,
        &cookie,
        &disable,
        &format!("csrf={}", token_of(&html)),
        None,
    )
    .await;
    assert_eq!(done.status, 303);
    assert_eq!(
        done.location.as_deref(),
        Some(format!("/portal/endpoints/{id}").as_str())
    );
    let flash = done.flash.expect("the outcome travels in a cookie");
    assert!(!flash.value().contains("Disabled"), "sealed, not readable");
    assert_eq!(flash.http_only(), Some(true));

    let endpoint = format!("/portal/endpoints/{id}");
    let shown = page_with_flash(&app, &cookie, &endpoint, flash.value()).await;
    assert!(
        shown.contains(r#"<p class="done">Disabled.</p>"#),
        "said on the page"
    );

    let other = session(&app, &key).await;
    let elsewhere = page_with_flash(&app, &other, &endpoint, flash.value()).await;
    assert!(
        !elsewhere.contains(r#"id="flash""#),
        "not in another session"
    );
    let forged = page_with_flash(&app, &cookie, &endpoint, "Hacked%20by%20Mallory").await;
    assert!(!forged.contains("Mallory") && !forged.contains(r#"id="flash""#));
}
