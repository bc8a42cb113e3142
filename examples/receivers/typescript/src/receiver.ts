/**
 * A webhook receiver for hookd: verify, store durably, answer, then apply.
 *
 *     WEBHOOK_SECRETS=whsec_… INBOX_DB=inbox.db PORT=8000 node dist/receiver.js
 *
 * CATALOG_DIR is the directory of hookd's catalog files `data` is validated
 * against (default: config/catalog/ beside this example in hookd's source).
 *
 * POST /webhooks takes the events; GET /healthz answers 200. See README.md.
 */

import { createServer, type IncomingMessage, type ServerResponse } from "node:http";

import Database from "better-sqlite3";

import { Inbox } from "./inbox.js";
import { log } from "./log.js";
import { Schemas } from "./schema.js";
import { Rejected, Secret, verify } from "./verify.js";

// hookd caps `data` at 256 KiB; the envelope adds little. Anything larger is
// refused before it is read.
const MAX_BODY = 1024 * 1024;

interface Config {
  secrets: Secret[];
  host: string;
  port: number;
  db: string;
  /** The published schemas `data` is validated against. */
  schemas: Schemas;
}

function configure(env: NodeJS.ProcessEnv): Config {
  const texts = (env.WEBHOOK_SECRETS ?? "").split(/[\s,]+/).filter((s) => s !== "");
  if (texts.length === 0) {
    throw new Error("set WEBHOOK_SECRETS to the endpoint's whsec_ secret (during a rotation: both, space-separated)");
  }
  const port = Number(env.PORT ?? "8000");
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`PORT is not a port number: ${env.PORT}`);
  }
  return {
    // During a rotation overlap the receiver holds the old and the new
    // secret, and an event signed with either verifies.
    secrets: texts.map((text) => Secret.parse(text)),
    host: env.HOST ?? "127.0.0.1",
    port,
    db: env.INBOX_DB ?? "inbox.db",
    schemas: Schemas.load(env.CATALOG_DIR ?? new URL("../../../../config/catalog/", import.meta.url).pathname),
  };
}

/** Reads the body, at most `MAX_BODY` bytes of it. */
async function readBody(req: IncomingMessage): Promise<Buffer> {
  if (Number(req.headers["content-length"]) > MAX_BODY) {
    throw new Rejected(413, "the body is too large");
  }
  const chunks: Buffer[] = [];
  let size = 0;
  // A chunked body that runs past the limit: leaving the loop cuts the
  // connection, which is all such a sender gets.
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY) throw new Rejected(413, "the body is too large");
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/**
 * The verified body as text, and its event type; throws `Rejected`: 400 when
 * it is not an event, 422 when its `data` does not match the published schema
 * of its type and `schema_version` (not stored, so hookd retries).
 */
function parseEvent(body: Buffer, schemas: Schemas): { text: string; type: string } {
  let event: unknown;
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(body);
    event = JSON.parse(text);
  } catch {
    throw new Rejected(400, "the body is not JSON");
  }
  if (typeof event !== "object" || event === null || !("type" in event) || typeof event.type !== "string") {
    throw new Rejected(400, "the body is not an event");
  }
  const { schema_version: version, data } = event as { schema_version?: unknown; data?: unknown };
  const problems = schemas.check(event.type, version, data);
  if (problems.length > 0) {
    throw new Rejected(422, `data does not match the schema of ${event.type} v${String(version)}: ${problems.join("; ")}`);
  }
  return { text, type: event.type };
}

/**
 * Applies pending events one per turn of the event loop, after their answers
 * went out, so a backlog never holds up a request for long.
 */
class Applier {
  private scheduled = false;
  private stopped = false;
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly inbox: Inbox) {
    // Also picks up what a crash left pending and what a reconciler stored.
    this.timer = setInterval(() => {
      try {
        if (this.inbox.hasPending()) this.wake();
      } catch (e) {
        log.error(`reading the inbox: ${String(e)}`);
      }
    }, 1_000);
  }

  wake(): void {
    if (this.scheduled || this.stopped) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      if (this.stopped) return;
      try {
        if (this.inbox.applyNext()) this.wake();
      } catch (e) {
        // The inbox is locked or unavailable: the timer tries again.
        log.error(`applying events: ${String(e)}`);
      }
    });
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
  }
}

function answer(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { "content-type": "text/plain; charset=utf-8", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

async function receive(config: Config, inbox: Inbox, applier: Applier, req: IncomingMessage, res: ServerResponse) {
  const path = new URL(req.url ?? "/", "http://receiver").pathname;
  if (path === "/healthz" && req.method === "GET") return answer(res, 200, "ok");
  if (path !== "/webhooks") return answer(res, 404, "not found");
  if (req.method !== "POST") {
    res.setHeader("allow", "POST");
    return answer(res, 405, "POST only");
  }

  let webhookId: string;
  let event: { text: string; type: string };
  try {
    const body = await readBody(req);
    webhookId = verify(config.secrets, body, req.headers);
    event = parseEvent(body, config.schemas);
  } catch (e) {
    if (!(e instanceof Rejected)) throw e;
    log.warn(`rejected ${req.headers["webhook-id"] ?? "(no id)"}: ${e.message}`);
    // A body refused as too large is left unread: close the connection
    // rather than read on to the next request.
    if (e.status === 413) res.setHeader("connection", "close");
    return answer(res, e.status, e.message);
  }

  let isNew: boolean;
  try {
    isNew = inbox.store(webhookId, event.type, event.text, "webhook");
  } catch (e) {
    if (!(e instanceof Database.SqliteError)) throw e;
    // Not stored, so not acknowledged: the sender tries again later.
    log.error(`could not store ${webhookId}: ${e.code} ${e.message}`);
    return answer(res, 503, "the inbox is unavailable; retry later");
  }
  // Stored and synced: now the 2xx is true. The work happens after it.
  answer(res, 200, isNew ? "stored" : "duplicate");
  if (isNew) applier.wake();
}

function serve(config: Config): void {
  const inbox = new Inbox(config.db);
  const applier = new Applier(inbox);
  // A client that stops sending is cut off instead of holding a connection.
  const server = createServer({ requestTimeout: 10_000, headersTimeout: 5_000 }, (req, res) => {
    receive(config, inbox, applier, req, res).catch((e: unknown) => {
      log.error(`${req.method} ${req.url}: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
      if (!res.headersSent) answer(res, 500, "internal error");
    });
  });
  // SIGTERM stops accepting; what is stored and not yet applied stays
  // pending in the inbox and is applied at the next start.
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    process.once(signal, () => {
      log.info(`${signal}: stopping`);
      applier.stop();
      server.close(() => inbox.close());
    });
  }
  server.listen(config.port, config.host, () => {
    log.info(`receiving on http://${config.host}:${config.port}/webhooks, inbox ${config.db}`);
    applier.wake();
  });
}

let config: Config;
try {
  config = configure(process.env);
} catch (e) {
  log.error(e instanceof Error ? e.message : String(e));
  process.exit(2);
}
serve(config);
