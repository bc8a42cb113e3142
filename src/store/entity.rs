//! The sea-orm entities, one per table of the migration; only `store` uses them.

macro_rules! no_relations {
    () => {
        #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
        pub enum Relation {}
        impl ActiveModelBehavior for ActiveModel {}
    };
}

pub mod partner {
    use sea_orm::entity::prelude::*;
    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "partner")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false)]
        pub id: String,
        pub name: String,
        pub status: String,
        pub created_at: i64,
        /// Where endpoint notices are mailed.
        pub notification_email: Option<String>,
    }
    no_relations!();
}

pub mod api_key {
    use sea_orm::entity::prelude::*;
    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "api_key")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false)]
        pub id: String,
        pub partner_id: Option<String>,
        pub prefix: String,
        pub hash: String,
        pub role: String,
        pub created_at: i64,
        pub last_used_at: Option<i64>,
        pub revoked_at: Option<i64>,
    }
    no_relations!();
}

pub mod dashboard_session {
    use sea_orm::entity::prelude::*;
    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "dashboard_session")]
    pub struct Model {
        /// The session id (random, 128 bits), as in the signed cookie.
        #[sea_orm(primary_key, auto_increment = false)]
        pub id: String,
        pub key_id: String,
        pub created_at: i64,
        pub expires_at: i64,
        /// A portal session's partner; `None` for the dashboard.
        pub partner_id: Option<String>,
    }
    no_relations!();
}

pub mod endpoint {
    use sea_orm::entity::prelude::*;
    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "endpoint")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false)]
        pub id: String,
        pub partner_id: String,
        pub url: String,
        pub description: String,
        pub status: String,
        pub disabled_reason: Option<String>,
        /// A JSON array of event types; empty means every type.
        pub event_types: String,
        pub schema_version: Option<String>,
        /// A JSON object: event type → pinned version (absent: as sent).
        pub schema_versions: Option<String>,
        pub concurrency: i32,
        pub rate_limit: Option<i32>,
        pub failing_since: Option<i64>,
        pub warned_at: Option<i64>,
        pub created_at: i64,
        pub updated_at: i64,
        /// `endpoint`, `notification` or `operator` (`store::endpoints::Kind`).
        pub kind: String,
        /// `none` or `subject` (`domain::ordering::Ordering`).
        pub ordering: String,
        /// `skip` or `hold` (`domain::ordering::OnDead`).
        pub ordering_on_dead: String,
        /// The payload filter as JSON; `None` for none.
        pub filter: Option<String>,
    }
    no_relations!();
}

pub mod endpoint_secret {
    use sea_orm::entity::prelude::*;
    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "endpoint_secret")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false)]
        pub id: String,
        pub endpoint_id: String,
        pub ciphertext: String,
        pub created_at: i64,
        pub expires_at: Option<i64>,
        /// `v1` (HMAC-SHA256) or `v1a` (Ed25519; the sealed bytes are its seed).
        pub scheme: String,
        /// `whpk_…` for a `v1a` key.
        pub public_key: Option<String>,
    }
    no_relations!();
}

pub mod endpoint_auth {
    use sea_orm::entity::prelude::*;
    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "endpoint_auth")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false)]
        pub endpoint_id: String,
        pub header_names: Option<String>,
        pub headers_sealed: Option<String>,
        pub oauth_token_url: Option<String>,
        pub oauth_client_id: Option<String>,
        pub oauth_scope: Option<String>,
        pub oauth_audience: Option<String>,
        pub oauth_secret_sealed: Option<String>,
        pub cert_pem: Option<String>,
        pub cert_subject: Option<String>,
        pub cert_not_after: Option<i64>,
        pub cert_key_sealed: Option<String>,
        pub cert_warned_at: Option<i64>,
        pub updated_at: i64,
    }
    no_relations!();
}

pub mod outbox_event {
    use sea_orm::entity::prelude::*;
    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "outbox_event")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false)]
        pub event_id: String,
        pub partner_id: String,
        pub r#type: String,
        pub subject_type: Option<String>,
        pub subject_id: Option<String>,
        pub subject_version: Option<i64>,
        pub occurred_at: i64,
        pub schema_version: String,
        /// The event's `data`, as canonical JSON text.
        pub payload: String,
        pub correlation_id: Option<String>,
        pub created_at: i64,
        pub published_at: Option<i64>,
        pub feed_seq: Option<i64>,
        /// Version → `data` at that version (see `domain::renditions`).
        pub renditions: Option<String>,
        /// Why the fanout refused the event (it fails its schema).
        pub rejected_reason: Option<String>,
        /// The W3C trace context its publication and attempts join.
        pub traceparent: Option<String>,
        pub tracestate: Option<String>,
    }
    no_relations!();
}

pub mod delivery {
    use sea_orm::entity::prelude::*;
    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "delivery")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false)]
        pub id: String,
        pub event_id: String,
        pub endpoint_id: String,
        pub state: String,
        /// Every attempt, scheduled and manual.
        pub attempt_count: i32,
        /// When the row is next due; for a `delivering` row, when its lease ends.
        pub next_attempt_at: i64,
        pub last_status: Option<i32>,
        pub last_latency_ms: Option<i32>,
        pub last_error_category: Option<String>,
        pub created_at: i64,
        pub updated_at: i64,
        /// Scheduled attempts only: the position in the retry schedule.
        pub scheduled_attempts: i32,
        /// Why it was closed without an attempt (`cancelled`, `skipped`).
        pub reason: Option<String>,
        /// The version it is sent at; `None`: the event's own.
        pub schema_version: Option<i32>,
    }
    no_relations!();
}

pub mod attempt {
    use sea_orm::entity::prelude::*;
    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "attempt")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false)]
        pub id: String,
        pub delivery_id: String,
        pub attempt_no: i32,
        pub trigger: String,
        pub started_at: i64,
        pub latency_ms: Option<i32>,
        pub status_code: Option<i32>,
        pub error_category: Option<String>,
        pub error_detail: Option<String>,
        pub response_excerpt: Option<String>,
        pub remote_addr: Option<String>,
        /// The endpoint's URL when it was sent, redacted
        /// (`domain::redact_url`); null for attempts recorded before it was kept.
        pub url: Option<String>,
        /// The retry it scheduled (Unix ms); null when it was the last, or
        /// succeeded, or was a manual replay.
        pub next_attempt_at: Option<i64>,
        /// A 3xx answer's `Location`, redacted.
        pub location: Option<String>,
    }
    no_relations!();
}
