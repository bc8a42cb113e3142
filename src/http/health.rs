//! Liveness and readiness for orchestrators.

use actix_web::{HttpResponse, web};
use sea_orm::ConnectionTrait;

use super::{AppState, problem::Problem};

/// The process is up.
pub async fn healthz() -> HttpResponse {
    HttpResponse::Ok().json(serde_json::json!({"status": "ok"}))
}

/// The database answers.
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
