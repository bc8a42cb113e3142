//! The web API: routes, shared state, and the fallbacks that keep every
//! error `application/problem+json`.

// Handlers answer with a `Problem`; its size on the error path does not matter.
#![allow(clippy::result_large_err)]

pub mod access;
pub mod access_listener;
pub mod admin;
pub mod admin_audit;
pub mod admin_deliveries;
pub mod admin_endpoint_detail;
pub mod admin_endpoint_ops;
pub mod admin_endpoints;
pub mod admin_events;
pub mod admin_ordering;
pub mod admin_portal;
pub mod auth;
pub mod body;
pub mod client_ip;
pub mod door;
pub mod expect;
pub mod guard;
pub mod health;
pub mod incidents;
pub mod ingest;
pub mod known_keys;
pub mod known_partners;
pub mod links;
pub mod mount;
pub mod observe;
pub mod openapi;
pub mod origin;
pub mod page;
pub mod partner;
pub mod problem;
pub mod rate_limit;

use std::sync::Arc;

use actix_web::HttpResponse;

use crate::delivery::{Engine, Shared};

/// What handlers share.
#[derive(Clone)]
pub struct AppState {
    pub shared: Arc<Shared>,
    pub engine: Engine,
    /// Per partner or operator key.
    pub limiter: Arc<rate_limit::RateLimiter>,
    /// Per service key.
    pub service_limiter: Arc<rate_limit::RateLimiter>,
    /// Per client address, for requests without a valid key.
    pub anonymous_limiter: Arc<rate_limit::RateLimiter>,
    /// The unrevoked keys: who may pass an address's spent budget; and the
    /// principals of keys presented lately.
    pub known_keys: Arc<known_keys::KnownKeys>,
    /// The partners ingest found lately.
    pub known_partners: Arc<known_partners::KnownPartners>,
    /// When a check of each target host last started.
    pub check_hosts: Arc<crate::conformance::host_slots::HostSlots>,
}

impl AppState {
    /// The JSON body of a request whose caller is already authenticated.
    pub async fn read_json<T: serde::de::DeserializeOwned>(
        &self,
        req: &actix_web::HttpRequest,
        payload: actix_web::web::Payload,
    ) -> Result<T, problem::Problem> {
        body::read_json(req, payload, self.shared.config.http.body_timeout).await
    }
}

/// Every documented route. Registering a handler here is what puts it in
/// the OpenAPI document.
pub fn routes(cfg: &mut impl mount::Mount) {
    use partner::{
        catalog, checks, deliveries, endpoints, event_export, events, filters, ordering,
        receiver_auth, settings,
    };
    cfg.service(openapi::document)
        .service(health::healthz)
        .service(health::readyz)
        .service(ingest::ingest)
        .service(events::feed)
        // Before `/v1/events/{id}`, which would take `export` for an id.
        .service(event_export::export_events)
        .service(events::get_event)
        .service(endpoints::create_endpoint)
        .service(endpoints::list_endpoints)
        .service(endpoints::get_endpoint)
        .service(endpoints::update_endpoint)
        .service(endpoints::delete_endpoint)
        .service(endpoints::enable_endpoint)
        .service(endpoints::disable_endpoint)
        .service(endpoints::rotate_secret)
        .service(endpoints::expire_previous)
        .service(endpoints::send_test)
        .service(endpoints::recover)
        .service(filters::filter_test)
        .service(receiver_auth::get_receiver_auth)
        .service(receiver_auth::set_headers)
        .service(receiver_auth::set_oauth2)
        .service(receiver_auth::set_client_certificate)
        .service(receiver_auth::remove_receiver_auth)
        .service(checks::check_endpoint)
        .service(checks::list_checks)
        .service(deliveries::list_deliveries)
        .service(deliveries::get_delivery)
        .service(deliveries::replay_delivery)
        .service(ordering::skip_delivery)
        .service(ordering::held_subjects)
        .service(settings::get_partner)
        .service(settings::update_partner)
        .service(settings::admin_get_partner)
        .service(settings::admin_update_partner)
        .service(admin_portal::create_portal_link)
        .service(catalog::event_types)
        .service(catalog::limits)
        .service(admin::create_partner)
        .service(admin::list_partners)
        .service(admin::create_partner_key)
        .service(admin::revoke_key)
        .service(admin_events::list_events)
        .service(admin_events::admin_get_event)
        .service(admin_deliveries::admin_list_deliveries)
        .service(admin_deliveries::admin_get_delivery)
        .service(admin_deliveries::admin_replay_delivery)
        .service(admin_ordering::admin_skip_delivery)
        .service(admin_ordering::admin_held_subjects)
        .service(admin_endpoints::admin_list_endpoints)
        .service(admin_endpoint_detail::admin_get_endpoint)
        .service(admin_endpoints::admin_recover_endpoint)
        .service(admin_endpoints::admin_enable_endpoint)
        .service(admin_endpoints::admin_disable_endpoint)
        .service(admin_audit::list_audit)
        .service(incidents::list_incidents)
        .service(incidents::admin_list_incidents)
        .service(incidents::open_incident)
        .service(incidents::resolve_incident)
        .service(observe::actors)
        .service(observe::instances)
        .service(observe::metrics);
}

/// What the operations listener serves: probes and the scrape.
pub fn ops_routes(cfg: &mut actix_web::web::ServiceConfig) {
    cfg.service(health::healthz)
        .service(health::readyz)
        .service(observe::metrics);
}

/// The unrouted fallback: a problem+json 404.
pub async fn not_found() -> Result<HttpResponse, problem::Problem> {
    Err(problem::Problem::not_found("no such route"))
}
