//! Delivery: signed requests, the response policy, the retry schedule on the
//! manual clock, timeouts, concurrency, the circuit breaker and the fanout.

use std::time::Duration;

use hookd::{domain::clock::Clock as _, store::entity::attempt};
use serde_json::json;

use crate::harness::{
    Backend, TestApp, quiesce,
    receiver::{Receiver, Reply},
    spawn_app, spawn_app_with,
};
use crate::on_both_backends;

const WAIT: Duration = Duration::from_secs(10);

/// `usage.finalized` data (its latest version, 2) numbered `n`.
fn usage(n: u32) -> serde_json::Value {
    json!({"n": n, "customer_id": "cus_204", "currency": "USD", "final_cost": "1.274800",
        "usage_id": format!("usage_{n}"), "model": "gpt-4o-mini", "input_tokens": 41200, "output_tokens": 7013})
}

/// No further request arrives within a short while (the engine polls every 50 ms).
async fn stays_at(receiver: &Receiver, n: usize) {
    actix_rt::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(receiver.count(), n, "no request should have arrived yet");
}

async fn attempts_when(
    app: &TestApp,
    event: &str,
    endpoint: &str,
    n: usize,
) -> Vec<attempt::Model> {
    crate::harness::wait_until(WAIT, || async {
        let a = app.attempts(event, endpoint).await;
        (a.len() >= n).then_some(a)
    })
    .await
    .unwrap_or_else(|| panic!("{n} attempts were not recorded"))
}

on_both_backends!(
    a_delivery_is_signed_over_the_exact_bytes_sent,
    |backend: Backend| async move {
        let app = spawn_app(backend).await;
        let receiver = Receiver::start().await;
        let (endpoint, secret) = app.endpoint(&format!("{}/hooks", receiver.url())).await;
        let event = app
            .publish(
                "usage.finalized",
                json!({"final_cost": "1.274800", "currency": "USD", "customer_id": "cus_204",
                    "usage_id": "usage_9182", "model": "gpt-4o-mini", "input_tokens": 41200, "output_tokens": 7013}),
            )
            .await;

        let got = receiver.wait_for(1, WAIT).await.expect("the event arrives");
        let r = &got[0];
        assert_eq!(r.method, "POST");
        assert_eq!(r.path, "/hooks");
        assert_eq!(r.header("content-type"), Some("application/json"));
        assert_eq!(
            r.header("webhook-id"),
            Some(event.as_str()),
            "webhook-id is the event id"
        );
        let timestamp = r.header("webhook-timestamp").expect("a timestamp");
        let signature = r.header("webhook-signature").expect("a signature");
        hookd::signing::verify(
            &secret,
            &event,
            timestamp,
            signature,
            &r.body,
            app.clock.now_ms() / 1000,
            300,
        )
        .expect("the signature verifies with the endpoint's secret");
        let envelope: serde_json::Value = serde_json::from_slice(&r.body).expect("a JSON envelope");
        assert_eq!(envelope["event_id"], event.as_str());
        assert_eq!(envelope["partner_id"], app.partner_id.as_str());
        assert_eq!(envelope["data"]["final_cost"], "1.274800");

        assert_eq!(
            app.wait_for_state(&event, &endpoint, "delivered", WAIT)
                .await,
            1
        );
        let attempts = app.attempts(&event, &endpoint).await;
        assert_eq!(attempts.len(), 1);
        assert_eq!(attempts[0].status_code, Some(200));
        assert_eq!(attempts[0].trigger, "scheduled");
        assert_eq!(
            attempts[0].remote_addr.as_deref(),
            Some(receiver.addr().to_string().as_str()),
            "the dialled address is recorded"
        );
    }
);

