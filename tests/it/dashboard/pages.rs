//! Each dashboard page shows what it names, read in a real browser: the
//! overview's totals and charts, the endpoints filtered and sorted, an
//! endpoint's attempts and health, a delivery's attempts, and search.

use std::{collections::BTreeSet, time::Duration};

use hookd::domain::{clock::Clock as _, event::format_time};
use serde_json::json;

use super::{attributes, click, open, screenshot, signed_in, submit, texts, world_at};
use crate::admin_views::World;
use crate::harness::{
    Backend, WAIT,
    browser::{Browser, Page},
    receiver::{Receiver, Reply},
    spawn_app_with, wait_until,
};

const CIRCUIT_OPENS_AT_ONCE: (&str, &str) = ("HOOKD_CIRCUIT__FAILURE_THRESHOLD", "1");

fn set(items: &[&String]) -> BTreeSet<String> {
    items.iter().map(|s| s.to_string()).collect()
}

/// Clicks the link in the table row of the `what` `id`
/// (`tr[data-<what>=id] a`) and checks that it leads to the page `to`.
async fn click_row_link(page: &mut Page, what: &str, id: &str, to: &str) {
    let link = format!("tr[data-{what}={}] a", json!(id));
    click(page, &link).await;
    assert_eq!(page.path().await, to, "the {what} row links to its page");
}

/// The numbers the bars or points of `selector` carry in their titles
/// (`14:02 UTC: 3 delivered`), summed.
async fn sum_of_titles(page: &mut Page, selector: &str) -> f64 {
    texts(page, &format!("{selector} > title"))
        .await
        .iter()
        .map(|t| {
            let value = t.split(": ").nth(1).and_then(|v| v.split(' ').next());
            value
                .and_then(|v| v.parse::<f64>().ok())
                .unwrap_or_else(|| panic!("a number in the title {t:?}"))
        })
        .sum()
}

browser_test!(
    the_overview_charts_the_last_hours_attempts_latency_and_backlog,
    at(|_| "/".into()),
    |w, page, backend| {
        // The next minute's backlog sample, as the health sweep takes it.
        w.app.advance(Duration::from_secs(60));
        let shared = &w.app.running.shared;
        hookd::delivery::health_sweep::take_sample(shared, w.app.clock.now_ms())
            .await
            .expect("a sample");
        open(&mut page, &w.app, "/dashboard").await;

        let card = |id: &str| format!("#{id} b");
        for (id, n) in [
            ("endpoints-active", "1"),
            ("endpoints-failing", "2"),
            ("failed", "2"),
        ] {
            assert_eq!(texts(&mut page, &card(id)).await, [n], "the {id} total");
        }

        let svgs = attributes(&mut page, "#charts svg", "id").await;
        assert_eq!(svgs.len(), 8, "four charts of each period: {svgs:?}");
        for (selector, total) in [
            ("#chart-attempts-hour rect.bar.delivered", 1.0),
            ("#chart-attempts-hour rect.bar.failed", 2.0),
            ("#chart-attempts-day rect.bar.delivered", 1.0),
            ("#chart-attempts-day rect.bar.failed", 2.0),
        ] {
            assert_eq!(
                sum_of_titles(&mut page, selector).await,
                total,
                "the bars of {selector} add up to the attempts made"
            );
        }
        let p50 = texts(&mut page, "#chart-latency-hour circle.p50 > title").await;
        assert_eq!(p50.len(), 1, "one minute had a delivery: {p50:?}");
        assert!(p50[0].ends_with(" ms p50"), "{p50:?}");
        let waiting = texts(&mut page, "#chart-waiting-hour circle.failed > title").await;
        assert!(
            waiting.last().is_some_and(|t| t.ends_with(": 2 failed")),
            "the sample of this minute counts the two deliveries waiting to retry: {waiting:?}"
        );
        let alt = texts(&mut page, "#chart-attempts-hour desc").await;
        assert!(
            alt[0].contains("1 delivered in all") && alt[0].contains("2 failed in all"),
            "the text alternative says what the chart shows: {alt:?}"
        );
        let labels = texts(&mut page, "#chart-latency-hour .axis-label").await;
        assert_eq!(labels, ["latency", "time (UTC)"], "axis labels");
        screenshot(&mut page, backend, "overview").await;
    }
);

/// The endpoints the endpoints page lists for this query, in order.
async fn listed(page: &mut Page, w: &World, query: &str) -> Vec<String> {
    open(page, &w.app, &format!("/dashboard/endpoints?{query}")).await;
    attributes(page, "#endpoints tr[data-endpoint]", "data-endpoint").await
}

