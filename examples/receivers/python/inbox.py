"""The durable inbox: every event is stored here before it is acknowledged,
and applied from here afterwards, by the receiver's worker or the reconciler.

One SQLite file holds four tables:

- ``inbox``: one row per ``webhook-id`` (UNIQUE), the exact body received and
  what became of it (``pending``, ``applied``, ``stale``, ``ignored``,
  ``test``, ``failed``);
- ``subjects``: the newest applied state of each subject (a customer, an API
  key, a balance), with its ``subject.version``; an older version is stale;
- ``ledger``: money facts (usage charges, credit adjustments), one row per
  source id, so a fact is booked once however often it arrives;
- ``feed_cursor``: where the reconciler stopped reading ``GET /v1/events``.

Replace the handlers at the bottom with your own; keep the shape: one
transaction that checks, applies and marks the inbox row.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import time
from typing import Callable, Optional

log = logging.getLogger("inbox")

# How long a write waits for SQLite's lock. The webhook handler answers 503
# after this (the sender retries), so keep it well under the sender's own
# timeout (hookd waits 10 s).
BUSY_TIMEOUT_S = 2.0

SCHEMA = """
CREATE TABLE IF NOT EXISTS inbox (
    id             INTEGER PRIMARY KEY,         -- arrival order: the worker's queue order
    webhook_id     TEXT NOT NULL UNIQUE,        -- the event id; a duplicate is a normal outcome
    event_type     TEXT NOT NULL,
    body           TEXT NOT NULL,               -- the exact JSON that was signed
    source         TEXT NOT NULL,               -- 'webhook' or 'feed'
    received_at    INTEGER NOT NULL,            -- Unix ms of the first receipt
    received_count INTEGER NOT NULL DEFAULT 1,  -- how many times it arrived
    status         TEXT NOT NULL DEFAULT 'pending',
    processed_at   INTEGER,
    error          TEXT
);
CREATE INDEX IF NOT EXISTS inbox_pending ON inbox (id) WHERE status = 'pending';
CREATE TABLE IF NOT EXISTS subjects (
    subject_type TEXT NOT NULL,
    subject_id   TEXT NOT NULL,
    version      INTEGER,
    event_id     TEXT NOT NULL,
    event_type   TEXT NOT NULL,
    data         TEXT NOT NULL,
    updated_at   INTEGER NOT NULL,
    PRIMARY KEY (subject_type, subject_id)
);
CREATE TABLE IF NOT EXISTS ledger (
    kind        TEXT NOT NULL,                  -- 'usage' or 'credit'
    source_id   TEXT NOT NULL,                  -- usage_id or adjustment_id, never the event id
    customer_id TEXT NOT NULL,
    currency    TEXT NOT NULL,
    amount      TEXT NOT NULL,                  -- a decimal string, never a float
    event_id    TEXT NOT NULL,
    PRIMARY KEY (kind, source_id)
);
CREATE TABLE IF NOT EXISTS feed_cursor (
    name   TEXT PRIMARY KEY,
    cursor TEXT NOT NULL
);
"""

# hookd's own test and conformance-check events: acknowledged, stored (so a
# repeated id is still a duplicate), and never given to a business handler.
TEST_TYPES = frozenset({"webhook.test", "webhook.check"})


def now_ms() -> int:
    return int(time.time() * 1000)


def connect(path: str) -> sqlite3.Connection:
    """A connection in autocommit mode: transactions are explicit below."""
    conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
    # WAL lets readers (the reconciler, your dashboards) run beside the writer;
    # FULL syncs the log at every commit, so a 2xx survives a power cut.
    conn.execute("PRAGMA synchronous=FULL")
    return conn


def init(path: str) -> None:
    conn = connect(path)
    try:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.executescript(SCHEMA)
    finally:
        conn.close()


class Transaction:
    """``BEGIN IMMEDIATE`` … ``COMMIT``, rolled back on any exception.

    IMMEDIATE takes the write lock up front, so two appliers (the worker and a
    reconciler) never both read a row as pending.
    """

    def __init__(self, conn: sqlite3.Connection):
        self.conn = conn

    def __enter__(self) -> sqlite3.Connection:
        self.conn.execute("BEGIN IMMEDIATE")
        return self.conn

    def __exit__(self, kind, _value, _tb) -> None:
        self.conn.execute("COMMIT" if kind is None else "ROLLBACK")


def store(conn: sqlite3.Connection, webhook_id: str, event_type: str, body: str, source: str) -> bool:
    """Stores an event unless its id is already there; returns whether it was new.

    Committed (and synced) when this returns: only then may the caller answer 2xx.
    """
    with Transaction(conn):
        inserted = conn.execute(
            "INSERT INTO inbox (webhook_id, event_type, body, source, received_at)"
            " VALUES (?, ?, ?, ?, ?) ON CONFLICT (webhook_id) DO NOTHING",
            (webhook_id, event_type, body, source, now_ms()),
        ).rowcount
        if not inserted:
            conn.execute(
                "UPDATE inbox SET received_count = received_count + 1 WHERE webhook_id = ?",
                (webhook_id,),
            )
    return bool(inserted)


def apply_next(conn: sqlite3.Connection) -> bool:
    """Applies the oldest pending event; returns False when none was pending.

    The business effect and the inbox row's new status commit together: after
    a crash the event is still pending and is applied again, never half-applied.
    """
    with Transaction(conn):
        row = conn.execute(
            "SELECT id, webhook_id, body FROM inbox WHERE status = 'pending' ORDER BY id LIMIT 1"
        ).fetchone()
        if row is None:
            return False
        row_id, webhook_id, body = row
        conn.execute("SAVEPOINT effect")
        try:
            status, error = apply_event(conn, json.loads(body)), None
            conn.execute("RELEASE effect")
        except Exception as e:  # a bad event must not block the ones behind it
            conn.execute("ROLLBACK TO effect")
            conn.execute("RELEASE effect")
            status, error = "failed", f"{type(e).__name__}: {e}"
            log.error("event %s failed: %s", webhook_id, error)
        conn.execute(
            "UPDATE inbox SET status = ?, processed_at = ?, error = ? WHERE id = ?",
            (status, now_ms(), error, row_id),
        )
    log.info("event %s: %s", webhook_id, status)
    return True


def drain(conn: sqlite3.Connection) -> int:
    """Applies every pending event; returns how many."""
    n = 0
    while apply_next(conn):
        n += 1
    return n


def apply_event(conn: sqlite3.Connection, event: dict) -> str:
    """Routes one event; returns the inbox status it ends in."""
    event_type = event.get("type")
    if event_type in TEST_TYPES:
        return "test"
    if event_type in STATE_TYPES:
        return apply_state(conn, event)
    fact = FACT_HANDLERS.get(event_type)
    if fact is not None:
        fact(conn, event)
        return "applied"
    # A type added to the catalog after this code was written: acknowledged
    # and kept in the inbox, so you can apply it once you have a handler.
    return "ignored"


# ----- state: keep the newest version of each subject -----

# Events that carry a snapshot of a subject's state. Applying an older
# snapshot after a newer one would move the state backwards.
STATE_TYPES = frozenset(
    {
        "customer.created",
        "customer.status_changed",
        "api_key.created",
        "api_key.status_changed",
        "balance.updated",
    }
)


def apply_state(conn: sqlite3.Connection, event: dict) -> str:
    subject = event.get("subject")
    if not subject:
        log.warning("state event %s has no subject: nothing to update", event["event_id"])
        return "applied"
    key = (subject["type"], subject["id"])
    version: Optional[int] = subject.get("version")
    current = conn.execute(
        "SELECT version FROM subjects WHERE subject_type = ? AND subject_id = ?", key
    ).fetchone()
    if version is not None and current is not None and current[0] is not None and current[0] >= version:
        return "stale"
    # Without a version there is no order to keep: the last one applied wins.
    # If that matters for a subject, read its current state from the Partner API.
    conn.execute(
        "INSERT INTO subjects (subject_type, subject_id, version, event_id, event_type, data, updated_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?)"
        " ON CONFLICT (subject_type, subject_id) DO UPDATE SET"
        "  version = COALESCE(excluded.version, subjects.version), event_id = excluded.event_id,"
        "  event_type = excluded.event_type, data = excluded.data, updated_at = excluded.updated_at",
        (*key, version, event["event_id"], event["type"], json.dumps(event["data"]), now_ms()),
    )
    return "applied"


# ----- facts: book each once, keyed on its own source id -----


def book(kind: str, source_field: str, amount_field: str) -> Callable[[sqlite3.Connection, dict], None]:
    """A handler that books a money fact once per source id.

    The inbox already drops a repeated event id; the source id also holds when
    the same fact reaches you another way (the feed, an export, a support fix).
    Facts are never stale: an older adjustment still happened.
    """

    def handler(conn: sqlite3.Connection, event: dict) -> None:
        data = event["data"]
        # Older schema versions may carry the source id only as the subject.
        source_id = data.get(source_field) or (event.get("subject") or {}).get("id")
        if not source_id:
            raise ValueError(f"{event['type']} without {source_field} or a subject id")
        conn.execute(
            "INSERT INTO ledger (kind, source_id, customer_id, currency, amount, event_id)"
            " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (kind, source_id) DO NOTHING",
            (
                kind,
                source_id,
                data["customer_id"],
                data["currency"],
                str(data[amount_field]),
                event["event_id"],
            ),
        )

    return handler


FACT_HANDLERS: dict[str, Callable[[sqlite3.Connection, dict], None]] = {
    "usage.finalized": book("usage", "usage_id", "final_cost"),
    "credit.adjustment_posted": book("credit", "adjustment_id", "amount"),
}