on_both_backends!(
    a_server_error_is_retried_with_the_same_id_and_body,
    |backend: Backend| async move {
        let app = spawn_app(backend).await;
        let receiver = Receiver::start().await;
        receiver.script([Reply::status(503)]);
        let (endpoint, secret) = app.endpoint(&receiver.url()).await;
        let event = app.publish("a.b", json!({"n": 1})).await;

        receiver.wait_for(1, WAIT).await.expect("the first attempt");
        app.wait_for_state(&event, &endpoint, "failed", WAIT).await;
        stays_at(&receiver, 1).await;
        app.advance(Duration::from_secs(7));
        let got = receiver
            .wait_for(2, WAIT)
            .await
            .expect("the retry after the 5 s step");
        assert_eq!(
            got[0].body, got[1].body,
            "the body is byte-identical across retries"
        );
        assert_eq!(got[0].header("webhook-id"), got[1].header("webhook-id"));
        assert_ne!(
            got[0].header("webhook-timestamp"),
            got[1].header("webhook-timestamp"),
            "each attempt is signed anew"
        );
        let r = &got[1];
        hookd::signing::verify(
            &secret,
            &event,
            r.header("webhook-timestamp").unwrap_or_default(),
            r.header("webhook-signature").unwrap_or_default(),
            &r.body,
            app.clock.now_ms() / 1000,
            300,
        )
        .expect("the retry's signature verifies");
        assert_eq!(
            app.wait_for_state(&event, &endpoint, "delivered", WAIT)
                .await,
            2
        );
        let attempts = app.attempts(&event, &endpoint).await;
        assert_eq!(attempts[0].status_code, Some(503));
        assert_eq!(attempts[0].error_category.as_deref(), Some("http_status"));
    }
);

on_both_backends!(retry_after_is_honoured, |backend: Backend| async move {
    let app = spawn_app(backend).await;
    let receiver = Receiver::start().await;
    receiver.script([Reply::retry_after(429, "120")]);
    let (endpoint, _) = app.endpoint(&receiver.url()).await;
    let event = app.publish("a.b", json!({})).await;
    receiver.wait_for(1, WAIT).await.expect("the first attempt");
    app.wait_for_state(&event, &endpoint, "failed", WAIT).await;
    app.advance(Duration::from_secs(10));
    stays_at(&receiver, 1).await;
    app.advance(Duration::from_secs(115));
    receiver
        .wait_for(2, WAIT)
        .await
        .expect("the retry after Retry-After");
    app.wait_for_state(&event, &endpoint, "delivered", WAIT)
        .await;
});

on_both_backends!(
    a_receiver_that_always_fails_gets_the_whole_schedule_then_dead,
    |backend: Backend| async move {
        let app = spawn_app_with(
            backend,
            &[
                ("HOOKD_DELIVERY__JITTER", "0"),
                ("HOOKD_CIRCUIT__FAILURE_THRESHOLD", "100"),
            ],
        )
        .await;
        let receiver = Receiver::start().await;
        receiver.set_default(Reply::status(500));
        let (endpoint, _) = app.endpoint(&receiver.url()).await;
        let event = app.publish("a.b", json!({})).await;
        let schedule = [5u64, 300, 1800, 7200, 18000, 36000, 50400, 72000, 86400];
        for (i, step) in schedule.iter().enumerate() {
            attempts_when(&app, &event, &endpoint, i + 1).await;
            app.advance(Duration::from_secs(*step));
        }
        assert_eq!(
            app.wait_for_state(&event, &endpoint, "dead", WAIT).await,
            10,
            "ten attempts, then dead"
        );
        let attempts = app.attempts(&event, &endpoint).await;
        let gaps: Vec<i64> = attempts
            .windows(2)
            .map(|w| (w[1].started_at - w[0].started_at) / 1000)
            .collect();
        assert_eq!(
            gaps,
            schedule.iter().map(|s| *s as i64).collect::<Vec<_>>(),
            "attempts follow the Standard Webhooks schedule"
        );
        assert_eq!(receiver.count(), 10);
    }
);

on_both_backends!(
    a_delivery_past_its_maximum_age_is_dead,
    |backend: Backend| async move {
        let app = spawn_app_with(
            backend,
            &[
                ("HOOKD_DELIVERY__JITTER", "0"),
                ("HOOKD_DELIVERY__MAX_AGE", "1h"),
            ],
        )
        .await;
        let receiver = Receiver::start().await;
        receiver.set_default(Reply::status(500));
        let (endpoint, _) = app.endpoint(&receiver.url()).await;
        let event = app.publish("a.b", json!({})).await;
        for (i, step) in [5u64, 300, 1800].iter().enumerate() {
            attempts_when(&app, &event, &endpoint, i + 1).await;
            app.advance(Duration::from_secs(*step));
        }
        assert_eq!(
            app.wait_for_state(&event, &endpoint, "dead", WAIT).await,
            4,
            "the 2 h retry would pass the 1 h maximum age"
        );
    }
);

