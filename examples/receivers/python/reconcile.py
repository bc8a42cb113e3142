"""Reconciles the inbox from hookd's event feed: whatever the webhooks missed.

    HOOKD_URL=https://hookd.example HOOKD_PARTNER_KEY=hkp_… INBOX_DB=inbox.db python3 reconcile.py

Reads `GET /v1/events` from the stored cursor (from the start the first time),
stores each page's events in the inbox and the page's `next_cursor` in one
transaction, then applies what is pending. An event the webhook already
brought is a duplicate in the inbox and is not applied again. Run it on a
schedule (every few minutes) and after any outage; a run that finds nothing
new is cheap. Prints one JSON line: {"read", "new", "applied", "cursor"}.
"""

from __future__ import annotations

import json
import os
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

import inbox

PAGE = 500


def fetch_page(base_url: str, key: str, after: str | None, event_type: str | None) -> dict:
    query = {"limit": str(PAGE)}
    if after:
        query["after"] = after
    if event_type:
        query["type"] = event_type
    url = f"{base_url.rstrip('/')}/v1/events?{urllib.parse.urlencode(query)}"
    request = urllib.request.Request(url, headers={"authorization": f"Bearer {key}", "accept": "application/json"})
    for attempt in range(5):
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return json.load(response)
        except urllib.error.HTTPError as e:
            # Rate limited or briefly unavailable: wait as told, then again.
            if e.code in (429, 503) and attempt < 4:
                time.sleep(min(float(e.headers.get("retry-after") or 1), 30))
                continue
            raise
    raise AssertionError("unreachable")


def reconcile(base_url: str, key: str, db: str, event_type: str | None = None) -> dict:
    inbox.init(db)
    # A filtered feed has positions of its own: one cursor per filter.
    name = f"hookd-events:{event_type or '*'}"
    conn = inbox.connect(db)
    try:
        row = conn.execute("SELECT cursor FROM feed_cursor WHERE name = ?", (name,)).fetchone()
        cursor = row[0] if row else None
        read = new = 0
        while True:
            page = fetch_page(base_url, key, cursor, event_type)
            events = page["data"]
            # The page's events and the cursor past them commit together: a
            # crash in between re-reads the page, and the inbox drops repeats.
            with inbox.Transaction(conn):
                for event in events:
                    body = json.dumps(event, separators=(",", ":"))
                    inserted = conn.execute(
                        "INSERT INTO inbox (webhook_id, event_type, body, source, received_at)"
                        " VALUES (?, ?, ?, 'feed', ?) ON CONFLICT (webhook_id) DO NOTHING",
                        (event["event_id"], event["type"], body, inbox.now_ms()),
                    ).rowcount
                    new += inserted
                conn.execute(
                    "INSERT INTO feed_cursor (name, cursor) VALUES (?, ?)"
                    " ON CONFLICT (name) DO UPDATE SET cursor = excluded.cursor",
                    (name, page["next_cursor"]),
                )
            read += len(events)
            cursor = page["next_cursor"]
            # Until a page comes back empty: the server may cap the page size.
            if not events:
                break
        applied = inbox.drain(conn)
        return {"read": read, "new": new, "applied": applied, "cursor": cursor}
    finally:
        conn.close()


def main() -> None:
    try:
        base_url = os.environ["HOOKD_URL"]
        key = os.environ["HOOKD_PARTNER_KEY"]
    except KeyError as e:
        raise SystemExit(f"set {e.args[0]} (HOOKD_URL, HOOKD_PARTNER_KEY; INBOX_DB defaults to inbox.db)") from None
    db = os.environ.get("INBOX_DB", "inbox.db")
    summary = reconcile(base_url, key, db, os.environ.get("FEED_TYPE") or None)
    print(json.dumps(summary))


if __name__ == "__main__":
    sys.exit(main())
