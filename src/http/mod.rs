//! The web API: routes, shared state, and the fallbacks that keep every
//! error `application/problem+json`.

pub mod auth;
pub mod health;
pub mod ingest;
pub mod problem;

use std::sync::Arc;

use actix_web::web;

use crate::delivery::{Engine, Shared};

/// What handlers share.
#[derive(Clone)]
pub struct AppState {
    pub shared: Arc<Shared>,
    pub engine: Engine,
}

pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/healthz", web::get().to(health::healthz))
        .route("/readyz", web::get().to(health::readyz))
        .route("/v1/events", web::post().to(ingest::ingest))
        .default_service(web::to(|| async {
            Err::<actix_web::HttpResponse, _>(problem::Problem::not_found("no such route"))
        }));
}
