//! `GET /` is where someone who opens hookd's address lands: it links the
//! dashboard, the portal, the OpenAPI document, health, the README's
//! sections and the documentation's pages, and every link it shows leads
//! somewhere. The documentation is served as built into the binary.

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

/// The `href`s of the page at `path`, which must answer 200.
async fn page_links(app: &TestApp, path: &str) -> Vec<String> {
    let (status, page, _) = get(app, path).await;
    assert_eq!(status, 200, "GET {path}: {page}");
    links(&page)
}

/// Every link in `hrefs` (found on `on`) leads somewhere: a page that
/// answers 200 or a redirect, and an anchor that the page has.
async fn assert_all_lead_somewhere(app: &TestApp, on: &str, hrefs: &[String]) {
    for href in hrefs.iter().filter(|h| h.starts_with('/')) {
        let (path, anchor) = href.split_once('#').unwrap_or((href, ""));
        let (status, body, _) = get(app, path).await;
        assert!(
            matches!(status, 200 | 303),
            "{href} on {on} leads somewhere (got {status})"
        );
        assert!(
            anchor.is_empty() || body.contains(&format!("id=\"{anchor}\"")),
            "{href} on {on}: {path} has the section {anchor}"
        );
    }
}

#[hookd_test_macros::test]
async fn the_home_page_links_the_surfaces_the_readmes_sections_and_the_docs() {
    let app = spawn_app(Backend::Sqlite).await;
    let hrefs = page_links(&app, "/").await;
    for wanted in [
        "/dashboard",
        "/portal",
        "/v1/openapi.json",
        "/readme#a-first-verified-webhook",
        "/readme#the-delivery-contract",
        "/docs",
        "/docs/getting-started",
        "/docs/configuration",
        "/docs/receiving",
    ] {
        assert!(hrefs.iter().any(|h| h == wanted), "{wanted} in {hrefs:?}");
    }
    quiesce().await;
}

#[hookd_test_macros::test]
async fn every_link_on_the_home_page_leads_somewhere() {
    let app = spawn_app(Backend::Sqlite).await;
    let hrefs = page_links(&app, "/").await;
    assert_all_lead_somewhere(&app, "/", &hrefs).await;
    quiesce().await;
}

#[hookd_test_macros::test]
async fn every_link_between_the_served_pages_leads_somewhere() {
    let app = spawn_app(Backend::Sqlite).await;
    let mut pages = vec!["/readme".to_string()];
    pages.extend(
        page_links(&app, "/docs")
            .await
            .into_iter()
            .filter(|h| h.starts_with("/docs/")),
    );
    assert!(pages.len() >= 15, "the contents list the pages: {pages:?}");
    for page in &pages {
        let hrefs = page_links(&app, page).await;
        assert_all_lead_somewhere(&app, page, &hrefs).await;
    }
    quiesce().await;
}

#[hookd_test_macros::test]
async fn an_unknown_docs_page_is_a_404_page() {
    let app = spawn_app(Backend::Sqlite).await;
    let (status, body, _) = get(&app, "/docs/no-such-page").await;
    assert_eq!(status, 404, "{body}");
    assert!(body.contains("href=\"/docs\""), "{body}");
    quiesce().await;
}

#[hookd_test_macros::test]
async fn the_docs_pages_are_served_under_the_pages_policy() {
    let app = spawn_app(Backend::Sqlite).await;
    for path in ["/readme", "/docs", "/docs/configuration"] {
        let (_, _, headers) = get(&app, path).await;
        let csp = header(&headers, "content-security-policy").unwrap_or_default();
        assert!(csp.contains("default-src 'none'"), "{path}: {csp}");
    }
    quiesce().await;
}

#[hookd_test_macros::test]
async fn the_readme_page_is_the_built_in_readme_without_the_repositorys_images() {
    let app = spawn_app(Backend::Sqlite).await;
    let (_, readme, _) = get(&app, "/readme").await;
    assert!(readme.contains("<h2 id=\"the-delivery-contract\">The delivery contract</h2>"));
    let (_, dashboard, _) = get(&app, "/docs/dashboard").await;
    assert!(
        dashboard.contains("<h1 id=\"the-dashboard\">The dashboard</h1>"),
        "{dashboard}"
    );
    assert!(
        !readme.contains("<img") && !dashboard.contains("<img"),
        "the repository's images are not served"
    );
    quiesce().await;
}
