//! A group commit may publish to the endpoints an earlier one read (on
//! PostgreSQL it keeps them between commits): whatever changes a partner's
//! endpoints, and however, reaches the partner's next event.

use serde_json::json;

use crate::harness::receiver::Receiver;
use hookd_test_macros::both_backends;

#[both_backends]
async fn endpoints_changed_behind_the_engines_back_are_seen_by_the_partners_next_event(
    app: TestApp,
) {
    use sea_orm::ConnectionTrait as _;
    let receiver = Receiver::start().await;
    let base = receiver.url().trim_end_matches('/').to_string();
    let deliveries_of =
        |event: &str| format!("SELECT COUNT(*) AS n FROM delivery WHERE event_id = '{event}'");

    // The partner has no endpoint yet: its first event goes nowhere.
    let nothing = app.publish("a.b", json!({"n": 0})).await;
    assert_eq!(app.count(&deliveries_of(&nothing)).await, 0);

    // Endpoints written straight in the store, as another instance would:
    // the engine that publishes hears nothing of them.
    let (first, _) = app.endpoint(&format!("{base}/first")).await;
    let one = app.publish("a.b", json!({"n": 1})).await;
    assert!(
        app.delivery_row_opt(&one, &first).await.is_some(),
        "an endpoint added after the partner's last event gets the next one"
    );
    let (second, _) = app.endpoint(&format!("{base}/second")).await;
    let two = app.publish("a.b", json!({"n": 2})).await;
    assert!(app.delivery_row_opt(&two, &first).await.is_some());
    assert!(
        app.delivery_row_opt(&two, &second).await.is_some(),
        "a second endpoint added between two events gets the later one"
    );

    // The first stops taking `a.b`, changed by hand in SQL.
    let db = app.db().clone();
    let sql = |text: String| {
        let db = db.clone();
        async move {
            db.execute_unprepared(&text)
                .await
                .expect("the change is written");
        }
    };
    sql(format!(
        "UPDATE endpoint SET event_types = '[\"balance.updated\"]' WHERE id = '{first}'"
    ))
    .await;
    let three = app.publish("a.b", json!({"n": 3})).await;
    assert!(
        app.delivery_row_opt(&three, &first).await.is_none(),
        "an endpoint whose types changed no longer gets what it dropped"
    );
    assert!(app.delivery_row_opt(&three, &second).await.is_some());

    // And the second is disabled.
    sql(format!(
        "UPDATE endpoint SET status = 'disabled' WHERE id = '{second}'"
    ))
    .await;
    let four = app.publish("a.b", json!({"n": 4})).await;
    assert_eq!(
        app.count(&deliveries_of(&four)).await,
        0,
        "a disabled endpoint gets no delivery"
    );
}
