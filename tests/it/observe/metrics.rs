//! `GET /metrics`: OpenMetrics text that counts events, deliveries and
//! attempts and shows the backlog; every metric the docs document, with
//! its type and labels; and no label that names one object.

use std::{
    collections::{BTreeMap, BTreeSet},
    time::Duration,
};

use serde_json::json;

use super::{
    exposition::{documented_metrics, families, family_of, looks_like_an_id, samples},
    one_failing_one_fine, one_failing_one_fine_event, scrape, scraped,
};
use crate::harness::{TestApp, WAIT};
use hookd_test_macros::both_backends;

#[both_backends]
async fn the_scrape_is_openmetrics_text_ending_in_eof(app: TestApp) {
    let operator = app.operator_key().await;
    let (status, content_type, text) = scrape(&app, &operator).await;
    assert_eq!(status, 200, "{text}");
    assert!(
        content_type.starts_with("application/openmetrics-text"),
        "{content_type}"
    );
    assert!(
        text.ends_with("# EOF\n"),
        "OpenMetrics ends with `# EOF`: {text}"
    );
}

#[both_backends]
async fn after_one_delivered_and_one_failed_attempt_each_metric_reads_its_row(app: TestApp) {
    let operator = app.operator_key().await;
    one_failing_one_fine(&app).await;
    #[rustfmt::skip]
        let expected = [
            ("hookd_events_ingested_total",                                                          1, "the one event"),
            ("hookd_deliveries_created_total",                                                       2, "one delivery per endpoint"),
            (r#"hookd_attempts_total{result="delivered",category="none",trigger="scheduled"}"#,      1, "the fine one's attempt"),
            (r#"hookd_attempts_total{result="failed",category="http_status",trigger="scheduled"}"#, 1, "the broken one's attempt"),
            ("hookd_attempt_duration_seconds_count",                                                 2, "every attempt is timed"),
            (r#"hookd_deliveries_waiting{state="failed"}"#,                                          1, "the broken one's retry waits"),
            (r#"hookd_deliveries_waiting{state="pending"}"#,                                         0, "nothing else waits"),
            (r#"hookd_deliveries_waiting{state="delivering"}"#,                                      0, "nothing is in flight"),
            ("hookd_outbox_unpublished",                                                             0, "the event was fanned out"),
        ];
    for (name, value, why) in expected {
        assert_eq!(app.metric(&operator, name).await, value, "{name}: {why}");
    }
}

/// One event delivered to one endpoint, failed at another, whose waiting
/// retry is then cancelled (the endpoint stopped subscribing): every labelled
/// family has a sample. Returns (that endpoint, the fine one, the event).
async fn one_of_each_outcome(app: &TestApp) -> (String, String, String) {
    let partner_key = app.partner_key().await;
    let (broken, fine, event) = one_failing_one_fine_event(app).await;
    let path = format!("/v1/endpoints/{broken}");
    let (status, body, _) = app
        .request(
            "PATCH",
            &path,
            &partner_key,
            Some(&json!({"event_types": ["other.type"]})),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    app.advance(Duration::from_secs(60));
    app.wait_for_state(&event, &broken, "cancelled", WAIT).await;
    (broken, fine, event)
}

#[both_backends]
async fn every_metric_the_docs_document_is_scraped_with_its_type_and_labels(app: TestApp) {
    one_of_each_outcome(&app).await;
    let text = scraped(&app).await;
    let documented = documented_metrics();
    assert!(
        documented.len() >= 20,
        "docs/metrics.md's metrics section was not found whole: {documented:?}"
    );
    let typed = families(&text);
    let mut family_of_documented = BTreeMap::new();
    for name in documented.keys() {
        let family = match name.strip_suffix("_total") {
            Some(counter) => {
                assert_eq!(
                    typed.get(counter).map(String::as_str),
                    Some("counter"),
                    "docs/metrics.md documents `{name}`: the scrape has no counter `{counter}`:\n{text}"
                );
                counter
            }
            None => {
                assert!(
                    typed.contains_key(name.as_str()),
                    "docs/metrics.md documents `{name}`: the scrape has no `# TYPE {name}`:\n{text}"
                );
                name.as_str()
            }
        };
        family_of_documented.insert(family.to_string(), name.clone());
    }
    for family in typed.keys() {
        assert!(
            family_of_documented.contains_key(family),
            "the scrape has `{family}`, which docs/metrics.md does not document"
        );
    }
    for sample in samples(&text) {
        let family = family_of(&sample.name, &typed)
            .unwrap_or_else(|| panic!("the sample `{}` has no `# TYPE`:\n{text}", sample.name));
        let labels: BTreeSet<String> = sample
            .labels
            .keys()
            .filter(|k| *k != "le")
            .cloned()
            .collect();
        let name = &family_of_documented[family];
        assert_eq!(
            labels, documented[name],
            "`{}` carries the labels {labels:?}; docs/metrics.md documents `{name}` with {:?}",
            sample.name, documented[name]
        );
    }
}

#[both_backends]
async fn no_metric_label_carries_an_id_or_a_url(app: TestApp) {
    let (broken, fine, event) = one_of_each_outcome(&app).await;
    let text = scraped(&app).await;
    let known = [&app.partner_id, &broken, &fine, &event];
    let mut labelled = 0;
    let mut named = Vec::new();
    for sample in samples(&text) {
        // The one family that names objects, so that an alert can: one
        // series per failing endpoint, at most `FAILING_SERIES` of them.
        if sample.name == "hookd_endpoint_failing_seconds" {
            named.push(sample.labels["endpoint"].clone());
            continue;
        }
        for (key, value) in &sample.labels {
            labelled += 1;
            assert!(
                !looks_like_an_id(value) && !known.iter().any(|id| value.contains(id.as_str())),
                "`{}` has a label {key}=\"{value}\" that names one object:\n{text}",
                sample.name
            );
        }
    }
    assert_eq!(
        named,
        std::slice::from_ref(&broken),
        "only the failing endpoint is named, by hookd_endpoint_failing_seconds:\n{text}"
    );
    assert!(named.len() as u64 <= hookd::metrics::FAILING_SERIES);
    assert!(
        text.contains("hookd_deliveries_cancelled_total{reason="),
        "the cancellation is in the scrape, labelled:\n{text}"
    );
    assert!(
        labelled > 20,
        "the scrape has labelled samples to check:\n{text}"
    );
}
