//! `GET /` is where someone who opens hookd's address lands: it links the
//! dashboard, the portal, the OpenAPI document, health and the README's
//! sections, and every link it shows leads somewhere.

use crate::harness::{Backend, TestApp, TextAnswer, answer::header, quiesce, read_text, spawn_app};

/// `GET path` without a key, read as text.
async fn get(app: &TestApp, path: &str) -> TextAnswer {
    let sent = app.http.get(format!("{}{path}", app.base_url)).send().await;
    read_text(sent.unwrap_or_else(|e| panic!("GET {path}: {e}"))).await
}

/// The `href`s of a page, in order.
fn links(html: &str) -> Vec<String> {
    html.split("href=\"")
        .skip(1)
        .filter_map(|rest| rest.split('"').next())
        .map(str::to_string)
        .collect()
}

/// The `href`s of the home page, which must answer 200.
async fn home_links(app: &TestApp) -> Vec<String> {
    let (status, home, _) = get(app, "/").await;
    assert_eq!(status, 200, "{home}");
    links(&home)
}

#[actix_rt::test]
async fn the_home_page_links_the_surfaces_and_the_readmes_sections() {
    let app = spawn_app(Backend::Sqlite).await;
    let hrefs = home_links(&app).await;
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
    quiesce().await;
}

#[actix_rt::test]
async fn every_link_on_the_home_page_leads_somewhere() {
    let app = spawn_app(Backend::Sqlite).await;
    let hrefs = home_links(&app).await;
    let (status, readme, _) = get(&app, "/readme").await;
    assert_eq!(status, 200);
    for href in &hrefs {
        if let Some(anchor) = href.strip_prefix("/readme#") {
            assert!(
                readme.contains(&format!("id=\"{anchor}\"")),
                "the README has the section {anchor}"
            );
        } else {
            let (status, _, _) = get(&app, href).await;
            assert!(
                matches!(status, 200 | 303),
                "{href} leads somewhere (got {status})"
            );
        }
    }
    quiesce().await;
}

#[actix_rt::test]
async fn the_readme_page_is_served_under_the_pages_policy() {
    let app = spawn_app(Backend::Sqlite).await;
    let (_, _, headers) = get(&app, "/readme").await;
    let csp = header(&headers, "content-security-policy").unwrap_or_default();
    assert!(csp.contains("default-src 'none'"), "{csp}");
    quiesce().await;
}

#[actix_rt::test]
async fn the_readme_page_is_the_built_in_readme_without_the_repositorys_images() {
    let app = spawn_app(Backend::Sqlite).await;
    let (_, readme, _) = get(&app, "/readme").await;
    assert!(readme.contains("<h2 id=\"the-delivery-contract\">The delivery contract</h2>"));
    assert!(
        !readme.contains("<img"),
        "the repository's images are not served"
    );
    quiesce().await;
}
