//! Every leaf command of `hookd`, run with the real binary against a live
//! `serve` and its database, in the table of `parity_table`; a command
//! missing from the table fails `every_leaf_command_of_hookd_is_in_the_table`.
//! What the new commands change is audited `via: cli`, and the test event
//! the CLI queues is delivered by the running engine.

use std::{collections::BTreeSet, process::Output};

use clap::CommandFactory as _;
use hookd_test_macros::both_backends;
use serde_json::Value;

use super::{
    bed::{Bed, cli_entry, stderr},
    parity_table::{ROWS, World},
};
use crate::harness::{Backend, SLOW, wait_until};

/// Every leaf command of `hookd` (one without subcommands), by its path.
fn leaves(c: &clap::Command, path: &str, out: &mut BTreeSet<String>) {
    for sub in c.get_subcommands().filter(|s| s.get_name() != "help") {
        let p = format!("{path} {}", sub.get_name()).trim().to_string();
        if sub.get_subcommands().next().is_none() {
            out.insert(p);
        } else {
            leaves(sub, &p, out);
        }
    }
}

#[test]
fn every_leaf_command_of_hookd_is_in_the_table() {
    let mut all = BTreeSet::new();
    leaves(&hookd::cli::Cli::command(), "", &mut all);
    assert!(all.len() > 30, "the walk finds the commands: {all:?}");
    let tested: BTreeSet<String> = ROWS.iter().map(|r| r.path.to_string()).collect();
    let missing: Vec<&String> = all.difference(&tested).collect();
    assert!(
        missing.is_empty(),
        "commands without a row in parity_table::ROWS: {missing:?}"
    );
    let unknown: Vec<&String> = tested.difference(&all).collect();
    assert!(unknown.is_empty(), "rows for no command: {unknown:?}");
}

/// Whether `out` ended as the row expects; why not, if not.
fn judged(world: &World, row: &super::parity_table::Row, out: &Output) -> Result<(), String> {
    let code = out.status.code().unwrap_or(-1);
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !row.codes.contains(&code) {
        return Err(format!(
            "exit {code} (wanted {:?})\nstdout: {stdout}\nstderr: {}",
            row.codes,
            stderr(out)
        ));
    }
    if !(row.check)(world, &stdout) {
        return Err(format!(
            "the output is not as expected:\n{stdout}\nstderr: {}",
            stderr(out)
        ));
    }
    Ok(())
}

#[both_backends]
async fn every_leaf_command_runs_against_a_live_hookd_as_its_row_expects(backend: Backend) {
    let world = World::new(Bed::start(backend, &["/a", "/b"]).await).await;
    let mut failed = Vec::new();
    for row in ROWS {
        let args = (row.args)(&world);
        let out = if args.is_empty() {
            // `serve`: the bed's own, answering.
            world.serving().await
        } else {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            world.bed.cli(&args).await
        };
        if let Err(why) = judged(&world, row, &out) {
            failed.push(format!("`hookd {}`: {why}", row.path));
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n\n"));
}

#[hookd_test_macros::test]
async fn what_the_new_commands_change_is_audited_via_the_cli() {
    let world = World::new(Bed::start(Backend::Sqlite, &["/a"]).await).await;
    let ep = world.ep.as_str();
    for args in [
        vec!["endpoint", "rotate-secret", ep],
        vec!["endpoint", "expire-previous", ep],
        vec!["endpoint", "test", ep],
        vec!["endpoint", "recover", ep, "--since", &world.since],
        vec!["partner", "portal-link", &world.bed.store.partner_id],
    ] {
        let out = world.bed.cli(&args).await;
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    }
    let entries = world.bed.audit(ep).await;
    for action in [
        "endpoint.secret_rotate",
        "endpoint.secret_expire_previous",
        "endpoint.test",
        "endpoint.recover",
    ] {
        cli_entry(&entries, action);
    }
    let listed = world
        .bed
        .cli_json(&["audit", "list", "--action", "portal_link.create"])
        .await;
    assert_eq!(listed["data"][0]["via"], "cli", "{listed}");
    let none = world
        .bed
        .cli_json(&["audit", "list", "--target", "nothing"])
        .await;
    assert_eq!(
        none["data"],
        Value::Array(vec![]),
        "the filter narrows: {none}"
    );
}

#[hookd_test_macros::test]
async fn the_test_event_the_cli_queues_is_delivered_by_the_running_engine() {
    let world = World::new(Bed::start(Backend::Sqlite, &["/a"]).await).await;
    let sent = world.bed.cli_json(&["endpoint", "test", &world.ep]).await;
    let event = sent["event_id"].as_str().expect("an event id").to_string();
    world.bed.receives("/a", &event, 0).await;
    let delivery = sent["delivery_id"].as_str().expect("a delivery id");
    let detail = wait_until(SLOW, || async {
        let d = world.bed.cli_json(&["delivery", "get", delivery]).await;
        (d["state"] == "delivered").then_some(d)
    })
    .await
    .expect("the test delivery is delivered");
    assert_eq!(detail["event_type"], "webhook.test", "{detail}");
}

#[hookd_test_macros::test]
async fn an_event_published_by_the_cli_is_delivered_and_a_repeat_is_not_new() {
    let world = World::new(Bed::start(Backend::Sqlite, &["/a"]).await).await;
    let file = world.event_file("repeat");
    let published = world.bed.cli_json(&["event", "publish", &file]).await;
    let id = published["event_id"]
        .as_str()
        .expect("the event's id")
        .to_string();
    world.bed.receives("/a", &id, 0).await;
    let again = world.bed.cli(&["event", "publish", &file]).await;
    let said = String::from_utf8_lossy(&again.stdout);
    assert!(again.status.success(), "{}", stderr(&again));
    assert!(
        said.contains("published 0 new"),
        "a repeat is not new: {said}"
    );
}

#[hookd_test_macros::test]
async fn an_event_the_api_would_refuse_the_cli_refuses_with_exit_2_and_publishes_nothing() {
    let world = World::new(Bed::start(Backend::Sqlite, &["/a"]).await).await;
    let file = world.dir.path().join("bad.json");
    std::fs::write(
        &file,
        r#"{"type": "a.b", "partner_id": "nobody", "data": {}}"#,
    )
    .expect("the file");
    let out = world
        .bed
        .cli(&["event", "publish", &file.display().to_string()])
        .await;
    let err = super::bed::assert_refused(&out, 2, "an unknown partner");
    assert!(
        err.contains("nobody"),
        "the refusal names the partner: {err}"
    );
}