on_both_backends!(
    gone_disables_the_endpoint_and_tells_the_partner_elsewhere,
    |backend: Backend| async move {
        let app = spawn_app(backend).await;
        let gone = Receiver::start().await;
        gone.set_default(Reply::status(410));
        let other = Receiver::start().await;
        let (gone_id, _) = app
            .endpoint_for(&app.partner_id, &gone.url(), &["a.b"], 8)
            .await;
        let (_, _) = app
            .endpoint_for(&app.partner_id, &other.url(), &["endpoint.*"], 8)
            .await;
        let event = app.publish("a.b", json!({})).await;
        gone.wait_for(1, WAIT).await.expect("the attempt");
        // Held by the endpoint the 410 disabled: paused, not waiting.
        app.wait_for_state(&event, &gone_id, "paused", WAIT).await;
        let status = crate::harness::wait_until(WAIT, || async {
            let e = hookd::store::endpoints::find_for_delivery(app.db(), &gone_id)
                .await
                .expect("query")
                .expect("endpoint");
            (e.status == hookd::store::endpoints::EndpointStatus::Disabled).then_some(e)
        })
        .await
        .expect("the endpoint is disabled after 410");
        assert!(
            status
                .disabled_reason
                .as_deref()
                .is_some_and(|r| r.contains("410")),
            "{:?}",
            status.disabled_reason
        );

        let notice = other
            .wait_for(1, WAIT)
            .await
            .expect("the partner hears of it on another endpoint");
        let body: serde_json::Value = serde_json::from_slice(&notice[0].body).expect("json");
        assert_eq!(body["type"], "endpoint.disabled");
        assert_eq!(body["data"]["endpoint_id"], gone_id.as_str());

        app.publish("a.b", json!({})).await;
        app.advance(Duration::from_secs(600));
        stays_at(&gone, 1).await;
    }
);

on_both_backends!(
    redirects_are_never_followed,
    |backend: Backend| async move {
        let app = spawn_app(backend).await;
        let target = Receiver::start().await;
        let redirecting = Receiver::start().await;
        redirecting.set_default(Reply::Status {
            code: 302,
            headers: vec![("location".into(), target.url())],
            body: vec![],
        });
        let (endpoint, _) = app.endpoint(&redirecting.url()).await;
        let event = app.publish("a.b", json!({})).await;
        let attempts = attempts_when(&app, &event, &endpoint, 1).await;
        assert_eq!(attempts[0].error_category.as_deref(), Some("redirect"));
        assert!(
            attempts[0]
                .error_detail
                .as_deref()
                .is_some_and(|d| d.contains(&target.url())),
            "the Location is shown: {:?}",
            attempts[0].error_detail
        );
        stays_at(&target, 0).await;
    }
);

on_both_backends!(
    stalls_and_dropped_connections_are_retryable_failures,
    |backend: Backend| async move {
        let app = spawn_app(backend).await;
        let cases = [
            (Reply::StallHeaders(Duration::from_secs(8)), "timeout"),
            (Reply::StallBody(Duration::from_secs(8)), "timeout"),
            (Reply::Drop, "connect"),
        ];
        let mut pending = Vec::new();
        for (reply, category) in cases {
            let r = Receiver::start().await;
            r.set_default(reply.clone());
            let (endpoint, _) = app.endpoint_for(&app.partner_id, &r.url(), &[], 8).await;
            pending.push((r, endpoint, category, reply));
        }
        let event = app.publish("a.b", json!({})).await;
        for (_r, endpoint, category, reply) in &pending {
            let a = attempts_when(&app, &event, endpoint, 1).await;
            assert_eq!(
                a[0].error_category.as_deref(),
                Some(*category),
                "{reply:?}: {:?}",
                a[0].error_detail
            );
            assert!(
                a[0].latency_ms.unwrap_or(0) < 4000,
                "{reply:?} is cut off by the 2 s request timeout"
            );
            app.wait_for_state(&event, endpoint, "failed", WAIT).await;
        }
    }
);

