//! `GET /v1/events/export`: the partner's events created in a time range as
//! NDJSON, one envelope a line (the bytes deliveries carry), read from the
//! database a page at a time while the answer streams. One request sends at
//! most `limit` events (10,000 at most); the last line is always
//! `{"end": {"complete", "events", "next_cursor"}}`, so a reader knows
//! whether the range is done, and where to continue (`after`) when not. A
//! stream without that line was cut short.

use actix_web::{HttpRequest, HttpResponse, get, web};
use bytes::Bytes;
use futures_util::{Stream, stream};
use sea_orm::DatabaseConnection;
use serde::Deserialize;

use super::event_range::{self, kept_ms};
use crate::{
    config::Config,
    domain::event::envelope,
    http::{
        AppState, auth, body, page,
        problem::{Errors, Problem},
    },
    store::{StoreError, scoped::for_partner, scoped_feed::FeedFilter},
};

/// The most events one export request sends (and its default `limit`).
pub const MAX_EVENTS: u32 = 10_000;

/// The NDJSON media type of the export.
pub const NDJSON: &str = "application/x-ndjson";

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ExportQuery {
    /// RFC 3339, required: events created at or after this time (no earlier
    /// than `retention.events_days` of `GET /v1/limits` ago).
    pub since: Option<String>,
    /// RFC 3339: events created before this time; absent, no upper bound.
    pub until: Option<String>,
    /// Only events of this type.
    #[serde(rename = "type")]
    #[param(rename = "type")]
    pub event_type: Option<String>,
    /// The `next_cursor` of the previous request's last line, to continue
    /// the same range.
    pub after: Option<String>,
    /// Events to send at most, 1 to 10000 (the default).
    pub limit: Option<i64>,
}

/// An export request, read and checked.
#[derive(Debug, Clone)]
pub struct Export {
    pub filter: FeedFilter,
    /// The feed position to start after.
    pub after: i64,
    /// Events to send at most.
    pub limit: u32,
    /// Events read from the database at a time.
    pub page: u32,
}

/// Reads `q` at `now_ms`: the API's reading and the command line's.
pub fn read(q: ExportQuery, now_ms: i64, config: &Config) -> Result<Export, Problem> {
    // Each parameter given is judged first, so a bad one is named even
    // when `since` is missing too.
    let range = event_range::read(
        q.since.as_deref(),
        q.until.as_deref(),
        now_ms,
        kept_ms(&config.retention),
    )?;
    let after = page::feed_after(q.after.as_deref())?;
    let limit = page::limit(q.limit, MAX_EVENTS, MAX_EVENTS)?;
    if q.since.is_none() {
        return Err(Problem::invalid(
            "since",
            "since is required: the export is of a time range (since, and until if given)",
        ));
    }
    Ok(Export {
        filter: FeedFilter {
            event_type: q.event_type,
            since: range.since,
            until: range.until,
        },
        after,
        limit,
        page: config.api.page_size_max,
    })
}

/// The export of `partner_id`'s events as NDJSON chunks: a page of lines at
/// a time, then the end line. A database error ends the stream without the
/// end line.
pub fn lines(
    db: DatabaseConnection,
    partner_id: String,
    export: Export,
) -> impl Stream<Item = Result<Bytes, StoreError>> + 'static {
    let start = Walk {
        db,
        partner_id,
        after: export.after,
        sent: 0,
        step: Step::Reading,
        export,
    };
    stream::unfold(start, |mut walk| async move {
        match walk.step {
            Step::Done => None,
            Step::End { complete } => {
                walk.step = Step::Done;
                Some((Ok(end_line(complete, walk.sent, walk.after)), walk))
            }
            Step::Reading => match walk.next_page().await {
                Ok(chunk) => Some((Ok(chunk), walk)),
                Err(e) => {
                    walk.step = Step::Done;
                    Some((Err(e), walk))
                }
            },
        }
    })
}

enum Step {
    Reading,
    End { complete: bool },
    Done,
}

/// Where an export stream is.
struct Walk {
    db: DatabaseConnection,
    partner_id: String,
    export: Export,
    after: i64,
    sent: u32,
    step: Step,
}

impl Walk {
    /// Reads the next page as lines, and decides what follows it.
    async fn next_page(&mut self) -> Result<Bytes, StoreError> {
        let scoped = for_partner(&self.db, &self.partner_id);
        let want = (self.export.limit - self.sent).min(self.export.page);
        let rows = scoped.feed(&self.export.filter, self.after, want).await?;
        let mut chunk = Vec::new();
        for (seq, event) in &rows {
            chunk.extend_from_slice(&envelope(event));
            chunk.push(b'\n');
            self.after = *seq;
        }
        self.sent += u32::try_from(rows.len()).unwrap_or(u32::MAX);
        if rows.len() < want as usize {
            self.step = Step::End { complete: true };
        } else if self.sent >= self.export.limit {
            // The bound is reached: the range is done only if nothing follows.
            let more = scoped.feed(&self.export.filter, self.after, 1).await?;
            self.step = Step::End {
                complete: more.is_empty(),
            };
        }
        Ok(Bytes::from(chunk))
    }
}

/// The last line: whether the range is done, how many events were sent,
/// and the cursor to continue from.
fn end_line(complete: bool, events: u32, after: i64) -> Bytes {
    let end = serde_json::json!({"end": {
        "complete": complete,
        "events": events,
        "next_cursor": page::encode_seq(after),
    }});
    Bytes::from(format!("{end}\n"))
}

/// The partner's events created in `since`..`until` as NDJSON: one envelope
/// a line, exactly as the feed shows them and deliveries carry them, in
/// feed order; then one line `{"end": {"complete": bool, "events": n,
/// "next_cursor": "…"}}`. `complete: false` means `limit` cut the range:
/// request again with `after` set to `next_cursor` and the same
/// `since`/`until`/`type`. A stream ending without the `end` line was cut
/// short; its lines are still whole events.
#[utoipa::path(tag = "events", params(ExportQuery), security(("partner_key" = [])),
    responses((status = 200, description = "NDJSON: one event envelope a line, then the `end` line", content_type = "application/x-ndjson", body = String), Errors))]
#[get("/v1/events/export")]
pub async fn export_events(
    req: HttpRequest,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    let partner = auth::partner(&req, &state).await?;
    let q: ExportQuery = body::query(req.query_string())?;
    let export = read(q, state.shared.clock.now_ms(), &state.shared.config)?;
    Ok(HttpResponse::Ok()
        .content_type(NDJSON)
        .insert_header(("cache-control", "no-store"))
        .streaming(lines(state.shared.db.clone(), partner, export)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_end_line_is_one_json_line_with_the_cursor_to_continue() {
        let line = end_line(false, 2, 42);
        let text = std::str::from_utf8(&line).expect("UTF-8");
        assert!(
            text.ends_with('\n') && text.matches('\n').count() == 1,
            "{text:?}"
        );
        let v: serde_json::Value = serde_json::from_str(text).expect("JSON");
        assert_eq!(v["end"]["complete"], false);
        assert_eq!(v["end"]["events"], 2);
        let cursor = v["end"]["next_cursor"].as_str().expect("a cursor");
        assert_eq!(page::decode_seq(cursor).expect("a feed cursor"), 42);
    }
}
