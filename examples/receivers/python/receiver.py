"""A webhook receiver for hookd: verify, store durably, answer, then apply.

    WEBHOOK_SECRETS=whsec_… INBOX_DB=inbox.db PORT=8000 python3 receiver.py

CATALOG_DIR is the directory of hookd's catalog files `data` is validated
against (default: config/catalog/ beside this example in hookd's source).

POST /webhooks takes the events; GET /healthz answers 200. See README.md.
"""

from __future__ import annotations

import json
import logging
import os
import re
import signal
import sqlite3
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from standardwebhooks import Webhook, WebhookVerificationError

import inbox
import schema

log = logging.getLogger("receiver")

# hookd caps `data` at 256 KiB; the envelope adds little. Anything larger is
# refused before it is read.
MAX_BODY = 1024 * 1024


class Config:
    def __init__(self, env: dict[str, str]):
        secrets = re.split(r"[\s,]+", env.get("WEBHOOK_SECRETS", "").strip())
        secrets = [s for s in secrets if s]
        if not secrets:
            raise SystemExit("set WEBHOOK_SECRETS to the endpoint's whsec_ secret (during a rotation: both, space-separated)")
        for s in secrets:
            if not s.startswith("whsec_"):
                raise SystemExit("WEBHOOK_SECRETS: each secret starts with whsec_")
        # One verifier per secret: during a rotation overlap the receiver holds
        # the old and the new one, and an event signed with either verifies.
        self.verifiers = [Webhook(s) for s in secrets]
        self.host = env.get("HOST", "127.0.0.1")
        self.port = int(env.get("PORT", "8000"))
        self.db = env.get("INBOX_DB", "inbox.db")
        # The published schemas, by (type, version), read once at start.
        self.schemas = schema.load(env.get("CATALOG_DIR"))


class Rejected(Exception):
    """The request is not an event from hookd: answered 4xx, nothing stored."""

    def __init__(self, status: int, reason: str):
        super().__init__(reason)
        self.status = status


def verify(verifiers: list[Webhook], body: bytes, headers: dict[str, str]) -> dict:
    """Checks the signature (any `v1,` entry, any configured secret, compared in
    constant time by `hmac.compare_digest`) and the timestamp (at most 5 minutes
    off), then parses the body. Raises `Rejected`."""
    reason = "no signature matched"
    for verifier in verifiers:
        try:
            verifier.verify(body, headers, json_parse=False)
            break
        # The library raises ValueError (not its own error) for a malformed
        # entry, undecodable base64 or a body that is not UTF-8.
        except (WebhookVerificationError, ValueError) as e:
            reason = str(e) or type(e).__name__
    else:
        raise Rejected(401, f"signature verification failed: {reason}")
    try:
        event = json.loads(body)
    except ValueError:
        raise Rejected(400, "the body is not JSON") from None
    if not isinstance(event, dict) or not isinstance(event.get("type"), str):
        raise Rejected(400, "the body is not an event")
    return event


def validate(schemas: dict[tuple[str, int], dict], event: dict) -> None:
    """Checks `data` against the published schema of the event's type at its
    `schema_version`. A type without a schema passes (stored and `ignored`);
    a version this receiver does not know, or `data` that does not match, is
    refused with 422: not stored, so hookd retries. Raises `Rejected`."""
    event_type, version = event["type"], event.get("schema_version")
    if not any(t == event_type for t, _ in schemas):
        return
    found = schemas.get((event_type, version))
    if found is None:
        raise Rejected(422, f"{event_type} v{version} is not a version this receiver knows; pin the endpoint")
    problems = schema.errors(found, event.get("data"))
    if problems:
        raise Rejected(422, f"data does not match the schema of {event_type} v{version}: " + "; ".join(problems))


class Handler(BaseHTTPRequestHandler):
    # Set by `serve`.
    config: Config
    wake: threading.Event
    # A client that stops sending is cut off instead of holding a thread.
    timeout = 10

    def do_GET(self) -> None:
        if self.path == "/healthz":
            self.answer(200, "ok")
        else:
            self.answer(404, "not found")

    def do_POST(self) -> None:
        if self.path != "/webhooks":
            self.answer(404, "not found")
            return
        length = self.headers.get("content-length")
        if length is None or not length.isdigit():
            self.answer(411, "a content-length is required")
            return
        if int(length) > MAX_BODY:
            self.answer(413, "the body is too large")
            self.close_connection = True
            return
        body = self.rfile.read(int(length))
        headers = {name.lower(): value for name, value in self.headers.items()}
        try:
            event = verify(self.config.verifiers, body, headers)
            validate(self.config.schemas, event)
        except Rejected as e:
            log.warning("rejected %s: %s", headers.get("webhook-id", "(no id)"), e)
            self.answer(e.status, str(e))
            return

        webhook_id = headers["webhook-id"]
        conn = None
        try:
            conn = inbox.connect(self.config.db)
            new = inbox.store(conn, webhook_id, event["type"], body.decode(), "webhook")
        except sqlite3.Error as e:
            # Not stored, so not acknowledged: the sender tries again later.
            log.error("could not store %s: %s", webhook_id, e)
            self.answer(503, "the inbox is unavailable; retry later")
            return
        finally:
            if conn is not None:
                conn.close()
        # Stored and synced: now the 2xx is true. The work happens after it.
        self.answer(200, "stored" if new else "duplicate")
        if new:
            self.wake.set()

    def answer(self, status: int, text: str) -> None:
        payload = text.encode()
        self.send_response(status)
        self.send_header("content-type", "text/plain; charset=utf-8")
        self.send_header("content-length", str(len(payload)))
        # One request per connection (HTTP/1.0), said plainly for clients
        # that would otherwise keep it for the next request.
        self.send_header("connection", "close")
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args) -> None:
        log.debug("%s %s", self.address_string(), format % args)


class Server(ThreadingHTTPServer):
    # The standard library listens with a backlog of 5: a burst of
    # deliveries (or retries after an outage) would have its connections
    # dropped before they are accepted, and fail as connect errors.
    request_queue_size = 128


def worker(db: str, wake: threading.Event) -> None:
    """Applies pending events in arrival order, after they were acknowledged.

    Also picks up what a crash left pending and what the reconciler stored.
    """
    conn = inbox.connect(db)
    while True:
        wake.clear()
        try:
            inbox.drain(conn)
        except sqlite3.Error as e:
            log.error("applying events: %s", e)
        wake.wait(timeout=1.0)


def serve(config: Config) -> None:
    inbox.init(config.db)
    wake = threading.Event()
    threading.Thread(target=worker, args=(config.db, wake), name="apply", daemon=True).start()
    handler = type("BoundHandler", (Handler,), {"config": config, "wake": wake})
    server = Server((config.host, config.port), handler)
    server.daemon_threads = True
    # SIGTERM stops accepting; what is stored and not yet applied stays
    # pending in the inbox and is applied at the next start.
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown).start())
    log.info("receiving on http://%s:%d/webhooks, inbox %s", config.host, config.port, config.db)
    try:
        server.serve_forever()
    finally:
        server.server_close()


if __name__ == "__main__":
    logging.basicConfig(
        level=os.environ.get("LOG_LEVEL", "INFO"),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    serve(Config(dict(os.environ)))