on_both_backends!(
    an_endpoint_never_has_more_than_its_concurrency_in_flight,
    |backend: Backend| async move {
        let app = spawn_app(backend).await;
        let receiver = Receiver::start().await;
        receiver.set_default(Reply::Delay(
            Duration::from_millis(200),
            Box::new(Reply::status(200)),
        ));
        app.endpoint_for(&app.partner_id, &receiver.url(), &[], 2)
            .await;
        let event = json!({"type": "a.b", "partner_id": app.partner_id, "data": {}});
        let (status, _) = app
            .post_events(&serde_json::Value::Array(vec![event; 8]))
            .await;
        assert_eq!(status, 201);
        let mut arrivals: Vec<_> = receiver
            .wait_for(8, WAIT)
            .await
            .expect("all arrive")
            .iter()
            .map(|r| r.at)
            .collect();
        arrivals.sort();
        for w in arrivals.windows(3) {
            assert!(
                w[2] - w[0] >= Duration::from_millis(180),
                "three requests overlapped within {:?}",
                w[2] - w[0]
            );
        }
    }
);

on_both_backends!(
    a_stalled_endpoint_does_not_slow_another,
    |backend: Backend| async move {
        let app = spawn_app(backend).await;
        let stalled = Receiver::start().await;
        stalled.set_default(Reply::StallHeaders(Duration::from_secs(8)));
        let fast = Receiver::start().await;
        app.endpoint_for(&app.partner_id, &stalled.url(), &[], 2)
            .await;
        app.endpoint_for(&app.partner_id, &fast.url(), &[], 2).await;
        let event = json!({"type": "a.b", "partner_id": app.partner_id, "data": {}});
        app.post_events(&serde_json::Value::Array(vec![event; 20]))
            .await;
        fast.wait_for(20, Duration::from_secs(2))
            .await
            .expect("the fast endpoint gets everything while the other stalls");
    }
);

on_both_backends!(
    an_open_circuit_spends_no_attempts,
    |backend: Backend| async move {
        let app = spawn_app_with(backend, &[("HOOKD_CIRCUIT__FAILURE_THRESHOLD", "2")]).await;
        let receiver = Receiver::start().await;
        receiver.set_default(Reply::status(500));
        let (endpoint, _) = app
            .endpoint_for(&app.partner_id, &receiver.url(), &[], 1)
            .await;
        let event = json!({"type": "a.b", "partner_id": app.partner_id, "data": {}});
        app.post_events(&serde_json::Value::Array(vec![event; 5]))
            .await;
        receiver
            .wait_for(2, WAIT)
            .await
            .expect("two failures open the circuit");
        stays_at(&receiver, 2).await;
        let untouched = app.count(&format!("SELECT COUNT(*) AS n FROM delivery WHERE endpoint_id = '{endpoint}' AND attempt_count = 0")).await;
        assert_eq!(
            untouched, 3,
            "deliveries behind an open circuit keep their attempts"
        );

        receiver.set_default(Reply::status(200));
        app.advance(Duration::from_secs(6));
        receiver
            .wait_for(5, WAIT)
            .await
            .expect("after the cool-down a probe succeeds and the rest follow");
        app.advance(Duration::from_secs(10));
        let done = crate::harness::wait_until(WAIT, || async {
        let n = app.count(&format!("SELECT COUNT(*) AS n FROM delivery WHERE endpoint_id = '{endpoint}' AND state = 'delivered'")).await;
        (n == 5).then_some(())
    })
    .await;
        assert!(done.is_some(), "every delivery ends delivered");
    }
);

on_both_backends!(
    the_fanout_reaches_only_subscribed_active_endpoints_of_the_events_partner,
    |backend: Backend| async move {
        let app = spawn_app(backend).await;
        let receiver = Receiver::start().await;
        let other_partner = hookd::store::partners::create(app.db(), None, "Other", 0)
            .await
            .expect("a partner");
        let url = receiver.url();
        let (usage, _) = app
            .endpoint_for(&app.partner_id, &url, &["usage.*"], 8)
            .await;
        let (balance, _) = app
            .endpoint_for(&app.partner_id, &url, &["balance.updated"], 8)
            .await;
        let (paused, _) = app.endpoint_for(&app.partner_id, &url, &[], 8).await;
        let (foreign, _) = app.endpoint_for(&other_partner.id, &url, &[], 8).await;
        hookd::store::endpoints::disable(app.db(), &paused, "paused for the test", 0)
            .await
            .expect("paused");
        let event = app
            .publish(
                "usage.finalized",
                json!({"customer_id": "cus_204", "currency": "USD", "final_cost": "1.274800",
                    "usage_id": "usage_9182", "model": "gpt-4o-mini", "input_tokens": 41200, "output_tokens": 7013}),
            )
            .await;
        receiver.wait_for(1, WAIT).await.expect("one delivery");
        stays_at(&receiver, 1).await;
        assert!(
            app.delivery(&event, &usage).await.is_some(),
            "the usage.* subscriber gets it"
        );
        for (name, id) in [
            ("balance", &balance),
            ("paused", &paused),
            ("other partner's", &foreign),
        ] {
            assert!(
                app.delivery(&event, id).await.is_none(),
                "the {name} endpoint must not get a delivery"
            );
        }
    }
);

