//! Liveness and readiness for orchestrators.

use actix_web::{HttpResponse, get, web};
use sea_orm::ConnectionTrait;

use super::{AppState, problem::Problem};

/// How long the readiness probe waits for the database.
const READY_WITHIN: std::time::Duration = std::time::Duration::from_millis(900);

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
    // An orchestrator's probe must get an answer, not hang on the pool.
    let ping = state.shared.db.execute_unprepared("SELECT 1");
    let answered = tokio::time::timeout(READY_WITHIN, ping).await;
    let unready = |why: String| {
        tracing::warn!(error = %why, "readiness check failed");
        let mut p = Problem::unavailable("the database does not answer");
        p.retry_after = Some(1);
        p
    };
    match answered {
        Ok(Ok(_)) => {}
        Ok(Err(e)) => return Err(unready(e.to_string())),
        Err(_) => return Err(unready(format!("no answer within {READY_WITHIN:?}"))),
    }
    if state.shared.is_draining() {
        return Err(Problem::stopping());
    }
    Ok(HttpResponse::Ok().json(serde_json::json!({"status": "ready"})))
}
