/**
 * The durable inbox: every event is stored here before it is acknowledged,
 * and applied from here afterwards.
 *
 * One SQLite file holds three tables:
 *
 * - `inbox`: one row per `webhook-id` (UNIQUE), the exact body received and
 *   what became of it (`pending`, `applied`, `stale`, `ignored`, `test`,
 *   `failed`);
 * - `subjects`: the newest applied state of each subject (a customer, an API
 *   key, a balance), with its `subject.version`; an older version is stale;
 * - `ledger`: money facts (usage charges, credit adjustments), one row per
 *   source id, so a fact is booked once however often it arrives.
 *
 * Replace the handlers at the bottom with your own; keep the shape: one
 * transaction that checks, applies and marks the inbox row.
 *
 * better-sqlite3 is synchronous: each call blocks the event loop while it
 * runs. These transactions take microseconds; only a lock held by another
 * process makes one wait, for at most `BUSY_TIMEOUT_MS`.
 */

import Database from "better-sqlite3";

import { log } from "./log.js";

/**
 * How long a write waits for SQLite's lock. The webhook handler answers 503
 * after this (the sender retries), so keep it well under the sender's own
 * timeout (hookd waits 10 s).
 */
const BUSY_TIMEOUT_MS = 2_000;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS inbox (
    id             INTEGER PRIMARY KEY,         -- arrival order: the applier's queue order
    webhook_id     TEXT NOT NULL UNIQUE,        -- the event id; a duplicate is a normal outcome
    event_type     TEXT NOT NULL,
    body           TEXT NOT NULL,               -- the exact JSON that was signed
    source         TEXT NOT NULL,               -- 'webhook', or 'feed' from a reconciler
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
`;

/** What became of an event; the `status` of its inbox row. */
export type Status = "pending" | "applied" | "stale" | "ignored" | "test" | "failed";

/** The inbox file, open, with the statements every request runs. */
export class Inbox {
  private readonly db: Database.Database;
  private readonly insert: Database.Statement<[string, string, string, string, number]>;
  private readonly recount: Database.Statement<[string]>;
  private readonly pending: Database.Statement<[]>;
  private readonly next: Database.Statement<[], { id: number; webhook_id: string; body: string }>;
  private readonly mark: Database.Statement<[Status, number, string | null, number]>;

  /** Opens (and on first use creates) the inbox at `path`. */
  constructor(path: string) {
    this.db = new Database(path, { timeout: BUSY_TIMEOUT_MS });
    // WAL lets readers (a reconciler, your dashboards) run beside the writer;
    // FULL syncs the log at every commit, so a 2xx survives a power cut.
    this.db.pragma("journal_mode = WAL");
    this.db.pragma("synchronous = FULL");
    this.db.exec(SCHEMA);
    this.insert = this.db.prepare(
      `INSERT INTO inbox (webhook_id, event_type, body, source, received_at)
       VALUES (?, ?, ?, ?, ?) ON CONFLICT (webhook_id) DO NOTHING`,
    );
    this.recount = this.db.prepare("UPDATE inbox SET received_count = received_count + 1 WHERE webhook_id = ?");
    this.pending = this.db.prepare("SELECT 1 FROM inbox WHERE status = 'pending' LIMIT 1");
    this.next = this.db.prepare("SELECT id, webhook_id, body FROM inbox WHERE status = 'pending' ORDER BY id LIMIT 1");
    this.mark = this.db.prepare("UPDATE inbox SET status = ?, processed_at = ?, error = ? WHERE id = ?");
  }

  /**
   * Stores an event unless its id is already there; returns whether it was
   * new. Committed (and synced) when this returns: only then may the caller
   * answer 2xx. Throws (a `SqliteError`) when it cannot store.
   */
  store(webhookId: string, eventType: string, body: string, source: "webhook" | "feed"): boolean {
    // IMMEDIATE takes the write lock up front, so two writers (this process
    // and a reconciler) never both read a row as pending.
    return this.db
      .transaction(() => {
        const inserted = this.insert.run(webhookId, eventType, body, source, Date.now()).changes > 0;
        if (!inserted) this.recount.run(webhookId);
        return inserted;
      })
      .immediate();
  }

  /** Whether any event waits to be applied (a read: WAL takes no lock for it). */
  hasPending(): boolean {
    return this.pending.get() !== undefined;
  }

  /**
   * Applies the oldest pending event; returns false when none was pending.
   *
   * The business effect and the inbox row's new status commit together: after
   * a crash the event is still pending and is applied again, never half-applied.
   */
  applyNext(): boolean {
    const db = this.db;
    const outcome = db
      .transaction(() => {
        const row = this.next.get();
        if (row === undefined) return null;
        let status: Status;
        let error: string | null = null;
        try {
          // A transaction inside a transaction is a savepoint: a handler that
          // throws takes back its own writes, and the row is marked failed.
          status = db.transaction(() => applyEvent(db, parseEnvelope(row.body)))();
        } catch (e) {
          // A bad event must not block the ones behind it.
          status = "failed";
          error = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
          log.error(`event ${row.webhook_id} failed: ${error}`);
        }
        this.mark.run(status, Date.now(), error, row.id);
        return { webhookId: row.webhook_id, status };
      })
      .immediate();
    if (outcome === null) return false;
    log.info(`event ${outcome.webhookId}: ${outcome.status}`);
    return true;
  }

  close(): void {
    this.db.close();
  }
}

// hookd's own test and conformance-check events: acknowledged, stored (so a
// repeated id is still a duplicate), and never given to a business handler.
// Route on the type in the signed body, not on the `webhook-check` header,
// which nobody signed.
const TEST_TYPES: ReadonlySet<string> = new Set(["webhook.test", "webhook.check"]);

/** The envelope fields the handlers read. */
interface Envelope {
  event_id: string;
  type: string;
  subject: { type: string; id: string; version: number | null } | null;
  data: Record<string, unknown>;
}

/** The stored body as an `Envelope`, or an error saying what is missing. */
function parseEnvelope(body: string): Envelope {
  const event: unknown = JSON.parse(body);
  const bad = (what: string) => new TypeError(`the event has no ${what}`);
  if (!isObject(event)) throw bad("envelope");
  const { event_id, type, subject } = event;
  if (typeof event_id !== "string") throw bad("event_id");
  if (typeof type !== "string") throw bad("type");
  const data = event.data ?? {};
  if (!isObject(data)) throw bad("data object");
  if (subject === undefined || subject === null) return { event_id, type, subject: null, data };
  if (!isObject(subject) || typeof subject.type !== "string" || typeof subject.id !== "string") {
    throw bad("valid subject");
  }
  let version: number | null = null;
  if (subject.version !== undefined && subject.version !== null) {
    if (typeof subject.version !== "number" || !Number.isSafeInteger(subject.version)) {
      throw bad("integer subject.version");
    }
    version = subject.version;
  }
  return { event_id, type, subject: { type: subject.type, id: subject.id, version }, data };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Routes one event; returns the inbox status it ends in. */
function applyEvent(db: Database.Database, event: Envelope): Status {
  if (TEST_TYPES.has(event.type)) return "test";
  if (STATE_TYPES.has(event.type)) return applyState(db, event);
  const fact = FACT_HANDLERS.get(event.type);
  if (fact !== undefined) {
    fact(db, event);
    return "applied";
  }
  // A type added to the catalog after this code was written: acknowledged
  // and kept in the inbox, so you can apply it once you have a handler.
  return "ignored";
}

// ----- state: keep the newest version of each subject -----

// Events that carry a snapshot of a subject's state. Applying an older
// snapshot after a newer one would move the state backwards.
const STATE_TYPES: ReadonlySet<string> = new Set([
  "customer.created",
  "customer.status_changed",
  "api_key.created",
  "api_key.status_changed",
  "balance.updated",
]);

function applyState(db: Database.Database, event: Envelope): Status {
  const subject = event.subject;
  if (!subject) {
    log.warn(`state event ${event.event_id} has no subject: nothing to update`);
    return "applied";
  }
  const version = subject.version;
  const current = db
    .prepare("SELECT version FROM subjects WHERE subject_type = ? AND subject_id = ?")
    .get(subject.type, subject.id) as { version: number | null } | undefined;
  if (version !== null && current?.version != null && current.version >= version) {
    return "stale";
  }
  // Without a version there is no order to keep: the last one applied wins.
  // If that matters for a subject, read its current state from the Partner API.
  db.prepare(
    `INSERT INTO subjects (subject_type, subject_id, version, event_id, event_type, data, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (subject_type, subject_id) DO UPDATE SET
       version = COALESCE(excluded.version, subjects.version), event_id = excluded.event_id,
       event_type = excluded.event_type, data = excluded.data, updated_at = excluded.updated_at`,
  ).run(subject.type, subject.id, version, event.event_id, event.type, JSON.stringify(event.data), Date.now());
  return "applied";
}

// ----- facts: book each once, keyed on its own source id -----

type Handler = (db: Database.Database, event: Envelope) => void;

/** A string field of the event's data, or an error naming it. */
function text(event: Envelope, field: string): string {
  const value = event.data[field];
  if (typeof value !== "string" || value === "") {
    throw new TypeError(`${event.type} without a string ${field}`);
  }
  return value;
}

/**
 * A handler that books a money fact once per source id.
 *
 * The inbox already drops a repeated event id; the source id also holds when
 * the same fact reaches you another way (the feed, an export, a support fix).
 * Facts are never stale: an older adjustment still happened.
 */
function book(kind: string, sourceField: string, amountField: string): Handler {
  return (db, event) => {
    // Older schema versions may carry the source id only as the subject.
    const sourceId = event.data[sourceField] ?? event.subject?.id;
    if (typeof sourceId !== "string" || sourceId === "") {
      throw new TypeError(`${event.type} without ${sourceField} or a subject id`);
    }
    db.prepare(
      `INSERT INTO ledger (kind, source_id, customer_id, currency, amount, event_id)
       VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (kind, source_id) DO NOTHING`,
    ).run(
      kind,
      sourceId,
      text(event, "customer_id"),
      text(event, "currency"),
      text(event, amountField),
      event.event_id,
    );
  };
}

const FACT_HANDLERS: ReadonlyMap<string, Handler> = new Map([
  ["usage.finalized", book("usage", "usage_id", "final_cost")],
  ["credit.adjustment_posted", book("credit", "adjustment_id", "amount")],
]);