on_both_backends!(
    a_loopback_destination_is_blocked_unless_allowed,
    |backend: Backend| async move {
        let app = spawn_app_with(backend, &[("HOOKD_EGRESS__ALLOW_CIDRS", "[]")]).await;
        let receiver = Receiver::start().await;
        let (endpoint, _) = app.endpoint(&receiver.url()).await;
        let event = app.publish("a.b", json!({})).await;
        let a = attempts_when(&app, &event, &endpoint, 1).await;
        assert_eq!(a[0].error_category.as_deref(), Some("blocked"));
        assert!(
            a[0].error_detail
                .as_deref()
                .is_some_and(|d| d.contains("127.0.0.1")),
            "{:?}",
            a[0].error_detail
        );
        stays_at(&receiver, 0).await;
    }
);

on_both_backends!(
    response_excerpts_are_small_and_redacted,
    |backend: Backend| async move {
        let app = spawn_app(backend).await;
        let receiver = Receiver::start().await;
        let body = format!(
            "error: token whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw rejected {}",
            "x".repeat(5000)
        );
        receiver.set_default(Reply::with_body(400, body));
        let (endpoint, _) = app.endpoint(&receiver.url()).await;
        let event = app.publish("a.b", json!({})).await;
        let a = attempts_when(&app, &event, &endpoint, 1).await;
        let excerpt = a[0].response_excerpt.clone().expect("an excerpt");
        assert!(excerpt.len() <= 1024, "excerpt of {} bytes", excerpt.len());
        assert!(
            excerpt.starts_with("error: token [redacted] rejected"),
            "{excerpt:.80}"
        );
    }
);

on_both_backends!(
    connections_to_an_endpoint_are_kept_alive,
    |backend: Backend| async move {
        let app = spawn_app(backend).await;
        let receiver = Receiver::start().await;
        app.endpoint_for(&app.partner_id, &receiver.url(), &[], 1)
            .await;
        for i in 0..5 {
            app.publish("a.b", json!({"i": i})).await;
            receiver.wait_for(i + 1, WAIT).await.expect("delivered");
        }
        assert_eq!(
            receiver.connections(),
            1,
            "five deliveries in turn share one kept-alive connection"
        );
    }
);

async fn set_status(app: &TestApp, endpoint: &str, status: &str) {
    use sea_orm::ConnectionTrait;
    let sql = format!("UPDATE endpoint SET status = '{status}' WHERE id = '{endpoint}'");
    app.db()
        .execute_unprepared(&sql)
        .await
        .expect("the status changes");
}

on_both_backends!(
    deliveries_held_by_a_disabled_endpoint_resume_only_within_their_maximum_age,
    |backend: Backend| async move {
        let app = spawn_app_with(
            backend,
            &[
                ("HOOKD_DELIVERY__MAX_AGE", "1h"),
                ("HOOKD_DELIVERY__JITTER", "0"),
            ],
        )
        .await;
        let receiver = Receiver::start().await;
        receiver.script([Reply::status(500), Reply::status(500)]);
        let (endpoint, _) = app.endpoint(&receiver.url()).await;
        for n in 0..2 {
            let event = app.publish("a.b", json!({"n": n})).await;
            app.wait_for_state(&event, &endpoint, "failed", WAIT).await;
        }

        set_status(&app, &endpoint, "disabled").await;
        app.advance(Duration::from_secs(600));
        stays_at(&receiver, 2).await;
        set_status(&app, &endpoint, "active").await;
        receiver
            .wait_for(4, WAIT)
            .await
            .expect("both held deliveries resume within their maximum age");
    }
);

