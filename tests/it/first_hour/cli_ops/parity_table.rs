//! The table of every leaf command of `hookd`: the arguments it runs with
//! on a bed (a `serve` child with a partner, two endpoints on a receiver,
//! one event delivered to the first), the exit statuses it may end with,
//! and what its output must show. Rows run in order; later rows may rely
//! on earlier ones (the second endpoint is disabled, then deleted).

use serde_json::{Value, json};

pub use super::parity_world::World;

/// One leaf command: its path, its arguments on the world (none: the
/// bed's `serve`), the exit statuses it may end with, and what its
/// standard output must show.
pub struct Row {
    pub path: &'static str,
    pub args: fn(&World) -> Vec<String>,
    pub codes: &'static [i32],
    pub check: fn(&World, &str) -> bool,
}

fn v(args: &[&str]) -> Vec<String> {
    args.iter().map(|a| a.to_string()).collect()
}

/// `args` with `--json` last.
fn j(args: &[&str]) -> Vec<String> {
    let mut a = v(args);
    a.push("--json".into());
    a
}

/// The JSON the command printed (`Null` when it is not JSON).
fn json_of(stdout: &str) -> Value {
    serde_json::from_str(stdout).unwrap_or(Value::Null)
}

/// Whether the JSON has a non-null value at `pointer`.
fn has(stdout: &str, pointer: &str) -> bool {
    json_of(stdout)
        .pointer(pointer)
        .is_some_and(|v| !v.is_null())
}

/// Whether the JSON has `want` at `pointer`.
fn at(stdout: &str, pointer: &str, want: Value) -> bool {
    json_of(stdout).pointer(pointer) == Some(&want)
}

const OK: &[i32] = &[0];
/// A check: 0 when every case passed, 1 when some failed.
const CHECKED: &[i32] = &[0, 1];

