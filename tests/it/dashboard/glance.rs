//! What an operator reads at a glance, in a real browser: the summary
//! cards count the partner the page is filtered to; times read relative
//! ("in 59 min") with the exact UTC time kept in a `<time>`; the attempt
//! average is measured from attempts, not seeded with the timeout; and
//! the endpoints, attempts and search tables page through in a stable
//! order, both ways.

use serde_json::json;

use super::{attributes, click, open, open_endpoint, texts};
use crate::admin_views::World;
use crate::harness::{WAIT, browser::Page, wait_until};

/// The numbers on the cards `ids`, as shown.
async fn cards(page: &mut Page, ids: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    for id in ids {
        let shown = texts(page, &format!("#{id} b")).await;
        assert_eq!(shown.len(), 1, "one card #{id}: {shown:?}");
        out.push(shown[0].clone());
    }
    out
}

/// The milliseconds an `avg-attempt` text (`< 1 ms`, `3 ms`, `1.2 s`) says.
fn millis(text: &str) -> f64 {
    let (n, unit) = text
        .trim_start_matches("< ")
        .split_once(' ')
        .unwrap_or_else(|| panic!("a number and a unit: {text:?}"));
    let n: f64 = n.parse().unwrap_or_else(|_| panic!("a number: {text:?}"));
    match unit {
        "ms" => n,
        "s" => n * 1000.0,
        _ => panic!("an attempt that took minutes: {text:?}"),
    }
}

const CARDS: [&str; 4] = ["endpoints-active", "endpoints-failing", "failed", "pending"];

browser_test!(
    the_summary_cards_count_only_the_partner_a_page_is_filtered_to,
    at(|w| format!("/dashboard?partner_id={}", w.partner_b)),
    |w, page, backend| {
        let (a, b) = (w.partner_a.as_str(), w.partner_b.as_str());
        assert_eq!(
            cards(&mut page, &CARDS).await,
            ["0", "2", "2", "0"],
            "B's two failing endpoints and their deliveries, not A's"
        );
        let scopes = texts(&mut page, "h2 .scope").await;
        assert!(
            !scopes.is_empty() && scopes.iter().all(|s| s == b),
            "each heading says whose cards they are: {scopes:?}"
        );
        assert_eq!(
            attributes(&mut page, "#endpoints-failing a", "href").await,
            [format!(
                "/dashboard/endpoints?status=failing&partner_id={b}"
            )],
            "a card's link keeps the filter"
        );

        open(&mut page, &w.app, &format!("/dashboard?partner_id={a}")).await;
        assert_eq!(cards(&mut page, &CARDS).await, ["1", "0", "0", "0"]);

        open(&mut page, &w.app, "/dashboard?partner_id=ptn_nobody").await;
        assert_eq!(cards(&mut page, &CARDS).await, ["0", "0", "0", "0"]);
        let alert = texts(&mut page, "[role=alert]").await;
        assert!(alert[0].contains("no partner"), "{alert:?}");

        for (partner, want) in [(a, ["1", "0", "0", "0"]), (b, ["0", "2", "2", "0"])] {
            let path = format!("/dashboard/endpoints?partner_id={partner}");
            open(&mut page, &w.app, &path).await;
            assert_eq!(
                cards(&mut page, &CARDS).await,
                want,
                "the endpoints page's cards follow its partner filter"
            );
        }
        open(&mut page, &w.app, "/dashboard").await;
        assert_eq!(
            cards(&mut page, &CARDS).await,
            ["1", "2", "2", "0"],
            "unfiltered: everyone"
        );
    }
);

browser_test!(
    times_read_relative_and_keep_the_exact_utc_time,
    at(|w| format!("/dashboard?partner_id={}", w.partner_b)),
    |w, page, backend| {
        // B's deliveries wait an hour for their retry: a relative time
        // that keeps the exact one.
        let next = format!("tr[data-endpoint={}] td.next-attempt time", json!(w.ep_b));
        let shown = texts(&mut page, &next).await;
        assert!(
            shown.len() == 1 && shown[0].starts_with("in "),
            "the next attempt is ahead: {shown:?}"
        );
        let exact = attributes(&mut page, &next, "datetime").await;
        let title = attributes(&mut page, &next, "title").await;
        assert!(
            exact[0].ends_with('Z') && title[0].ends_with(" UTC"),
            "{exact:?} {title:?}"
        );
        assert_eq!(
            exact[0][..19].replace('T', " "),
            title[0][..19],
            "the tooltip is the same instant"
        );
        open_endpoint(&mut page, &w.app, &w.ep_a).await;
        let started = texts(&mut page, "#attempts td.started time").await;
        assert!(
            started.len() == 1 && (started[0] == "now" || started[0].ends_with(" ago")),
            "{started:?}"
        );
    }
);

