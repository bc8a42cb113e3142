//! `hookd endpoint filter-test`: an endpoint's filter (or one being
//! written) tried on a sample event or one of the partner's events, as
//! POST /v1/endpoints/{id}/filter-test tries it. Changes nothing.

use std::path::PathBuf;

use clap::Args;

use super::{
    ctx::Ctx,
    endpoint_view::find,
    exit::{self, from_problem},
    input::read_file_or_stdin,
    out::emit,
    routing_args::FilterArgs,
};
use crate::http::{
    body::json_field,
    partner::filters::{Trying, try_filter},
};

#[derive(Debug, Args)]
pub struct FilterTestArgs {
    /// The endpoint's id.
    id: String,
    /// A sample event from a file (`-`: stdin): its `type`, `subject` and `data`.
    #[arg(long, value_name = "PATH", conflicts_with = "event")]
    event_file: Option<PathBuf>,
    /// One of the partner's events, by id, instead of a sample.
    #[arg(long, value_name = "EVENT_ID")]
    event: Option<String>,
    #[command(flatten)]
    filter: FilterArgs,
    /// Try no filter (every event of the endpoint's types passes).
    #[arg(long, conflicts_with_all = ["filter", "filter_file"])]
    no_filter: bool,
    /// Print the verdict as JSON, as POST /v1/endpoints/{id}/filter-test answers.
    #[arg(long)]
    json: bool,
}

pub async fn run(ctx: &Ctx, a: FilterTestArgs) -> anyhow::Result<()> {
    let e = find(ctx, &a.id).await?;
    let sample = match &a.event_file {
        Some(path) => {
            Some(json_field("event_file", &read_file_or_stdin(Some(path))?).map_err(from_problem)?)
        }
        None => None,
    };
    if sample.is_none() && a.event.is_none() {
        return Err(exit::usage(
            "give --event-file (a sample event) or --event (one of the partner's events)",
        ));
    }
    let trying = match a.filter.given()? {
        Some(given) => Trying::Draft(Some(given)),
        None if a.no_filter => Trying::Draft(None),
        None => Trying::Saved,
    };
    let catalog = ctx.catalog()?;
    let tested = try_filter(
        (&ctx.db, &catalog),
        (&e.partner_id, &e.id),
        sample,
        a.event,
        trying,
    )
    .await
    .map_err(from_problem)?;
    emit(a.json, &tested, || match (&tested.reason, &tested.filter) {
        (_, None) => {
            "passes: no filter, every event of the endpoint's types gets a delivery".into()
        }
        (None, Some(_)) => "passes: the event would get a delivery at this endpoint".into(),
        (Some(why), Some(_)) => {
            format!("filtered out ({why}): the event would get no delivery here")
        }
    })
}
