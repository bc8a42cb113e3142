//! The routing flags of `hookd endpoint create` and `update`: ordering per
//! subject, what a dead head does, and the payload filter (read from the
//! flag, a file or stdin, and checked as the Partner API checks it).

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use serde_json::Value;

use super::{ctx::Ctx, exit::from_problem, input::read_file_or_stdin};
use crate::{
    domain::{
        filter::Filter,
        ordering::{OnDead, Ordering},
    },
    http::{body::json_field, partner::filters::check_filter},
};

/// `--ordering`.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum OrderingArg {
    None,
    Subject,
}

impl From<OrderingArg> for Ordering {
    fn from(o: OrderingArg) -> Ordering {
        match o {
            OrderingArg::None => Ordering::None,
            OrderingArg::Subject => Ordering::Subject,
        }
    }
}

/// `--on-dead`.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum OnDeadArg {
    Skip,
    Hold,
}

impl From<OnDeadArg> for OnDead {
    fn from(o: OnDeadArg) -> OnDead {
        match o {
            OnDeadArg::Skip => OnDead::Skip,
            OnDeadArg::Hold => OnDead::Hold,
        }
    }
}

/// `--filter JSON` or `--filter-file PATH`: which events get a delivery.
#[derive(Debug, Args)]
pub struct FilterArgs {
    /// Only events that pass this JSON filter get a delivery (docs/filters.md).
    #[arg(long, value_name = "JSON", conflicts_with = "filter_file")]
    filter: Option<String>,
    /// The filter from a file (`-`: stdin).
    #[arg(long, value_name = "PATH")]
    filter_file: Option<PathBuf>,
}

impl FilterArgs {
    /// The filter given, as JSON (not yet checked as a filter).
    pub fn given(&self) -> anyhow::Result<Option<Value>> {
        let text = match (&self.filter, &self.filter_file) {
            (Some(text), _) => text.clone(),
            (None, Some(path)) => read_file_or_stdin(Some(path))?,
            (None, None) => return Ok(None),
        };
        json_field("filter", &text).map(Some).map_err(from_problem)
    }
}

/// A filter checked against the catalog for an endpoint of `types`.
pub fn checked(ctx: &Ctx, types: &[String], given: &Value) -> anyhow::Result<Filter> {
    check_filter(&*ctx.catalog()?, types, given).map_err(from_problem)
}
