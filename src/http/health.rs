//! Liveness and readiness for orchestrators.

use actix_web::{HttpResponse, get, web};
use sea_orm::ConnectionTrait;

use super::{AppState, problem::Problem};

/// The process is up.
#[utoipa::path(tag = "health", responses((status = 200, description = "Alive", body = Object)))]
#[get("/healthz")]
pub async fn healthz() -> HttpResponse {
    HttpResponse::Ok().json(serde_json::json!({"status": "ok"}))
}

/// The database answers.
#[utoipa::path(tag = "health", responses((status = 200, description = "Ready", body = Object),
    (status = 503, description = "The database does not answer", body = super::problem::Problem, content_type = "application/problem+json")))]
#[get("/readyz")]
pub async fn readyz(state: web::Data<AppState>) -> Result<HttpResponse, Problem> {
    state
        .shared
        .db
        .execute_unprepared("SELECT 1")
        .await
        .map_err(|e| {
            tracing::warn!(error = %e, "readiness check failed");
            Problem::unavailable("the database does not answer")
        })?;
    Ok(HttpResponse::Ok().json(serde_json::json!({"status": "ready"})))
}