on_both_backends!(
    a_delivery_held_past_its_maximum_age_is_dead_without_another_attempt,
    |backend: Backend| async move {
        let app = spawn_app_with(
            backend,
            &[
                ("HOOKD_DELIVERY__MAX_AGE", "1h"),
                ("HOOKD_DELIVERY__JITTER", "0"),
            ],
        )
        .await;
        let receiver = Receiver::start().await;
        receiver.script([Reply::status(500)]);
        let (endpoint, _) = app.endpoint(&receiver.url()).await;
        let event = app.publish("a.b", json!({})).await;
        app.wait_for_state(&event, &endpoint, "failed", WAIT).await;
        set_status(&app, &endpoint, "disabled").await;
        app.advance(Duration::from_secs(2 * 3600));
        set_status(&app, &endpoint, "active").await;
        assert_eq!(
            app.wait_for_state(&event, &endpoint, "dead", WAIT).await,
            1,
            "dead, with its one attempt"
        );
        assert_eq!(receiver.count(), 1, "no attempt after the maximum age");
    }
);

on_both_backends!(
    an_endpoint_rate_limit_spaces_its_requests,
    |backend: Backend| async move {
        use sea_orm::ConnectionTrait;
        let app = spawn_app(backend).await;
        let receiver = Receiver::start().await;
        let (endpoint, _) = app.endpoint(&receiver.url()).await;
        app.db()
            .execute_unprepared(&format!(
                "UPDATE endpoint SET rate_limit = 4 WHERE id = '{endpoint}'"
            ))
            .await
            .expect("rate limited");
        let event = json!({"type": "a.b", "partner_id": app.partner_id, "data": {}});
        app.post_events(&serde_json::Value::Array(vec![event; 10]))
            .await;
        receiver.wait_for(4, WAIT).await.expect("a burst of four");
        stays_at(&receiver, 4).await;
        app.advance(Duration::from_secs(1));
        receiver
            .wait_for(8, WAIT)
            .await
            .expect("four more a second later");
        stays_at(&receiver, 8).await;
        app.advance(Duration::from_secs(1));
        receiver.wait_for(10, WAIT).await.expect("the rest");
    }
);

on_both_backends!(
    finished_deliveries_and_events_past_retention_are_deleted,
    |backend: Backend| async move {
        let app = spawn_app_with(
            backend,
            &[
                ("HOOKD_RETENTION__DELIVERIES", "1d"),
                ("HOOKD_RETENTION__EVENTS", "1d"),
                ("HOOKD_RETENTION__SWEEP_INTERVAL", "100ms"),
            ],
        )
        .await;
        let receiver = Receiver::start().await;
        receiver.script([Reply::status(200), Reply::status(500)]);
        let (endpoint, _) = app.endpoint(&receiver.url()).await;
        let done = app.publish("a.b", json!({"n": 1})).await;
        app.wait_for_state(&done, &endpoint, "delivered", WAIT)
            .await;
        let pending = app.publish("a.b", json!({"n": 2})).await;
        app.wait_for_state(&pending, &endpoint, "failed", WAIT)
            .await;
        receiver.set_default(Reply::StallHeaders(Duration::from_secs(30)));

        app.advance(Duration::from_secs(2 * 86_400));
        let gone = crate::harness::wait_until(WAIT, || async {
            let n = app
                .count(&format!(
                    "SELECT COUNT(*) AS n FROM outbox_event WHERE event_id = '{done}'"
                ))
                .await;
            (n == 0).then_some(())
        })
        .await;
        assert!(
            gone.is_some(),
            "the delivered event and its delivery are deleted after their retention"
        );
        assert_eq!(
            app.count(&format!(
                "SELECT COUNT(*) AS n FROM delivery WHERE event_id = '{done}'"
            ))
            .await,
            0
        );
        assert!(
            app.delivery(&pending, &endpoint).await.is_some(),
            "an unfinished delivery is never deleted"
        );
        assert_eq!(
            app.count(&format!(
                "SELECT COUNT(*) AS n FROM outbox_event WHERE event_id = '{pending}'"
            ))
            .await,
            1
        );
    }
);