/// The operator views' world with both failing endpoints' circuits saved
/// open, signed in at the endpoints page; `None` without a browser.
async fn endpoints_page(backend: Backend) -> Option<(World, Browser, Page)> {
    let at = |_: &World| "/dashboard/endpoints".into();
    let (w, browser, page) = world_at(backend, &[CIRCUIT_OPENS_AT_ONCE], at).await?;
    let open_circuits = || async {
        let n = w
            .app
            .count("SELECT COUNT(*) AS n FROM endpoint WHERE circuit_open_until IS NOT NULL")
            .await;
        (n == 2).then_some(())
    };
    wait_until(WAIT, open_circuits)
        .await
        .expect("both failing endpoints' circuits are saved open");
    Some((w, browser, page))
}

browser_test!(
    the_endpoints_page_filters_by_status_partner_circuit_and_backlog,
    from(endpoints_page),
    |w, page, backend| {
        let failing = set(&[&w.ep_b, &w.ep_drop]);
        let as_set = |v: Vec<String>| v.into_iter().collect::<BTreeSet<_>>();

        let rows = listed(&mut page, &w, "status=failing").await;
        assert_eq!(as_set(rows), failing, "exactly the failing endpoints");
        let active = listed(&mut page, &w, "status=active").await;
        assert_eq!(active, std::slice::from_ref(&w.ep_a), "the one succeeding");
        assert!(listed(&mut page, &w, "status=disabled").await.is_empty());
        let rows = listed(&mut page, &w, &format!("partner_id={}", w.partner_b)).await;
        assert_eq!(as_set(rows), failing, "partner B's endpoints");
        assert_eq!(as_set(listed(&mut page, &w, "circuit=open").await), failing);
        assert_eq!(as_set(listed(&mut page, &w, "backlog=1").await), failing);
    }
);

browser_test!(
    the_endpoints_page_lists_failing_endpoints_first_or_sorts_them_by_partner,
    from(endpoints_page),
    |w, page, backend| {
        let by_failing = listed(&mut page, &w, "").await;
        assert_eq!(by_failing.len(), 3, "{by_failing:?}");
        assert_eq!(by_failing[2], w.ep_a, "failing ones first: {by_failing:?}");
        let by_partner = listed(&mut page, &w, "sort=partner").await;
        let a_first = w.partner_a < w.partner_b;
        assert_eq!(
            by_partner.first() == Some(&w.ep_a),
            a_first,
            "sorted by partner id: {by_partner:?}"
        );
        let statuses = texts(&mut page, "#endpoints tr[data-endpoint] .status").await;
        assert_eq!(statuses.iter().filter(|s| *s == "failing").count(), 2);
    }
);

browser_test!(
    the_endpoints_page_links_each_endpoint_to_its_own_page,
    from(endpoints_page),
    |w, page, backend| {
        listed(&mut page, &w, "sort=backlog").await;
        screenshot(&mut page, backend, "endpoints").await;
        let to = format!("/dashboard/endpoints/{}", w.ep_b);
        click_row_link(&mut page, "endpoint", &w.ep_b, &to).await;
    }
);

browser_test!(
    the_endpoint_page_shows_its_health_circuit_and_attempts_with_a_redacted_excerpt,
    |backend: Backend| async move {
        let app = spawn_app_with(backend, &[CIRCUIT_OPENS_AT_ONCE]).await;
        let operator = app.operator_key().await;
        let receiver = Receiver::start().await;
        let body = r#"{"error":"database is down","api_key":"k3y-abc-123-secret"}"#;
        receiver.set_default(Reply::with_body(500, body));
        let (ep, _) = app.endpoint(&receiver.url()).await;
        let event = app.publish("x.one", json!({"n": 1})).await;
        app.wait_for_state(&event, &ep, "failed", WAIT).await;
        let saved_open = || async {
            let sql = "SELECT COUNT(*) AS n FROM endpoint WHERE circuit_open_until IS NOT NULL";
            (app.count(sql).await == 1).then_some(())
        };
        wait_until(WAIT, saved_open)
            .await
            .expect("the open circuit is saved");

        let (_browser, mut page) = signed_in(&app, &operator).await;
        open(&mut page, &app, &format!("/dashboard/endpoints/{ep}")).await;
        assert_eq!(texts(&mut page, "#status").await, ["failing"]);
        assert_ne!(texts(&mut page, "#failing-since").await, ["–"]);
        let timeline = texts(&mut page, "#timeline li").await;
        assert!(
            timeline.iter().any(|t| t.contains("started failing")),
            "{timeline:?}"
        );
        assert_eq!(texts(&mut page, "#circuit-shown .circuit").await, ["open"]);

        let row = "#attempts tr[data-attempt]";
        assert_eq!(
            texts(&mut page, &format!("{row} .category")).await,
            ["http_status"]
        );
        assert_eq!(
            texts(&mut page, &format!("{row} .status-code")).await,
            ["500"]
        );
        let latency = texts(&mut page, &format!("{row} .latency")).await;
        assert!(latency[0].ends_with(" ms"), "{latency:?}");
        let excerpt = texts(&mut page, &format!("{row} .excerpt")).await;
        assert!(excerpt[0].contains("database is down"), "{excerpt:?}");
        assert!(
            excerpt[0].contains("[redacted]") && !excerpt[0].contains("k3y-abc-123-secret"),
            "the key in the answer is redacted: {excerpt:?}"
        );
        let forms = attributes(&mut page, "form[method=post][id]", "id").await;
        assert_eq!(
            forms,
            ["disable", "recover", "rotate", "expire-previous", "test"],
            "no enable form for an active endpoint"
        );
        screenshot(&mut page, backend, "endpoint").await;
    }
);

