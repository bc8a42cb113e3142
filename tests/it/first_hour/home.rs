//! `GET /` is where someone who opens hookd's address lands: it links the
//! dashboard, the portal, the OpenAPI document, health and the README's
//! sections, and every link it shows leads somewhere.

use crate::harness::{Backend, TestApp, spawn_app};

async fn get(app: &TestApp, path: &str) -> (u16, String) {
    let mut res = app
        .http
        .get(format!("{}{path}", app.base_url))
        .send()
        .await
        .unwrap_or_else(|e| panic!("GET {path}: {e}"));
    let body = res.body().limit(4 << 20).await.expect("a body");
    (res.status().as_u16(), String::from_utf8_lossy(&body).into())
}

/// The `href`s of a page, in order.
fn links(html: &str) -> Vec<String> {
    html.split("href=\"")
        .skip(1)
        .filter_map(|rest| rest.split('"').next())
        .map(str::to_string)
        .collect()
}

#[actix_rt::test]
async fn the_home_page_links_the_surfaces_and_the_readmes_sections() {
    let app = spawn_app(Backend::Sqlite).await;
    let (status, home) = get(&app, "/").await;
    assert_eq!(status, 200, "{home}");
    let hrefs = links(&home);
    for wanted in [
        "/dashboard",
        "/portal",
        "/v1/openapi.json",
        "/readme#try-it",
        "/readme#the-delivery-contract",
        "/readme#running-it",
    ] {
        assert!(hrefs.iter().any(|h| h == wanted), "{wanted} in {hrefs:?}");
    }
    let (status, readme) = get(&app, "/readme").await;
    assert_eq!(status, 200);
    for href in &hrefs {
        if let Some(anchor) = href.strip_prefix("/readme#") {
            assert!(
                readme.contains(&format!("id=\"{anchor}\"")),
                "the README has the section {anchor}"
            );
        } else {
            let (status, _) = get(&app, href).await;
            assert!(
                matches!(status, 200 | 303),
                "{href} leads somewhere (got {status})"
            );
        }
    }
    crate::harness::quiesce().await;
}

#[actix_rt::test]
async fn the_readme_page_is_the_built_in_readme_under_the_pages_policy() {
    let app = spawn_app(Backend::Sqlite).await;
    let res = app
        .http
        .get(format!("{}/readme", app.base_url))
        .send()
        .await
        .expect("GET /readme");
    let csp = res
        .headers()
        .get("content-security-policy")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    assert!(csp.contains("default-src 'none'"), "{csp}");
    let (_, readme) = get(&app, "/readme").await;
    assert!(readme.contains("<h2 id=\"the-delivery-contract\">The delivery contract</h2>"));
    assert!(
        !readme.contains("<img"),
        "the repository's images are not served"
    );
    crate::harness::quiesce().await;
}