on_both_backends!(
    a_retry_goes_when_it_is_due_not_when_the_claims_lease_ends,
    |backend: Backend| async move {
        // The production lease (60 s) is far longer than the first retry delay
        // (5 s, ±20 % jitter): the retry must not wait for the lease.
        let app = spawn_app_with(backend, &[("HOOKD_DELIVERY__LEASE", "60s")]).await;
        let receiver = Receiver::start().await;
        // A slow delivery is still in flight when a second claim, a second
        // later, takes the next event; that one is refused.
        receiver.script([
            Reply::Delay(Duration::from_millis(1_500), Box::new(Reply::status(200))),
            Reply::status(503),
        ]);
        let (endpoint, _) = app.endpoint(&receiver.url()).await;
        let slow = app.publish("usage.finalized", usage(1)).await;
        receiver
            .wait_for(1, WAIT)
            .await
            .expect("the slow attempt starts");
        app.advance(Duration::from_secs(1));
        let refused = app.publish("usage.finalized", usage(2)).await;
        app.wait_for_state(&refused, &endpoint, "failed", WAIT)
            .await;
        app.wait_for_state(&slow, &endpoint, "delivered", WAIT)
            .await;
        stays_at(&receiver, 2).await;

        app.advance(Duration::from_millis(6_100));
        receiver
            .wait_for(3, WAIT)
            .await
            .expect("the retry is sent once its 5 s (+20 %) are up");
        assert_eq!(
            app.wait_for_state(&refused, &endpoint, "delivered", WAIT)
                .await,
            2,
            "delivered on the second attempt"
        );
    }
);

on_both_backends!(
    a_retry_is_not_held_back_by_another_deliverys_later_retry,
    |backend: Backend| async move {
        let app = spawn_app_with(backend, &[("HOOKD_DELIVERY__LEASE", "60s")]).await;
        let receiver = Receiver::start().await;
        receiver.script([
            Reply::status(503),
            Reply::status(503),
            Reply::status(503),
            Reply::status(200),
        ]);
        let (endpoint, _) = app.endpoint(&receiver.url()).await;
        // One delivery backs off to its third attempt, about 5 min away.
        let later = app.publish("usage.finalized", usage(1)).await;
        attempts_when(&app, &later, &endpoint, 1).await;
        app.advance(Duration::from_millis(6_100));
        attempts_when(&app, &later, &endpoint, 2).await;
        app.wait_for_state(&later, &endpoint, "failed", WAIT).await;

        // Another fails its first attempt: its retry is due in 5 s.
        let soon = app.publish("usage.finalized", usage(2)).await;
        attempts_when(&app, &soon, &endpoint, 1).await;
        app.wait_for_state(&soon, &endpoint, "failed", WAIT).await;
        stays_at(&receiver, 3).await;

        app.advance(Duration::from_millis(6_100));
        assert_eq!(
            app.wait_for_state(&soon, &endpoint, "delivered", WAIT)
                .await,
            2,
            "the 5 s retry goes in its time, not with the 5 min one"
        );
        assert_eq!(receiver.count(), 4, "the later delivery is not sent early");
    }
);

/// PostgreSQL only: an event another writer commits straight into the outbox
/// (the host service's own transaction, no API call) is fanned out at once by
/// LISTEN/NOTIFY, long before the (here one-minute) poll would find it.
#[actix_rt::test]
async fn an_event_committed_by_another_writer_is_delivered_at_once_on_postgres() {
    if crate::harness::skip_postgres() {
        return;
    }
    let app = spawn_app_with(
        Backend::Postgres,
        &[("HOOKD_DELIVERY__POLL_INTERVAL", "60s")],
    )
    .await;
    let receiver = Receiver::start().await;
    app.endpoint(&receiver.url()).await;
    // The fanout's first poll ran at start; the listener may still be
    // connecting, so commit until one event is in, then time the next.
    let commit = |n: i32| {
        let app = &app;
        async move {
            use sea_orm::TransactionTrait as _;
            let txn = app.db().begin().await.expect("a transaction");
            let event = hookd::outbox::Event::new(
                "usage.finalized",
                &app.partner_id,
                json!({"n": n, "customer_id": "cus_204", "currency": "USD", "final_cost": "1.20"}),
            )
            .schema_version(1);
            hookd::outbox::enqueue(&txn, event)
                .await
                .expect("the outbox row");
            txn.commit().await.expect("commit");
        }
    };
    let mut n = 0;
    while receiver.count() == 0 {
        n += 1;
        assert!(n <= 50, "no event arrived in 10 s: is the LISTEN running?");
        commit(n).await;
        actix_rt::time::sleep(Duration::from_millis(200)).await;
    }
    let arrived = receiver
        .wait_for(n as usize, WAIT)
        .await
        .expect("the first events")
        .len();
    let started = std::time::Instant::now();
    commit(1000).await;
    receiver
        .wait_for(arrived + 1, Duration::from_secs(5))
        .await
        .expect("the NOTIFY woke the fanout well before the 60 s poll");
    assert!(started.elapsed() < Duration::from_secs(5));
    quiesce().await;
}
