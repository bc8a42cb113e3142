//! PostgreSQL only: the recorder's every-day statement as a function,
//! `hookd_record_attempts(batch json, guarded boolean, now_ms bigint)`,
//! returning the ids of the deliveries whose attempt it recorded (and, when
//! `guarded` and an endpoint of the batch is marked failing or warned
//! about, one NULL and nothing written).
//!
//! Sent as a statement, it had to be planned on every call (0.5–0.8 ms,
//! as long as running it): a prepared statement's generic plan, made while
//! the delivery table was small, scanned the table on every record until
//! the table was next analysed. A function's statements keep their plans
//! for the session, and this one is planned with sequential scans off, so
//! even a plan made on an empty table finds the batch's rows by primary
//! key.

use sea_orm_migration::{prelude::*, sea_orm::DbBackend};

#[derive(DeriveMigrationName)]
pub struct Migration;

const CREATE: &str = "CREATE OR REPLACE FUNCTION hookd_record_attempts(json, boolean, bigint) \
     RETURNS SETOF text LANGUAGE plpgsql SET enable_seqscan = off AS $fn$ BEGIN RETURN QUERY \
     WITH v AS (SELECT * FROM json_to_recordset($1) AS v(id text, delivery_id text, \
     endpoint_id text, claim_seq bigint, attempt_no int, trigger text, started_at bigint, \
     latency_ms int, status_code int, error_category text, error_detail text, \
     response_excerpt text, remote_addr text, url text, next_attempt_at bigint, \
     location text, state text, next_at bigint)), \
     h AS (SELECT 1 FROM endpoint WHERE $2 AND id IN (SELECT endpoint_id FROM v) \
     AND (failing_since IS NOT NULL OR warned_at IS NOT NULL) LIMIT 1), \
     u AS (UPDATE delivery SET \
     state = CASE WHEN v.state = 'failed' AND EXISTS (SELECT 1 FROM endpoint e \
     WHERE e.id = delivery.endpoint_id AND e.status <> 'active') THEN 'paused' ELSE v.state END, \
     next_attempt_at = v.next_at, attempt_count = delivery.attempt_count + 1, \
     scheduled_attempts = delivery.scheduled_attempts + 1, last_status = v.status_code, \
     last_latency_ms = v.latency_ms, last_error_category = v.error_category, updated_at = $3, \
     holding = CASE WHEN v.state = 'dead' AND delivery.ordering_key IS NOT NULL AND EXISTS \
     (SELECT 1 FROM endpoint e WHERE e.id = delivery.endpoint_id AND e.ordering = 'subject' \
     AND e.ordering_on_dead = 'hold') THEN 1 ELSE 0 END \
     FROM v WHERE delivery.id = ANY(ARRAY(SELECT delivery_id FROM v)) \
     AND delivery.id = v.delivery_id AND delivery.claim_seq = v.claim_seq \
     AND NOT EXISTS (SELECT 1 FROM h) \
     RETURNING delivery.id), \
     i AS (INSERT INTO attempt (id, delivery_id, attempt_no, trigger, started_at, latency_ms, \
     status_code, error_category, error_detail, response_excerpt, remote_addr, url, \
     next_attempt_at, location) \
     SELECT v.id, v.delivery_id, v.attempt_no, v.trigger, v.started_at, v.latency_ms, \
     v.status_code, v.error_category, v.error_detail, v.response_excerpt, v.remote_addr, \
     v.url, v.next_attempt_at, v.location FROM v JOIN u ON u.id = v.delivery_id \
     RETURNING attempt.delivery_id) \
     SELECT i.delivery_id::text FROM i UNION ALL SELECT NULL FROM h; END $fn$";

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        if manager.get_database_backend() != DbBackend::Postgres {
            return Ok(());
        }
        manager
            .get_connection()
            .execute_unprepared(CREATE)
            .await
            .map(|_| ())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        if manager.get_database_backend() != DbBackend::Postgres {
            return Ok(());
        }
        manager
            .get_connection()
            .execute_unprepared(
                "DROP FUNCTION IF EXISTS hookd_record_attempts(json, boolean, bigint)",
            )
            .await
            .map(|_| ())
    }
}