pub const ROWS: &[Row] = &[
    Row {
        path: "serve",
        args: |_| vec![],
        codes: OK,
        check: |_, o| o == "healthz 200",
    },
    Row {
        path: "migrate",
        args: |_| v(&["migrate"]),
        codes: OK,
        check: |_, o| o.contains("is up to date"),
    },
    Row {
        path: "demo",
        args: |_| v(&["demo", "--events", "1", "--exit-when-delivered"]),
        codes: OK,
        check: |_, o| o.contains("all 1 events delivered"),
    },
    Row {
        path: "catalog check",
        args: |_| j(&["catalog", "check"]),
        codes: OK,
        check: |_, o| {
            json_of(o)["data"]
                .as_array()
                .is_some_and(|d| d.iter().any(|t| t["type"] == json!("usage.finalized")))
        },
    },
    Row {
        path: "check-receiver",
        args: |w| {
            j(&[
                "check-receiver",
                "--url",
                &w.receiver("/a"),
                "--secret",
                "whsec_MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=",
            ])
        },
        codes: CHECKED,
        check: |_, o| has(o, "/cases/0/name"),
    },
    Row {
        path: "partner create",
        args: |_| j(&["partner", "create", "--name", "Other", "--id", "other"]),
        codes: OK,
        check: |_, o| at(o, "/id", json!("other")),
    },
    Row {
        path: "partner list",
        args: |_| j(&["partner", "list"]),
        codes: OK,
        check: |_, o| has(o, "/data/1/id"),
    },
    Row {
        path: "partner get",
        args: |w| j(&["partner", "get", &w.partner()]),
        codes: OK,
        check: |w, o| at(o, "/id", json!(w.partner())),
    },
    Row {
        path: "partner update",
        args: |w| {
            j(&[
                "partner",
                "update",
                &w.partner(),
                "--notification-url",
                &w.receiver("/notices"),
            ])
        },
        codes: OK,
        check: |w, o| at(o, "/notification_url", json!(w.receiver("/notices"))),
    },
    Row {
        path: "partner portal-link",
        args: |w| {
            j(&[
                "partner",
                "portal-link",
                &w.partner(),
                "--base-url",
                "https://hooks.example.com",
            ])
        },
        codes: OK,
        check: |_, o| {
            json_of(o)["url"]
                .as_str()
                .is_some_and(|u| u.starts_with("https://hooks.example.com/portal/link/"))
        },
    },
    Row {
        path: "key create",
        args: |_| j(&["key", "create", "--service"]),
        codes: OK,
        check: |_, o| has(o, "/key"),
    },
    Row {
        path: "key list",
        args: |_| j(&["key", "list"]),
        codes: OK,
        check: |_, o| has(o, "/data/0/id"),
    },
    Row {
        path: "key revoke",
        args: |w| j(&["key", "revoke", &w.key_id]),
        codes: OK,
        check: |w, o| at(o, "/id", json!(w.key_id)),
    },
    Row {
        path: "endpoint create",
        args: |w| {
            j(&[
                "endpoint",
                "create",
                "--partner",
                &w.partner(),
                "--url",
                &w.receiver("/c"),
            ])
        },
        codes: OK,
        check: |_, o| has(o, "/secret"),
    },
    Row {
        path: "endpoint list",
        args: |_| j(&["endpoint", "list"]),
        codes: OK,
        check: |_, o| has(o, "/data/2/id"),
    },
    Row {
        path: "endpoint get",
        args: |w| j(&["endpoint", "get", &w.ep]),
        codes: OK,
        check: |w, o| {
            at(o, "/circuit/state", json!("closed"))
                && at(o, "/partner_id", json!(w.partner()))
                && at(o, "/last_error", Value::Null)
        },
    },
    Row {
        path: "endpoint update",
        args: |w| j(&["endpoint", "update", &w.ep, "--description", "parity"]),
        codes: OK,
        check: |_, o| at(o, "/description", json!("parity")),
    },
    Row {
        path: "endpoint held",
        args: |w| j(&["endpoint", "held", &w.ep]),
        codes: OK,
        check: |_, o| at(o, "/data", json!([])),
    },
    Row {
        path: "endpoint enable",
        args: |w| j(&["endpoint", "enable", &w.ep]),
        codes: OK,
        check: |_, o| at(o, "/status", json!("active")),
    },
    Row {
        path: "endpoint disable",
        args: |w| j(&["endpoint", "disable", &w.ep_b]),
        codes: OK,
        check: |_, o| at(o, "/status", json!("disabled")),
    },
    Row {
        path: "endpoint auth show",
        args: |w| j(&["endpoint", "auth", "show", &w.ep]),
        codes: OK,
        check: |_, o| json_of(o).is_object(),
    },
    Row {
        path: "endpoint auth headers",
        args: |w| {
            j(&[
                "endpoint",
                "auth",
                "headers",
                &w.ep,
                "--header",
                "X-Tenant: acme",
            ])
        },
        codes: OK,
        check: |_, o| json_of(o).is_object(),
    },
    Row {
        path: "endpoint auth oauth2",
        args: |w| j(&["endpoint", "auth", "oauth2", &w.ep, "--remove"]),
        codes: OK,
        check: |_, o| json_of(o).is_object(),
    },
    Row {
        path: "endpoint auth client-certificate",
        args: |w| j(&["endpoint", "auth", "client-certificate", &w.ep, "--remove"]),
        codes: OK,
        check: |_, o| json_of(o).is_object(),
    },
    Row {
        path: "endpoint rotate-secret",
        args: |w| {
            j(&[
                "endpoint",
                "rotate-secret",
                &w.ep,
                "--overlap-seconds",
                "60",
            ])
        },
        codes: OK,
        check: |_, o| {
            json_of(o)["secret"]
                .as_str()
                .is_some_and(|s| s.starts_with("whsec_"))
                && has(o, "/previous_expires_at")
        },
    },
    Row {
        path: "endpoint expire-previous",
        args: |w| j(&["endpoint", "expire-previous", &w.ep]),
        codes: OK,
        check: |_, o| at(o, "/expired", json!(1)),
    },
    Row {
        path: "endpoint test",
        args: |w| j(&["endpoint", "test", &w.ep]),
        codes: OK,
        check: |_, o| has(o, "/event_id") && has(o, "/delivery_id"),
    },
    Row {
        path: "endpoint recover",
        args: |w| j(&["endpoint", "recover", &w.ep, "--since", &w.since]),
        codes: OK,
        check: |_, o| at(o, "/replayed", json!(0)),
    },
    Row {
        path: "endpoint check",
        args: |w| j(&["endpoint", "check", &w.ep]),
        codes: CHECKED,
        check: |w, o| at(o, "/endpoint_id", json!(w.ep)) && has(o, "/cases/0/name"),
    },
    Row {
        path: "endpoint filter-test",
        args: |w| {
            j(&[
                "endpoint",
                "filter-test",
                &w.ep,
                "--event",
                &w.event,
                "--no-filter",
            ])
        },
        codes: OK,
        check: |_, o| at(o, "/matched", json!(true)) && at(o, "/filter", Value::Null),
    },
    Row {
        path: "endpoint checks",
        args: |w| j(&["endpoint", "checks", &w.ep]),
        codes: OK,
        check: |w, o| at(o, "/data/0/endpoint_id", json!(w.ep)) && has(o, "/data/0/cases"),
    },
    Row {
        path: "endpoint delete",
        args: |w| j(&["endpoint", "delete", &w.ep_b, "--yes"]),
        codes: OK,
        check: |_, o| at(o, "/deleted", json!(true)),
    },
    Row {
        path: "delivery list",
        args: |w| j(&["delivery", "list", "--endpoint", &w.ep, "--event", &w.event]),
        codes: OK,
        check: |w, o| at(o, "/data/0/id", json!(w.delivery)),
    },
    Row {
        path: "delivery get",
        args: |w| j(&["delivery", "get", &w.delivery]),
        codes: OK,
        check: |_, o| at(o, "/attempts/0/status_code", json!(200)),
    },
    Row {
        path: "delivery replay",
        args: |w| j(&["delivery", "replay", &w.delivery]),
        codes: OK,
        check: |_, o| at(o, "/sends", json!("now")),
    },
    // Not a dead head holding its subject: refused (a conflict, exit 1).
    Row {
        path: "delivery skip",
        args: |w| v(&["delivery", "skip", &w.delivery]),
        codes: &[1],
        check: |_, o| o.is_empty(),
    },
    Row {
        path: "delivery attempts",
        args: |w| {
            j(&[
                "delivery",
                "attempts",
                "--delivery",
                &w.delivery,
                "--outcome",
                "succeeded",
                "--since",
                &w.since,
            ])
        },
        codes: OK,
        check: |w, o| {
            at(o, "/data/0/delivery_id", json!(w.delivery))
                && at(o, "/data/0/endpoint_id", json!(w.ep))
                && at(o, "/data/0/status_code", json!(200))
        },
    },
    Row {
        path: "event get",
        args: |w| j(&["event", "get", &w.event]),
        codes: OK,
        check: |w, o| at(o, "/deliveries/0/endpoint_id", json!(w.ep)),
    },
    Row {
        path: "event list",
        args: |w| j(&["event", "list", "--partner", &w.partner()]),
        codes: OK,
        check: |w, o| {
            json_of(o)["data"]
                .as_array()
                .is_some_and(|d| d.iter().any(|e| e["event"]["event_id"] == json!(w.event)))
        },
    },
    Row {
        path: "event export",
        args: |w| {
            v(&[
                "event",
                "export",
                "--partner",
                &w.partner(),
                "--since",
                &w.since,
            ])
        },
        codes: OK,
        check: |w, o| o.contains(&w.event) && o.contains("\n{\"end\":{\"complete\":true,"),
    },
    Row {
        path: "event publish",
        args: |w| j(&["event", "publish", &w.event_file("publish")]),
        codes: OK,
        check: |w, o| at(o, "/partner_id", json!(w.partner())) && has(o, "/event_id"),
    },
    Row {
        path: "incident list",
        args: |w| j(&["incident", "list", "--partner", &w.partner(), "--open"]),
        codes: OK,
        check: |w, o| {
            at(o, "/data/0/id", json!(w.incident)) && at(o, "/data/0/state", json!("open"))
        },
    },
    Row {
        path: "incident resolve",
        args: |w| j(&["incident", "resolve", &w.incident]),
        codes: OK,
        check: |w, o| at(o, "/id", json!(w.incident)) && at(o, "/state", json!("resolved")),
    },
    Row {
        path: "incident open",
        args: |w| {
            j(&[
                "incident",
                "open",
                "--partner",
                &w.partner(),
                "--message",
                "opened by the CLI",
            ])
        },
        codes: OK,
        check: |w, o| at(o, "/partner_id", json!(w.partner())) && at(o, "/state", json!("open")),
    },
    Row {
        path: "audit list",
        args: |w| j(&["audit", "list", "--target", &w.ep]),
        codes: OK,
        check: |_, o| at(o, "/data/0/via", json!("cli")),
    },
];
