//! An endpoint's actor never claims again what it holds itself: a delivery
//! on the wire, or waiting for its record, when its lease time passes (a
//! slow receiver, a recorder held up, the test clock stepped on) is still
//! the actor's, and claiming it again would send it twice.

use std::time::Duration;

use serde_json::json;

use crate::harness::{
    QUIET, SLOW, WAIT,
    receiver::{Receiver, Reply},
    stays_quiet,
};
use hookd_test_macros::both_backends;

#[both_backends]
async fn a_delivery_on_the_wire_past_its_lease_is_not_sent_again_by_its_own_actor(app: TestApp) {
    let receiver = Receiver::start().await;
    // Held on the wire for a while (the requests' timeout here is 2 s).
    receiver.script([Reply::Delay(
        Duration::from_millis(1500),
        Box::new(Reply::status(200)),
    )]);
    let (endpoint, _) = app
        .endpoint_for(&app.partner_id, &receiver.url(), &[], 4)
        .await;
    let event = app.publish("a.b", json!({"n": 1})).await;
    receiver
        .wait_for(1, WAIT)
        .await
        .expect("the delivery is on the wire");
    // Its lease (5 s here) ends while it is on the wire: the supervisor's
    // poll finds the row due and wakes the actor.
    app.advance(Duration::from_secs(30));
    app.wait_for_state(&event, &endpoint, "delivered", SLOW)
        .await;
    stays_quiet(QUIET, || async {
        let n = receiver.count();
        (n > 1).then(|| format!("the receiver got the event {n} times"))
    })
    .await;
}
