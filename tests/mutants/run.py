#!/usr/bin/env python3
"""Mutation check: each mutation below breaks one behaviour a test names; the
test must then FAIL. Run from the repository root:

    python3 tests/mutants/run.py          # all of them
    python3 tests/mutants/run.py 3 7      # by number

It makes a throwaway git worktree of HEAD (your working tree stays as it is),
applies one mutation at a time, runs the named tests under CI=true, and
reverts. It builds in its own target directory (HOOKD_TEST_MUTANTS_TARGET, default
target/mutants: the first run builds the dependencies once), because a mutated
`hookd` binary must never land in target/debug where other tests run it.
Exit 1 when a mutation is not caught.

A mutation that no configuration can observe proves nothing: rounding a
rate-limit wait down instead of up is one (every configurable rate refills
within a second, so both say `Retry-After: 1`); its unit test covers it.
"""
import os, subprocess, sys, tempfile, time

ROOT = subprocess.run(["git", "rev-parse", "--show-toplevel"], capture_output=True, text=True, check=True).stdout.strip()
TARGET = os.environ.get("HOOKD_TEST_MUTANTS_TARGET", os.path.join(ROOT, "target", "mutants"))

# (what breaks, file, text, its replacement, the nextest arguments that must fail)
M=[
 ("retention ignores age", "src/store/retention.rs", "AND d.updated_at < ?", "AND d.updated_at < ? + 864000000000", ["--test","it","delivery::retention::finished_rows_younger_than_their_retention_are_kept"]),
 ("retention keeps dead deliveries", "src/store/retention.rs", "('delivered', 'dead', 'cancelled', 'skipped')", "('delivered', 'cancelled', 'skipped')", ["--test","it","delivery::retention::a_dead_delivery_past_retention"]),
 ("Retry-After honoured only to 11 s", "src/domain/retry.rs", "asked.min(self.retry_after_cap)", "asked.min(self.retry_after_cap).min(Duration::from_secs(11))", ["--test","it","retry_after"]),
 ("feed without the partner filter", "src/store/scoped_feed.rs", "            .filter(outbox_event::Column::PartnerId.eq(self.partner_id))\n            .filter(outbox_event::Column::FeedSeq.gt(after));", "            .filter(outbox_event::Column::FeedSeq.gt(after));", ["--test","it","partner_api::feed"]),
 ("feed ignores since", "src/store/scoped_feed.rs", "CreatedAt.gte(since)", "CreatedAt.gte(since - 86400000)", ["--test","it","partner_api::feed_time"]),
 ("events kept as long as deliveries", "config/default.toml", 'events = "90d"', 'events = "30d"', ["--test","it","delivery::retention::an_event_whose_deliveries_were_swept"]),
 ("session cookie SameSite=Lax", "src/web/chrome.rs", ".same_site(SameSite::Strict)", ".same_site(SameSite::Lax)", ["--test","it","dashboard::headers"]),
 ("key create --operator makes a service key", "src/cli/key.rs", "_ => (Role::Operator, None),", "_ => (Role::Service, None),", ["--test","it","cli::made"]),
 ("an unknown name recorded as connect", "src/delivery/attempt.rs", "Ok(Err(e)) => return unsent(ErrorCategory::Dns, e.to_string()),", "Ok(Err(e)) => return unsent(ErrorCategory::Connect, e.to_string()),", ["--test","it","egress::names::an_unknown_name"]),
 ("a metric renamed", "src/metrics.rs", '"deliveries_paused",', '"deliveries_held",', ["--test","it","observe::"]),
 ("readyz ready while the database is down", "src/http/health.rs", "Ok(Err(e)) => return Err(unready(e.to_string())),", "Ok(Err(_)) => {}", ["--test","it","crash::outage"]),
 ("a default differs from the README", "config/default.toml", 'sweep_interval = "5m"', 'sweep_interval = "6m"', ["--lib","config::tests"]),
 ("signing joins with ':'", "src/signing/mod.rs", 'mac.update(b".");\n    mac.update(timestamp', 'mac.update(b":");\n    mac.update(timestamp', ["--lib","signing::tests::vectors"]),
 ("skips pass under CI", "tests/it/harness/skip.rs", 'std::env::var("CI").is_ok_and(|v| v == "true")', 'false', ["--test","it","skips::"]),
 ("rate limits read the wall clock", "src/http/rate_limit.rs", "let now_ms = self.clock.now_ms();\n        let mut buckets", "let now_ms = chrono::Utc::now().timestamp_millis();\n        let mut buckets", ["--test","it","rate_limits::"]),
 ("an ordered subject's later events lead too", "src/domain/ordering.rs", "if free { Place::Head } else { Place::Waiting }", "if free || key.is_empty() { Place::Head } else { Place::Head }", ["--test","it","ordering::order::every_subject_arrives_in_commit_order"]),
 ("filters ignored at fanout", "src/store/fanout.rs", "if let Some(filter) = &s.filter {", "if let Some(filter) = s.filter.as_ref().filter(|_| false) {", ["--test","it","filters::an_event_that_does_not_pass"]),
 ("portal 429 without Retry-After", "src/portal/mod.rs", ".insert(actix_web::http::header::RETRY_AFTER, retry_after);", ".insert(actix_web::http::header::WARNING, retry_after);", ["--test","it","rate_limits::a_portal_session"]),
]


def main():
    only = set(sys.argv[1:])
    env = dict(os.environ, CARGO_TARGET_DIR=TARGET, CI="true")
    work = tempfile.mkdtemp(prefix="hookd-mutants-")
    subprocess.run(["git", "worktree", "add", "--detach", "-q", work, "HEAD"], cwd=ROOT, check=True)
    missed = []
    try:
        for i, (name, path, old, new, args) in enumerate(M):
            if only and str(i) not in only:
                continue
            file = os.path.join(work, path)
            text = open(file).read()
            if text.count(old) != 1:
                print(f"[{i}] {name}: the text to mutate is in {path} {text.count(old)} times, not once")
                missed.append(i)
                continue
            open(file, "w").write(text.replace(old, new))
            started = time.time()
            run = subprocess.run(["cargo", "nextest", "run", "--no-fail-fast"] + args,
                                 cwd=work, env=env, capture_output=True, text=True)
            open(file, "w").write(text)
            out = run.stdout + run.stderr
            failed = sorted({l.strip() for l in out.splitlines() if l.strip().startswith("FAIL [")})
            built = "error: could not compile" not in out
            caught = run.returncode != 0 and failed and built
            verdict = "caught" if caught else ("did not build" if not built else "NOT CAUGHT")
            print(f"[{i}] {name} ({path}): {verdict}, {len(failed)} failing, {time.time() - started:.0f} s", flush=True)
            for line in failed[:4]:
                print("      ", line, flush=True)
            if not caught:
                missed.append(i)
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", work], cwd=ROOT)
    if missed:
        print(f"not caught: {missed}")
        sys.exit(1)


if __name__ == "__main__":
    main()