/// The deliveries a search page lists.
async fn found(page: &mut Page, w: &World, query: &[(&str, &str)]) -> BTreeSet<String> {
    let query = serde_urlencoded::to_string(query).expect("a query");
    open(page, &w.app, &format!("/dashboard/search?{query}")).await;
    attributes(page, "#deliveries tr[data-delivery]", "data-delivery")
        .await
        .into_iter()
        .collect()
}

browser_test!(
    the_delivery_page_lists_its_attempts_with_a_replay_form,
    at(|w| format!("/dashboard/deliveries/{}", w.d_b)),
    |w, page, backend| {
        assert_eq!(texts(&mut page, "#state").await, ["failed"]);
        let attempts = w.app.attempts(&w.ev_b, &w.ep_b).await;
        let rows = attributes(&mut page, "#attempts tr[data-attempt]", "data-attempt").await;
        let ids: Vec<String> = attempts.iter().map(|a| a.id.clone()).collect();
        assert_eq!(rows, ids, "every attempt of the delivery, in order");
        assert_eq!(texts(&mut page, "#attempts .status-code").await, ["503"]);
        assert_eq!(
            texts(&mut page, "#attempts .category").await,
            ["http_status"]
        );
        let urls = texts(&mut page, "#attempts .url code").await;
        assert!(
            urls.len() == 1 && urls[0].starts_with("http://127.0.0.1:"),
            "the URL the attempt went to: {urls:?}"
        );
        let next = texts(&mut page, "#attempts .next-retry").await;
        assert!(
            next.len() == 1 && next[0] != "–",
            "the failed attempt shows the retry it scheduled: {next:?}"
        );
        assert_eq!(
            attributes(&mut page, "form#replay", "method").await,
            ["post"]
        );
        screenshot(&mut page, backend, "delivery").await;
    }
);

browser_test!(
    search_finds_deliveries_by_event_delivery_partner_and_time,
    at(|_| "/dashboard".into()),
    |w, page, backend| {
        let b_deliveries = set(&[&w.d_b, &w.d_drop]);
        let t_b = format_time(w.t_b);
        assert_eq!(
            found(&mut page, &w, &[("event_id", &w.ev_b)]).await,
            b_deliveries
        );
        assert_eq!(
            found(&mut page, &w, &[("event_id", &w.ev_a)]).await,
            set(&[&w.d_a])
        );
        assert_eq!(
            found(&mut page, &w, &[("delivery_id", &w.d_a)]).await,
            set(&[&w.d_a])
        );
        let by_partner = [("partner_id", w.partner_b.as_str())];
        assert_eq!(found(&mut page, &w, &by_partner).await, b_deliveries);
        assert_eq!(
            found(&mut page, &w, &[("until", &t_b)]).await,
            set(&[&w.d_a])
        );
        assert_eq!(found(&mut page, &w, &[("since", &t_b)]).await, b_deliveries);
        let everything = found(&mut page, &w, &[]).await;
        assert_eq!(everything.len(), 3, "no filter: the newest deliveries");
    }
);

browser_test!(
    search_with_a_time_it_cannot_read_finds_nothing_and_says_which,
    at(|_| "/dashboard".into()),
    |w, page, backend| {
        assert!(
            found(&mut page, &w, &[("since", "yesterday")])
                .await
                .is_empty()
        );
        let alert = texts(&mut page, "[role=alert]").await;
        assert!(
            alert[0].contains("since"),
            "a time that cannot be read: {alert:?}"
        );
    }
);

browser_test!(
    the_search_form_searches_and_links_each_delivery_to_its_page,
    at(|_| "/dashboard/search".into()),
    |w, page, backend| {
        let fill = format!(
            "document.querySelector('#search [name=event_id]').value = {}",
            json!(w.ev_b)
        );
        submit(&mut page, "search", &fill).await;
        let rows = attributes(&mut page, "#deliveries tr[data-delivery]", "data-delivery").await;
        assert_eq!(rows.len(), 2, "the form searches: {rows:?}");
        screenshot(&mut page, backend, "search").await;
        let to = format!("/dashboard/deliveries/{}", w.d_b);
        click_row_link(&mut page, "delivery", &w.d_b, &to).await;
    }
);