browser_test!(
    the_attempt_average_is_measured_from_the_attempts_made,
    at(|w| format!("/dashboard?partner_id={}", w.partner_a)),
    |w, page, backend| {
        // The receiver answers within milliseconds; the endpoint actor's
        // own average starts from the 10 s timeout and showed seconds.
        let row = format!("tr[data-endpoint={}] td.avg-attempt", json!(w.ep_a));
        let avg = texts(&mut page, &row).await;
        assert!(
            millis(&avg[0]) < 1000.0,
            "the average of the one attempt made: {avg:?}"
        );
        let why = attributes(&mut page, &format!("{row} span"), "title").await;
        assert_eq!(why, ["the one attempt sent in the last hour"]);
        open_endpoint(&mut page, &w.app, &w.ep_a).await;
        let avg = texts(&mut page, "#avg-attempt > span").await;
        assert!(millis(&avg[0]) < 1000.0, "the endpoint page too: {avg:?}");
    }
);

/// The ids in the rows of `table` (`data-<what>`), then the page behind
/// its `rel` link, if it has one.
async fn ids_then(page: &mut Page, table: &str, what: &str, rel: &str) -> (Vec<String>, bool) {
    let rows = format!("#{table} tr[data-{what}]");
    let ids = attributes(page, &rows, &format!("data-{what}")).await;
    let link = format!("#{table}-pages a[rel={rel}]");
    let there = !attributes(page, &link, "href").await.is_empty();
    if there {
        click(page, &link).await;
    }
    (ids, there)
}

/// Walks `table` from the page open now to its last page, then back to
/// its first: every row once, in order, and the first page again.
async fn walk(page: &mut Page, table: &str, what: &str) -> Vec<String> {
    let mut all = Vec::new();
    let mut pages = Vec::new();
    loop {
        let (ids, more) = ids_then(page, table, what, "next").await;
        all.extend(ids.clone());
        pages.push(ids);
        if !more {
            break;
        }
    }
    assert!(pages.len() > 1, "{table}: more rows than one page");
    let mut back = Vec::new();
    loop {
        let (ids, more) = ids_then(page, table, what, "prev").await;
        back.push(ids);
        if !more {
            break;
        }
    }
    back.reverse();
    assert_eq!(back, pages, "{table}: going back shows the same pages");
    all
}

/// Ids of rows by a query with one `id` column.
async fn ids(w: &World, sql: &str) -> Vec<String> {
    use sea_orm::ConnectionTrait as _;
    let db = w.app.db();
    let stmt = sea_orm::Statement::from_string(db.get_database_backend(), sql);
    let rows = db.query_all_raw(stmt).await.expect("the query runs");
    rows.iter()
        .map(|r| r.try_get::<String>("", "id").expect("an id"))
        .collect()
}

browser_test!(
    the_endpoints_attempts_and_search_tables_page_through_in_a_stable_order,
    at(|_| "/dashboard".into()),
    |w, page, backend| {
        // More than a page of each, all at one instant (the test clock
        // stands still): only the ids keep the order.
        let (c, _) = w.app.another_partner("Gamma").await;
        for _ in 0..55 {
            w.app.endpoint_for(&c, &w.ok.url(), &["c.*"], 1).await;
        }
        for n in 0..55 {
            w.app.publish("a.more", json!({ "n": n })).await;
        }
        let sent = || async {
            let n = w
                .app
                .count("SELECT COUNT(*) AS n FROM delivery WHERE state = 'delivered'");
            (n.await == 56).then_some(())
        };
        wait_until(WAIT, sent)
            .await
            .expect("A's 56 deliveries are made");

        let listed = format!("/dashboard/endpoints?partner_id={c}&sort=partner");
        open(&mut page, &w.app, &listed).await;
        assert_eq!(cards(&mut page, &["endpoints-active"]).await, ["55"]);
        let walked = walk(&mut page, "endpoints", "endpoint").await;
        let order =
            format!("SELECT id FROM endpoint WHERE partner_id = '{c}' ORDER BY created_at, id");
        assert_eq!(
            walked,
            ids(&w, &order).await,
            "every endpoint once, in order"
        );

        open_endpoint(&mut page, &w.app, &w.ep_a).await;
        let walked = walk(&mut page, "attempts", "attempt").await;
        let order = format!(
            "SELECT a.id FROM attempt a JOIN delivery d ON d.id = a.delivery_id \
             WHERE d.endpoint_id = '{}' ORDER BY a.started_at DESC, a.id DESC",
            w.ep_a
        );
        assert_eq!(
            walked,
            ids(&w, &order).await,
            "every attempt once, newest first"
        );

        let search = format!("/dashboard/search?partner_id={}", w.partner_a);
        open(&mut page, &w.app, &search).await;
        let walked = walk(&mut page, "deliveries", "delivery").await;
        let order = format!(
            "SELECT id FROM delivery WHERE endpoint_id = '{}' ORDER BY created_at DESC, id DESC",
            w.ep_a
        );
        assert_eq!(
            walked,
            ids(&w, &order).await,
            "every delivery once, newest first"
        );
        let newest = texts(&mut page, "#deliveries-pages a.start").await;
        assert!(
            newest.is_empty(),
            "the first page has no way back to itself"
        );
    }
);
