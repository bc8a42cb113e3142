package main

// The durable inbox: every event is stored here before it is acknowledged,
// and applied from here afterwards by the worker.
//
// One SQLite file holds three tables:
//   - inbox: one row per webhook-id (UNIQUE), the exact body received and
//     what became of it (pending, applied, stale, ignored, test, failed);
//   - subjects: the newest applied state of each subject (a customer, an API
//     key, a balance), with its subject.version; an older version is stale;
//   - ledger: money facts (usage charges, credit adjustments), one row per
//     source id, so a fact is booked once however often it arrives.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log"
	"net/url"
	"time"

	_ "github.com/mattn/go-sqlite3"
)

// busyTimeout is how long a write waits for SQLite's lock. The webhook
// handler answers 503 after this (the sender retries), so keep it well under
// the sender's own timeout (hookd waits 10 s).
const busyTimeout = 2 * time.Second

const schema = `
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
`

// Inbox is the SQLite file; safe for concurrent use.
type Inbox struct {
	db *sql.DB
}

// OpenInbox opens (creating if needed) the inbox at path.
func OpenInbox(path string) (*Inbox, error) {
	// Every connection of the pool gets these (go-sqlite3's DSN options):
	// - _txlock=immediate: each transaction starts with BEGIN IMMEDIATE,
	//   taking the write lock up front, so two appliers never both read a
	//   row as pending, and a store that cannot get the lock fails at BEGIN;
	// - _synchronous=FULL: the log is synced at every commit, so a 2xx
	//   survives a power cut.
	options := url.Values{
		"_txlock":       {"immediate"},
		"_busy_timeout": {fmt.Sprint(busyTimeout.Milliseconds())},
		"_synchronous":  {"FULL"},
	}
	db, err := sql.Open("sqlite3", "file:"+(&url.URL{Path: path}).EscapedPath()+"?"+options.Encode())
	if err != nil {
		return nil, err
	}
	// WAL lets readers (your dashboards, a reconciler) run beside the
	// writer. It is a property of the file, set once.
	if _, err := db.Exec("PRAGMA journal_mode=WAL"); err != nil {
		db.Close()
		return nil, fmt.Errorf("setting WAL mode: %w", err)
	}
	if _, err := db.Exec(schema); err != nil {
		db.Close()
		return nil, fmt.Errorf("creating the tables: %w", err)
	}
	return &Inbox{db: db}, nil
}

func (in *Inbox) Close() error { return in.db.Close() }

func nowMs() int64 { return time.Now().UnixMilli() }

// Store stores an event unless its id is already there; it reports whether
// the event was new. Committed (and synced) when it returns nil: only then
// may the caller answer 2xx.
func (in *Inbox) Store(ctx context.Context, webhookID, eventType string, body []byte, source string) (bool, error) {
	tx, err := in.db.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer tx.Rollback() // a no-op after Commit
	res, err := tx.ExecContext(ctx,
		`INSERT INTO inbox (webhook_id, event_type, body, source, received_at)
		 VALUES (?, ?, ?, ?, ?) ON CONFLICT (webhook_id) DO NOTHING`,
		webhookID, eventType, string(body), source, nowMs())
	if err != nil {
		return false, err
	}
	inserted, err := res.RowsAffected()
	if err != nil {
		return false, err
	}
	if inserted == 0 {
		_, err = tx.ExecContext(ctx,
			`UPDATE inbox SET received_count = received_count + 1 WHERE webhook_id = ?`, webhookID)
		if err != nil {
			return false, err
		}
	}
	if err := tx.Commit(); err != nil {
		return false, err
	}
	return inserted == 1, nil
}

// ApplyNext applies the oldest pending event; it reports false when none
// was pending.
//
// The business effect and the inbox row's new status commit together: after
// a crash the event is still pending and is applied again, never half-applied.
func (in *Inbox) ApplyNext(ctx context.Context) (bool, error) {
	tx, err := in.db.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	var rowID int64
	var webhookID, body string
	err = tx.QueryRowContext(ctx,
		`SELECT id, webhook_id, body FROM inbox WHERE status = 'pending' ORDER BY id LIMIT 1`,
	).Scan(&rowID, &webhookID, &body)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, err
	}

	// A handler that fails undoes its own writes (back to the savepoint)
	// and marks the event failed: a bad event must not block the ones
	// behind it.
	if _, err := tx.ExecContext(ctx, "SAVEPOINT effect"); err != nil {
		return false, err
	}
	status, effectErr := applyEvent(ctx, tx, []byte(body))
	var errText sql.NullString
	if effectErr != nil {
		if _, err := tx.ExecContext(ctx, "ROLLBACK TO effect"); err != nil {
			return false, err
		}
		status, errText = "failed", sql.NullString{String: effectErr.Error(), Valid: true}
		log.Printf("event %s failed: %v", webhookID, effectErr)
	}
	if _, err := tx.ExecContext(ctx, "RELEASE effect"); err != nil {
		return false, err
	}
	_, err = tx.ExecContext(ctx,
		`UPDATE inbox SET status = ?, processed_at = ?, error = ? WHERE id = ?`,
		status, nowMs(), errText, rowID)
	if err != nil {
		return false, err
	}
	if err := tx.Commit(); err != nil {
		return false, err
	}
	log.Printf("event %s: %s", webhookID, status)
	return true, nil
}

// Drain applies every pending event; it returns how many.
func (in *Inbox) Drain(ctx context.Context) (int, error) {
	n := 0
	for {
		applied, err := in.ApplyNext(ctx)
		if err != nil || !applied {
			return n, err
		}
		n++
	}
}

// Work applies pending events in arrival order, after they were
// acknowledged, until ctx ends: when woken, and once a second for what
// another process (a reconciler) stored. It starts with what a crash or a
// shutdown left pending.
func (in *Inbox) Work(ctx context.Context, wake <-chan struct{}) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		// Cancelling ctx rolls back the event being applied: it stays
		// pending and is applied at the next start.
		if _, err := in.Drain(ctx); err != nil && ctx.Err() == nil {
			log.Printf("applying events: %v", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-wake:
		case <-tick.C:
		}
	}
}
