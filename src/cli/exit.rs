//! How a command ends: its exit status, and the one line that says why.
//! 0 done; 1 failed; 2 bad input, configuration or start-up; 3 not found.

use crate::http::problem::Problem;

/// A failure whose exit status says more than 1; `main` maps it.
#[derive(Debug, thiserror::Error)]
pub enum Exit {
    /// Bad input: a flag's value, an id's form, a refused URL. Exit 2.
    #[error("{0}")]
    Usage(String),
    /// hookd could not start: the port, the database, the key, the catalog. Exit 2.
    #[error(transparent)]
    Startup(anyhow::Error),
    /// No such partner, key, endpoint, delivery or event. Exit 3.
    #[error("{0}")]
    NotFound(String),
    /// A check ran and some of its cases failed: exit 1 (the scorecard says which).
    #[error("{failed} of {total} cases failed")]
    Failed { failed: usize, total: usize },
}

impl Exit {
    pub fn code(&self) -> u8 {
        match self {
            Exit::Usage(_) | Exit::Startup(_) => 2,
            Exit::NotFound(_) => 3,
            Exit::Failed { .. } => 1,
        }
    }

    /// A start-up failure: exit 2 with its cause.
    pub fn startup(e: impl Into<anyhow::Error>) -> anyhow::Error {
        Exit::Startup(e.into()).into()
    }
}

/// The command-line flag for an API field: `event_types[2]` is
/// `--event-types`; the ids the commands take by their object's name
/// (`partner_id` is `--partner`).
pub fn flag_of(field: &str) -> String {
    let name = field.split(['[', '.', '/']).next().unwrap_or(field);
    match name {
        "partner_id" => "--partner".into(),
        "endpoint_id" => "--endpoint".into(),
        "event_id" => "--event".into(),
        "event_type" => "--type".into(),
        _ => format!("--{}", name.replace('_', "-")),
    }
}

/// What an API check's refusal means on the command line: a 404 is "not
/// found" (exit 3), another 4xx is bad input (exit 2) naming the flag, and
/// anything else a failure (exit 1).
pub fn from_problem(p: Problem) -> anyhow::Error {
    let text = match &p.field {
        Some(f) => format!("{}: {}", flag_of(f), p.detail),
        None => p.detail.clone(),
    };
    match p.status {
        404 => Exit::NotFound(text).into(),
        // A conflict, or a check started too lately: failed, not bad input.
        409 | 429 => anyhow::anyhow!(text),
        400..=499 => Exit::Usage(text).into(),
        _ => anyhow::anyhow!(text),
    }
}

/// `Exit::NotFound` for `what` (`endpoint ep_…`): "endpoint ep_… does not exist".
pub fn not_found(what: impl std::fmt::Display) -> anyhow::Error {
    Exit::NotFound(format!("{what} does not exist")).into()
}

/// `Exit::Usage` with this text.
pub fn usage(text: impl Into<String>) -> anyhow::Error {
    Exit::Usage(text.into()).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_api_field_names_its_flag() {
        assert_eq!(flag_of("event_types[3]"), "--event-types");
        assert_eq!(flag_of("concurrency"), "--concurrency");
        assert_eq!(flag_of("rate_limit"), "--rate-limit");
        assert_eq!(flag_of("endpoint_id"), "--endpoint");
    }

    #[test]
    fn a_refusal_maps_to_the_exit_status_of_its_kind() {
        let code = |p: Problem| from_problem(p).downcast_ref::<Exit>().map_or(1, Exit::code);
        assert_eq!(code(Problem::not_found("no such endpoint")), 3);
        assert_eq!(code(Problem::out_of_range("concurrency", "1 to 256")), 2);
        assert_eq!(code(Problem::conflict("already")), 1);
        let named = from_problem(Problem::out_of_range("concurrency", "1 to 256"));
        assert_eq!(named.to_string(), "--concurrency: 1 to 256");
    }
}
