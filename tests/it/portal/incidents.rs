//! The portal's Incidents page in a real browser: the partner's open
//! incident above its past one (with the delayed count), and nothing of
//! another partner's.

use hookd::domain::clock::Clock;
use serde_json::json;

use super::{open, text};

signed_in_test!(
    the_portal_lists_the_partners_open_and_past_incidents_only,
    |app, _key, page, _backend| {
        use hookd::http::incidents::{open_manual, resolve_manual};
        let db = app.db();
        let now = app.clock.now_ms();
        let past = open_manual(db, &app.partner_id, "Planned failover.", now)
            .await
            .expect("opened");
        resolve_manual(db, &past.id, now + 60_000)
            .await
            .expect("resolved");
        let current = open_manual(db, &app.partner_id, "Deliveries are delayed.", now)
            .await
            .expect("opened again");
        let (other, _) = app.another_partner("Globex").await;
        let theirs = open_manual(db, &other, "Not yours.", now)
            .await
            .expect("another partner's");

        open(&mut page, &app, "/portal/incidents").await;
        assert_eq!(text(&mut page, "h2").await, "Incidents");
        let ids = |selector: &str| {
            format!(
                "[...document.querySelectorAll('{selector} [data-incident]')].map(r => r.dataset.incident)"
            )
        };
        assert_eq!(
            page.eval(&ids("#open-incidents")).await,
            json!([current.id]),
            "the open incident is listed as open"
        );
        assert_eq!(
            page.eval(&ids("#past-incidents")).await,
            json!([past.id]),
            "the resolved one is listed as past"
        );
        assert_eq!(text(&mut page, "#past-incidents td.delayed").await, "0");
        let body = page.eval("document.body.textContent").await.to_string();
        assert!(body.contains("Deliveries are delayed."), "{body}");
        assert!(
            !body.contains(&theirs.id) && !body.contains("Not yours."),
            "another partner's incident is not shown"
        );
    }
);
