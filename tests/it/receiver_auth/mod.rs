//! What an endpoint presents to its receiver beyond the HMAC signature, on
//! the real delivery path: `v1a` (Ed25519) signatures verified by an
//! independent implementation (`v1a`), static headers (`headers`), a client
//! certificate for a receiver that requires one (`mtls`), OAuth2 client
//! credentials against a real token endpoint (`oauth2`), and the API that
//! sets them, redacts them and keeps them to their partner (`api`).

mod api;
mod headers;
pub(crate) mod mtls;
mod oauth2;
mod v1a;

use serde_json::{Value, json};

use crate::harness::{TestApp, receiver::Receiver};

use crate::harness::expect_status;

/// Creates an endpoint at `url` over the API with `extra` fields; returns
/// the 201's body.
async fn create(app: &TestApp, key: &str, url: &str, extra: Value) -> Value {
    let mut body = json!({ "url": url });
    if let (Some(b), Some(e)) = (body.as_object_mut(), extra.as_object()) {
        b.extend(e.clone());
    }
    expect_status(
        &app.request("POST", "/v1/endpoints", key, Some(&body)).await,
        201,
    )
}

/// An endpoint of the test partner at `url`: (endpoint id, partner key).
async fn endpoint_at_receiver_url(app: &TestApp, url: &str) -> (String, String) {
    let key = app.partner_key().await;
    let created = create(app, &key, url, json!({})).await;
    (created["id"].as_str().expect("an id").to_string(), key)
}

/// A plain receiver and an endpoint of the test partner at it: (receiver,
/// endpoint id, partner key).
async fn endpoint_at_receiver(app: &TestApp) -> (Receiver, String, String) {
    let key = app.partner_key().await;
    let receiver = Receiver::start().await;
    let created = create(app, &key, &receiver.url(), json!({})).await;
    let id = created["id"].as_str().expect("an id").to_string();
    (receiver, id, key)
}
